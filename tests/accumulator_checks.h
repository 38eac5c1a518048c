// tests/accumulator_checks.h — shared by test_accumulator.cpp and test_long_accumulator.cpp: one exact sum checked
// against the MPFR, Boost and GMP oracles (oracle/oracle.h) through both of the superaccumulator's paths, in every
// rounding mode and format, with to_decimal, to_dyadic, sign and the special-value state; and the random inputs.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "exactref/accumulator.h"
#include "exactref/format.h"
#include "oracle.h"

namespace exactref_test {

using namespace exactref;
namespace orc = exactref::oracle;

inline constexpr rounding all_modes[] = {rounding::to_nearest_even, rounding::toward_zero, rounding::upward,
                                         rounding::downward};
inline const format_info* const all_formats[] = {&binary64_info, &binary32_info, &binary16_info, &bfloat16_info};

template <class T>
using bits_of = typename format_traits<T>::bits_type;

template <class T>
T value_of(std::uint64_t bits) {
    return format_traits<T>::from_bits(static_cast<bits_of<T>>(bits));
}
template <class T>
std::uint64_t bits_from(double v) {  // v correctly rounded (RN) into T
    return round_double_to(format_traits<T>::info, v, rounding::to_nearest_even);
}

// Two accumulators that must hold the same state (one pass against two, one thread against several): the value,
// rounded to every format in every mode, the term and special counts, the signed-zero flags and the normalized chunks.
inline void expect_same_accumulators(const superaccumulator& a, const superaccumulator& b) {
    EXPECT_EQ(a.to_decimal(), b.to_decimal());
    EXPECT_EQ(a.term_count(), b.term_count());
    EXPECT_EQ(a.has_nan(), b.has_nan());
    EXPECT_EQ(a.positive_inf_count(), b.positive_inf_count());
    EXPECT_EQ(a.negative_inf_count(), b.negative_inf_count());
    EXPECT_EQ(a.all_negative_zero(), b.all_negative_zero());
    EXPECT_EQ(a.all_positive_zero(), b.all_positive_zero());
    for (const format_info* f : all_formats)
        for (rounding m : all_modes) EXPECT_EQ(a.round_bits(*f, m), b.round_bits(*f, m)) << f->name;
    superaccumulator ca = a, cb = b;
    ca.normalize();
    cb.normalize();
    EXPECT_EQ(ca.chunks(), cb.chunks());
}

// The exact value of a dyadic as a rational.
inline mpq_class to_mpq(const dyadic& d) {
    mpz_class m = 0;
    for (auto it = d.magnitude.rbegin(); it != d.magnitude.rend(); ++it) {
        m <<= 32;
        m += static_cast<unsigned long>(*it);
    }
    mpq_class q(d.negative ? mpz_class(-m) : m);
    if (d.exponent >= 0) q <<= static_cast<mp_bitcnt_t>(d.exponent);
    else q >>= static_cast<mp_bitcnt_t>(-d.exponent);
    return q;
}

// Bit-for-bit comparison of a rounded result; a NaN result only needs to be a NaN.
inline ::testing::AssertionResult same_result(std::uint64_t got, std::uint64_t expected, const format_info& f) {
    if (orc::is_nan_bits(f, expected) ? orc::is_nan_bits(f, got) : got == expected)
        return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "got " << orc::describe(got, f) << ", expected "
                                         << orc::describe(expected, f);
}

// Everything one exact sum must agree on. `label` names the input (seed, case number, kind) for the failure message.
// Returns false after the first failure so that loops can stop.
inline bool check_against_oracles(const superaccumulator& acc, const orc::mpfr_exact& m, const orc::boost_exact& b,
                           const orc::gmp_exact& g, const format_info& term_format, const std::string& path,
                           bool every_format) {
    SCOPED_TRACE(path);
    for (const format_info* f : all_formats) {
        if (!every_format && f != &term_format) continue;
        for (rounding mode : all_modes) {
            const std::uint64_t expected = m.round_bits(*f, mode);
            const std::uint64_t by_boost = b.round_bits(*f, mode);
            if (expected != by_boost) {
                ADD_FAILURE() << "the oracles disagree for " << f->name << " " << to_string(mode) << ": MPFR "
                              << orc::describe(expected, *f) << ", Boost " << orc::describe(by_boost, *f);
                return false;
            }
            const auto r = same_result(acc.round_bits(*f, mode), expected, *f);
            if (!r) {
                ADD_FAILURE() << "round_bits(" << f->name << ", " << to_string(mode) << "): " << r.message();
                return false;
            }
        }
    }
    const std::string decimal = g.decimal();
    if (every_format && decimal != b.decimal()) {  // Boost's printer is slow for binary64: only with every_format
        ADD_FAILURE() << "the oracles' decimals disagree: GMP " << decimal << ", Boost " << b.decimal();
        return false;
    }
    if (acc.to_decimal() != decimal) {
        ADD_FAILURE() << "to_decimal() = " << acc.to_decimal() << ", exact " << decimal;
        return false;
    }
    const dyadic d = acc.to_dyadic();
    if (to_mpq(d) != g.value || (!d.is_zero() && d.magnitude.back() == 0)) {
        ADD_FAILURE() << "to_dyadic() is not the exact finite part " << orc::gmp_decimal(g.value);
        return false;
    }
    const int sign = g.value > 0 ? 1 : (g.value < 0 ? -1 : 0);
    const orc::special_state& s = g.special;
    if (acc.sign() != sign || acc.finite_part_is_zero() != (sign == 0) || acc.has_nan() != s.nan ||
        acc.positive_inf_count() != s.pos_inf || acc.negative_inf_count() != s.neg_inf ||
        acc.term_count() != s.count || acc.all_negative_zero() != s.all_negative_zero ||
        acc.all_positive_zero() != s.all_positive_zero) {
        ADD_FAILURE() << "sign/special state differs: sign " << acc.sign() << " vs " << sign << ", nan "
                      << acc.has_nan() << " vs " << s.nan << ", +inf " << acc.positive_inf_count() << " vs "
                      << s.pos_inf << ", -inf " << acc.negative_inf_count() << " vs " << s.neg_inf << ", terms "
                      << acc.term_count() << " vs " << s.count << ", all -0 " << acc.all_negative_zero() << " vs "
                      << s.all_negative_zero << ", all +0 " << acc.all_positive_zero() << " vs "
                      << s.all_positive_zero;
        return false;
    }
    return true;
}

// Both library paths against the three oracles. every_format: also round to the three other formats.
template <class T>
bool check_input(std::span<const T> xs, const std::string& label, bool every_format = true) {
    SCOPED_TRACE(label + " (n = " + std::to_string(xs.size()) + ")");
    const format_info& f = format_traits<T>::info;
    const std::vector<std::uint64_t> bits = orc::to_bits(xs);
    const orc::mpfr_exact m = orc::mpfr_sum(bits, f);
    const orc::boost_exact b = orc::boost_sum(bits, f);
    const orc::gmp_exact g = orc::gmp_sum(bits, f);
    superaccumulator fast;
    fast.add(xs);
    if (!check_against_oracles(fast, m, b, g, f, "add(span)", every_format)) return false;
    superaccumulator slow;
    for (const T& x : xs) slow.add(x);
    return check_against_oracles(slow, m, b, g, f, "add(T) term by term", every_format);
}

template <class T>
bool check_bits(const std::vector<std::uint64_t>& bits, const std::string& label, bool every_format = true) {
    const std::vector<T> xs = orc::from_bits<T>(bits);
    return check_input<T>(xs, label, every_format);
}

// The input itself, negated, and scaled by each 2^k that is exact for every term.
template <class T>
void check_variants(const std::vector<std::uint64_t>& bits, const std::string& label, std::initializer_list<int> scales,
                    bool every_format = true) {
    const format_info& f = format_traits<T>::info;
    if (!check_bits<T>(bits, label, every_format)) return;
    std::vector<std::uint64_t> negated = bits;
    for (auto& b : negated) b ^= orc::zero_bits(f, true);
    if (!check_bits<T>(negated, label + ", negated", every_format)) return;
    for (int k : scales) {
        std::vector<std::uint64_t> scaled;
        for (std::uint64_t b : bits) {
            const auto s = orc::scale_exact(b, f, k);
            ASSERT_TRUE(s.has_value()) << label << ": 2^" << k << " is not exact for " << orc::describe(b, f);
            scaled.push_back(*s);
        }
        if (!check_bits<T>(scaled, label + ", scaled by 2^" + std::to_string(k), every_format)) return;
    }
}

// RN result of the library for bits of T.
template <class T>
std::uint64_t library_round(const std::vector<std::uint64_t>& bits, const format_info& to, rounding mode) {
    const std::vector<T> xs = orc::from_bits<T>(bits);
    superaccumulator acc;
    acc.add(std::span<const T>(xs));
    return acc.round_bits(to, mode);
}

// Lengths: mostly short (term by term inside add(span) too), a fifth across the fast-path threshold of 64, and 1%
// across several blocks of 2048. Long inputs also get a few planted terms far above or far below the rest, so blocks
// have flagged terms below their window and windows that move from block to block.
template <class T>
std::vector<std::uint64_t> random_input(std::mt19937_64& rng, orc::term_mix& mix) {
    const format_info& f = format_traits<T>::info;
    const unsigned pick = static_cast<unsigned>(rng() % 100);
    const std::size_t n = pick < 80 ? rng() % 41 : (pick < 99 ? 41 + rng() % 160 : 2049 + rng() % 4200);
    mix = orc::all_term_mixes[rng() % std::size(orc::all_term_mixes)];
    std::vector<std::uint64_t> bits = orc::random_terms(f, n, mix, rng);
    if (n > 64 && rng() % 2 == 0) {
        const std::vector<std::uint64_t> far = orc::random_terms(f, 1 + rng() % 6, orc::term_mix::full_range, rng);
        for (std::uint64_t x : far) bits[rng() % n] = x;
    }
    return bits;
}

}  // namespace exactref_test
