// Internal to src/dot*.cpp and src/gemm*.cpp: exact conversions, product exponents and the block kernels of the exact
// dot product (docs/algorithms/ozaki.md, "Exact dot"). Integer operations decide everything that could depend on the
// floating-point environment; the only floating-point operations are exact ones (a product of two binary64 numbers
// with at most 24 significand bits each, far from underflow and overflow; an FMA whose result is exact).
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
    /// Adds Σ x[i]·y[i] for raw bits held in 64-bit words, whatever the format (narrowed block by block).
    void add_wide(const std::uint64_t* x_bits, const std::uint64_t* y_bits, std::size_t n) noexcept;
    /// Adds one more plain term (beta = 1: the existing output).
    void add_term(std::uint64_t bits) noexcept;
    /// Adds everything `other` accumulated (exact: the per-chunk accumulators of a parallel dot product).
    void merge(const dot_accumulator& other) noexcept;
    /// Moves the result into `out` (sum, abs_sum, count, term_format, is_dot, the underflow fields).
    void finish(reference& out) noexcept;

private:
    void add_slow(std::uint64_t x, std::uint64_t y) noexcept;
    const format_info* f_;
    reference ref_;
    std::uint64_t count_ = 0;
    int min_field_ = 0x7FF;      // smallest binary64 exponent field of a non-zero exact product (narrow formats)
    int min_exponent_ = 0;       // smallest floor(log2 |x·y|) seen on the integer path
};

}  // namespace exactref::detail
