// multiprecision.h: to_mpfr and to_mpz_2exp of a superaccumulator against the oracles (oracle/oracle.h), in every
// format and every MPFR rounding mode: exact-zero sums (x + (-x), sums of -0.0, the empty sum) get IEEE 754-2019
// §6.3's signed zero, the same as round_bits(); other sums equal MPFR's own rounding of mpfr_sum's exact value, with
// the same ternary value; to_mpz_2exp gives an odd integer and the exact value.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>  // std::snprintf
#include <gmpxx.h>
#include <mpfr.h>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "exactref/accumulator.h"
#include "exactref/format.h"
#include "exactref/multiprecision.h"
#include "oracle.h"

namespace {
using namespace exactref;
namespace orc = exactref::oracle;

struct mode_pair {
    mpfr_rnd_t mpfr;
    rounding ieee;  // the IEEE mode whose zero sign applies (IEEE 754-2019 §6.3: -0 only under roundTowardNegative)
    const char* name;
};
// MPFR_RNDA (away from zero) and MPFR_RNDF (faithful) are not IEEE modes; an exact zero is then signed as in every
// mode but roundTowardNegative.
const mode_pair modes[] = {{MPFR_RNDN, rounding::to_nearest_even, "RNDN"},
                           {MPFR_RNDZ, rounding::toward_zero, "RNDZ"},
                           {MPFR_RNDU, rounding::upward, "RNDU"},
                           {MPFR_RNDD, rounding::downward, "RNDD"},
                           {MPFR_RNDA, rounding::to_nearest_even, "RNDA"},
                           {MPFR_RNDF, rounding::to_nearest_even, "RNDF"}};

template <floating_format T>
superaccumulator accumulate(const std::vector<std::uint64_t>& bits) {
    superaccumulator acc;
    using storage = typename format_traits<T>::bits_type;
    for (std::uint64_t b : bits) acc.add(format_traits<T>::from_bits(static_cast<storage>(b)));
    return acc;
}

std::string hex_list(const std::vector<std::uint64_t>& bits) {
    std::string out = "{";
    for (std::uint64_t b : bits) {
        char text[24];
        std::snprintf(text, sizeof text, " 0x%llx", static_cast<unsigned long long>(b));
        out += text;
    }
    return out + " }";
}

// Sums whose exact value is zero: x + (-x) in both orders and with zeros around, only -0.0, only +0.0, mixed zeros,
// and the empty sum.
std::vector<std::vector<std::uint64_t>> exact_zero_sums(const format_info& f, std::mt19937_64& rng) {
    const std::uint64_t sign = std::uint64_t{1} << (f.storage_bits - 1);
    const std::uint64_t pz = 0, nz = sign;
    std::vector<std::uint64_t> xs{1, orc::max_bits(f, false), std::uint64_t(f.emax) << (f.precision - 1)};  // 1.0
    for (int k = 0; k < 3; ++k) {
        std::uint64_t b;
        do b = rng() & (sign - 1);
        while (orc::is_nan_bits(f, b) || b == orc::inf_bits(f, false) || b == 0);
        xs.push_back(b);
    }
    std::vector<std::vector<std::uint64_t>> out{{}, {nz}, {nz, nz, nz}, {pz}, {pz, pz}, {pz, nz}, {nz, pz}};
    for (std::uint64_t x : xs) {
        out.push_back({x, x | sign});
        out.push_back({x | sign, x});
        out.push_back({x, x | sign, pz});
        out.push_back({nz, x | sign, x, nz});
        out.push_back({x, xs[0], x | sign, xs[0] | sign});
    }
    return out;
}

template <floating_format T>
void check_exact_zero_sums(std::uint64_t seed) {
    const format_info& f = format_traits<T>::info;
    std::mt19937_64 rng(seed);
    SCOPED_TRACE(std::string(f.name) + ", seed " + std::to_string(seed));
    for (const std::vector<std::uint64_t>& bits : exact_zero_sums(f, rng)) {
        const superaccumulator acc = accumulate<T>(bits);
        const orc::special_state special = orc::sum_terms(bits, f).special;
        for (const mode_pair& m : modes) {
            SCOPED_TRACE(hex_list(bits) + " in " + m.name);
            const std::uint64_t want = special.exact_zero_bits(f, m.ieee);
            const bool want_negative = want != 0;
            // The doc's promise: the signed zero of round_bits().
            if (m.mpfr != MPFR_RNDA && m.mpfr != MPFR_RNDF) ASSERT_EQ(acc.round_bits(f, m.ieee), want);
            for (mpfr_prec_t precision : {2, 53}) {
                orc::mpfr_number out(precision);
                mpfr_set_nan(out.get());
                const int ternary = to_mpfr(out.get(), acc, m.mpfr);
                EXPECT_TRUE(mpfr_zero_p(out.get()));
                EXPECT_EQ(mpfr_signbit(out.get()) != 0, want_negative) << "the wrong signed zero";
                EXPECT_EQ(ternary, 0);
            }
        }
        if (::testing::Test::HasFailure()) return;
    }
}

TEST(ToMpfr, ExactZeroSumsGetTheSignedZeroOfRoundBits) {
    check_exact_zero_sums<double>(0x3a01);
    check_exact_zero_sums<float>(0x3a02);
    check_exact_zero_sums<float16>(0x3a03);
    check_exact_zero_sums<bfloat16>(0x3a04);
}

template <floating_format T>
void check_random_sums(std::uint64_t seed) {
    const format_info& f = format_traits<T>::info;
    std::mt19937_64 rng(seed);
    SCOPED_TRACE(std::string(f.name) + ", seed " + std::to_string(seed));
    const orc::term_mix mixes[] = {orc::term_mix::full_range, orc::term_mix::clustered, orc::term_mix::cancelling,
                                   orc::term_mix::ties, orc::term_mix::subnormal, orc::term_mix::specials};
    int zeros = 0, finite = 0, specials = 0;
    for (int trial = 0; trial < 600; ++trial) {
        const std::vector<std::uint64_t> bits = orc::random_terms(f, 1 + trial % 23, mixes[trial % 6], rng);
        const superaccumulator acc = accumulate<T>(bits);
        const orc::mpfr_exact want = orc::mpfr_sum(bits, f);
        for (const mode_pair& m : modes) {
            for (mpfr_prec_t precision : {2, 11, 24, 53, 113}) {
                SCOPED_TRACE("trial " + std::to_string(trial) + ": " + hex_list(bits) + " in " + m.name +
                             ", precision " + std::to_string(precision));
                orc::mpfr_number out(precision), expected(precision);
                const int ternary = to_mpfr(out.get(), acc, m.mpfr);
                if (want.special.nan || (want.special.pos_inf > 0 && want.special.neg_inf > 0)) {
                    ++specials;
                    EXPECT_TRUE(mpfr_nan_p(out.get()));
                    continue;
                }
                if (want.special.pos_inf > 0 || want.special.neg_inf > 0) {
                    ++specials;
                    EXPECT_TRUE(mpfr_inf_p(out.get()));
                    EXPECT_EQ(mpfr_signbit(out.get()) != 0, want.special.neg_inf > 0);
                    continue;
                }
                if (mpfr_zero_p(want.value.get())) {
                    ++zeros;
                    EXPECT_TRUE(mpfr_zero_p(out.get()));
                    EXPECT_EQ(mpfr_signbit(out.get()) != 0, want.special.exact_zero_bits(f, m.ieee) != 0);
                    continue;
                }
                ++finite;
                const int expected_ternary = mpfr_set(expected.get(), want.value.get(), m.mpfr);
                if (m.mpfr == MPFR_RNDF) {  // faithful: either neighbour, as MPFR's own RNDF may choose
                    orc::mpfr_number down(precision), up(precision);
                    mpfr_set(down.get(), want.value.get(), MPFR_RNDD);
                    mpfr_set(up.get(), want.value.get(), MPFR_RNDU);
                    EXPECT_TRUE(mpfr_equal_p(out.get(), down.get()) || mpfr_equal_p(out.get(), up.get()));
                    continue;
                }
                EXPECT_TRUE(mpfr_equal_p(out.get(), expected.get()));
                EXPECT_EQ((ternary > 0) - (ternary < 0), (expected_ternary > 0) - (expected_ternary < 0));
            }
        }
        if (::testing::Test::HasFailure()) return;
    }
    EXPECT_GT(finite, 1000);
    EXPECT_GT(specials, 0);
    EXPECT_GT(zeros, 0) << "cancelling sums must have reached an exact zero";
}

TEST(ToMpfr, RandomSumsEqualMpfrsRoundingOfTheExactValue) {
    check_random_sums<double>(0x3a11);
    check_random_sums<float>(0x3a12);
    check_random_sums<float16>(0x3a13);
    check_random_sums<bfloat16>(0x3a14);
}

TEST(ToMpz2exp, AnOddIntegerTimesAPowerOfTwo) {
    {
        superaccumulator acc;
        acc.add(12.0);
        long e = -1;
        EXPECT_EQ(to_mpz_2exp(acc, e), 3);
        EXPECT_EQ(e, 2);
        acc.add(-12.0);
        e = -1;
        EXPECT_EQ(to_mpz_2exp(acc, e), 0);
        EXPECT_EQ(e, 0);
    }
    std::mt19937_64 rng(0x3a21);
    for (int trial = 0; trial < 400; ++trial) {
        const format_info& f = trial % 2 ? binary64_info : binary16_info;
        const std::vector<std::uint64_t> bits =
            orc::random_terms(f, 1 + trial % 17, trial % 3 ? orc::term_mix::clustered : orc::term_mix::full_range, rng);
        const superaccumulator acc = trial % 2 ? accumulate<double>(bits) : accumulate<float16>(bits);
        SCOPED_TRACE("trial " + std::to_string(trial) + " (seed 0x3a21): " + std::string(f.name) + " " +
                     hex_list(bits));
        long e = 0;
        const mpz_class m = to_mpz_2exp(acc, e);
        mpq_class value(m);
        if (e >= 0) mpq_mul_2exp(value.get_mpq_t(), value.get_mpq_t(), static_cast<mp_bitcnt_t>(e));
        else mpq_div_2exp(value.get_mpq_t(), value.get_mpq_t(), static_cast<mp_bitcnt_t>(-e));
        EXPECT_EQ(value, orc::gmp_sum(bits, f).value);
        if (m != 0) EXPECT_TRUE(mpz_odd_p(m.get_mpz_t())) << m.get_str() << " · 2^" << e;
        else EXPECT_EQ(e, 0);
        if (::testing::Test::HasFailure()) return;
    }
}

}  // namespace
