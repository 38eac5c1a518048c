// Long runs for the trees (ctest label "long", `make long`): the "exact 16.6953113658598518153991..." is
// H_(10^7) itself (MPFR, 256 bits); the float16/bfloat16 single steps against the oracle for every first operand;
// and a wide sweep of lengths and thread counts against the single-thread bits.
#include <gtest/gtest.h>
#include <mpfr.h>
#include <omp.h>

#include <bit>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "exactref/detail/tree_arith.h"
#include "exactref/reference.h"
#include "exactref/tree.h"
#include "oracle.h"

namespace {
using namespace exactref;

// H_n = Σ 1/i with every 1/i and every partial sum rounded to 256 bits: the error is below n·2^-250, far below the
// 25 digits compared. The exact sum of the binary64 terms 1.0/i is a different number (each term carries its own
// rounding): they differ by about 5.4e-17, 0.015 ulp, and both round to 16.69531136585985.
TEST(LongTree, HarmonicNumberVersusTheSumOfRoundedTerms) {
    const unsigned long n = 10000000;
    mpfr_t h, term;
    mpfr_inits2(256, h, term, static_cast<mpfr_ptr>(nullptr));
    mpfr_set_ui(h, 0, MPFR_RNDN);
    for (unsigned long i = 1; i <= n; ++i) {
        mpfr_set_ui(term, i, MPFR_RNDN);  // exact: i < 2^24
        mpfr_ui_div(term, 1, term, MPFR_RNDN);
        mpfr_add(h, h, term, MPFR_RNDN);
    }
    char digits[64];
    mpfr_snprintf(digits, sizeof digits, "%.25Rf", h);
    EXPECT_EQ(std::string(digits).substr(0, 25), "16.6953113658598518153991");
    EXPECT_EQ(mpfr_get_d(h, MPFR_RNDN), 16.69531136585985);
    std::vector<double> xs(n);
    for (std::size_t i = 0; i < n; ++i) xs[i] = 1.0 / static_cast<double>(i + 1);
    const reference ref = sum(xs);
    EXPECT_EQ(ref.exact().substr(0, 26), "16.69531136585985176123901");
    EXPECT_EQ(ref.nearest<double>(), 16.69531136585985);
    mpfr_clears(h, term, static_cast<mpfr_ptr>(nullptr));
}

// Every float16 (bfloat16) first operand against 2048 random second operands: the library's single addition
// (exact binary64 sum, one rounding) is the oracle's correctly rounded addition; products against Boost rationals.
template <class H>
void check_all_first_operands(std::uint64_t seed) {
    const format_info& f = format_traits<H>::info;
    std::mt19937_64 rng(seed);
    std::uint64_t mismatches = 0;
    for (std::uint32_t a = 0; a < 65536; ++a) {
        for (int k = 0; k < 2048; ++k) {
            const auto b = static_cast<std::uint16_t>(rng());
            const H x = H::from_bits(static_cast<std::uint16_t>(a)), y = H::from_bits(b);
            const std::uint64_t got = detail::float_arith<H>::add(x, y).bits;
            const std::uint64_t want = oracle::add_rounded(a, b, f);
            if (got != want && !(oracle::is_nan_bits(f, got) && oracle::is_nan_bits(f, want))) {
                if (++mismatches < 10) ADD_FAILURE() << f.name << " " << a << " + " << b << ": " << got << " vs " << want;
            }
            if (k < 32) {
                const oracle::parts px = oracle::decode(f, a), py = oracle::decode(f, b);
                if (px.nan || py.nan || px.inf || py.inf || px.significand == 0 || py.significand == 0) continue;
                const std::uint64_t prod = detail::float_arith<H>::mul(x, y).bits;
                const std::uint64_t want_prod = oracle::boost_round_bits(
                    oracle::boost_value(a, f) * oracle::boost_value(b, f), f, rounding::to_nearest_even);
                if (prod != want_prod && ++mismatches < 10)
                    ADD_FAILURE() << f.name << " " << a << " * " << b << ": " << prod << " vs " << want_prod;
            }
        }
    }
    EXPECT_EQ(mismatches, 0u) << "seed " << seed;
}

TEST(LongTree, Float16StepsAreCorrectlyRoundedForEveryFirstOperand) { check_all_first_operands<float16>(0xf16); }
TEST(LongTree, Bfloat16StepsAreCorrectlyRoundedForEveryFirstOperand) { check_all_first_operands<bfloat16>(0xbf16); }

// Lengths up to 2^24 + 3 and thread counts 1 .. 8, 16, 64: the bits of the single-thread run, every time.
TEST(LongTree, ThreadSweep) {
    std::mt19937_64 rng(0x5eeb);
    std::vector<std::size_t> lengths{(std::size_t{1} << 24) + 3, 65536 * 16 - 1, 3 * 256 * 64 + 17};
    for (int i = 0; i < 6; ++i) lengths.push_back(std::uniform_int_distribution<std::size_t>(1, 5000000)(rng));
    const int saved = omp_get_max_threads();
    for (std::size_t n : lengths) {
        const std::uint64_t seed = rng();
        std::mt19937_64 case_rng(seed);
        const auto d = oracle::from_bits<double>(oracle::random_terms(binary64_info, n, oracle::term_mix::cancelling, case_rng));
        const auto f = oracle::from_bits<float>(oracle::random_terms(binary32_info, n, oracle::term_mix::clustered, case_rng));
        for (const tree_shape& shape : {halving(), fold(), halving(1024), fold(128)}) {
            omp_set_num_threads(1);
            const double d1 = tree_sum(d, shape);
            const float f1 = tree_sum(f, shape);
            for (int threads : {2, 3, 4, 5, 6, 7, 8, 16, 64}) {
                omp_set_num_threads(threads);
                EXPECT_EQ(std::bit_cast<std::uint64_t>(tree_sum(d, shape)), std::bit_cast<std::uint64_t>(d1))
                    << shape.name() << " n=" << n << " seed=" << seed << " threads=" << threads;
                EXPECT_EQ(std::bit_cast<std::uint32_t>(tree_sum(f, shape)), std::bit_cast<std::uint32_t>(f1))
                    << shape.name() << " n=" << n << " seed=" << seed << " threads=" << threads;
            }
        }
    }
    omp_set_num_threads(saved);
}

}  // namespace
