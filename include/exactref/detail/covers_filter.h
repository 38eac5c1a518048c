// exactref/detail/covers_filter.h — the array engine of covers() (src/covers.cpp) for the library's own faces and
// tests: the Python extension judges its references through it, and tests read how many elements the exact path
// decided (docs/algorithms/covers-filter.md). Not part of the public API.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "exactref/covers.h"
#include "exactref/detail/uint128.h"
#include "exactref/format.h"
#include "exactref/reference.h"
#include "exactref/scatter.h"
#include "exactref/standard.h"

namespace exactref::detail {

/// covered[i] = covers_bits(format, bits[i], *refs[i], model).covered for every i < bits.size(), decided by the
/// binary64 filter where it can and by the exact comparison elsewhere (the same verdicts). refs[i] and refs[j] that
/// are the same pointer must be the same reference. Throws like covers_bits (the first element whose reference or
/// format the standard does not apply to), std::invalid_argument when the sizes differ.
void covers_flags(const format_info& format, std::span<const std::uint64_t> bits,
                  std::span<const reference* const> refs, const standard& model, std::span<std::uint8_t> covered);

/// The same for the elements of a compact reference array (scatter.h): covered[i] for bits[i] against element i.
void covers_flags(const format_info& format, std::span<const std::uint64_t> bits, const compact_reference_array& refs,
                  const standard& model, std::span<std::uint8_t> covered);

/// The same over results held in their own storage (raw bytes of `format` values, e.g. a numpy buffer), one per
/// element of refs, read block by block in place: no copy of the results is made. Throws std::invalid_argument when
/// results.size() is not refs.size() values of format or covered.size() differs from refs.size().
void covers_flags(const format_info& format, std::span<const std::byte> results, const compact_reference_array& refs,
                  const standard& model, std::span<std::uint8_t> covered);

/// What covers() over an array needs of one element that its producer holds in compact form (src/gemm_covers.cpp:
/// the elements of an exact matrix product): the binary64 enclosures of s and W (S, or T for dots) and the fields of
/// its reference the flat bound depends on — exactly what the element's reference would give (RD and RU of the exact
/// values, superaccumulator::enclosure), so the filter decides it as it decides that reference.
struct element_facts {
    bool usable = false;  // false: the element is built as a reference (element_source::materialize) and judged so
    bool is_dot = false, has_initial = false, product_may_underflow = false;
    dtype term_format = dtype::float64;
    int min_product_exponent = 0;
    std::uint64_t count = 0;
    double s_lo = 0, s_hi = 0;  // RD(s), RU(s) in binary64 (finite; 0 and 0 for s = 0)
    double w_lo = 0, w_hi = 0;  // RD(W), RU(W)
    std::uint64_t rn_bits = 0, rd_bits = 0, ru_bits = 0;  // s rounded to the result format (exact and faithful only)
};

/// The elements of an array of references held in compact form by their producer, visited in the producer's own
/// order (a product's: bands of 64 rows, column-major inside; src/gemm_covers.cpp). facts() fills, for positions
/// position .. position + out.size() - 1 of that order, index[k] (the element's index, each index in 0 .. size() - 1
/// exactly once over all positions) and out[k] (its facts); `rounded` is the result format when the standard compares
/// encodings (exact, faithful: rn/rd/ru_bits wanted), else nullptr. Elements it cannot enclose (usable = false) are
/// built by materialize(i, out) into a freshly cleared `out`. Both const calls must be safe to make concurrently.
class element_source {
public:
    virtual ~element_source() = default;
    virtual std::size_t size() const noexcept = 0;
    virtual void facts(std::size_t position, std::span<element_facts> out, std::span<std::size_t> index,
                       const format_info* rounded) const = 0;
    virtual void materialize(std::size_t i, reference& out) const = 0;

    /// The fast path of bound standards (docs/algorithms/covers-filter.md, Step P4): enclosures of s and W that
    /// contain the exact values but need not be RD and RU (wider is sound: Steps F2-F3 need s in [s_lo, s_hi] and W
    /// in [w_lo, w_hi] only). key() says whether the source has the path and fills the key fields (count, formats,
    /// dot fields) that every element it encloses shares; enclose() fills, for positions position .. position +
    /// count - 1, index[k] as facts() does and either usable[k] = 1 with the four enclosures or usable[k] = 0 (the
    /// element then takes facts()). The caller holds a detail::default_fp_environment.
    struct enclosure_block {
        double* s_lo;
        double* s_hi;
        double* w_lo;
        double* w_hi;
        std::uint8_t* usable;
        std::size_t* index;
    };
    virtual bool key(element_facts&) const { return false; }
    virtual void enclose(std::size_t, std::size_t, const enclosure_block&) const {}
};

/// covers() over results[i] against element i of `source`: the verdict covers() over the same elements as a
/// reference_array gives (the same filter, exact path and worst element). Throws like it.
template <floating_format T>
array_verdict covers_elements(std::span<const T> results, const element_source& source, const standard& model);

/// covered[i] for results (raw bytes of `format` values, read block by block in place) against element i of source.
/// Throws std::invalid_argument when the sizes differ, or like covers_bits.
void covers_flags(const format_info& format, std::span<const std::byte> results, const element_source& source,
                  const standard& model, std::span<std::uint8_t> covered);

/// The same for the elements of an exact matrix product (gemm.h), row-major (src/gemm_covers.cpp).
void covers_flags(const format_info& format, std::span<const std::byte> results, const product_reference& product,
                  const standard& model, std::span<std::uint8_t> covered);

/// The facts covers() reads of a product's elements, as its element_source gives them: out[e] for element e
/// (row-major), out.size() = rows()·cols() (for tests: they must equal the enclosures and roundings of element(i, j)'s
/// reference).
void product_element_facts(const product_reference& product, std::span<element_facts> out,
                           const format_info* rounded);

/// Step P4's enclosures of a product's elements, as the fast path of covers() reads them (for tests: each must
/// contain the exact s and W of element(i, j)): out[e] for element e (row-major), usable false where the fast path
/// leaves the element to product_element_facts' path.
struct element_enclosure {
    bool usable = false;
    double s_lo = 0, s_hi = 0, w_lo = 0, w_hi = 0;
};
std::vector<element_enclosure> product_element_enclosures(const product_reference& product);

/// Step S4's s of a sliced product as product_reference keeps it (docs/algorithms/ozaki.md, "Layout"): the exact
/// near part Σ_t v_t·2^((levels - 1 - t)·w) of an element's level sums v_0 (the highest level) .. v_{levels-1}, in
/// units of the last level's, as one two's-complement integer of s_value_words(k, levels, w) 64-bit limbs, the lowest
/// first. The bound: every near entry is at most the entry (|a_near| <= |a| < 2^E_i, |b_near| < 2^F_j), so
/// |value| < K·2^((levels + 1)·w) and ceil(log2 K) + (levels + 1)·w + 2 bits hold it with a bit to spare
/// (binary32 2 x 2 slices at K = 1024: 92 bits, two limbs for three levels; binary64 3 x 3: 138 bits, three for five).
inline constexpr int s_max_words = 14;  // 31 levels of <= 26 bits: 2 + 53 + 30·26 = 835 bits
constexpr int s_value_words(std::size_t k, int levels, int w) noexcept {
    const int log2k = k <= 1 ? 0 : std::bit_width(k - 1);  // ceil(log2 K)
    return (log2k + (levels + 1) * w + 2 + 63) / 64;
}
/// Packs the levels v[t·stride] (t = 0 .. levels - 1, 1 <= w <= 63) into `words` limbs at out: Horner's rule
/// modulo 2^(64·words), exact when the value fits (the bound above), whatever the partial sums do.
inline void pack_levels(const std::int64_t* v, std::size_t stride, int levels, int w, int words,
                        std::uint64_t* out) noexcept {
    if (words <= 2) {
        uint128 x = 0;
        for (int t = 0; t < levels; ++t) x = (x << w) + static_cast<uint128>(static_cast<int128>(v[t * stride]));
        out[0] = static_cast<std::uint64_t>(x);
        if (words == 2) out[1] = static_cast<std::uint64_t>(x >> 64);
        return;
    }
    if (words == 3) {  // binary64 terms: (high, low) = 64 + 128 bits
        std::uint64_t high = 0;
        uint128 low = 0;
        for (int t = 0; t < levels; ++t) {
            high = (high << w) | static_cast<std::uint64_t>(low >> (128 - w));
            low <<= w;
            const std::int64_t x = v[t * stride];
            const uint128 sum = low + static_cast<uint128>(static_cast<int128>(x));  // x sign-extended to 128 bits
            high += (sum < low ? 1 : 0) + (x < 0 ? ~std::uint64_t{0} : 0);         // the carry and the sign fill
            low = sum;
        }
        out[0] = static_cast<std::uint64_t>(low);
        out[1] = static_cast<std::uint64_t>(low >> 64);
        out[2] = high;
        return;
    }
    std::uint64_t limb[s_max_words] = {};
    for (int t = 0; t < levels; ++t) {
        for (int q = words - 1; q > 0; --q) limb[q] = (limb[q] << w) | (limb[q - 1] >> (64 - w));
        limb[0] <<= w;
        const std::int64_t x = v[t * stride];
        const std::uint64_t fill = x < 0 ? ~std::uint64_t{0} : 0;  // x's sign extension above limb 0
        std::uint64_t carry = 0;
        for (int q = 0; q < words; ++q) {
            const uint128 sum = static_cast<uint128>(limb[q]) + (q == 0 ? static_cast<std::uint64_t>(x) : fill) + carry;
            limb[q] = static_cast<std::uint64_t>(sum);
            carry = static_cast<std::uint64_t>(sum >> 64);
        }
    }
    for (int q = 0; q < words; ++q) out[q] = limb[q];
}

/// Step P6 (docs/algorithms/covers-filter.md): the usual element's enclosures of a product, for a run of elements
/// k = 0 .. count - 1 (rows of one column), as the fast path computes them. Element k's s is the two's-complement
/// integer of limbs[k·words .. k·words + words) (limb 0 the lowest; 1 <= words <= 2) times 2^(row_top[k] +
/// low_offset), exactly; its T is enclosed from t_hat[k] (Step S6:
/// [t_hat·t_below, t_hat·t_above] moved one step outward). Element k is taken (done[k] = 1) when row_simple[k] != 0
/// and row_min_exponent[k] == INT_MAX, col_min_exponent == INT_MAX or their sum >= emin; then s_lo[k], s_hi[k] are
/// RD and RU of s in binary64, w_lo[k], w_hi[k] T's enclosure and usable[k] whether t_hat[k] is finite and >= 0
/// (else both 0). Otherwise done[k] = 0 and s_lo, s_hi, w_lo, w_hi, usable are 0.
struct narrow_run_input {
    const std::uint64_t* limbs = nullptr;
    int words = 0;
    const int* row_top = nullptr;
    int low_offset = 0;
    const std::uint8_t* row_simple = nullptr;
    const int* row_min_exponent = nullptr;
    int col_min_exponent = 0, emin = 0;
    const double* t_hat = nullptr;
    double t_below = 1, t_above = 1;
    const std::uint64_t* prefetch = nullptr;  // the next run's limbs (or nullptr), prefetched as the run goes
};
struct narrow_run_output {
    double* s_lo;
    double* s_hi;
    double* w_lo;
    double* w_hi;
    std::uint8_t* usable;
    std::uint8_t* done;
};
/// The run in `lanes` lanes: 8 runs the AVX-512 kernel where the CPU (after EXACTREF_SIMD) has it, anything else the
/// element-by-element code; both give the same outputs bit for bit (for tests; the product's fast path picks by
/// set_covers_block_lanes' cap). The caller holds a detail::default_fp_environment.
void enclose_narrow_run(const narrow_run_input& in, std::size_t count, const narrow_run_output& out, int lanes);
/// Step P6's wide run (binary64 terms: the window of the levels (count_levels - 1)·w in 59 .. 122 bits), for a
/// column without C0: element k's near s is the two's-complement integer of s_limbs[k·s_words .. k·s_words + s_words)
/// (1 <= s_words <= 3) times 2^low_k, low_k = row_top[k] + low_offset, and its W is Σ_t t_levels[k·count_levels + t]
/// ·2^((count_levels - 1 - t)·w + low_k) enclosed in binary64 (Step P4's W), or,
/// with t_hat set (Step S6 for binary64 terms; t_levels then unused), from t_hat[k] as in narrow_run_input (W holds
/// the far products then); its far products (row_far[k] far entries in the row, col_far in the column) are bounded
/// by Step P4's F with top = low_k + (count_levels + 1)·w. An element is taken (done[k] = 1) when row_plain[k] != 0,
/// its exponents pass as in narrow_run_input, and with far entries F's powers of two are in range (else enclose_fast
/// would refuse it).
/// Taken elements get s_lo, s_hi (RD and RU of the near s, widened by F) and w_lo, w_hi with usable[k] = 1, or, when a
/// level's scale would leave the normal range (with t_hat: t_hat[k] is not finite and >= 0), all 0 and usable[k] = 0;
/// elements not taken get 0.
struct wide_run_input {
    const std::uint64_t* s_limbs = nullptr;
    int s_words = 0;
    const std::int64_t* t_levels = nullptr;
    int count_levels = 0, w = 0;
    const int* row_top = nullptr;
    int low_offset = 0;
    const std::uint8_t* row_plain = nullptr;
    const std::uint32_t* row_far = nullptr;
    std::uint32_t col_far = 0;
    int slices_a = 0, slices_b = 0;  // s_A, s_B
    const int* row_min_exponent = nullptr;
    int col_min_exponent = 0, emin = 0;
    const std::uint64_t* prefetch_s = nullptr;  // the next run's s limbs and T levels (or nullptr), prefetched
    const std::int64_t* prefetch_t = nullptr;
    const double* t_hat = nullptr;  // Step S6's T instead of t_levels (binary64 terms), with its factors
    double t_below = 1, t_above = 1;
};
/// The wide run in `lanes` lanes, as enclose_narrow_run (the same outputs at every width, bit for bit).
void enclose_wide_run(const wide_run_input& in, std::size_t count, const narrow_run_output& out, int lanes);
/// The lanes covers()' block filters run with now: set_covers_block_lanes' cap, at most the CPU's widest version
/// after EXACTREF_SIMD (8, 4 or 1; 0 when the cap is 0). Throws std::invalid_argument for a bad EXACTREF_SIMD.
int covers_block_lanes();

/// Elements of covers() over arrays (and covers_flags) whose verdict the exact path decided, since the process
/// started, in all threads: the filter's undecided elements, non-finite results, -0.0, references it cannot enclose.
std::uint64_t covers_exact_path_count() noexcept;
/// Elements whose ratio the exact path computed to find the worst element of an array_verdict (ties of the filter's
/// ratio enclosures).
std::uint64_t covers_exact_ratio_count() noexcept;

/// For tests: caps the binary64 lanes of the block filter over compact arrays (docs/algorithms/covers-filter.md,
/// Step K5; and Step P5's over a product's elements): 8 (AVX-512, the default), 4 (AVX2), 1 (the portable version), 0
/// (off: the element-by-element fused filter decides every element). The CPU's widest version (after EXACTREF_SIMD)
/// is the most that runs. Verdicts, ratio enclosures and both counters above are the same at every setting. Returns
/// the previous cap; process-wide.
int set_covers_block_lanes(int lanes) noexcept;

}  // namespace exactref::detail
