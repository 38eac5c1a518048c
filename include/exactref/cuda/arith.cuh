// exactref/cuda/arith.cuh — one step of each tree op, for the device and for the host block emulator: the same
// operations, rounded the same way, as the host trees' steps (include/exactref/detail/tree_arith.h).
//
// Why a second copy: tree_arith.h is host code (std::bit_cast, round_double_to in src/format.cpp), which device code
// cannot call. The functions here are __host__ __device__ and use integer operations for everything that is not one
// IEEE operation; tests/test_cuda_arith.cpp proves them equal to the host steps (exhaustively over every float16
// and bfloat16 value for the conversions, and over dense samples for the two-operand steps).
//
// Per accumulation format (tree.h, "Element and accumulation types"):
//   double, float     one IEEE operation, round to nearest even: __dadd_rn/__dmul_rn/__fadd_rn/__fmul_rn on the
//                     device (never contracted into an FMA), + and * on the host (sources compiled with
//                     -ffp-contract=off).
//   float16, bfloat16 operands widened exactly to binary64, the operation made there (exact for float16 sums and for
//                     every product; a bfloat16 sum is exact or rounded once innocuously, Figueroa 1995), and the
//                     binary64 value rounded once to the format with integer operations (round_binary64_to).
//   integers          two's complement, modulo 2^bits (no overflow check on the device).
// min/max are IEEE 754-2019 minimum/maximum on the encodings (NaN first, -0.0 < +0.0): pure integer logic, so
// their results, NaN payloads included, are the host's bit for bit. For sum and product a NaN result is a NaN on both
// sides, but its sign and payload follow each processor's NaN rules (x86 propagates an operand's payload, NVIDIA
// GPUs return a canonical NaN), so "same bits" means: identical bits, or both NaN (as the exact() standard reads it).
#pragma once

#include <cstdint>
#include <type_traits>

#include "exactref/cuda/config.cuh"
#include "exactref/format.h"  // exactref::float16, exactref::bfloat16 (16-bit storage, no arithmetic)
#include "exactref/tree.h"    // reduce_op, tree_integer

namespace exactref::cuda::detail {

// ---- 16-bit formats: exact widening and one rounding, integer operations only -------------------------------------

/// Parameters of a 16-bit format: precision P (hidden bit included), exponent field width, emax (= bias).
template <int P, int ExponentBits>
struct narrow_layout {
    static constexpr int precision = P;
    static constexpr int frac_bits = P - 1;
    static constexpr int exponent_bits = ExponentBits;
    static constexpr int emax = (1 << (ExponentBits - 1)) - 1;
    static constexpr int bias = emax;
    static constexpr int emin = 1 - emax;
    static constexpr std::uint32_t field_max = (1u << ExponentBits) - 1;
    static constexpr std::uint32_t frac_mask = (1u << frac_bits) - 1;
    static constexpr std::uint32_t sign_bit = 0x8000u;
    static_assert(1 + ExponentBits + frac_bits == 16, "16-bit interchange layout");
};
using binary16_layout = narrow_layout<11, 5>;
using bfloat16_layout = narrow_layout<8, 8>;

/// The binary64 value of a 16-bit value (raw bits), exactly; a NaN becomes the quiet NaN of the same sign with no
/// payload, as exactref::to_double_exact does.
template <class L>
EXACTREF_HD_INLINE double narrow_to_double(std::uint32_t b) noexcept {
    const std::uint64_t sign = static_cast<std::uint64_t>((b >> 15) & 1u) << 63;
    const std::uint32_t field = (b >> L::frac_bits) & L::field_max;
    const std::uint32_t frac = b & L::frac_mask;
    if (field == L::field_max) {
        const std::uint64_t nan_bits = frac != 0 ? (std::uint64_t{1} << 51) : 0;
        return double_from_bits(sign | (std::uint64_t{0x7FF} << 52) | nan_bits);
    }
    const std::uint64_t m = field == 0 ? frac : (frac | (1u << L::frac_bits));
    if (m == 0) return double_from_bits(sign);
    // value = m * 2^e; every 16-bit value is a normal binary64 value
    const int e = (field == 0 ? 1 : static_cast<int>(field)) - L::bias - L::frac_bits;
    const int lead = 63 - leading_zeros(m);
    const std::uint64_t frac52 = (m << (52 - lead)) & ((std::uint64_t{1} << 52) - 1);
    return double_from_bits(sign | (static_cast<std::uint64_t>(e + lead + 1023) << 52) | frac52);
}

/// The binary32 value of a 16-bit value (raw bits), exactly (NaN: the quiet NaN of the same sign, no payload).
template <class L>
EXACTREF_HD_INLINE float narrow_to_float(std::uint32_t b) noexcept {
    if constexpr (std::is_same_v<L, bfloat16_layout>) {
        return float_from_bits(b << 16);  // bfloat16 is the top half of a binary32 (NaN payload kept, as on the host)
    } else {
        const std::uint32_t sign = ((b >> 15) & 1u) << 31;
        const std::uint32_t field = (b >> L::frac_bits) & L::field_max;
        const std::uint32_t frac = b & L::frac_mask;
        if (field == L::field_max) return float_from_bits(sign | (0xFFu << 23) | (frac != 0 ? (1u << 22) : 0u));
        const std::uint32_t m = field == 0 ? frac : (frac | (1u << L::frac_bits));
        if (m == 0) return float_from_bits(sign);
        const int e = (field == 0 ? 1 : static_cast<int>(field)) - L::bias - L::frac_bits;
        const int lead = 63 - leading_zeros(m);
        const std::uint32_t frac23 = (m << (23 - lead)) & ((1u << 23) - 1);
        return float_from_bits(sign | (static_cast<std::uint32_t>(e + lead + 127) << 23) | frac23);
    }
}

/// Rounds a binary64 value once, to nearest even, to the 16-bit format L; raw bits. The integer algorithm of
/// exactref::detail::encode (src/accumulator.cpp, Steps R1-R4) specialised to round-to-nearest: gradual underflow,
/// overflow to ±Inf, a zero keeps its sign, a NaN becomes the quiet NaN of the same sign (exactref::round_double_to).
template <class L>
EXACTREF_HD_INLINE std::uint32_t round_binary64_to(double v) noexcept {
    const std::uint64_t b = bits_of(v);
    const bool negative = (b >> 63) != 0;
    const std::uint32_t sign = negative ? L::sign_bit : 0u;
    const std::uint32_t field = static_cast<std::uint32_t>((b >> 52) & 0x7FF);
    const std::uint64_t frac = b & ((std::uint64_t{1} << 52) - 1);
    if (field == 0x7FF) {
        const std::uint32_t quiet = frac != 0 ? (1u << (L::frac_bits - 1)) : 0u;
        return sign | (L::field_max << L::frac_bits) | quiet;
    }
    const std::uint64_t m = field == 0 ? frac : (frac | (std::uint64_t{1} << 52));
    if (m == 0) return sign;
    const int e = (field == 0 ? 1 : static_cast<int>(field)) - 1023 - 52;
    // Step R1: the ulp exponent q of the result
    const int leading = e + 63 - leading_zeros(m);
    int q = (leading > L::emin ? leading : L::emin) - L::precision + 1;
    // Step R2: M, the round bit and the sticky bit (m has 53 bits, so q - e >= 1 whenever the value is inexact)
    const int shift = q - e;
    std::uint64_t M;
    bool round_bit = false, sticky = false;
    if (shift <= 0) {
        M = m << (-shift);
    } else if (shift <= 63) {
        M = m >> shift;
        round_bit = ((m >> (shift - 1)) & 1u) != 0;
        sticky = (m & ((std::uint64_t{1} << (shift - 1)) - 1)) != 0;
    } else {
        M = 0;  // far below half of the smallest subnormal (m < 2^53 <= 2^(shift - 1))
        sticky = true;
    }
    // Step R3: round to nearest, ties to even
    const std::uint64_t hidden = std::uint64_t{1} << L::frac_bits;
    if (round_bit && (sticky || (M & 1u) != 0)) {
        ++M;
        if (M == (hidden << 1)) {
            M = hidden;
            ++q;
        }
    }
    // Step R4: overflow and encoding
    if (M >= hidden) {
        const int exponent = q + L::frac_bits;
        if (exponent > L::emax) return sign | (L::field_max << L::frac_bits);
        return sign | (static_cast<std::uint32_t>(exponent + L::bias) << L::frac_bits) |
               static_cast<std::uint32_t>(M - hidden);
    }
    return sign | static_cast<std::uint32_t>(M);
}

// ---- one rounded operation per accumulation format --------------------------------------------------------------------

/// Raw bits of a float-format value, widened to 64 bits.
EXACTREF_HD_INLINE std::uint64_t raw_bits(double x) noexcept { return bits_of(x); }
EXACTREF_HD_INLINE std::uint64_t raw_bits(float x) noexcept { return bits_of(x); }
EXACTREF_HD_INLINE std::uint64_t raw_bits(float16 x) noexcept { return x.bits; }
EXACTREF_HD_INLINE std::uint64_t raw_bits(bfloat16 x) noexcept { return x.bits; }

template <class A>
struct device_arith;

template <>
struct device_arith<double> {
    static constexpr int storage_bits = 64;
    static constexpr std::uint64_t inf_magnitude = std::uint64_t{0x7FF} << 52;
    EXACTREF_HD_INLINE static double add(double a, double b) noexcept {
#if defined(__CUDA_ARCH__)
        return __dadd_rn(a, b);
#else
        return a + b;
#endif
    }
    EXACTREF_HD_INLINE static double mul(double a, double b) noexcept {
#if defined(__CUDA_ARCH__)
        return __dmul_rn(a, b);
#else
        return a * b;
#endif
    }
    EXACTREF_HD_INLINE static double from_bits(std::uint64_t b) noexcept { return double_from_bits(b); }
};

template <>
struct device_arith<float> {
    static constexpr int storage_bits = 32;
    static constexpr std::uint64_t inf_magnitude = std::uint64_t{0xFF} << 23;
    EXACTREF_HD_INLINE static float add(float a, float b) noexcept {
#if defined(__CUDA_ARCH__)
        return __fadd_rn(a, b);
#else
        return a + b;
#endif
    }
    EXACTREF_HD_INLINE static float mul(float a, float b) noexcept {
#if defined(__CUDA_ARCH__)
        return __fmul_rn(a, b);
#else
        return a * b;
#endif
    }
    EXACTREF_HD_INLINE static float from_bits(std::uint64_t b) noexcept {
        return float_from_bits(static_cast<std::uint32_t>(b));
    }
};

/// float16 and bfloat16: exact binary64 operation, one integer rounding (file comment).
template <class H, class L>
struct narrow_arith {
    static constexpr int storage_bits = 16;
    static constexpr std::uint64_t inf_magnitude = std::uint64_t{L::field_max} << L::frac_bits;
    EXACTREF_HD_INLINE static H from_bits(std::uint64_t b) noexcept {
        H h;
        h.bits = static_cast<std::uint16_t>(b);
        return h;
    }
    EXACTREF_HD_INLINE static H add(H a, H b) noexcept {
        return from_bits(round_binary64_to<L>(device_arith<double>::add(narrow_to_double<L>(a.bits),
                                                                        narrow_to_double<L>(b.bits))));
    }
    EXACTREF_HD_INLINE static H mul(H a, H b) noexcept {
        return from_bits(round_binary64_to<L>(device_arith<double>::mul(narrow_to_double<L>(a.bits),
                                                                        narrow_to_double<L>(b.bits))));
    }
};
template <>
struct device_arith<float16> : narrow_arith<float16, binary16_layout> {};
template <>
struct device_arith<bfloat16> : narrow_arith<bfloat16, bfloat16_layout> {};

/// Exact widening of an element to the accumulation format (the identity when they are the same).
template <class Acc, class T>
EXACTREF_HD_INLINE Acc widen(T x) noexcept {
    if constexpr (std::is_same_v<Acc, T>) {
        return x;
    } else if constexpr (std::is_same_v<T, float16>) {
        static_assert(std::is_same_v<Acc, float>);
        return narrow_to_float<binary16_layout>(x.bits);
    } else {
        static_assert(std::is_same_v<Acc, float> && std::is_same_v<T, bfloat16>);
        return narrow_to_float<bfloat16_layout>(x.bits);
    }
}

// ---- the steps of each op -----------------------------------------------------------------------------------------

/// The element types and accumulation types the device trees take: (T, T) for the four float formats,
/// (float16, float), (bfloat16, float), and (T, T) for the 32- and 64-bit integer types.
template <class T>
concept device_tree_integer =
    std::is_same_v<T, int> || std::is_same_v<T, unsigned> || std::is_same_v<T, long> ||
    std::is_same_v<T, unsigned long> || std::is_same_v<T, long long> || std::is_same_v<T, unsigned long long>;

template <class T>
concept device_float_format =
    std::is_same_v<T, double> || std::is_same_v<T, float> || std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>;

template <class T, class Acc>
concept device_tree_accumulation =
    (std::is_same_v<T, Acc> && (device_float_format<T> || device_tree_integer<T>)) ||
    (std::is_same_v<Acc, float> && (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>));

/// One step of op Op in accumulation type Acc: identity(), combine(a, b), finish(root) (any/all give 1 or 0): the
/// device twin of exactref::detail::tree_step (tree_arith.h), without the overflow check.
template <class Acc, reduce_op Op, class Enable = void>
struct device_step;

template <class Acc, reduce_op Op>
struct device_step<Acc, Op, std::enable_if_t<device_float_format<Acc>>> {
    using arith = device_arith<Acc>;
    using value_type = Acc;
    static constexpr reduce_op op = Op;
    static constexpr std::uint64_t sign_mask = std::uint64_t{1} << (arith::storage_bits - 1);

    EXACTREF_HD_INLINE static bool is_nan(Acc x) noexcept { return (raw_bits(x) & ~sign_mask) > arith::inf_magnitude; }
    EXACTREF_HD_INLINE static bool is_nonzero(Acc x) noexcept { return (raw_bits(x) & ~sign_mask) != 0; }
    /// Unsigned order = numeric order of non-NaN values, -0.0 < +0.0 (tree_arith.h, order_key).
    EXACTREF_HD_INLINE static std::uint64_t order_key(Acc x) noexcept {
        const std::uint64_t b = raw_bits(x);
        return (b & sign_mask) ? (sign_mask - 1 - (b & ~sign_mask)) : (b | sign_mask);
    }
    /// 0 and 1 (identities and any/all results): the encodings of +0.0 and 1.0.
    EXACTREF_HD_INLINE static Acc from_int(int v) noexcept {
        constexpr int p = arith::storage_bits == 64 ? 53 : arith::storage_bits == 32 ? 24 :
                          std::is_same_v<Acc, float16> ? 11 : 8;
        constexpr std::uint64_t bias = (std::uint64_t{1} << (arith::storage_bits - p - 1)) - 1;
        return arith::from_bits(v == 0 ? 0 : (bias << (p - 1)));
    }
    EXACTREF_HD_INLINE static Acc identity() noexcept {
        if constexpr (Op == reduce_op::sum || Op == reduce_op::any) return from_int(0);
        else if constexpr (Op == reduce_op::product || Op == reduce_op::all) return from_int(1);
        else if constexpr (Op == reduce_op::min) return arith::from_bits(arith::inf_magnitude);
        else return arith::from_bits(arith::inf_magnitude | sign_mask);
    }
    EXACTREF_HD_INLINE static Acc combine(Acc a, Acc b) noexcept {
        if constexpr (Op == reduce_op::sum) {
            return arith::add(a, b);
        } else if constexpr (Op == reduce_op::product) {
            return arith::mul(a, b);
        } else if constexpr (Op == reduce_op::min || Op == reduce_op::max) {
            // IEEE 754-2019 minimum / maximum: NaN propagates (the first NaN operand), -0.0 < +0.0.
            if (is_nan(a)) return a;
            if (is_nan(b)) return b;
            const bool b_first = Op == reduce_op::min ? order_key(b) < order_key(a) : order_key(a) < order_key(b);
            return b_first ? b : a;
        } else if constexpr (Op == reduce_op::any) {
            return from_int(is_nonzero(a) || is_nonzero(b) ? 1 : 0);
        } else {
            return from_int(is_nonzero(a) && is_nonzero(b) ? 1 : 0);
        }
    }
    EXACTREF_HD_INLINE static Acc finish(Acc r) noexcept {
        if constexpr (Op == reduce_op::any || Op == reduce_op::all) return from_int(is_nonzero(r) ? 1 : 0);
        else return r;
    }
};

template <class Acc, reduce_op Op>
struct device_step<Acc, Op, std::enable_if_t<device_tree_integer<Acc>>> {
    using value_type = Acc;
    using unsigned_type = std::make_unsigned_t<Acc>;
    static constexpr reduce_op op = Op;

    EXACTREF_HD_INLINE static Acc identity() noexcept {
        if constexpr (Op == reduce_op::sum || Op == reduce_op::any) return Acc{0};
        else if constexpr (Op == reduce_op::product || Op == reduce_op::all) return Acc{1};
        else if constexpr (Op == reduce_op::min) return static_cast<Acc>(std::is_signed_v<Acc> ? ~unsigned_type{0} >> 1 : ~unsigned_type{0});
        else return static_cast<Acc>(std::is_signed_v<Acc> ? ~(~unsigned_type{0} >> 1) : unsigned_type{0});
    }
    EXACTREF_HD_INLINE static Acc combine(Acc a, Acc b) noexcept {
        // Wrap-around: modular arithmetic in the unsigned type of the same width (at least 32 bits here, so no
        // promotion to int can overflow).
        if constexpr (Op == reduce_op::sum) return static_cast<Acc>(static_cast<unsigned_type>(a) + static_cast<unsigned_type>(b));
        else if constexpr (Op == reduce_op::product) return static_cast<Acc>(static_cast<unsigned_type>(a) * static_cast<unsigned_type>(b));
        else if constexpr (Op == reduce_op::min) return b < a ? b : a;
        else if constexpr (Op == reduce_op::max) return a < b ? b : a;
        else if constexpr (Op == reduce_op::any) return (a != 0 || b != 0) ? Acc{1} : Acc{0};
        else return (a != 0 && b != 0) ? Acc{1} : Acc{0};
    }
    EXACTREF_HD_INLINE static Acc finish(Acc r) noexcept {
        if constexpr (Op == reduce_op::any || Op == reduce_op::all) return r != 0 ? Acc{1} : Acc{0};
        else return r;
    }
};

}  // namespace exactref::cuda::detail
