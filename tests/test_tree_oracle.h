// tests/test_tree_oracle.h — the tree shapes of DESIGN §4 written out literally, on the oracle's arithmetic, for the
// tree tests (test_tree*.cpp, test_long_tree*.cpp) to compare the library with bit for bit.
//
// Independent of the library on purpose:
//   - the shapes are spelled as the contract words them: a halving leaf is L slots, slots past the end absent, and
//     for h = L/2, L/4, ..., 1 every slot t < h takes slot t + h; leaves (and masked-out fold leaves) are optional
//     nodes combined level by level in pairs, odd last carried up. No prefix trick, no blocks, no threads.
//   - every floating-point step is the oracle's: a sum by oracle::add_rounded (integer arithmetic) or, as a second
//     engine, by MPFR (exact sum at 2200 bits, then oracle::mpfr_round_bits); a product by MPFR or by Boost rationals
//     (oracle::boost_round_bits); min/max/any/all on GMP rationals and the oracle's decode. Nothing here calls
//     format.h's conversions, round_double_to or the superaccumulator.
//   - integers are added and multiplied in __int128 and checked against the type's range, or reduced modulo 2^bits.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "exactref/tree.h"
#include "oracle.h"

namespace exactref::test {

enum class oracle_engine { integer, mpfr };

/// One step of op in the float format `acc` on raw bits, by the oracle.
class float_spec_op {
public:
    float_spec_op(const format_info& acc, reduce_op op, oracle_engine engine) : f_(acc), op_(op), engine_(engine) {}

    std::uint64_t identity() const {
        switch (op_) {
            case reduce_op::sum:
            case reduce_op::any: return oracle::zero_bits(f_, false);
            case reduce_op::product:
            case reduce_op::all: return one();
            case reduce_op::min: return oracle::inf_bits(f_, false);
            case reduce_op::max: return oracle::inf_bits(f_, true);
        }
        return 0;
    }

    std::uint64_t apply(std::uint64_t a, std::uint64_t b) const {
        switch (op_) {
            case reduce_op::sum: return add(a, b);
            case reduce_op::product: return multiply(a, b);
            case reduce_op::min:
            case reduce_op::max: {
                if (oracle::is_nan_bits(f_, a)) return a;
                if (oracle::is_nan_bits(f_, b)) return b;
                const int c = compare(a, b);  // -1: a < b
                if (op_ == reduce_op::min) return c > 0 ? b : a;
                return c < 0 ? b : a;
            }
            case reduce_op::any: return truth(a) || truth(b) ? one() : oracle::zero_bits(f_, false);
            case reduce_op::all: return truth(a) && truth(b) ? one() : oracle::zero_bits(f_, false);
        }
        return 0;
    }

    std::uint64_t finish(std::uint64_t r) const {
        if (op_ == reduce_op::any || op_ == reduce_op::all) return truth(r) ? one() : oracle::zero_bits(f_, false);
        return r;
    }

    /// Exact widening of raw bits of format `from` to the accumulation format (MPFR, checked exact).
    std::uint64_t widen(std::uint64_t bits, const format_info& from) const {
        if (from.id == f_.id) return bits;
        const oracle::parts p = oracle::decode(from, bits);
        if (p.nan) return oracle::nan_bits(f_);
        if (p.inf) return oracle::inf_bits(f_, p.negative);
        if (p.significand == 0) return oracle::zero_bits(f_, p.negative);
        const oracle::mpfr_number v = oracle::mpfr_value(bits, from);
        return oracle::mpfr_round_bits(v.get(), f_, rounding::to_nearest_even);
    }

private:
    std::uint64_t one() const {
        return oracle::boost_round_bits(oracle::boost_rational(1), f_, rounding::to_nearest_even);
    }
    bool truth(std::uint64_t bits) const {
        const oracle::parts p = oracle::decode(f_, bits);
        return p.nan || p.inf || p.significand != 0;
    }
    // Numeric order with -0 < +0 (non-NaN operands).
    int compare(std::uint64_t a, std::uint64_t b) const {
        const oracle::parts x = oracle::decode(f_, a), y = oracle::decode(f_, b);
        const auto key = [](const oracle::parts& p) { return p.inf ? (p.negative ? -2 : 2) : 0; };
        if (key(x) != key(y)) return key(x) < key(y) ? -1 : 1;
        if (x.inf) return 0;
        const mpq_class qa = oracle::gmp_value(a, f_), qb = oracle::gmp_value(b, f_);
        if (qa != qb) return qa < qb ? -1 : 1;
        if (x.significand == 0 && x.negative != y.negative) return x.negative ? -1 : 1;  // -0 < +0
        return 0;
    }
    std::uint64_t add(std::uint64_t a, std::uint64_t b) const {
        if (engine_ == oracle_engine::integer) return oracle::add_rounded(a, b, f_);
        const oracle::parts x = oracle::decode(f_, a), y = oracle::decode(f_, b);
        if (x.nan || y.nan || x.inf || y.inf || x.significand == 0 || y.significand == 0)
            return oracle::add_rounded(a, b, f_);  // specials and zeros: IEEE 754 §6 rules, no rounding involved
        oracle::mpfr_number s(2200);
        mpfr_add(s.get(), oracle::mpfr_value(a, f_).get(), oracle::mpfr_value(b, f_).get(), MPFR_RNDN);  // exact
        if (mpfr_zero_p(s.get())) return oracle::zero_bits(f_, false);  // x + (-x) = +0 (RN)
        return oracle::mpfr_round_bits(s.get(), f_, rounding::to_nearest_even);
    }
    std::uint64_t multiply(std::uint64_t a, std::uint64_t b) const {
        const oracle::parts x = oracle::decode(f_, a), y = oracle::decode(f_, b);
        const bool negative = x.negative != y.negative;
        if (x.nan || y.nan) return oracle::nan_bits(f_);
        const bool x_zero = !x.inf && x.significand == 0, y_zero = !y.inf && y.significand == 0;
        if ((x.inf && y_zero) || (y.inf && x_zero)) return oracle::nan_bits(f_);
        if (x.inf || y.inf) return oracle::inf_bits(f_, negative);
        if (x_zero || y_zero) return oracle::zero_bits(f_, negative);
        if (engine_ == oracle_engine::integer) {
            const oracle::boost_rational q = oracle::boost_value(a, f_) * oracle::boost_value(b, f_);
            return oracle::boost_round_bits(q, f_, rounding::to_nearest_even);
        }
        oracle::mpfr_number p(2 * 64);
        mpfr_mul(p.get(), oracle::mpfr_value(a, f_).get(), oracle::mpfr_value(b, f_).get(), MPFR_RNDN);  // exact
        return oracle::mpfr_round_bits(p.get(), f_, rounding::to_nearest_even);  // an underflow to 0 keeps the sign
    }

    format_info f_;
    reduce_op op_;
    oracle_engine engine_;
};

/// One step of op on integers: exact in __int128, then wrapped modulo 2^bits or checked.
template <class I>
class integer_spec_op {
public:
    integer_spec_op(reduce_op op, bool checked) : op_(op), checked_(checked) {}
    I identity() const {
        switch (op_) {
            case reduce_op::sum:
            case reduce_op::any: return 0;
            case reduce_op::product:
            case reduce_op::all: return 1;
            case reduce_op::min: return std::numeric_limits<I>::max();
            case reduce_op::max: return std::numeric_limits<I>::lowest();
        }
        return 0;
    }
    /// nullopt: a checked overflow.
    std::optional<I> apply(I a, I b) const {
        __extension__ using wide = __int128;
        switch (op_) {
            case reduce_op::sum:
            case reduce_op::product: {
                // Exact in 128 bits: a signed product of two 64-bit values is below 2^126 in magnitude; an unsigned one
                // is below 2^128, so it is formed in unsigned __int128 (a signed one would overflow: UB).
                __extension__ using uwide = unsigned __int128;
                bool fits = false;
                uwide exact_bits = 0;  // the exact result, two's complement modulo 2^128
                if constexpr (std::is_signed_v<I>) {
                    const wide exact = op_ == reduce_op::sum ? wide(a) + wide(b) : wide(a) * wide(b);
                    fits = exact >= wide(std::numeric_limits<I>::lowest()) && exact <= wide(std::numeric_limits<I>::max());
                    exact_bits = static_cast<uwide>(exact);
                } else {
                    const uwide exact = op_ == reduce_op::sum ? uwide(a) + uwide(b) : uwide(a) * uwide(b);
                    fits = exact <= uwide(std::numeric_limits<I>::max());
                    exact_bits = exact;
                }
                if (fits) return static_cast<I>(exact_bits);
                if (checked_) return std::nullopt;
                // modulo 2^bits: the low bits of the two's complement representation
                const uwide low = exact_bits & ((uwide{1} << (8 * sizeof(I))) - 1);
                return static_cast<I>(static_cast<std::make_unsigned_t<I>>(low));
            }
            case reduce_op::min: return a < b ? a : b;
            case reduce_op::max: return a < b ? b : a;
            case reduce_op::any: return (a != 0 || b != 0) ? 1 : 0;
            case reduce_op::all: return (a != 0 && b != 0) ? 1 : 0;
        }
        return 0;
    }
    I finish(I r) const { return (op_ == reduce_op::any || op_ == reduce_op::all) ? (r != 0 ? 1 : 0) : r; }

private:
    reduce_op op_;
    bool checked_;
};

/// Where a checked spec tree first overflowed (level 0: inside leaf `index`).
struct spec_overflow {
    std::uint64_t level;
    std::uint64_t index;
};

/// The literal tree of DESIGN §4 over values already in the accumulation domain (V: raw bits or integers), with the
/// step `op` (apply returns V or optional<V>). Result: the root, or the first overflow in level order.
template <class V, class Op>
struct spec_result {
    std::optional<V> value;  // nullopt with overflow set
    std::optional<spec_overflow> overflow;
};

namespace spec_detail {
template <class V>
std::optional<V> lift(const V& v) { return v; }
template <class V>
std::optional<V> lift(const std::optional<V>& v) { return v; }
}  // namespace spec_detail

template <class V, class Op>
spec_result<V, Op> spec_tree(std::span<const V> values, const tree_shape& shape, std::span<const bool> mask,
                             const Op& op) {
    using node = std::optional<V>;  // nullopt: absent
    spec_result<V, Op> out;
    const std::size_t n = values.size();
    const std::size_t L = shape.leaf;
    const std::size_t m = (n + L - 1) / L;
    std::vector<node> nodes;
    bool failed = false;
    const auto combine = [&](const node& a, const node& b, std::uint64_t level, std::uint64_t index) -> node {
        if (!a) return b;
        if (!b) return a;
        const std::optional<V> r = spec_detail::lift(op.apply(*a, *b));
        if (!r && !failed) {
            failed = true;
            out.overflow = spec_overflow{level, index};
        }
        return r ? r : a;  // the value after an overflow no longer matters
    };
    for (std::size_t j = 0; j < m; ++j) {
        const std::size_t begin = j * L;
        const std::size_t end = std::min(n, begin + L);
        if (shape.kind == tree_kind::halving) {
            std::vector<node> slots(L);
            for (std::size_t t = 0; begin + t < end; ++t) slots[t] = values[begin + t];
            for (std::size_t h = L / 2; h >= 1; h /= 2)
                for (std::size_t t = 0; t < h; ++t) slots[t] = combine(slots[t], slots[t + h], 0, j);
            nodes.push_back(slots[0]);
        } else {
            node acc = op.identity();
            bool kept = false;
            for (std::size_t i = begin; i < end; ++i) {
                if (!mask.empty() && !mask[i]) continue;
                acc = combine(acc, node(values[i]), 0, j);
                kept = true;
            }
            nodes.push_back(kept ? acc : node());
        }
    }
    for (std::uint64_t level = 1; nodes.size() > 1 && !failed; ++level) {
        std::vector<node> next;
        for (std::size_t i = 0; i < nodes.size(); i += 2)
            next.push_back(i + 1 < nodes.size() ? combine(nodes[i], nodes[i + 1], level, i / 2) : nodes[i]);
        nodes = std::move(next);
    }
    if (failed) return out;
    out.value = nodes.empty() || !nodes[0] ? op.identity() : op.finish(*nodes[0]);
    return out;
}

/// The spec tree of float elements T accumulated in format Acc; raw bits of Acc.
template <class T, class Acc>
std::uint64_t spec_float_tree(std::span<const T> xs, reduce_op op, const tree_shape& shape,
                              std::span<const bool> mask = {}, oracle_engine engine = oracle_engine::integer) {
    const float_spec_op step(format_traits<Acc>::info, op, engine);
    std::vector<std::uint64_t> values;
    values.reserve(xs.size());
    for (const T& x : xs) values.push_back(step.widen(format_traits<T>::to_bits(x), format_traits<T>::info));
    return *spec_tree<std::uint64_t>(std::span<const std::uint64_t>(values), shape, mask, step).value;
}

template <class I>
spec_result<I, integer_spec_op<I>> spec_integer_tree(std::span<const I> xs, reduce_op op, const tree_shape& shape,
                                                     bool checked, std::span<const bool> mask = {}) {
    return spec_tree<I>(xs, shape, mask, integer_spec_op<I>(op, checked));
}

/// True when the two raw encodings of format f are the same value bit for bit, or both NaN (payloads may differ).
inline bool same_bits(const format_info& f, std::uint64_t a, std::uint64_t b) {
    return a == b || (oracle::is_nan_bits(f, a) && oracle::is_nan_bits(f, b));
}

}  // namespace exactref::test
