// exactref/accumulator.h — the superaccumulator: exact sums (and exact products) of binary64/32/16 and bfloat16
// values, exact merge, correct rounding to each format in each IEEE rounding mode, exact decimal printing.
//
// Representation (docs/algorithms/superaccumulator.md):
//   finite part = sum_k chunk[k] * 2^(lsb_exponent + 32 k),  k = 0 .. chunk_count - 1,  chunk[k] an int64.
//   Each term adds |delta| < 2^32 to at most a few chunks, so 2^30 terms fit before a carry pass ("normalize")
//   is due; normalize() brings chunks 0 .. chunk_count-2 into [0, 2^32) and leaves the sign in the top chunk.
//   lsb_exponent = -2176 lies below 2^-2148, the smallest product of two binary64 subnormals; the top chunk reaches
//   2^2176, above 2^2048 (largest binary64 product) times 2^64 terms: no term of any supported kind is ever lost.
//   Special values are tracked beside the chunks: NaN seen, +Inf and -Inf counts, and whether every term was -0.0
//   (or +0.0), which decides the sign of an exact zero (IEEE 754-2019 §6.3).
//
// Long inputs take a blocked fast path (add(std::span)): per block, the largest exponent fixes a window of W binades
// whose significands are shifted into int64 lane sums with integer SIMD; terms below it go to further windows or,
// when few, one by one (docs/algorithms/superaccumulator.md, "Fast path").
// The result is the same exact value; only the speed differs.
//
// Nothing here uses floating-point arithmetic: values are decoded with std::bit_cast, so results are identical under
// every rounding mode and with FTZ/DAZ set.
#pragma once

#include "exactref/config.h"  // C++20, or a clear error

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "exactref/format.h"

namespace exactref {

/// An exact dyadic number: (negative ? -1 : 1) * magnitude * 2^exponent, magnitude as little-endian 32-bit words
/// with no leading zero word (empty for zero). The exchange type for GMP/MPFR/Boost conversions (multiprecision.h).
struct dyadic {
    bool negative = false;
    std::vector<std::uint32_t> magnitude;
    int exponent = 0;
    bool is_zero() const noexcept { return magnitude.empty(); }
};

/// Exact accumulator of floating-point terms (a "superaccumulator", Kulisch & Miranker; Neal, arXiv:1505.05571).
///
/// Exactness: the finite part equals the exact sum of every finite term added (and of every exact product added
/// with add_product), for up to 2^64 terms. Rounding is correct (IEEE 754-2019 §4.3) for every mode.
/// Special values: round() returns NaN if a NaN was added or both +Inf and -Inf were; else ±Inf if any Inf was added.
/// An exact zero rounds to -0.0 when every term was -0.0 (and, under rounding::downward, unless every term was
/// +0.0), else +0.0; an empty accumulator is +0.0.
/// Thread safety: none inside one object; give each thread its own and merge().
///
///   exactref::superaccumulator acc;
///   acc.add(1e308); acc.add(1e308); acc.add(-1e308);    // no intermediate overflow
///   acc.round<double>();                                 // -> 1e308
///   acc.to_decimal();                                    // -> the 309-digit integer 1e308 stands for
class superaccumulator {
public:
    static constexpr int chunk_bits = 32;
    static constexpr int lsb_exponent = -2176;
    static constexpr int chunk_count = 136;
    static_assert(lsb_exponent % chunk_bits == 0, "chunk boundaries sit at multiples of 2^32");
    static_assert(lsb_exponent <= 2 * binary64_info.subnormal_lsb_exponent(), "products of subnormals fit");
    static_assert(lsb_exponent + chunk_bits * chunk_count >= 2 * (binary64_info.emax + 1) + 64 + 1,
                  "largest product times 2^64 terms, plus a sign bit, fits");

    superaccumulator() noexcept { chunks_.fill(0); }

    /// lo <= finite part <= hi with lo = RD and hi = RU of it in binary64 (lo = hi when it is a binary64 value;
    /// beyond binary64's range one end is ±max and the other ±Inf). Specials are ignored (as sign()). O(1) when
    /// cache_enclosure() ran since the value last changed (every add, merge and negate clears the cache), else one
    /// carry pass over a copy. The floating-point filter of covers() over arrays reads it (covers.h).
    struct binary64_enclosure {
        double lo = 0;
        double hi = 0;
    };
    binary64_enclosure enclosure() const noexcept {
        return enclosure_cached_ ? binary64_enclosure{enclosure_lo_, enclosure_hi_} : compute_enclosure();
    }
    /// Computes the enclosure and keeps it until the value changes (producers of references call it once).
    void cache_enclosure() noexcept {
        const binary64_enclosure e = compute_enclosure();
        enclosure_lo_ = e.lo;
        enclosure_hi_ = e.hi;
        enclosure_cached_ = true;
    }
    bool enclosure_cached() const noexcept { return enclosure_cached_; }

    /// Adds one term exactly.
    template <floating_format T>
    void add(T x) noexcept {
        add_bits(format_traits<T>::info, format_traits<T>::to_bits(x));
    }

    /// Adds every element of xs exactly; the blocked SIMD fast path for long spans. O(1) extra memory.
    void add(std::span<const double> xs) noexcept;
    void add(std::span<const float> xs) noexcept;
    void add(std::span<const float16> xs) noexcept;
    void add(std::span<const bfloat16> xs) noexcept;

    /// Adds |x| for every element (Σ|x_i|, used for error bounds), with the same fast path.
    void add_abs(std::span<const double> xs) noexcept;
    void add_abs(std::span<const float> xs) noexcept;
    void add_abs(std::span<const float16> xs) noexcept;
    void add_abs(std::span<const bfloat16> xs) noexcept;

    /// Adds one term given as raw bits of format f.
    void add_bits(const format_info& f, std::uint64_t bits) noexcept;

    /// Adds the exact product x*y (no rounding). Inf*0 counts as NaN; Inf*finite as a signed Inf.
    template <floating_format T>
    void add_product(T x, T y) noexcept {
        add_product_bits(format_traits<T>::info, format_traits<T>::to_bits(x), format_traits<T>::to_bits(y));
    }
    void add_product_bits(const format_info& f, std::uint64_t x_bits, std::uint64_t y_bits) noexcept;

    /// Adds (negative ? -1 : 1) * m * 2^e exactly, for any m and e with 2^e * m inside the covered range
    /// (lsb_exponent <= e, e + 64 <= 2112: 2^64 terms of headroom below the top). Adds to the value only: no term is counted and the special state and
    /// signed-zero flags are unchanged (use note_terms for the bookkeeping).
    void add_scaled(bool negative, std::uint64_t m, int e) noexcept;

    /// Adds another accumulator's value and special state (exact; merge order does not matter).
    void merge(const superaccumulator& other) noexcept;

    /// Replaces the value by its negation (also swaps the Inf counts and the -0.0/+0.0 flags).
    void negate() noexcept;

    /// Sign of the exact finite part: -1, 0 or +1 (specials ignored).
    int sign() const noexcept;

    /// Sign of (finite part - value) for a finite value of any format; exact.
    template <floating_format T>
    int compare(T value) const noexcept {
        superaccumulator d = *this;
        d.add(exactref::negate(value));
        return d.sign();
    }

    /// The finite part correctly rounded to format f in `mode`, with the special-value rules above; raw bits.
    std::uint64_t round_bits(const format_info& f, rounding mode = rounding::to_nearest_even) const noexcept;

    template <floating_format T>
    T round(rounding mode = rounding::to_nearest_even) const noexcept {
        using tr = format_traits<T>;
        return tr::from_bits(static_cast<typename tr::bits_type>(round_bits(tr::info, mode)));
    }

    /// The exact finite part as a decimal string ("-0.1000000000000000055511151231257827021181583404541015625"),
    /// or "nan", "inf", "-inf" when the special state decides the value. Zero prints "0" or "-0" (by the RN rule).
    std::string to_decimal() const;

    /// The exact finite part as a dyadic number (specials ignored).
    dyadic to_dyadic() const;

    // Special-value state.
    bool has_nan() const noexcept { return nan_seen_; }
    std::uint64_t positive_inf_count() const noexcept { return pos_inf_; }
    std::uint64_t negative_inf_count() const noexcept { return neg_inf_; }
    /// Number of terms added (every kind, zeros and specials included).
    std::uint64_t term_count() const noexcept { return terms_; }
    /// True when at least one term was added and every term was -0.0 (resp. +0.0).
    bool all_negative_zero() const noexcept { return terms_ > 0 && !non_negative_zero_seen_; }
    bool all_positive_zero() const noexcept { return terms_ > 0 && !non_positive_zero_seen_; }
    /// True when no finite non-zero term reached the finite part (exact zero), regardless of specials.
    bool finite_part_is_zero() const noexcept { return sign() == 0; }

    /// Brings chunks into canonical form (see the file comment). Never changes the value.
    void normalize() noexcept;

    /// Read-only view of the chunks (canonical after normalize()).
    const std::array<std::int64_t, chunk_count>& chunks() const noexcept { return chunks_; }

    /// Internal: called by the fast path with a lane sum of terms already decoded.
    void add_lane_sum(std::int64_t value, int exponent) noexcept;
    /// Internal: bookkeeping for terms the fast path consumed in bulk.
    void note_terms(std::uint64_t count, bool saw_not_negative_zero, bool saw_not_positive_zero) noexcept {
        terms_ += count;
        non_negative_zero_seen_ |= saw_not_negative_zero;
        non_positive_zero_seen_ |= saw_not_positive_zero;
    }
    void note_special(bool is_nan, bool negative) noexcept;

private:
    binary64_enclosure compute_enclosure() const noexcept;
    // Adds m * 2^(lsb_exponent + pos) with sign; pos >= 0. Touches chunks pos/32 .. pos/32 + 2.
    void add_at(std::uint64_t m, int pos, bool negative) noexcept;
    void count_pending(unsigned n) noexcept {
        pending_ += n;
        if (pending_ >= max_pending) normalize();
    }

    static constexpr std::uint32_t max_pending = 1u << 30;  // < 2^31: int64 chunks cannot overflow
    std::array<std::int64_t, chunk_count> chunks_;
    std::uint32_t pending_ = 0;
    std::uint64_t terms_ = 0;
    std::uint64_t pos_inf_ = 0;
    std::uint64_t neg_inf_ = 0;
    bool nan_seen_ = false;
    bool non_negative_zero_seen_ = false;
    bool non_positive_zero_seen_ = false;
    // The binary64 enclosure of the finite part (enclosure()), valid while enclosure_cached_: every change of the
    // chunks (add_at, merge, negate) clears it; the empty accumulator's value 0 is its own enclosure.
    bool enclosure_cached_ = true;
    double enclosure_lo_ = 0;
    double enclosure_hi_ = 0;
};

/// Adds every element of xs to `sum` and its magnitude to `abs_sum` in one pass over the data: the exact Σ x_i and
/// Σ |x_i| that a reference (reference.h) holds. Same result as sum.add(xs) followed by abs_sum.add_abs(xs), bit for
/// bit, in about the time of one of them (docs/performance.md). O(1) extra memory, no allocation. Special values: a
/// NaN reaches both; ±Inf reaches `sum` with its sign and `abs_sum` as +Inf; zeros count as terms in both.
///   exactref::superaccumulator s, a;
///   exactref::add_sum_and_abs(std::span<const double>(xs), s, a);   // xs = [1.5, -2.0]: s -> -0.5, a -> 3.5
void add_sum_and_abs(std::span<const double> xs, superaccumulator& sum, superaccumulator& abs_sum) noexcept;
void add_sum_and_abs(std::span<const float> xs, superaccumulator& sum, superaccumulator& abs_sum) noexcept;
void add_sum_and_abs(std::span<const float16> xs, superaccumulator& sum, superaccumulator& abs_sum) noexcept;
void add_sum_and_abs(std::span<const bfloat16> xs, superaccumulator& sum, superaccumulator& abs_sum) noexcept;

/// The exact sum of xs (convenience): superaccumulator with add(xs).
template <floating_format T>
superaccumulator exact_sum(std::span<const T> xs) noexcept {
    superaccumulator acc;
    acc.add(xs);
    return acc;
}

namespace detail {
/// add_sum_and_abs, and the largest magnitude of a finite term as raw bits of the format (sign cleared), max-ed into
/// largest_bits: one pass for everything a sum reference holds (reference.h). Inf/NaN terms do not count.
void add_sum_abs_largest(std::span<const double> xs, superaccumulator& sum, superaccumulator& abs_sum,
                         std::uint64_t& largest_bits) noexcept;
void add_sum_abs_largest(std::span<const float> xs, superaccumulator& sum, superaccumulator& abs_sum,
                         std::uint64_t& largest_bits) noexcept;
void add_sum_abs_largest(std::span<const float16> xs, superaccumulator& sum, superaccumulator& abs_sum,
                         std::uint64_t& largest_bits) noexcept;
void add_sum_abs_largest(std::span<const bfloat16> xs, superaccumulator& sum, superaccumulator& abs_sum,
                         std::uint64_t& largest_bits) noexcept;

/// Rounds (negative ? -1 : 1) * (m + sticky * epsilon) * 2^e, 0 <= epsilon < 1, to format f in `mode`: the core of every
/// correctly rounded conversion in the library (IEEE 754-2019 §4.3). `m` holds the significant bits, `sticky` says
/// whether anything non-zero lies below them. Returns raw bits; a result of zero carries the given sign.
std::uint64_t encode(const format_info& f, bool negative, std::uint64_t m, int e, bool sticky, rounding mode) noexcept;

/// Adds `count` infinities of one sign to acc, as count add() calls of ±Inf would, in O(log count) merges: for code
/// that rebuilds an accumulator from a recorded state (the device's exact sum, a pickled Python reference).
inline void add_infinities(superaccumulator& acc, std::uint64_t count, bool negative) {
    superaccumulator power;  // holds 2^i infinities
    power.note_special(false, negative);
    while (count != 0) {
        if (count & 1u) acc.merge(power);
        count >>= 1;
        if (count != 0) {
            const superaccumulator copy = power;
            power.merge(copy);
        }
    }
}
}  // namespace detail

}  // namespace exactref
