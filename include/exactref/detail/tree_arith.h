// exactref/detail/tree_arith.h — the single steps every tree shape and comparison order is built from: one rounded
// addition or multiplication in an accumulation format, IEEE 754-2019 minimum/maximum, the truth of an element, and
// the integer operations with and without an overflow check.
//
// Internal to src/tree*.cpp and src/orders.cpp, which are compiled with -ffp-contract=off and refuse -ffast-math
// (the bits promised by tree.h depend on each step being exactly one IEEE operation).
//
// float16 / bfloat16 steps (tree.h): operands are widened exactly to binary64, the operation is made there — exact
// for every float16 sum (multiples of 2^-24 below 2^17: at most 41 significant bits) and every float16 or bfloat16
// product (at most 22 bits; exponents within binary64's range); a bfloat16 sum is exact unless the exponents differ
// by more than 44 (the exact sum then spans more than 53 bits), and then its one binary64 rounding is innocuous
// because 53 >= 2·8 + 2 (Figueroa 1995) — and the binary64 value is rounded once to the format by round_double_to
// (integer operations). The widening of bfloat16 and the binary64 operation are hardware steps, which DAZ/FTZ and the
// rounding mode would change: the trees and orders run them in the default environment (detail/fp_environment.h).
#pragma once

#include <bit>          // std::bit_cast
#include <cstdint>
#include <limits>
#include <type_traits>

#include "exactref/format.h"
#include "exactref/tree.h"

namespace exactref::detail {

// ---- float formats ----------------------------------------------------------------------------------------------------

/// Exact binary64 value of a float16 / bfloat16 (integer operations only).
inline double exact_double(float16 x) noexcept { return to_double_exact(binary16_info, x.bits); }
inline double exact_double(bfloat16 x) noexcept {
    return static_cast<double>(std::bit_cast<float>(static_cast<std::uint32_t>(x.bits) << 16));
}

/// Rounds a binary64 value once, to nearest even, to the 16-bit format H (integer operations only).
template <class H>
H round_to(double v) noexcept {
    using tr = format_traits<H>;
    return tr::from_bits(static_cast<typename tr::bits_type>(round_double_to(tr::info, v, rounding::to_nearest_even)));
}

/// Raw bits of a value of a float format, widened to 64 bits.
template <floating_format F>
constexpr std::uint64_t raw_bits(F x) noexcept {
    return static_cast<std::uint64_t>(format_traits<F>::to_bits(x));
}

template <floating_format F>
inline constexpr std::uint64_t sign_mask_v = std::uint64_t{1} << (format_traits<F>::info.storage_bits - 1);

/// Magnitude bits above this are NaN; equal is Inf.
template <floating_format F>
inline constexpr std::uint64_t inf_magnitude_v =
    std::uint64_t{format_traits<F>::info.special_exponent_field()} << (format_traits<F>::info.precision - 1);

template <floating_format F>
constexpr bool is_nan_value(F x) noexcept {
    return (raw_bits(x) & ~sign_mask_v<F>) > inf_magnitude_v<F>;
}
template <floating_format F>
constexpr bool is_nonzero_value(F x) noexcept {
    return (raw_bits(x) & ~sign_mask_v<F>) != 0;
}
/// A key whose unsigned order is the numeric order of non-NaN values, with -0.0 < +0.0 (IEEE 754-2019 totalOrder
/// restricted to non-NaN values).
template <floating_format F>
constexpr std::uint64_t order_key(F x) noexcept {
    const std::uint64_t b = raw_bits(x);
    return (b & sign_mask_v<F>) ? (sign_mask_v<F> - 1 - (b & ~sign_mask_v<F>)) : (b | sign_mask_v<F>);
}

/// One rounded operation in accumulation format A (A a float format).
template <class A>
struct float_arith;

template <class A>
    requires(std::is_same_v<A, double> || std::is_same_v<A, float>)
struct float_arith<A> {
    static A add(A a, A b) noexcept { return a + b; }
    static A mul(A a, A b) noexcept { return a * b; }
    static constexpr A from_int(int v) noexcept { return static_cast<A>(v); }
    static constexpr A infinity() noexcept { return std::numeric_limits<A>::infinity(); }
};

template <class A>
    requires(std::is_same_v<A, float16> || std::is_same_v<A, bfloat16>)
struct float_arith<A> {
    static A add(A a, A b) noexcept { return round_to<A>(exact_double(a) + exact_double(b)); }
    static A mul(A a, A b) noexcept { return round_to<A>(exact_double(a) * exact_double(b)); }
    // 0 and 1 only (identities and any/all results): the encodings of +0.0 and 1.0.
    static A from_int(int v) noexcept {
        constexpr auto one = static_cast<std::uint16_t>(std::uint64_t{format_traits<A>::info.emax} << (format_traits<A>::info.precision - 1));
        return format_traits<A>::from_bits(v == 0 ? std::uint16_t{0} : one);
    }
    static A infinity() noexcept { return format_traits<A>::from_bits(static_cast<std::uint16_t>(inf_magnitude_v<A>)); }
};

/// Exact widening of an element to the accumulation format (identity when they are the same).
template <class Acc, class T>
inline Acc widen(T x) noexcept {
    if constexpr (std::is_same_v<Acc, T>) {
        return x;
    } else {
        static_assert(std::is_same_v<Acc, float> && (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>));
        return static_cast<float>(x);  // every float16 / bfloat16 value is a float value
    }
}

// ---- the steps of each op -----------------------------------------------------------------------------------------------

/// One step of op Op in accumulation type Acc: identity(), apply(a, b, out) (false when a checked integer operation
/// overflowed; out is then unspecified), finish(root) (any/all normalise to 1 or 0). can_fail says whether apply can
/// return false, so that unchecked kernels compile to plain loops.
template <class Acc, reduce_op Op, bool Checked>
struct tree_step;

// Float formats.
template <floating_format Acc, reduce_op Op, bool Checked>
struct tree_step<Acc, Op, Checked> {
    static_assert(!Checked, "overflow checks are for integer sums and products");
    using arith = float_arith<Acc>;
    static constexpr bool can_fail = false;

    static Acc identity() noexcept {
        if constexpr (Op == reduce_op::sum || Op == reduce_op::any) return arith::from_int(0);
        else if constexpr (Op == reduce_op::product || Op == reduce_op::all) return arith::from_int(1);
        else if constexpr (Op == reduce_op::min) return arith::infinity();
        else return negate(arith::infinity());
    }
    static Acc combine(Acc a, Acc b) noexcept {
        if constexpr (Op == reduce_op::sum) {
            return arith::add(a, b);
        } else if constexpr (Op == reduce_op::product) {
            return arith::mul(a, b);
        } else if constexpr (Op == reduce_op::min || Op == reduce_op::max) {
            // IEEE 754-2019 minimum / maximum: NaN propagates (the first NaN operand), -0.0 < +0.0.
            if (is_nan_value(a)) return a;
            if (is_nan_value(b)) return b;
            const bool b_first = Op == reduce_op::min ? order_key(b) < order_key(a) : order_key(a) < order_key(b);
            return b_first ? b : a;
        } else if constexpr (Op == reduce_op::any) {
            return arith::from_int(is_nonzero_value(a) || is_nonzero_value(b) ? 1 : 0);
        } else {
            return arith::from_int(is_nonzero_value(a) && is_nonzero_value(b) ? 1 : 0);
        }
    }
    static bool apply(Acc a, Acc b, Acc& out) noexcept {
        out = combine(a, b);
        return true;
    }
    static Acc finish(Acc r) noexcept {
        if constexpr (Op == reduce_op::any || Op == reduce_op::all) return arith::from_int(is_nonzero_value(r) ? 1 : 0);
        else return r;
    }
};

// Integer types.
template <tree_integer Acc, reduce_op Op, bool Checked>
struct tree_step<Acc, Op, Checked> {
    static_assert(!Checked || Op == reduce_op::sum || Op == reduce_op::product,
                  "overflow checks are for integer sums and products");
    using unsigned_type = std::make_unsigned_t<Acc>;
    static constexpr bool can_fail = Checked;

    static constexpr Acc identity() noexcept {
        if constexpr (Op == reduce_op::sum || Op == reduce_op::any) return Acc{0};
        else if constexpr (Op == reduce_op::product || Op == reduce_op::all) return Acc{1};
        else if constexpr (Op == reduce_op::min) return std::numeric_limits<Acc>::max();
        else return std::numeric_limits<Acc>::lowest();
    }
    static constexpr bool apply(Acc a, Acc b, Acc& out) noexcept {
        if constexpr (Op == reduce_op::sum) {
            if constexpr (Checked) return !__builtin_add_overflow(a, b, &out);
            // Wrap-around: modular arithmetic in the unsigned type of the same width (defined behaviour).
            out = static_cast<Acc>(static_cast<unsigned_type>(static_cast<unsigned_type>(a) + static_cast<unsigned_type>(b)));
            return true;
        } else if constexpr (Op == reduce_op::product) {
            if constexpr (Checked) return !__builtin_mul_overflow(a, b, &out);
            // Promote past int so that a narrow unsigned product cannot overflow a signed int.
            using wide = std::conditional_t<(sizeof(Acc) < sizeof(unsigned)), unsigned, unsigned_type>;
            out = static_cast<Acc>(static_cast<unsigned_type>(static_cast<wide>(static_cast<unsigned_type>(a)) *
                                                              static_cast<wide>(static_cast<unsigned_type>(b))));
            return true;
        } else if constexpr (Op == reduce_op::min) {
            out = b < a ? b : a;
            return true;
        } else if constexpr (Op == reduce_op::max) {
            out = a < b ? b : a;
            return true;
        } else if constexpr (Op == reduce_op::any) {
            out = (a != 0 || b != 0) ? Acc{1} : Acc{0};
            return true;
        } else {
            out = (a != 0 && b != 0) ? Acc{1} : Acc{0};
            return true;
        }
    }
    static constexpr Acc combine(Acc a, Acc b) noexcept {
        Acc out{};
        apply(a, b, out);
        return out;
    }
    static constexpr Acc finish(Acc r) noexcept {
        if constexpr (Op == reduce_op::any || Op == reduce_op::all) return r != 0 ? Acc{1} : Acc{0};
        else return r;
    }
};

}  // namespace exactref::detail
