// Internal to src/dot*.cpp and src/gemm*.cpp: exact conversions, product exponents and the block kernels of the exact
// dot product (docs/algorithms/ozaki.md, "Exact dot"). Integer operations decide everything that could depend on the
// floating-point environment; the only floating-point operations are exact ones (a product of two binary64 numbers
// with at most 24 significand bits each, far from underflow and overflow; an FMA whose result is exact), except in
// Step D6 (src/dot_extract.cpp), whose roundings are part of the algorithm: each one rounds to nearest by its own
// encoding, and the step runs only with FTZ and DAZ off.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>

#include "exactref/accumulator.h"
#include "exactref/format.h"
#include "exactref/reference.h"

namespace exactref::detail {

/// Raw bits of the binary64 number equal to a finite value of a format with p <= 24 (binary32, binary16, bfloat16),
/// from its raw bits; integer operations only. Subnormal inputs become normal binary64 numbers. Not for Inf/NaN.
template <int Precision, int ExponentBits>
constexpr std::uint64_t widen_to_binary64(std::uint32_t bits) noexcept {
    constexpr int frac_bits = Precision - 1;
    constexpr int storage_bits = 1 + ExponentBits + frac_bits;
    constexpr int bias = (1 << (ExponentBits - 1)) - 1;
    const std::uint64_t sign = static_cast<std::uint64_t>((bits >> (storage_bits - 1)) & 1u) << 63;
    const std::uint32_t field = (bits >> frac_bits) & ((1u << ExponentBits) - 1);
    const std::uint32_t frac = bits & ((1u << frac_bits) - 1);
    const std::uint64_t normal =
        sign | (static_cast<std::uint64_t>(field + (1023 - bias)) << 52) | (static_cast<std::uint64_t>(frac) << (52 - frac_bits));
    // Subnormal: frac = 2^t·(1.f), value = frac·2^(1 - bias - frac_bits).
    const int t = 31 - std::countl_zero(frac | 1u);
    const std::uint64_t subnormal = sign |
                                    (static_cast<std::uint64_t>(t + 1 - bias - frac_bits + 1023) << 52) |
                                    ((static_cast<std::uint64_t>(frac) << (52 - t)) & ((std::uint64_t{1} << 52) - 1));
    return field != 0 ? normal : (frac != 0 ? subnormal : sign);
}

/// Adds v·2^e exactly without counting a term (terms are counted with note_terms). v·2^e must be a multiple of
/// 2^lsb_exponent (every product of the four formats is), so a v whose exponent lies below the accumulator's lsb has
/// that many trailing zero bits and is shifted down exactly.
inline void add_scaled_int64(superaccumulator& acc, std::int64_t v, int e) noexcept {
    if (v == 0) return;
    if (e < superaccumulator::lsb_exponent) {
        const int shift = superaccumulator::lsb_exponent - e;
        v = shift >= 63 ? 0 : v / (std::int64_t{1} << shift);  // exact: the low bits are zero (see above)
        e = superaccumulator::lsb_exponent;
    }
    acc.add_lane_sum(v, e);
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(EXACTREF_NO_MULTIVERSION)
#define EXACTREF_DOT_EXTRACTION 1  // Step D6 is built (GCC on x86-64: AVX-512 intrinsics in a target("avx512...") function)
#endif

/// Constants of Step D6 (docs/algorithms/ozaki.md, "Step D6", lemmas 1-4), for a block with window top M: every
/// |p| < 2^M. Each of the 16 lanes (two vectors of 8) takes at most 2^lane_pairs_log2 pairs between flushes; level l
/// keeps running sums 1.5·2^k_l + (multiples of 2^(k_l - 52)), k_l = M + level_offset[l].
struct f64_extraction_params {
    static constexpr int lanes = 16;
    static constexpr int lane_pairs_log2 = 4;  // g: 2^g pairs per lane between flushes
    static constexpr std::size_t chunk_pairs = std::size_t{lanes} << lane_pairs_log2;
    static constexpr int g = lane_pairs_log2;
    // Lemma 2: k_1 = M + g + 2 (2^g terms |q| <= 2^M stay within 2^(k_1 - 2) of sigma). Lemma 3: remainders
    // |r| <= 2^(k_1 - 53) and |e| <= 2^(M - 54) give k_2 = k_1 - 50 + g. Lemma 4: |r_e| <= 2^(k_2 - 53), k_3 = k_2 - 51 + g.
    static constexpr int level_offset[3] = {g + 2, 2 * g - 48, 3 * g - 99};
    // Lemma 4: the product's last bit 2^L, L >= E_p - 105, lies on level 3's grid 2^(k_3 - 52) when E_p >= M - spread.
    static constexpr int spread = 46 - 3 * g;
    // sigma_3 normal (k_3 >= -1022) and the running sums of level 1 finite (k_1 <= 1023).
    static constexpr int min_top = -1022 - level_offset[2];
    static constexpr int max_top = 1023 - level_offset[0];
    static_assert(spread <= 48 - 2 * g, "Lemma 3: the remainder r of p (a multiple of ulp(p)) lies on level 2's grid");
    static_assert(min_top - spread - 105 >= -1074, "Lemma 4: products >= 2^(M - spread) have e exact (last bit >= 2^-1074)");
    static_assert(level_offset[0] - level_offset[1] <= 53, "Lemma 3: r + q_e < 2^(k_1 - 52) is exact on level 2's grid");
};

/// Constants of Step D6 for binary32 operands (docs/algorithms/ozaki.md, "Step D6", Lemma 5): p = x·y is exact (at
/// most 48 significand bits), so two levels hold it. Each of the 16 lanes takes 2^g pairs between flushes (a whole
/// block of 1024 pairs is one flush); level l keeps 1.5·2^k_l + (multiples of 2^(k_l - 52)), k_l = M + level_offset[l].
struct f32_extraction_params {
    static constexpr int lanes = 16;
    static constexpr int lane_pairs_log2 = 6;  // g
    static constexpr std::size_t chunk_pairs = std::size_t{lanes} << lane_pairs_log2;
    static constexpr int g = lane_pairs_log2;
    // Lemma 2: k_1 = M + g + 2. Lemma 5: remainders |r| <= 2^(k_1 - 53), 2^g of them within 2^(k_2 - 2) for
    // k_2 = k_1 - 51 + g. The third level is unused (offset 0, its sums stay 0).
    static constexpr int level_offset[3] = {g + 2, 2 * g - 49, 0};
    // Lemma 5: p = m·2^L with m < 2^48, L >= E_p - 47, lies on level 2's grid 2^(k_2 - 52) when E_p >= M - spread.
    static constexpr int spread = 52 - 47 - level_offset[1];
    // Kept products lie at or above 2^(M - spread) >= 2^-126 = 2^emin of binary32 (Step D5 has nothing to record).
    static constexpr int min_top = -126 + spread;
    static constexpr int max_top = 256 + 1;  // |x·y| < 2^256 for binary32 operands: M above that gains nothing
    static_assert(spread == 54 - 2 * g, "Lemma 5's spread");
    static_assert(chunk_pairs == 1024, "one flush per block of dot.cpp");
    static_assert(min_top + level_offset[1] >= -1022 && max_top + level_offset[0] <= 1023,
                  "sigma_2 normal, level 1's sums finite");
};

/// Result of Step D6 on one block: lane sums in units of 2^(k_l - 52) of s and T per level, the largest |p| seen (NaN
/// ignored), and whether the block is kept (no Inf/NaN product, every |p| < 2^M, no product with non-zero operands
/// below 2^(M - spread)). A block that is not kept is discarded and redone by Steps D1, D4.
struct f64_extraction {
    std::int64_t s[3] = {0, 0, 0};
    std::int64_t t[3] = {0, 0, 0};
    double largest = 0;
    bool kept = false;
};

#ifdef EXACTREF_DOT_EXTRACTION
/// Step D6 on n pairs (any n; the callers pass blocks of up to 1024) under window top M in
/// [f64_extraction_params::min_top, max_top]. Needs AVX-512 (f64_extraction_supported()); exact only when
/// f64_extraction_environment() (no FTZ, no DAZ; the rounding mode does not matter: every operation rounds to nearest
/// by its own encoding).
f64_extraction f64_extract_block(const double* x, const double* y, std::size_t n, int top);
/// Step D6 for binary32 operands (raw bits; Lemma 5: two levels, f32_extraction_params), window top M in
/// [f32_extraction_params::min_top, max_top]; the same conditions. Level sums in units 2^(M + level_offset[l] - 52)
/// of f32_extraction_params (s[2] = t[2] = 0).
f64_extraction f32_extract_block(const std::uint32_t* x, const std::uint32_t* y, std::size_t n, int top);
/// The same for bfloat16 operands (raw bits): a bfloat16 is a binary32 (its bits shifted up by 16), with the same
/// exponent range and emin, so Lemma 5 and f32_extraction_params apply unchanged.
f64_extraction bf16_extract_block(const std::uint16_t* x, const std::uint16_t* y, std::size_t n, int top);
/// The CPU has x86-64-v4 (AVX-512 F/BW/CD/DQ/VL) and EXACTREF_SIMD does not cap it (simd_targets.h).
bool f64_extraction_supported() noexcept;
/// MXCSR has FTZ and DAZ off (checked once per dot_accumulator::add call).
bool f64_extraction_environment() noexcept;
#endif
/// Blocks whose Step D6 result was kept, since the process started (tests use it to show the path ran; 0 when the
/// kernel is not built).
std::uint64_t f64_extraction_kept_blocks() noexcept;

/// Accumulates one dot product exactly into a reference: the block kernels of dot.cpp behind a small interface, so
/// that dot(), dot_strided() and the per-element GEMM path share them. Usage: construct, add() one or more runs of
/// (x, y) pairs given as raw bits, finish().
class dot_accumulator {
public:
    explicit dot_accumulator(const format_info& f) noexcept;
    /// Adds Σ x[i]·y[i] for i < n (binary64 values).
    void add(const double* x, const double* y, std::size_t n) noexcept;
    /// Adds Σ x[i]·y[i] for i < n (raw bits, low storage_bits of each element).
    void add(const std::uint64_t* x_bits, const std::uint64_t* y_bits, std::size_t n) noexcept;
    void add(const std::uint32_t* x_bits, const std::uint32_t* y_bits, std::size_t n) noexcept;
    void add(const std::uint16_t* x_bits, const std::uint16_t* y_bits, std::size_t n) noexcept;
    /// Adds one more plain term (beta = 1: the existing output).
    void add_term(std::uint64_t bits) noexcept;
    /// Adds everything `other` accumulated (exact: the per-chunk accumulators of a parallel dot product).
    void merge(const dot_accumulator& other) noexcept;
    /// Moves the result into `out` (sum, abs_sum, count, term_format, is_dot, the underflow fields).
    void finish(reference& out) noexcept;

private:
    void add_slow(std::uint64_t x, std::uint64_t y) noexcept;
    void add_bf16(const std::uint16_t* x, const std::uint16_t* y, std::size_t n) noexcept;
    int add_f64_block(const double* x, const double* y, std::size_t len, std::size_t ahead) noexcept;  // D1, D3, D4
    const format_info* f_;
    reference ref_;
    std::uint64_t count_ = 0;
    int min_field_ = 0x7FF;      // smallest binary64 exponent field of a non-zero exact product (narrow formats)
    int min_exponent_ = 0;       // smallest floor(log2 |x·y|) seen on the integer path
};

}  // namespace exactref::detail
