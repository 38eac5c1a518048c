// oracle/oracle.h — slow, independent exact oracles for the tests and benchmarks (never linked by the library).
//
// Three exact sums on three unrelated arithmetic engines (and two algorithms: MPFR's mpfr_sum, and one scaled
// integer), so that a bug in one cannot hide a bug in the library:
//   mpfr_sum   MPFR's mpfr_sum at a precision wide enough to be exact; rounding by MPFR itself (precision p,
//              exponent range set with mpfr_set_emin/emax, mpfr_check_range + mpfr_subnormalize).
//   gmp_sum    GMP: every term shifted onto the lowest exponent in one mpz, the result a canonical mpq_class;
//              an exact decimal printer.
//   boost_sum  Boost.Multiprecision cpp_int / cpp_rational (no GMP backend), the same scaled-integer sum; a correct
//              rounding of any rational to any of the four formats in any mode with integer arithmetic only, and its
//              own decimal printer.
// Every rounded bit pattern a test checks is produced twice: by MPFR (mpfr_exact::round_bits) and by Boost
// (boost_exact::round_bits), and the two must agree before the library is compared with them.
//
// Nothing here uses the library's arithmetic: terms are decoded by the oracle's own decode() (not format.h's
// decode_bits), nothing calls superaccumulator or detail::encode. format.h is used for the format parameters only.
//
// Also here: the exhaustive enumerator of every result a binary tree over any order of n <= 8 terms can produce
// (reachable_sums), the one correctly rounded addition it is built on (add_rounded), random test inputs with mixed
// magnitudes and signs (random_terms), and an RAII guard that sets the rounding mode and FTZ/DAZ for a test.
//
// Special values follow shared/DESIGN.md §3 and accumulator.h: a NaN term, or both +Inf and -Inf, give NaN; otherwise
// any +Inf (-Inf) gives +Inf (-Inf). An exact zero is -0.0 when every term is -0.0, and under rounding::downward
// unless every term is +0.0 (IEEE 754-2019 §6.3); the empty sum is +0.0 in every mode.
#pragma once

#include <gmpxx.h>  // mpq_class
#include <mpfr.h>

// cpp_int, cpp_rational (no GMP backend). GCC 12 reports a false -Wmaybe-uninitialized inside cpp_int's small-value
// storage; the pragma covers Boost's own lines only.
// (clang has no such warning, and would warn about the unknown group.)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <boost/multiprecision/cpp_int.hpp>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#include <cfenv>  // std::fenv_t
#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "exactref/format.h"  // format_info (parameters only), rounding, float16, bfloat16

namespace exactref::oracle {

// ---- terms and their special-value state ------------------------------------------------------------------------

/// The raw bits of every element of xs (low storage_bits of each uint64).
template <floating_format T>
std::vector<std::uint64_t> to_bits(std::span<const T> xs) {
    std::vector<std::uint64_t> out;
    out.reserve(xs.size());
    for (const T& x : xs) out.push_back(format_traits<T>::to_bits(x));
    return out;
}

/// A value split into integer parts by the oracle's own decode (independent of format.h's decode_bits):
///   finite: value = (negative ? -1 : 1) * significand * 2^exponent with significand < 2^p (0 for zeros), and the
///   exponent of the lowest significand bit, emin - p + 1 for subnormals and zeros.
struct parts {
    bool negative = false;
    bool nan = false;
    bool inf = false;
    std::uint64_t significand = 0;
    int exponent = 0;
};
parts decode(const format_info& f, std::uint64_t bits);

/// Raw bits of the canonical quiet NaN (sign 0, top fraction bit set), of ±Inf, of ±max and of ±0 in format f.
std::uint64_t nan_bits(const format_info& f);
std::uint64_t inf_bits(const format_info& f, bool negative);
std::uint64_t max_bits(const format_info& f, bool negative);
std::uint64_t zero_bits(const format_info& f, bool negative);
bool is_nan_bits(const format_info& f, std::uint64_t bits);

/// The special-value state of a list of terms (DESIGN §3): what decides the result besides the finite part.
struct special_state {
    std::uint64_t count = 0;       // number of terms, every kind
    bool nan = false;              // a NaN term (or an Inf*0 product) was seen
    std::uint64_t pos_inf = 0;     // +Inf terms
    std::uint64_t neg_inf = 0;     // -Inf terms
    bool all_negative_zero = false;  // count > 0 and every term is -0.0
    bool all_positive_zero = false;  // count > 0 and every term is +0.0

    /// NaN, +Inf or -Inf in format `to` when the specials decide the result; nullopt when the finite part does.
    std::optional<std::uint64_t> decided_bits(const format_info& to) const;
    /// "nan", "inf", "-inf" when the specials decide the value; nullopt otherwise.
    std::optional<std::string> decided_decimal() const;
    /// The signed zero an exact zero rounds to in `mode` (IEEE 754-2019 §6.3; the empty sum is +0.0).
    std::uint64_t exact_zero_bits(const format_info& to, rounding mode) const;
    /// The decimal of an exact zero: "-0" when every term is -0.0, else "0" (the round-to-nearest rule).
    std::string exact_zero_decimal() const { return all_negative_zero ? "-0" : "0"; }
};

/// One finite non-zero exact term repeated `count` times: (negative ? -1 : 1) * count * magnitude * 2^exponent, with
/// magnitude = high * 2^64 + low (a significand, or the exact product of two significands, < 2^106).
struct exact_term {
    bool negative = false;
    std::uint64_t high = 0;
    std::uint64_t low = 0;
    int exponent = 0;
    std::uint64_t count = 1;
};

/// The terms of a sum (or the exact products of a dot product) in exact form: the special state and the finite
/// non-zero terms, with runs of equal consecutive terms folded into one exact_term with a count (so 2^25 ones cost
/// one term). Throws std::invalid_argument when x and y differ in length.
struct term_list {
    special_state special;
    std::vector<exact_term> finite;
};
term_list sum_terms(std::span<const std::uint64_t> bits, const format_info& f);
term_list dot_terms(std::span<const std::uint64_t> x, std::span<const std::uint64_t> y, const format_info& f);

/// bits * 2^k when that is exactly representable in f (zeros, Inf and NaN are returned as they are); nullopt when it
/// would overflow or lose a bit below the smallest subnormal.
std::optional<std::uint64_t> scale_exact(std::uint64_t bits, const format_info& f, int k);

// ---- MPFR ------------------------------------------------------------------------------------------------------

/// An owning mpfr_t (RAII). Pass named objects, not temporaries, to MPFR's macros (mpfr_set, mpfr_cmp, ...): some
/// expand to statement expressions that end a temporary's lifetime before MPFR reads it.
class mpfr_number {
public:
    explicit mpfr_number(mpfr_prec_t precision = 64);
    mpfr_number(const mpfr_number& other);
    mpfr_number(mpfr_number&& other) noexcept;
    mpfr_number& operator=(mpfr_number other) noexcept;
    ~mpfr_number();
    mpfr_ptr get() noexcept { return value_; }
    mpfr_srcptr get() const noexcept { return value_; }

private:
    mpfr_t value_;
};

/// The exact value of finite bits of f as an MPFR number of precision p (throws std::invalid_argument for NaN/Inf).
mpfr_number mpfr_value(std::uint64_t bits, const format_info& f);

/// Rounds x (any precision, MPFR's default exponent range, finite) to format `to` in `mode` with MPFR: precision p,
/// exponent range [emin - p + 2, emax + 1] (MPFR's convention), mpfr_check_range and mpfr_subnormalize; the exponent
/// range is restored afterwards. Returns raw bits; a zero x gives a zero with x's sign.
std::uint64_t mpfr_round_bits(mpfr_srcptr x, const format_info& to, rounding mode);

/// Rounds the rational x to format `to` in `mode` with MPFR (mpfr_set_q to p bits, then as mpfr_round_bits).
/// A zero x gives +0.0.
std::uint64_t mpfr_round_rational_bits(const mpq_class& x, const format_info& to, rounding mode);

/// An exact sum by MPFR: the finite part held exactly (precision chosen from the terms) and the special state.
struct mpfr_exact {
    special_state special;
    mpfr_number value;  // the exact finite part
    /// Correctly rounded to `to` in `mode` with the special-value rules; raw bits.
    std::uint64_t round_bits(const format_info& to, rounding mode = rounding::to_nearest_even) const;
};

/// Exact sum with mpfr_sum (precision = the bit span of the terms + log2(count) + 2, so it is exact; checked).
mpfr_exact mpfr_sum(std::span<const std::uint64_t> bits, const format_info& f);
template <floating_format T>
mpfr_exact mpfr_sum(std::span<const T> xs) {
    return mpfr_sum(to_bits(xs), format_traits<T>::info);
}
/// Exact Σ x_i*y_i (each product exact, 2p bits) with mpfr_sum.
mpfr_exact mpfr_dot(std::span<const std::uint64_t> x, std::span<const std::uint64_t> y, const format_info& f);
template <floating_format T>
mpfr_exact mpfr_dot(std::span<const T> x, std::span<const T> y) {
    return mpfr_dot(to_bits(x), to_bits(y), format_traits<T>::info);
}

// ---- GMP -------------------------------------------------------------------------------------------------------

/// The exact value of finite bits of f as a rational (throws std::invalid_argument for NaN/Inf).
mpq_class gmp_value(std::uint64_t bits, const format_info& f);

/// Exact decimal of a rational whose denominator is 2^a * 5^b: "-12.5", "0.000244140625", "0" (never "-0"), every
/// digit, no exponent, no trailing fraction zeros. Throws std::invalid_argument for any other denominator.
std::string gmp_decimal(const mpq_class& q);

/// Raw bits and their exact value, for failure messages: "0x3c00 (float16 1)", "0x7e00 (float16 nan)".
std::string describe(std::uint64_t bits, const format_info& f);

/// An exact sum by GMP rationals.
struct gmp_exact {
    special_state special;
    mpq_class value;  // the exact finite part
    /// The exact decimal as superaccumulator::to_decimal() spells it: "nan", "inf", "-inf", "-0", "0", "-0.1".
    std::string decimal() const;
};
gmp_exact gmp_sum(std::span<const std::uint64_t> bits, const format_info& f);
template <floating_format T>
gmp_exact gmp_sum(std::span<const T> xs) {
    return gmp_sum(to_bits(xs), format_traits<T>::info);
}
gmp_exact gmp_dot(std::span<const std::uint64_t> x, std::span<const std::uint64_t> y, const format_info& f);
template <floating_format T>
gmp_exact gmp_dot(std::span<const T> x, std::span<const T> y) {
    return gmp_dot(to_bits(x), to_bits(y), format_traits<T>::info);
}

// ---- Boost.Multiprecision --------------------------------------------------------------------------------------

using boost_integer = boost::multiprecision::cpp_int;
using boost_rational = boost::multiprecision::cpp_rational;

/// The exact value of finite bits of f as a Boost rational (throws std::invalid_argument for NaN/Inf).
boost_rational boost_value(std::uint64_t bits, const format_info& f);

/// Correct rounding of the rational x to format `to` in `mode` (IEEE 754-2019 §4.3, §7.4 overflow, gradual
/// underflow), integer arithmetic only (no MPFR, no floating point). A zero x gives +0.0; a non-zero x that rounds
/// to zero keeps its sign. Dyadic x (denominator 2^k) take the shift-only path of the dyadic overload.
std::uint64_t boost_round_bits(const boost_rational& x, const format_info& to, rounding mode);
/// The same for the dyadic scaled * 2^exponent, with shifts only.
std::uint64_t boost_round_bits(const boost_integer& scaled, long exponent, const format_info& to, rounding mode);

/// Exact decimal of a rational whose denominator is 2^a * 5^b, spelled as gmp_decimal does; else invalid_argument.
std::string boost_decimal(const boost_rational& x);
/// Exact decimal of scaled * 2^exponent.
std::string boost_decimal(const boost_integer& scaled, long exponent);

/// An exact sum by Boost: every term shifted onto the lowest exponent and added into one cpp_int.
struct boost_exact {
    special_state special;
    boost_integer scaled = 0;  // the exact finite part is scaled * 2^exponent
    long exponent = 0;
    /// The exact finite part as a rational.
    boost_rational value() const;
    std::uint64_t round_bits(const format_info& to, rounding mode = rounding::to_nearest_even) const;
    std::string decimal() const;  // as gmp_exact::decimal()
};
boost_exact boost_sum(std::span<const std::uint64_t> bits, const format_info& f);
template <floating_format T>
boost_exact boost_sum(std::span<const T> xs) {
    return boost_sum(to_bits(xs), format_traits<T>::info);
}
boost_exact boost_dot(std::span<const std::uint64_t> x, std::span<const std::uint64_t> y, const format_info& f);
template <floating_format T>
boost_exact boost_dot(std::span<const T> x, std::span<const T> y) {
    return boost_dot(to_bits(x), to_bits(y), format_traits<T>::info);
}

// ---- one rounded addition, and every result of every tree over every order ---------------------------------------

/// a + b correctly rounded in format f (IEEE 754-2019 §6.3 signed zeros, §7.4 overflow; NaN is the canonical quiet
/// NaN, Inf + -Inf is NaN). Integer arithmetic only, so it is independent of the host FP environment and right for
/// float16 and bfloat16.
///   add_rounded(2048 (float16), 1 (float16), f16)  // -> 2048 (2049 is a tie; 2048 is even)
std::uint64_t add_rounded(std::uint64_t a, std::uint64_t b, const format_info& f,
                          rounding mode = rounding::to_nearest_even);

/// Every result (raw bits, sorted, unique; NaN as the canonical quiet NaN) of summing `terms` with any binary tree
/// over any order, each addition rounded in f by add_rounded. n = 0 gives {+0.0}, n = 1 the term itself.
/// Memoized over sub-multisets, so n = 8 (135135 distinct trees) takes milliseconds.
/// Throws std::invalid_argument for more than 8 terms.
///   reachable_sums({2048, 1, 1} in float16, f16)  // -> {2048, 2050}: (2048+1)+1 stagnates, 2048+(1+1) does not
std::vector<std::uint64_t> reachable_sums(std::span<const std::uint64_t> terms, const format_info& f,
                                          rounding mode = rounding::to_nearest_even);
/// As reachable_sums, over the trees of height <= h only (h additions on the longest root-to-leaf path). Empty when
/// no such tree exists (h < ceil(log2 n)).
std::vector<std::uint64_t> reachable_sums_height(std::span<const std::uint64_t> terms, const format_info& f,
                                                 unsigned height, rounding mode = rounding::to_nearest_even);

/// Both at once, sharing the memo: element h (0 <= h < n) holds the results of the trees of height <= h (empty when
/// h < ceil(log2 n)); the last element is reachable_sums. n = 0 gives {{+0.0}}. Throws like reachable_sums.
std::vector<std::vector<std::uint64_t>> reachable_sums_by_height(std::span<const std::uint64_t> terms,
                                                                 const format_info& f,
                                                                 rounding mode = rounding::to_nearest_even);

// ---- random test inputs ------------------------------------------------------------------------------------------

/// Kinds of random input (all with random signs).
enum class term_mix {
    full_range,  // uniformly random finite encodings: every binade, subnormals and zeros included
    clustered,   // exponents in a random window of random width (carries, cancellation within a few binades)
    cancelling,  // clustered values, most also present negated, plus a few small residues (sums near 0)
    ties,        // x and ±half an ulp of x (split into pieces), plus cancelling pairs: exact midpoints
    subnormal,   // subnormals and zeros only
    specials,    // clustered values with NaN, ±Inf, ±0.0 sprinkled in
};
inline constexpr term_mix all_term_mixes[] = {term_mix::full_range, term_mix::clustered, term_mix::cancelling,
                                              term_mix::ties,       term_mix::subnormal, term_mix::specials};
const char* to_string(term_mix mix) noexcept;

/// n random terms of format f (raw bits) of the given kind. Deterministic for a given rng state.
std::vector<std::uint64_t> random_terms(const format_info& f, std::size_t n, term_mix mix, std::mt19937_64& rng);

/// Typed view of raw bits: the values of format T.
template <floating_format T>
std::vector<T> from_bits(std::span<const std::uint64_t> bits) {
    std::vector<T> out;
    out.reserve(bits.size());
    for (std::uint64_t b : bits)
        out.push_back(format_traits<T>::from_bits(static_cast<typename format_traits<T>::bits_type>(b)));
    return out;
}

// ---- the floating-point environment --------------------------------------------------------------------------

/// Sets the host rounding mode (fesetround). Throws std::runtime_error when the host refuses.
void set_rounding_mode(rounding mode);
/// The host rounding mode (fegetround).
rounding current_rounding_mode();
/// True on x86-64 (MXCSR FTZ bit 15, DAZ bit 6 via _mm_getcsr/_mm_setcsr).
bool ftz_daz_supported() noexcept;
/// Turns flush-to-zero and denormals-are-zero on or off together. Throws std::runtime_error when unsupported.
void set_ftz_daz(bool on);
/// True when both FTZ and DAZ are on.
bool ftz_daz_enabled() noexcept;

/// Sets a rounding mode and FTZ/DAZ for its lifetime, then restores the whole previous environment (fesetenv and
/// the MXCSR). Non-copyable.
///   { exactref::oracle::fp_environment_guard g(exactref::rounding::upward, true); /* RU, FTZ+DAZ */ }
class fp_environment_guard {
public:
    fp_environment_guard(rounding mode, bool ftz_daz);
    ~fp_environment_guard();
    fp_environment_guard(const fp_environment_guard&) = delete;
    fp_environment_guard& operator=(const fp_environment_guard&) = delete;

private:
    std::fenv_t saved_env_;
    unsigned saved_mxcsr_ = 0;
};

}  // namespace exactref::oracle
