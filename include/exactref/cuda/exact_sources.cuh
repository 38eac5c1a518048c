// exactref/cuda/exact_sources.cuh — Step E1 of the exact device sum and dot (exact_steps.cuh has the algorithm):
// where each lane's terms come from. A source loads a lane's elements of a warp slice, records the special values
// and signed zeros in the lane's state as the superaccumulator would, and hands the finite non-zero terms to the
// window lanes of Step E2 as raw bits of one term format.
//
//   sum_source<T, N>  lane l takes elements base + l + 32 j, j < N (coalesced), one term each, in T's own format.
//   dot_source<T, N>  the same pairs of x and y; each exact product becomes binary64 terms: for float32, float16 and
//                     bfloat16 p = x·y computed exactly in binary64 (at most 48 significant bits); for binary64 pairs
//                     with both operands normal and -918 <= E_x + E_y <= 1021, p = fl(x·y) and e = fma(x, y, -p)
//                     (x·y = p + e exactly, e zero or normal; |x·y| = |p| + e·sign(p), so e enters S with p's sign);
//                     any other finite non-zero binary64 product goes straight into the block's chunks as its 106-bit
//                     integer significand product at its exact position (add_wide).
#pragma once

#include <cstdint>
#include <type_traits>

#include "exactref/cuda/config.cuh"
#include "exactref/cuda/exact_steps.cuh"
#include "exactref/format.h"

#if !defined(__CUDA_ARCH__)
#include <cmath>  // std::fma (the host side of Step E1)
#endif

namespace exactref::cuda::detail {

// ---- Step E1: where the terms come from -----------------------------------------------------------------------------

template <class T>
struct element_layout;
template <> struct element_layout<double> { using type = binary64_terms; };
template <> struct element_layout<float> { using type = binary32_terms; };
template <> struct element_layout<float16> { using type = binary16_terms; };
template <> struct element_layout<bfloat16> { using type = bfloat16_terms; };

template <class T>
EXACTREF_HD_INLINE std::uint64_t element_bits(const T& x) noexcept {
    if constexpr (std::is_same_v<T, double>) return bits_of(x);
    else if constexpr (std::is_same_v<T, float>) return bits_of(x);
    else return x.bits;
}

/// Classifies one term of a sum (raw bits): specials and zeros update the lane's state; returns true for a finite
/// non-zero term (to be added). The flags follow superaccumulator::add_bits for s and, for S, the same term with its
/// sign cleared.
template <class L>
EXACTREF_HD_INLINE bool note_sum_term(std::uint64_t b, lane_special& sp) noexcept {
    const std::uint64_t field = (b >> L::frac_bits) & L::field_mask;
    const std::uint64_t frac = b & L::frac_mask;
    const bool negative = (b & L::sign_bit) != 0;
    if (field == L::field_mask) {
        if (frac != 0) sp.nan_seen = true;
        else if (negative) ++sp.negative_inf;
        else ++sp.positive_inf;
        sp.not_negative_zero = sp.not_positive_zero = sp.nonzero = true;
        return false;
    }
    if (field == 0 && frac == 0) {
        (negative ? sp.not_positive_zero : sp.not_negative_zero) = true;
        return false;
    }
    sp.not_negative_zero = sp.not_positive_zero = sp.nonzero = true;
    return true;
}

/// Sum: lane `lane` of the warp slice [base, end) takes elements base + lane + 32 j, j < N.
template <class T, unsigned N>
struct sum_source {
    using layout = typename element_layout<T>::type;
    static constexpr unsigned terms_per_lane = N;
    const T* x;

    EXACTREF_HD_INLINE void load(lane_terms<layout, N>& t, lane_special& sp, block_chunks&, std::uint64_t base,
                                 std::uint64_t end, unsigned lane) const noexcept {
        t.pending = 0;
        t.abs_negative = 0;
        EXACTREF_UNROLL
        for (unsigned j = 0; j < N; ++j) {
            const std::uint64_t i = base + lane + 32u * j;
            const std::uint64_t b = i < end ? element_bits(x[i]) : 0;  // +0.0 past the end: not a term (below)
            t.bits[j] = static_cast<typename layout::bits_type>(b);
            if (i < end && note_sum_term<layout>(b, sp)) t.pending |= 1u << j;
        }
    }
};

/// binary64 value of a finite value of format (P, ExponentBits), exactly, with integer operations.
template <int P, int ExponentBits>
EXACTREF_HD_INLINE std::uint64_t widen_to_binary64_bits(std::uint64_t b) noexcept {
    using L = term_layout<std::conditional_t<P == 24, std::uint32_t, std::uint16_t>, P, ExponentBits>;
    const std::uint64_t sign = ((b >> (L::storage_bits - 1)) & 1u) << 63;
    const std::uint64_t field = (b >> L::frac_bits) & L::field_mask;
    const std::uint64_t m = (b & L::frac_mask) | (field != 0 ? (std::uint64_t{1} << L::frac_bits) : 0);
    if (m == 0) return sign;
    const int e = static_cast<int>(field == 0 ? 1 : field) - L::bias - L::frac_bits;
    const int lead = 63 - leading_zeros(m);
    return sign | (static_cast<std::uint64_t>(e + lead + 1023) << 52) | ((m << (52 - lead)) & ((std::uint64_t{1} << 52) - 1));
}

/// Dot product: lane `lane` takes pairs base + lane + 32 j, j < N, each giving one binary64 term (narrow formats) or
/// two (binary64: p and e).
template <class T, unsigned N>
struct dot_source {
    using layout = binary64_terms;
    static constexpr bool wide = std::is_same_v<T, double>;
    static constexpr unsigned terms_per_lane = wide ? 2 * N : N;
    using element = typename element_layout<T>::type;
    const T* x;
    const T* y;

    /// The special-value rules of superaccumulator::add_product_bits for s and for S (|x|·|y|). Returns true for a
    /// finite non-zero product.
    EXACTREF_HD_INLINE static bool note_product(std::uint64_t xb, std::uint64_t yb, lane_special& sp) noexcept {
        using E = element;
        const std::uint64_t fx = (xb >> E::frac_bits) & E::field_mask, fy = (yb >> E::frac_bits) & E::field_mask;
        const bool x_special = fx == E::field_mask, y_special = fy == E::field_mask;
        const bool x_nan = x_special && (xb & E::frac_mask) != 0, y_nan = y_special && (yb & E::frac_mask) != 0;
        const bool x_zero = (xb & ~E::sign_bit) == 0, y_zero = (yb & ~E::sign_bit) == 0;
        const bool negative = ((xb ^ yb) & E::sign_bit) != 0;
        if (x_nan || y_nan || (x_special && y_zero) || (y_special && x_zero)) {
            sp.nan_seen = true;
            sp.not_negative_zero = sp.not_positive_zero = sp.nonzero = true;
            return false;
        }
        if (x_special || y_special) {
            ++(negative ? sp.negative_inf : sp.positive_inf);
            sp.not_negative_zero = sp.not_positive_zero = sp.nonzero = true;
            return false;
        }
        if (x_zero || y_zero) {
            (negative ? sp.not_positive_zero : sp.not_negative_zero) = true;
            return false;
        }
        sp.not_negative_zero = sp.not_positive_zero = sp.nonzero = true;
        return true;
    }

    EXACTREF_HD_INLINE void load(lane_terms<layout, terms_per_lane>& t, lane_special& sp, block_chunks& c,
                                 std::uint64_t base, std::uint64_t end, unsigned lane) const noexcept {
        t.pending = 0;
        t.abs_negative = 0;
        EXACTREF_UNROLL
        for (unsigned j = 0; j < N; ++j) {
            const std::uint64_t i = base + lane + 32u * j;
            const std::uint64_t xb = i < end ? element_bits(x[i]) : 0;
            const std::uint64_t yb = i < end ? element_bits(y[i]) : 0;
            if constexpr (wide) {
                t.bits[2 * j] = 0;
                t.bits[2 * j + 1] = 0;
            } else {
                t.bits[j] = 0;
            }
            if (i >= end || !note_product(xb, yb, sp)) continue;
            if constexpr (!wide) {
                // Step E1, narrow formats: the exact product in binary64 (at most 2p <= 48 significant bits, far
                // inside binary64's range), its exponent for min_product_exponent (always a normal binary64).
                const double a = double_from_bits(widen_to_binary64_bits<element::precision, element::exponent_bits>(xb));
                const double b = double_from_bits(widen_to_binary64_bits<element::precision, element::exponent_bits>(yb));
                const std::uint64_t pb = bits_of(exact_product(a, b));
                t.bits[j] = pb;
                t.pending |= 1u << j;
                const int ex = static_cast<int>((pb >> 52) & 0x7FF) - 1023;
                sp.min_product_exponent = ex < sp.min_product_exponent ? ex : sp.min_product_exponent;
            } else {
                const std::uint64_t fx = (xb >> 52) & 0x7FF, fy = (yb >> 52) & 0x7FF;
                const bool normal = fx != 0 && fy != 0;
                const std::int64_t exponent_sum = static_cast<std::int64_t>(fx + fy) - 2046;
                if (normal && exponent_sum >= -918 && exponent_sum <= 1021) {
                    // p + e = x·y exactly (TwoProduct with FMA; e is zero or normal, p cannot overflow)
                    const double a = double_from_bits(xb), b = double_from_bits(yb);
                    const double p = exact_product(a, b);
                    const double e = fma_rn(a, b, -p);
                    const std::uint64_t pb = bits_of(p), eb = bits_of(e);
                    t.bits[2 * j] = pb;
                    t.pending |= 1u << (2 * j);
                    if ((eb << 1) != 0) {
                        t.bits[2 * j + 1] = eb;
                        t.pending |= 1u << (2 * j + 1);
                        if (((eb ^ pb) >> 63) != 0) t.abs_negative |= 1u << (2 * j + 1);
                    }
                } else {
                    // any other finite non-zero product: the 106-bit integer product at its exact position
                    const std::uint64_t mx = (xb & ((std::uint64_t{1} << 52) - 1)) | (fx != 0 ? std::uint64_t{1} << 52 : 0);
                    const std::uint64_t my = (yb & ((std::uint64_t{1} << 52) - 1)) | (fy != 0 ? std::uint64_t{1} << 52 : 0);
                    const int e = static_cast<int>(fx == 0 ? 1 : fx) + static_cast<int>(fy == 0 ? 1 : fy) - 2 * 1075;
                    const std::uint64_t lo = mx * my, hi = mul_high(mx, my);
                    add_wide(c.sum, ((xb ^ yb) >> 63) != 0, lo, hi, e);
                    add_wide(c.abs, false, lo, hi, e);
                    const int width = hi != 0 ? 128 - leading_zeros(hi) : 64 - leading_zeros(lo);
                    const int ex = width - 1 + e;
                    sp.min_product_exponent = ex < sp.min_product_exponent ? ex : sp.min_product_exponent;
                }
            }
        }
    }

private:
    EXACTREF_HD_INLINE static double exact_product(double a, double b) noexcept {
#if defined(__CUDA_ARCH__)
        return __dmul_rn(a, b);
#else
        return a * b;
#endif
    }
    EXACTREF_HD_INLINE static double fma_rn(double a, double b, double c) noexcept {
#if defined(__CUDA_ARCH__)
        return __fma_rn(a, b, c);
#else
        return std::fma(a, b, c);
#endif
    }
};

}  // namespace exactref::cuda::detail
