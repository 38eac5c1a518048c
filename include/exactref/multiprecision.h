// exactref/multiprecision.h — exact conversions of superaccumulators and format values to GMP (mpz/mpq via gmpxx),
// MPFR and Boost.Multiprecision types. Including this header makes GMP, MPFR and Boost public dependencies of the
// including code (exactref::exactref already links them).
#pragma once

#include "exactref/config.h"  // C++20, or a clear error

#include <gmpxx.h>
#include <mpfr.h>

#include <algorithm>
#include <bit>
#include <boost/multiprecision/cpp_int.hpp>
#include <cstdint>
#include <stdexcept>

#include "exactref/accumulator.h"
#include "exactref/format.h"

namespace exactref {

/// The exact value of a dyadic number as a GMP rational (exact).
inline mpq_class to_mpq(const dyadic& d) {
    mpz_class m;
    if (!d.magnitude.empty())
        mpz_import(m.get_mpz_t(), d.magnitude.size(), -1, sizeof(std::uint32_t), 0, 0, d.magnitude.data());
    if (d.negative) m = -m;
    mpq_class q(m);
    if (d.exponent >= 0) mpq_mul_2exp(q.get_mpq_t(), q.get_mpq_t(), static_cast<mp_bitcnt_t>(d.exponent));
    else mpq_div_2exp(q.get_mpq_t(), q.get_mpq_t(), static_cast<mp_bitcnt_t>(-d.exponent));
    q.canonicalize();
    return q;
}

/// The exact finite part of an accumulator (specials ignored: check has_nan() and the Inf counts first).
inline mpq_class to_mpq(const superaccumulator& acc) { return to_mpq(acc.to_dyadic()); }

/// The integer m and exponent e with value = m·2^e (exact). m is odd (e is the position of the lowest non-zero bit of
/// the finite part), or m = 0 and e = 0 for an exact zero. Specials are ignored, as in to_mpq.
///   acc.add(12.0); to_mpz_2exp(acc, e)   // -> 3, e = 2
inline mpz_class to_mpz_2exp(const superaccumulator& acc, long& exponent) {
    const dyadic d = acc.to_dyadic();
    mpz_class m;
    exponent = 0;
    if (d.magnitude.empty()) return m;
    mpz_import(m.get_mpz_t(), d.magnitude.size(), -1, sizeof(std::uint32_t), 0, 0, d.magnitude.data());
    // to_dyadic() cuts at a 32-bit chunk boundary; move the trailing zero bits into the exponent.
    const mp_bitcnt_t zeros = mpz_scan1(m.get_mpz_t(), 0);
    mpz_tdiv_q_2exp(m.get_mpz_t(), m.get_mpz_t(), zeros);
    if (d.negative) m = -m;
    exponent = static_cast<long>(d.exponent) + static_cast<long>(zeros);
    return m;
}

/// The exact value of a finite value of format f (raw bits). Throws std::invalid_argument for NaN and ±Inf.
inline mpq_class value_to_mpq(const format_info& f, std::uint64_t bits) {
    const decoded d = decode_bits(f, bits);
    if (d.is_nan || d.is_inf) throw std::invalid_argument("value_to_mpq: not a finite value");
    dyadic x;
    x.negative = d.negative;
    x.exponent = d.exponent;
    if (d.significand != 0) {
        x.magnitude.push_back(static_cast<std::uint32_t>(d.significand));
        if (d.significand >> 32) x.magnitude.push_back(static_cast<std::uint32_t>(d.significand >> 32));
    }
    return to_mpq(x);
}

/// A rational correctly rounded to binary64 in `mode`, with integer operations only (no FP environment
/// dependence: FTZ/DAZ cannot flush a subnormal result). Overflow follows IEEE 754-2019 §7.4.
inline double to_double(const mpq_class& q, rounding mode = rounding::to_nearest_even) {
    if (sgn(q) == 0) return 0.0;
    const bool negative = sgn(q) < 0;
    mpz_class a = abs(q.get_num());
    mpz_class b = q.get_den();
    // Scale so that the quotient has 64 or 65 bits: k = 64 + len(b) - len(a).
    const long k = 64 + static_cast<long>(mpz_sizeinbase(b.get_mpz_t(), 2)) -
                   static_cast<long>(mpz_sizeinbase(a.get_mpz_t(), 2));
    if (k >= 0) mpz_mul_2exp(a.get_mpz_t(), a.get_mpz_t(), static_cast<mp_bitcnt_t>(k));
    else mpz_mul_2exp(b.get_mpz_t(), b.get_mpz_t(), static_cast<mp_bitcnt_t>(-k));
    mpz_class quotient, remainder;
    mpz_tdiv_qr(quotient.get_mpz_t(), remainder.get_mpz_t(), a.get_mpz_t(), b.get_mpz_t());
    bool sticky = remainder != 0;
    long exponent = -k;
    if (mpz_sizeinbase(quotient.get_mpz_t(), 2) > 64) {
        sticky = sticky || mpz_odd_p(quotient.get_mpz_t());
        mpz_tdiv_q_2exp(quotient.get_mpz_t(), quotient.get_mpz_t(), 1);
        ++exponent;
    }
    std::uint64_t m = 0;
    mpz_export(&m, nullptr, -1, sizeof(m), 0, 0, quotient.get_mpz_t());
    // Far outside binary64's range, clamp the exponent: the result is then 0/max/Inf whatever the exact value.
    exponent = std::max(-2000L, std::min(2000L, exponent));
    return std::bit_cast<double>(
        detail::encode(binary64_info, negative, m, static_cast<int>(exponent), sticky, mode));
}

/// Sets `out` (already initialised, any precision) to the accumulator's value rounded once in `rnd` (MPFR's
/// exponent range applies), with the special values of round_bits(): NaN for a NaN term or both infinities, else ±Inf
/// for an infinite term. An exact zero (IEEE 754-2019 §6.3) is -0 when every term was -0.0, and under MPFR_RNDD
/// (roundTowardNegative) also when some term was not +0.0 (1.0 + -1.0 -> -0); otherwise +0, in every other mode
/// (MPFR_RNDA and MPFR_RNDF included); the empty sum is +0 in every mode. Returns MPFR's ternary value (0 when exact).
///   acc.add(1.0); acc.add(-1.0); to_mpfr(out, acc, MPFR_RNDD);   // out -> -0, returns 0
inline int to_mpfr(mpfr_t out, const superaccumulator& acc, mpfr_rnd_t rnd) {
    if (acc.has_nan() || (acc.positive_inf_count() > 0 && acc.negative_inf_count() > 0)) {
        mpfr_set_nan(out);
        return 0;
    }
    if (acc.positive_inf_count() > 0 || acc.negative_inf_count() > 0) {
        mpfr_set_inf(out, acc.positive_inf_count() > 0 ? 1 : -1);
        return 0;
    }
    long e = 0;
    const mpz_class m = to_mpz_2exp(acc, e);
    if (m == 0) {
        const bool negative = rnd == MPFR_RNDD ? acc.term_count() > 0 && !acc.all_positive_zero()
                                               : acc.all_negative_zero();
        mpfr_set_zero(out, negative ? -1 : 1);
        return 0;
    }
    return mpfr_set_z_2exp(out, m.get_mpz_t(), e, rnd);
}

/// The exact finite part as a Boost.Multiprecision rational (no GMP involved).
inline boost::multiprecision::cpp_rational to_cpp_rational(const superaccumulator& acc) {
    using boost::multiprecision::cpp_int;
    const dyadic d = acc.to_dyadic();
    cpp_int m = 0;
    for (auto it = d.magnitude.rbegin(); it != d.magnitude.rend(); ++it) m = (m << 32) | cpp_int(*it);
    if (d.negative) m = -m;
    if (d.exponent >= 0) return boost::multiprecision::cpp_rational(m << d.exponent);
    return boost::multiprecision::cpp_rational(m, cpp_int(1) << -d.exponent);
}

}  // namespace exactref
