// ftz: (flush-to-zero hardware) and any_zero_sign: the spelling, the bound's soundness on evaluations that flush
// (hardware FTZ/DAZ for binary32 and binary64, a software model for all four formats), that it still catches lost
// terms, the sign of zero, the array path against the scalar one, and what it refuses.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <span>
#include <stdexcept>
#include <vector>

#include "exactref/exactref.h"
#include "oracle.h"
#include "test_scale.h"

namespace {

using namespace exactref;
using ::testing::HasSubstr;

// ---- a software model of FTZ/DAZ: every input and every result below 2^emin in magnitude becomes a zero of its sign.
template <class T>
double value_of(T x) {
    if constexpr (std::is_same_v<T, double> || std::is_same_v<T, float>) return static_cast<double>(x);
    else return static_cast<double>(static_cast<float>(x));
}

template <class T>
T from_double_rn(double v) {
    using tr = format_traits<T>;
    return tr::from_bits(static_cast<typename tr::bits_type>(round_double_to(tr::info, v, rounding::to_nearest_even)));
}

template <class T>
T flush(T x) {
    const double v = value_of(x);
    if (v != 0 && std::fabs(v) < std::ldexp(1.0, format_traits<T>::info.emin))
        return from_double_rn<T>(std::signbit(v) ? -0.0 : 0.0);
    return x;
}

// RN(a + b), then flushed. a + b of two values of a 16-bit format (or binary32) is exact in binary64 whenever it
// matters (their exponents differ by less than 53 - p); binary64 adds natively.
template <class T>
T ftz_add(T a, T b) {
    if constexpr (std::is_same_v<T, double>) return flush(a + b);
    else return flush(from_double_rn<T>(value_of(a) + value_of(b)));
}

// Any order: a random binary tree over the flushed terms (repeatedly combine two random live items).
template <class T>
T random_tree_ftz(std::vector<T> items, std::mt19937_64& rng) {
    if (items.empty()) return from_double_rn<T>(0.0);
    for (T& x : items) x = flush(x);
    while (items.size() > 1) {
        std::uniform_int_distribution<std::size_t> pick(0, items.size() - 1);
        const std::size_t i = pick(rng);
        std::size_t j = pick(rng);
        while (j == i) j = pick(rng);
        items[std::min(i, j)] = ftz_add(items[i], items[j]);
        items.erase(items.begin() + static_cast<std::ptrdiff_t>(std::max(i, j)));
    }
    return items[0];
}

// levels:fold/4,any: four static chunks folded left to right from +0.0, the chunk results in a random tree.
template <class T>
T fold4_any_ftz(const std::vector<T>& xs, std::mt19937_64& rng) {
    const std::size_t n = xs.size(), q = n / 4, r = n % 4;
    std::vector<T> partial;
    std::size_t at = 0;
    for (std::size_t c = 0; c < 4 && at < n; ++c) {
        const std::size_t len = q + (c < r ? 1 : 0);
        T acc = from_double_rn<T>(0.0);
        for (std::size_t i = 0; i < len; ++i) acc = ftz_add(acc, flush(xs[at + i]));
        at += len;
        partial.push_back(acc);
    }
    return random_tree_ftz(partial, rng);
}

// Terms that make FTZ matter: subnormals, and normal numbers near 2^emin of both signs whose sums fall below it,
// with a few larger terms among them.
template <class T>
std::vector<T> tiny_terms(std::size_t n, std::mt19937_64& rng) {
    const int emin = format_traits<T>::info.emin;
    std::uniform_real_distribution<double> mant(0.0, 2.0);
    std::uniform_int_distribution<int> kind(0, 9), sign(0, 1);
    std::vector<T> xs(n);
    for (T& x : xs) {
        const int k = kind(rng);
        double v = k < 4 ? std::ldexp(mant(rng), emin - 1)          // subnormal (or just above 2^emin)
                   : k < 9 ? std::ldexp(1.0 + mant(rng) / 2, emin)  // normal, within [2^emin, 2^(emin+1))
                           : std::ldexp(1.0 + mant(rng) / 2, emin + 6);
        if (sign(rng)) v = -v;
        x = from_double_rn<T>(v);
    }
    return xs;
}

template <class T>
class FtzSoftware : public ::testing::Test {};
using formats = ::testing::Types<double, float, float16, bfloat16>;
TYPED_TEST_SUITE(FtzSoftware, formats);

// Every evaluation that flushes is covered by ftz: (any order, the fold/4 structure); the same results judged without
// ftz: are rejected often (so the data exercise the flushes, and the test would see a bound that forgot them).
TYPED_TEST(FtzSoftware, FlushingEvaluationsAreCoveredAndPlainStandardsRejectThem) {
    using T = TypeParam;
    std::mt19937_64 rng(20261202);
    const standard any = ftz(any_order());
    const standard fold4 = parse_standard("ftz:levels:fold/4,any");
    const int trials = exactref_test::scaled(300);
    int plain_rejected = 0;
    for (int t = 0; t < trials; ++t) {
        const std::size_t n = 4 + static_cast<std::size_t>(rng() % 60);  // fold/4 needs 4 terms
        const std::vector<T> xs = tiny_terms<T>(n, rng);
        const reference ref = sum(std::span<const T>(xs));
        const T a = random_tree_ftz(xs, rng);
        const T b = fold4_any_ftz(xs, rng);
        EXPECT_TRUE(covers(a, ref, any)) << "seed 20261202, trial " << t << "\n" << covers(a, ref, any).message();
        EXPECT_TRUE(covers(b, ref, fold4)) << "seed 20261202, trial " << t << "\n" << covers(b, ref, fold4).message();
        EXPECT_TRUE(covers(b, ref, any)) << "seed 20261202, trial " << t;
        if (!covers(a, ref, any_order())) ++plain_rejected;
    }
    EXPECT_GE(plain_rejected, std::max(1, trials / 30)) << "the data rarely flush: the test sees nothing";
}

// The case: torch.sum of 1,000 × 1e-40 (binary32 subnormals) under set_flush_denormal(True) returns 0.
TEST(Ftz, ThousandSubnormalsSummedToZeroAreCovered) {
    const std::vector<float> xs(1000, 1e-40f);
    const reference ref = sum(std::span<const float>(xs));
    const verdict plain = covers(0.0f, ref, any_order());
    EXPECT_FALSE(plain);
    EXPECT_GT(plain.ratio, 1000.0);
    const verdict v = covers(0.0f, ref, parse_standard("ftz:any_order"));
    EXPECT_TRUE(v) << v.message();
    EXPECT_EQ(v.standard, "ftz:any_order");
    EXPECT_TRUE(covers(-0.0f, ref, ftz(any_order())));  // a flushed negative partial sum is -0.0 on x86
}

// The hardware: binary32 and binary64 folds, pairwise trees and random orders under MXCSR's FTZ and DAZ.
template <class T>
T hardware_fold(const std::vector<T>& xs) {
    volatile T acc = 0;
    for (T x : xs) acc = acc + x;
    return acc;
}
template <class T>
T hardware_pairwise(std::vector<T> xs) {
    while (xs.size() > 1) {
        std::vector<T> next;
        for (std::size_t i = 0; i + 1 < xs.size(); i += 2) {
            volatile T s = xs[i] + xs[i + 1];
            next.push_back(static_cast<T>(s));
        }
        if (xs.size() % 2) next.push_back(xs.back());
        xs.swap(next);
    }
    return xs.empty() ? T(0) : xs[0];
}

template <class T>
void check_hardware() {
    if (!oracle::ftz_daz_supported()) GTEST_SKIP() << "FTZ/DAZ control is implemented for x86-64 only";
    std::mt19937_64 rng(77);
    int differs = 0;
    const int trials = exactref_test::scaled(200);
    for (int t = 0; t < trials; ++t) {
        const std::size_t n = 2 + static_cast<std::size_t>(rng() % 200);
        std::vector<T> xs = tiny_terms<T>(n, rng);
        const reference ref = sum(std::span<const T>(xs));
        std::shuffle(xs.begin(), xs.end(), rng);
        T fold, pairwise;
        {
            oracle::fp_environment_guard guard(rounding::to_nearest_even, true);
            fold = hardware_fold(xs);
            pairwise = hardware_pairwise(xs);
        }
        if (fold != ref.nearest<T>()) ++differs;
        const std::uint64_t h = n <= 1 ? 0 : static_cast<std::uint64_t>(std::bit_width(n - 1));
        EXPECT_TRUE(covers(fold, ref, ftz(any_order()))) << "seed 77, trial " << t << "\n"
                                                         << covers(fold, ref, ftz(any_order())).message();
        EXPECT_TRUE(covers(pairwise, ref, ftz(tree(h)))) << "seed 77, trial " << t << "\n"
                                                         << covers(pairwise, ref, ftz(tree(h))).message();
        EXPECT_TRUE(covers(pairwise, ref, ftz(any_order()))) << "seed 77, trial " << t;
    }
    EXPECT_GT(differs, 0) << "FTZ/DAZ never changed a result: the environment did not take effect";
}
TEST(FtzHardware, Binary32FoldsAndTreesUnderFtzDazAreCovered) { check_hardware<float>(); }
TEST(FtzHardware, Binary64FoldsAndTreesUnderFtzDazAreCovered) { check_hardware<double>(); }

// Extreme flushes: every term the largest subnormal (all flushed by DAZ), and pairs of normal numbers whose sums
// (exact, subnormal) are flushed by FTZ. The bound's n·2^emin and (n-1)·2^emin terms are what covers these.
TEST(Ftz, WorstCaseFlushesOfInputsAndOfSumsAreCovered) {
    const double largest_subnormal = std::nextafter(std::ldexp(1.0, -1022), 0.0);
    const std::vector<double> sub(500, largest_subnormal);
    const reference r1 = sum(std::span<const double>(sub));
    EXPECT_TRUE(covers(0.0, r1, ftz(any_order())));
    EXPECT_FALSE(covers(0.0, r1, any_order()));
    std::vector<float> pairs;
    for (int i = 0; i < 256; ++i) {
        pairs.push_back(std::ldexp(1.75f, -126));
        pairs.push_back(-std::ldexp(1.0f, -126));
    }
    const reference r2 = sum(std::span<const float>(pairs));  // s = 256 · 0.75 · 2^-126
    EXPECT_TRUE(covers(0.0f, r2, ftz(tree(9))));              // each pair flushed, then 0 + 0 + ...
    EXPECT_FALSE(covers(0.0f, r2, tree(9)));
}

// ftz: must still catch bugs: its bound is the depth form plus a few 2^emin, so a lost term of normal data is seen
// as it is without ftz:, and the bound is within 1% (+ the 2^emin terms) of the any-order bound.
TEST(Ftz, StillCatchesALostTermAndStaysCloseToTheFlatBound) {
    std::mt19937_64 rng(5);
    std::normal_distribution<float> g;
    std::vector<float> xs(10000);
    for (float& x : xs) x = g(rng);
    const reference ref = sum(std::span<const float>(xs));
    const double b_plain = bound(ref, any_order(), binary32_info);
    const double b_ftz = bound(ref, ftz(any_order()), binary32_info);
    EXPECT_GE(b_ftz, b_plain);
    EXPECT_LE(b_ftz, 1.01 * b_plain + 2e4 * std::ldexp(1.0, -126));
    const standard fold4 = parse_standard("ftz:levels:fold/4,any");
    // A kernel that dropped x_0 returns about RN(s - x_0); pick a term large enough for the flat bound to see.
    std::size_t big = 0;
    for (std::size_t i = 0; i < xs.size(); ++i)
        if (std::fabs(xs[i]) > std::fabs(xs[big])) big = i;
    std::vector<float> dropped = xs;
    dropped.erase(dropped.begin() + static_cast<std::ptrdiff_t>(big));
    const float planted = sum(std::span<const float>(dropped)).nearest<float>();
    if (std::fabs(xs[big]) > b_ftz) EXPECT_FALSE(covers(planted, ref, ftz(any_order())));
    EXPECT_FALSE(covers(planted, ref, fold4)) << "the depth form of fold/4,any is far below a lost term of "
                                              << xs[big];
}

// The array path (binary64 filter, exact path where undecided) gives the scalar verdicts under ftz: too.
TEST(Ftz, ArrayVerdictsEqualScalarVerdicts) {
    std::mt19937_64 rng(9);
    const std::vector<float> xs = tiny_terms<float>(64, rng);
    const reference ref = sum(std::span<const float>(xs));
    const standard m = ftz(any_order());
    const double b = bound(ref, m, binary32_info);
    const double s = static_cast<double>(ref.nearest<float>());
    std::vector<float> results;
    for (double k : {-2.0, -1.01, -0.99, -0.5, 0.0, 0.5, 0.99, 1.01, 2.0}) results.push_back(static_cast<float>(s + k * b));
    results.push_back(0.0f);
    results.push_back(-0.0f);
    const array_verdict av = covers(std::span<const float>(results), ref, m);
    std::size_t bad = 0;
    for (std::size_t i = 0; i < results.size(); ++i) {
        const bool scalar = covers(results[i], ref, m).covered;
        if (!scalar) ++bad;
    }
    EXPECT_EQ(av.violations, bad);
    EXPECT_GT(bad, 0u);
    EXPECT_LT(bad, results.size());
}

TEST(Ftz, SpellingAndWhatItRefuses) {
    EXPECT_EQ(parse_standard("ftz:any_order").name(), "ftz:any_order");
    EXPECT_EQ(parse_standard("ftz:directed:tree:5").name(), "ftz:directed:tree:5");
    EXPECT_EQ(parse_standard("ftz:mixed:float32:float16:levels:fold/4,any").name(),
              "ftz:mixed:float32:float16:levels:fold/4,any");
    EXPECT_EQ(ftz(directed(tree(3))), parse_standard("ftz:directed:tree:3"));
    EXPECT_THROW(parse_standard("ftz:exact"), std::invalid_argument);
    EXPECT_THROW(ftz(faithful()), std::invalid_argument);
    EXPECT_THROW(parse_standard("directed:ftz:any_order"), std::invalid_argument);  // prefixes in their order
    const std::vector<float> x{1.0f, 2.0f}, y{3.0f, 4.0f};
    const reference d = dot(std::span<const float>(x), std::span<const float>(y));
    try {
        (void)covers(11.0f, d, ftz(any_order()));
        ADD_FAILURE() << "ftz: on a dot product was accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_THAT(e.what(), HasSubstr("ftz: applies to sums"));
    }
    // A structured ftz: standard needs no structured reference: it takes the structure's depth form.
    const std::vector<float> four{1.0f, 2.0f, 3.0f, 4.0f};
    const reference plain = sum(std::span<const float>(four));
    EXPECT_TRUE(covers(10.0f, plain, parse_standard("ftz:levels:fold/4,any")));
}

// mixed under ftz: the final rounding into float16 may flush: 2^-14 instead of η_out.
TEST(Ftz, MixedFinalRoundingMayFlush) {
    const std::vector<float> xs(3, std::ldexp(1.0f, -16));  // s = 3·2^-16, a float16 subnormal
    const reference ref = sum(std::span<const float>(xs));
    const standard m = parse_standard("ftz:mixed:float32:float16");
    EXPECT_TRUE(covers(float16(0.0f), ref, m));
    EXPECT_FALSE(covers(float16(0.0f), ref, parse_standard("mixed:float32:float16")));
}

// ---- any_zero_sign ---------------------------------------------------------------------------------------------

// math.fsum([-0.0]*5) and numpy's, torch's and jax's sums of -0.0 terms start from +0.0 and return +0.0; RN(s) is
// -0.0. exact rejects it and says that the sign of zero is all that differs; any_zero_sign accepts it.
TEST(AnyZeroSign, SumsThatStartFromPlusZeroAreAccepted) {
    const std::vector<double> zeros(5, -0.0);
    const reference ref = sum(std::span<const double>(zeros));
    ASSERT_TRUE(std::signbit(ref.nearest<double>()));
    const verdict v = covers(0.0, ref, exact());
    EXPECT_FALSE(v);
    EXPECT_THAT(v.reason, HasSubstr("any_zero_sign"));
    standard e = exact();
    e.any_zero_sign = true;
    standard f = faithful();
    f.any_zero_sign = true;
    EXPECT_TRUE(covers(0.0, ref, e));
    EXPECT_TRUE(covers(-0.0, ref, e));
    EXPECT_TRUE(covers(0.0, ref, f));
    EXPECT_FALSE(covers(std::ldexp(1.0, -1074), ref, e));  // only the zeros
    EXPECT_TRUE(covers(0.0, ref, any_order()));             // a bound standard: |0 - 0| <= 0 already
    // A bound standard with any_zero_sign takes -0.0 for a zero sum of terms of both signs.
    const std::vector<double> both{1.0, -1.0};
    const reference zero = sum(std::span<const double>(both));
    standard a = any_order();
    EXPECT_FALSE(covers(-0.0, zero, a));
    a.any_zero_sign = true;
    EXPECT_TRUE(covers(-0.0, zero, a));
}

}  // namespace
