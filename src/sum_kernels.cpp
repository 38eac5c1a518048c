// The superaccumulator's fast path for long spans: blocked, windowed integer lane sums (SIMD-friendly).
//
// Algorithm (docs/algorithms/superaccumulator.md, "Fast path"):
//   Step F1  per block of B terms, one pass computes the largest magnitude field and the OR/AND of the bits.
//   Step F2  a block holding Inf/NaN goes term by term (rare); a block of zeros only updates the signed-zero flags.
//   Step F3  E = the largest biased exponent (subnormals count as 1). A term with exponent field f (f' = max(f, 1)) and
//            integer significand m is m * 2^(f' - bias - (p-1)). If d = E - f' <= W it is added to an int64 lane sum
//            as m << (W - d), i.e. in units of 2^(E - bias - (p-1) - W), with its sign; else it is flagged.
//   Step F4  the lane sum goes into the chunks (add_lane_sum); flagged terms go one by one (add_scaled).
// Invariant (why int64 lanes cannot overflow): |m << (W - d)| < 2^(p + W) per term and B = 2^11 terms per block, so
// |lane sum| < 2^(p + W + 11) <= 2^62. binary64 splits m into 27 high and 26 low bits, each summed in its own lane.
// Terms below the window are exact too (they go through the scalar path); the window only decides the speed.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "exactref/accumulator.h"

namespace exactref {
namespace {

constexpr std::size_t block_size = 2048;  // B = 2^11: see the invariant above

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(EXACTREF_NO_MULTIVERSION)
#define EXACTREF_TARGET_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define EXACTREF_TARGET_CLONES
#endif

struct block_scan {
    std::uint64_t max_abs;
    std::uint64_t or_bits;
    std::uint64_t and_bits;
};

template <class Bits>
block_scan scan_block(const Bits* x, std::size_t n, Bits abs_mask) noexcept {
    Bits max_abs = 0, or_bits = 0, and_bits = static_cast<Bits>(~Bits{0});
    for (std::size_t i = 0; i < n; ++i) {
        const Bits b = x[i];
        max_abs = std::max<Bits>(max_abs, static_cast<Bits>(b & abs_mask));
        or_bits |= b;
        and_bits &= b;
    }
    return {max_abs, or_bits, and_bits};
}

EXACTREF_TARGET_CLONES block_scan scan_block_u64(const std::uint64_t* x, std::size_t n) noexcept {
    return scan_block<std::uint64_t>(x, n, ~(std::uint64_t{1} << 63));
}
EXACTREF_TARGET_CLONES block_scan scan_block_u32(const std::uint32_t* x, std::size_t n) noexcept {
    return scan_block<std::uint32_t>(x, n, ~(std::uint32_t{1} << 31));
}
EXACTREF_TARGET_CLONES block_scan scan_block_u16(const std::uint16_t* x, std::size_t n) noexcept {
    return scan_block<std::uint16_t>(x, n, 0x7FFF);
}

struct lane_sums {
    std::int64_t high;  // binary64 only: the 27 high significand bits, in units of 2^26 lanes
    std::int64_t low;
    bool flagged;       // some non-zero term lies below the window
};

// Step F3 for formats with p <= 24: one int64 lane sum. Abs: add |x| instead of x.
template <class Bits, int P, int W, bool Abs>
lane_sums window_sum_narrow(const Bits* x, std::size_t n, int top_field) noexcept {
    constexpr int frac_bits = P - 1;
    constexpr int storage_bits = 8 * sizeof(Bits);
    constexpr std::uint32_t frac_mask = (1u << frac_bits) - 1;
    constexpr std::uint32_t field_mask = (1u << (storage_bits - 1 - frac_bits)) - 1;
    std::int64_t sum = 0;
    std::int32_t flagged = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const std::uint32_t b = x[i];
        const std::int32_t field = static_cast<std::int32_t>((b >> frac_bits) & field_mask);
        const std::int32_t f1 = field == 0 ? 1 : field;
        const std::uint32_t m = (b & frac_mask) | (field == 0 ? 0u : (1u << frac_bits));
        const std::int32_t sh = W - (top_field - f1);
        const bool in = sh >= 0;
        std::int64_t v = static_cast<std::int64_t>(m) << (in ? sh : 0);
        v = in ? v : 0;
        flagged |= static_cast<std::int32_t>(!in && m != 0);
        if constexpr (!Abs) {
            const std::int64_t s = -static_cast<std::int64_t>(b >> (storage_bits - 1));  // 0 or -1
            v = (v ^ s) - s;
        }
        sum += v;
    }
    return {0, sum, flagged != 0};
}

// Step F3 for binary64: m = high * 2^26 + low, two lane sums.
template <int W, bool Abs>
lane_sums window_sum_binary64(const std::uint64_t* x, std::size_t n, int top_field) noexcept {
    constexpr std::uint64_t frac_mask = (std::uint64_t{1} << 52) - 1;
    std::int64_t high = 0, low = 0;
    std::int64_t flagged = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const std::uint64_t b = x[i];
        const std::int64_t field = static_cast<std::int64_t>((b >> 52) & 0x7FF);
        const std::int64_t f1 = field == 0 ? 1 : field;
        const std::uint64_t m = (b & frac_mask) | (field == 0 ? 0 : (std::uint64_t{1} << 52));
        const std::int64_t sh = W - (top_field - f1);
        const bool in = sh >= 0;
        const std::int64_t s_amount = in ? sh : 0;
        std::int64_t vh = static_cast<std::int64_t>(m >> 26) << s_amount;
        std::int64_t vl = static_cast<std::int64_t>(m & ((std::uint64_t{1} << 26) - 1)) << s_amount;
        vh = in ? vh : 0;
        vl = in ? vl : 0;
        flagged |= static_cast<std::int64_t>(!in && m != 0);
        if constexpr (!Abs) {
            const std::int64_t s = -static_cast<std::int64_t>(b >> 63);
            vh = (vh ^ s) - s;
            vl = (vl ^ s) - s;
        }
        high += vh;
        low += vl;
    }
    return {high, low, flagged != 0};
}

constexpr int window_for(int p) { return 62 - 11 - p; }  // p + W + 11 <= 62 (invariant above)
constexpr int window_binary64 = 62 - 11 - 27;              // the 27-bit high half decides

template <bool Abs>
EXACTREF_TARGET_CLONES lane_sums window_f64(const std::uint64_t* x, std::size_t n, int top) noexcept {
    return window_sum_binary64<window_binary64, Abs>(x, n, top);
}
template <bool Abs>
EXACTREF_TARGET_CLONES lane_sums window_f32(const std::uint32_t* x, std::size_t n, int top) noexcept {
    return window_sum_narrow<std::uint32_t, 24, window_for(24), Abs>(x, n, top);
}
template <bool Abs>
EXACTREF_TARGET_CLONES lane_sums window_f16(const std::uint16_t* x, std::size_t n, int top) noexcept {
    return window_sum_narrow<std::uint16_t, 11, window_for(11), Abs>(x, n, top);
}
template <bool Abs>
EXACTREF_TARGET_CLONES lane_sums window_bf16(const std::uint16_t* x, std::size_t n, int top) noexcept {
    return window_sum_narrow<std::uint16_t, 8, window_for(8), Abs>(x, n, top);
}

template <class Bits, bool Abs>
lane_sums window_dispatch(const format_info& f, const Bits* x, std::size_t n, int top) noexcept {
    if constexpr (sizeof(Bits) == 8) {
        return window_f64<Abs>(x, n, top);
    } else if constexpr (sizeof(Bits) == 4) {
        return window_f32<Abs>(x, n, top);
    } else {
        return f.id == dtype::float16 ? window_f16<Abs>(x, n, top) : window_bf16<Abs>(x, n, top);
    }
}

template <class Bits>
block_scan scan_dispatch(const Bits* x, std::size_t n) noexcept {
    if constexpr (sizeof(Bits) == 8) return scan_block_u64(x, n);
    else if constexpr (sizeof(Bits) == 4) return scan_block_u32(x, n);
    else return scan_block_u16(x, n);
}

// Adds xs (or |xs|) to acc: Steps F1-F4 per block.
template <class Bits, bool Abs>
void add_blocked(superaccumulator& acc, const format_info& f, const Bits* xs, std::size_t n) noexcept {
    constexpr int storage_bits = 8 * sizeof(Bits);
    constexpr Bits sign_bit = static_cast<Bits>(Bits{1} << (storage_bits - 1));
    const int frac_bits = f.precision - 1;
    const int window = sizeof(Bits) == 8 ? window_binary64 : window_for(f.precision);
    const int bias = f.emax;
    for (std::size_t start = 0; start < n; start += block_size) {
        const std::size_t len = std::min(block_size, n - start);
        const Bits* x = xs + start;
        // Step F1
        const block_scan scan = scan_dispatch<Bits>(x, len);
        const auto top_field = static_cast<int>(scan.max_abs >> frac_bits);
        // Step F2
        if (top_field == static_cast<int>(f.special_exponent_field())) {
            for (std::size_t i = 0; i < len; ++i) acc.add_bits(f, Abs ? (x[i] & ~sign_bit) : x[i]);
            continue;
        }
        if (scan.max_abs == 0) {  // zeros only
            const bool some_positive = Abs || (scan.and_bits & sign_bit) == 0;
            const bool some_negative = !Abs && (scan.or_bits & sign_bit) != 0;
            acc.note_terms(len, some_positive, some_negative);
            continue;
        }
        acc.note_terms(len, true, true);
        // Step F3
        const int top = std::max(top_field, 1);
        const lane_sums sums = window_dispatch<Bits, Abs>(f, x, len, top);
        // Step F4
        const int unit = top - bias - frac_bits - window;
        if constexpr (sizeof(Bits) == 8) acc.add_lane_sum(sums.high, unit + 26);
        acc.add_lane_sum(sums.low, unit);
        if (sums.flagged) {
            for (std::size_t i = 0; i < len; ++i) {
                const decoded d = decode_bits(f, x[i]);
                const int f1 = static_cast<int>((x[i] >> frac_bits) & f.special_exponent_field());
                if (top - std::max(f1, 1) > window && d.significand != 0)
                    acc.add_scaled(Abs ? false : d.negative, d.significand, d.exponent);
            }
        }
    }
}

// Short spans: the term-by-term path is cheaper than a block scan.
constexpr std::size_t fast_path_threshold = 64;

template <class T, bool Abs>
void add_span(superaccumulator& acc, std::span<const T> xs) noexcept {
    using tr = format_traits<T>;
    using Bits = typename tr::bits_type;
    static_assert(sizeof(T) == sizeof(Bits));
    const Bits* bits = reinterpret_cast<const Bits*>(xs.data());  // T is a trivially copyable IEEE storage type
    if (xs.size() < fast_path_threshold) {
        constexpr Bits sign_bit = static_cast<Bits>(Bits{1} << (8 * sizeof(Bits) - 1));
        for (std::size_t i = 0; i < xs.size(); ++i) acc.add_bits(tr::info, Abs ? (bits[i] & ~sign_bit) : bits[i]);
        return;
    }
    add_blocked<Bits, Abs>(acc, tr::info, bits, xs.size());
}

}  // namespace

void superaccumulator::add(std::span<const double> xs) noexcept { add_span<double, false>(*this, xs); }
void superaccumulator::add(std::span<const float> xs) noexcept { add_span<float, false>(*this, xs); }
void superaccumulator::add(std::span<const float16> xs) noexcept { add_span<float16, false>(*this, xs); }
void superaccumulator::add(std::span<const bfloat16> xs) noexcept { add_span<bfloat16, false>(*this, xs); }
void superaccumulator::add_abs(std::span<const double> xs) noexcept { add_span<double, true>(*this, xs); }
void superaccumulator::add_abs(std::span<const float> xs) noexcept { add_span<float, true>(*this, xs); }
void superaccumulator::add_abs(std::span<const float16> xs) noexcept { add_span<float16, true>(*this, xs); }
void superaccumulator::add_abs(std::span<const bfloat16> xs) noexcept { add_span<bfloat16, true>(*this, xs); }

}  // namespace exactref
