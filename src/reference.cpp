// References of several sums at once.
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "exactref/reference.h"
#include "exactref/threads.h"

namespace exactref {

// The largest encoding with the sign cleared is the largest magnitude (IEEE 754 orders magnitudes like their
// encodings); a NaN or Inf found that way sends the span through a second pass that skips them.
namespace {
// The encodings are read through may_alias types: the data are float objects (strict aliasing).
typedef std::uint64_t __attribute__((may_alias)) alias64;
typedef std::uint32_t __attribute__((may_alias)) alias32;
typedef std::uint16_t __attribute__((may_alias)) alias16;
template <class Bits, class Alias>
[[gnu::always_inline]] inline Bits max_masked(const Alias* p, std::size_t n, Bits mask) {
    Bits top = 0;
    for (std::size_t i = 0; i < n; ++i) top = std::max<Bits>(top, p[i] & mask);
    return top;
}
#define EXACTREF_MAX_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
EXACTREF_MAX_CLONES std::uint64_t max_masked64(const alias64* p, std::size_t n, std::uint64_t m) {
    return max_masked(p, n, m);
}
EXACTREF_MAX_CLONES std::uint32_t max_masked32(const alias32* p, std::size_t n, std::uint32_t m) {
    return max_masked(p, n, m);
}
EXACTREF_MAX_CLONES std::uint16_t max_masked16(const alias16* p, std::size_t n, std::uint16_t m) {
    return max_masked(p, n, m);
}
#undef EXACTREF_MAX_CLONES
std::uint64_t max_masked_any(const void* p, std::size_t n, std::uint64_t m) {
    return max_masked64(static_cast<const alias64*>(p), n, m);
}
std::uint32_t max_masked_any(const void* p, std::size_t n, std::uint32_t m) {
    return max_masked32(static_cast<const alias32*>(p), n, m);
}
std::uint16_t max_masked_any(const void* p, std::size_t n, std::uint16_t m) {
    return max_masked16(static_cast<const alias16*>(p), n, m);
}
}  // namespace

template <floating_format T>
double largest_magnitude(std::span<const T> xs) noexcept {
    const format_info& f = format_traits<T>::info;
    using bits_t = std::conditional_t<(sizeof(T) == 8), std::uint64_t,
                                      std::conditional_t<(sizeof(T) == 4), std::uint32_t, std::uint16_t>>;
    static_assert(sizeof(bits_t) == sizeof(T));
    const bits_t magnitude = static_cast<bits_t>(~(std::uint64_t{1} << (f.storage_bits - 1)));
    const bits_t special = static_cast<bits_t>(static_cast<std::uint64_t>(f.special_exponent_field())
                                               << (f.precision - 1));
    bits_t top = max_masked_any(static_cast<const void*>(xs.data()), xs.size(), magnitude);
    if (top >= special) {
        top = 0;
        for (const T& x : xs) {
            const bits_t m = static_cast<bits_t>(format_traits<T>::to_bits(x) & magnitude);
            if (m < special) top = std::max(top, m);
        }
    }
    return to_double_exact(f, top);
}
template double largest_magnitude<double>(std::span<const double>) noexcept;
template double largest_magnitude<float>(std::span<const float>) noexcept;
template double largest_magnitude<float16>(std::span<const float16>) noexcept;
template double largest_magnitude<bfloat16>(std::span<const bfloat16>) noexcept;

// The parallel sum: contiguous chunks aligned to the fast path's blocks (2048 terms), each summed by the one-pass
// kernel into its own accumulators, then merged. Every operation is exact integer arithmetic, so the result (value,
// term counts, special counts, signed-zero flags, max|x_i|) is the same for every number of chunks.
template <floating_format T>
reference sum(std::span<const T> xs, const sum_options& options) {
    reference r;
    r.count = xs.size();
    r.term_format = format_traits<T>::info.id;
    std::uint64_t largest = 0;
    const std::size_t chunks = detail::chunk_count(xs.size(), detail::resolve_threads(options.threads));
    if (chunks <= 1) {
        detail::add_sum_abs_largest(xs, r.sum, r.abs_sum, largest);
    } else {
        struct part {
            superaccumulator sum, abs_sum;
            std::uint64_t largest = 0;
        };
        const std::size_t length = detail::chunk_length(xs.size(), chunks, 2048);
        const std::size_t used = (xs.size() + length - 1) / length;
        std::vector<part> parts(used);
#pragma omp parallel for schedule(static, 1) num_threads(static_cast<int>(used))
        for (std::size_t k = 0; k < used; ++k) {
            const std::size_t begin = k * length;
            detail::add_sum_abs_largest(xs.subspan(begin, std::min(length, xs.size() - begin)), parts[k].sum,
                                        parts[k].abs_sum, parts[k].largest);
        }
        for (const part& p : parts) {
            r.sum.merge(p.sum);
            r.abs_sum.merge(p.abs_sum);
            largest = std::max(largest, p.largest);
        }
    }
    r.largest = to_double_exact(format_traits<T>::info, largest);
    return r;
}
template reference sum<double>(std::span<const double>, const sum_options&);
template reference sum<float>(std::span<const float>, const sum_options&);
template reference sum<float16>(std::span<const float16>, const sum_options&);
template reference sum<bfloat16>(std::span<const bfloat16>, const sum_options&);

template <floating_format T>
reference_array sum_rows(std::span<const T> data, std::size_t rows, std::size_t cols) {
    if (cols != 0 && rows > data.size() / cols)
        throw std::invalid_argument("sum_rows: " + std::to_string(rows) + " x " + std::to_string(cols) +
                                    " does not fit in " + std::to_string(data.size()) + " elements");
    if (data.size() != rows * cols)
        throw std::invalid_argument("sum_rows: " + std::to_string(data.size()) + " elements for a " +
                                    std::to_string(rows) + " x " + std::to_string(cols) +
                                    " matrix: pass exactly rows * cols elements, row-major");
    reference_array out;
    out.rows = rows;
    out.cols = 1;
    out.elements.reserve(rows);
    for (std::size_t i = 0; i < rows; ++i) out.elements.push_back(sum(data.subspan(i * cols, cols)));
    return out;
}

template reference_array sum_rows<double>(std::span<const double>, std::size_t, std::size_t);
template reference_array sum_rows<float>(std::span<const float>, std::size_t, std::size_t);
template reference_array sum_rows<float16>(std::span<const float16>, std::size_t, std::size_t);
template reference_array sum_rows<bfloat16>(std::span<const bfloat16>, std::size_t, std::size_t);

}  // namespace exactref
