// covers(), the standards, and the GoogleTest matchers: bounds checked against hand-derived exact values, every
// standard fed wrong values (planted faults) that must be rejected, special values, and the failure messages.
#include <gtest/gtest-spi.h>  // EXPECT_NONFATAL_FAILURE
#include <gtest/gtest.h>

#include <cfenv>
#include <cmath>
#include <functional>
#include <span>
#include <string>
#include <gmpxx.h>
#include <limits>
#include <random>
#include <vector>

#include "exactref/covers.h"
#include "exactref/dot.h"
#include "exactref/gtest.h"
#include "exactref/multiprecision.h"

namespace {
using namespace exactref;

// Exact dyadic/rational numbers for expected bounds, computed here independently of src/covers.cpp.
mpq_class two_pow(int e) {
    mpq_class q(1);
    if (e >= 0) mpq_mul_2exp(q.get_mpq_t(), q.get_mpq_t(), e);
    else mpq_div_2exp(q.get_mpq_t(), q.get_mpq_t(), -e);
    return q;
}
mpq_class gamma(int k, int p) { return mpq_class(k) * two_pow(-p) / (1 - mpq_class(k) * two_pow(-p)); }

// bound() is the exact bound rounded upward to binary64: it is >= exact, and its predecessor is < exact.
void expect_upward_double_of(double got, const mpq_class& exact) {
    EXPECT_GE(mpq_class(got), exact) << "bound below the exact value";
    EXPECT_LT(mpq_class(std::nextafter(got, 0.0)), exact) << "bound not the upward rounding of the exact value";
}

TEST(Bound, AnyOrderIsNMinusOneUTimesAbsSum) {
    const std::vector<float> xs{1.0f, -2.0f, 0.5f, 4.0f};  // n = 4, S = 7.5
    const reference ref = sum(xs);
    // (n-1)·u·S = 3 · 2^-24 · 7.5 = 22.5 · 2^-24, exact in binary64
    EXPECT_EQ(bound(ref, any_order(), binary32_info), 22.5 * std::ldexp(1.0, -24));
    // Directed rounding: Higham's γ_{n-1} with 2u (the linear (n-1)·2u fails for large n, DirectedBound below).
    expect_upward_double_of(bound(ref, directed(any_order()), binary32_info), gamma(3, 23) * mpq_class(7.5));
    EXPECT_EQ(bound(ref, any_order(), binary64_info), 22.5 * std::ldexp(1.0, -53));
}

TEST(Bound, TreeSplitKMixedFollowTheirFormulas) {
    std::vector<float> xs(16, 0.75f);  // n = 16, S = 12
    const reference ref = sum(xs);
    expect_upward_double_of(bound(ref, tree(4), binary32_info), gamma(4, 24) * 12);
    // split_k(4): k = 4 terms per chunk, 4 chunks; any-order combine γ_{k+s-2} = γ_6, pairwise γ_{k-1+2} = γ_5
    expect_upward_double_of(bound(ref, split_k(4), binary32_info), gamma(6, 24) * 12);
    expect_upward_double_of(bound(ref, split_k(4, split_combine::pairwise), binary32_info), gamma(5, 24) * 12);
    // split_k(3) over 16 terms: k = 6, chunks of 6, 6, 4 -> γ_{6+3-2} = γ_7
    expect_upward_double_of(bound(ref, split_k(3), binary32_info), gamma(7, 24) * 12);
    // mixed(float32 -> float16): (n-1)·u32·S + u16·(|s| + (n-1)·u32·S), s = S = 12
    std::vector<float16> hs(16, float16(0.75f));
    const reference href = sum(hs);
    const mpq_class acc = mpq_class(15) * two_pow(-24) * 12;
    expect_upward_double_of(bound(href, mixed(dtype::float32, dtype::float16), binary16_info),
                            acc + two_pow(-11) * (12 + acc) + two_pow(-14 - 11));  // + η_out, subnormal results
    // γ_k with k·u >= 1 has no finite bound
    EXPECT_TRUE(std::isinf(bound(href, tree(2048), binary16_info)));
}

TEST(Bound, RefusesModelsThatDoNotApply) {
    const std::vector<double> xs{1.0, 2.0};
    const reference ref = sum(xs);
    EXPECT_THROW(bound(ref, any_order(), binary32_info), std::invalid_argument);  // float64 terms in float32
    EXPECT_THROW(bound(ref, mixed(dtype::float64, dtype::float32), binary64_info), std::invalid_argument);
    EXPECT_NO_THROW(bound(ref, mixed(dtype::float64, dtype::float32), binary32_info));
    EXPECT_THROW(split_k(0), std::invalid_argument);
    EXPECT_THROW(directed(exact()), std::invalid_argument);
    try {
        covers(1.0f, ref, any_order());
        FAIL() << "expected std::invalid_argument";
    } catch (const std::invalid_argument& e) {
        EXPECT_THAT(e.what(), ::testing::HasSubstr("use mixed:float64:float32"));
    }
}

// Planted faults: for every bound standard, walk away from RN(s) one ulp at a time; the first value beyond the
// exact bound must be rejected and every value before it accepted.
TEST(PlantedFaults, EveryBoundStandardRejectsTheFirstValueBeyondItsBound) {
    std::mt19937 rng(2024);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> xs(300);
    for (auto& x : xs) x = normal(rng);
    const reference ref = sum(xs);
    const std::vector<standard> models{any_order(), tree(9), split_k(4), split_k(4, split_combine::pairwise),
                                       directed(any_order()), directed(tree(9))};
    for (const standard& m : models) {
        SCOPED_TRACE(m.name());
        const mpq_class s = to_mpq(ref.sum);
        const double b = bound(ref, m, binary32_info);
        for (float direction : {1.0f, -1.0f}) {
            float r = ref.nearest<float>();
            int steps = 0;
            while (true) {
                const verdict v = covers(r, ref, m);
                const bool inside = abs(mpq_class(r) - s) <= mpq_class(b);  // b rounds up: inside is necessary
                if (!v.covered) {
                    EXPECT_GT(abs(mpq_class(r) - s), mpq_class(b) * (1 - mpq_class(1, 1 << 20)));
                    EXPECT_GT(v.ratio, 1.0);
                    break;
                }
                EXPECT_TRUE(inside) << "covered beyond the bound at r = " << r;
                r = std::nextafter(r, direction * std::numeric_limits<float>::infinity());
                ASSERT_LT(++steps, 1 << 20);
            }
            EXPECT_GT(steps, 2) << "the bound should span several ulps here";
        }
    }
}

TEST(PlantedFaults, ExactAndFaithfulAcceptOnlyTheirRoundings) {
    const std::vector<double> xs{1.0, 0x1p-60, 0x1p-61};  // s = 1 + 3·2^-61: RN = RD = 1, RU = 1 + 2^-52
    const reference ref = sum(xs);
    EXPECT_TRUE(covers(1.0, ref, exact()));
    EXPECT_FALSE(covers(std::nextafter(1.0, 2.0), ref, exact()));
    EXPECT_TRUE(covers(std::nextafter(1.0, 2.0), ref, faithful()));
    EXPECT_TRUE(covers(1.0, ref, faithful()));
    EXPECT_FALSE(covers(std::nextafter(1.0, 0.0), ref, faithful()));
    const verdict v = covers(std::nextafter(1.0, 0.0), ref, exact());
    EXPECT_THAT(v.reason, ::testing::HasSubstr("0x1p+0"));
    EXPECT_DOUBLE_EQ(v.ulps, -0.5 - 3 * 0x1p-9);  // (1 - 2^-53 - (1 + 3·2^-61)) / 2^-52
}

TEST(PlantedFaults, DroppedOrDoubledTermBeyondTwiceTheBoundIsRejected) {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> uni(-1.0f, 1.0f);
    std::vector<float> xs(1000);
    for (auto& x : xs) x = uni(rng);
    xs[500] = 1.0f;  // a term larger than twice the any-order bound (about 6e-5 * 500 / 2^24 ...)
    const reference ref = sum(xs);
    const double b = bound(ref, any_order(), binary32_info);
    ASSERT_GT(1.0, 2 * b);
    // A correct left fold is covered; dropping or doubling xs[500] is not.
    float fold = 0, dropped = 0, doubled = 0;
    for (std::size_t i = 0; i < xs.size(); ++i) {
        fold += xs[i];
        dropped += i == 500 ? 0.0f : xs[i];
        doubled += i == 500 ? 2 * xs[i] : xs[i];
    }
    EXPECT_TRUE(covers(fold, ref, any_order()));
    EXPECT_FALSE(covers(dropped, ref, any_order()));
    EXPECT_FALSE(covers(doubled, ref, any_order()));
}

TEST(SpecialValues, TermsDecide) {
    const float inf = std::numeric_limits<float>::infinity();
    const float nan = std::numeric_limits<float>::quiet_NaN();
    {
        const reference ref = sum(std::vector<float>{inf, 0.0f});
        EXPECT_TRUE(covers(inf, ref));
        EXPECT_FALSE(covers(-inf, ref));
        EXPECT_FALSE(covers(nan, ref));
        EXPECT_FALSE(covers(3.0e38f, ref));
        EXPECT_THAT(covers(1.0f, ref).reason, ::testing::HasSubstr("only +Inf"));
    }
    {
        const reference ref = sum(std::vector<float>{inf, 4.0f, -inf});
        EXPECT_TRUE(covers(nan, ref));
        EXPECT_FALSE(covers(inf, ref));
    }
    {
        const reference ref = sum(std::vector<float>{1.0f, nan});
        EXPECT_TRUE(covers(nan, ref, exact()));
        EXPECT_FALSE(covers(1.0f, ref, exact()));
        EXPECT_FALSE(covers(1.0f, ref, any_order()));
    }
}

TEST(SpecialValues, OverflowIsCoveredOnlyWhenReachable) {
    const float inf = std::numeric_limits<float>::infinity();
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float max = std::numeric_limits<float>::max();
    {
        // s = max + max - 1 overflows the format: +Inf is what every order gives
        const reference ref = sum(std::vector<float>{max, max, -1.0f});
        EXPECT_FALSE(covers(max, ref));
        EXPECT_TRUE(covers(inf, ref));
        EXPECT_TRUE(covers(inf, ref, exact()));
        EXPECT_FALSE(covers(-inf, ref));
        EXPECT_FALSE(covers(nan, ref));
    }
    {
        const reference ok = sum(std::vector<float>{max, max, -max});  // max + max overflows in some orders
        EXPECT_TRUE(covers(max, ok));
        EXPECT_TRUE(covers(inf, ok));
        // (1 + 2u)·max >= Ω: DESIGN §3's rule also admits -Inf here (it bounds, it does not enumerate orders)
        const reference ref = sum(std::vector<float>{max, max, -max, -max});  // inf - inf = NaN is reachable
        EXPECT_TRUE(covers(nan, ref));
        EXPECT_TRUE(covers(inf, ref));
        EXPECT_TRUE(covers(-inf, ref));
        EXPECT_TRUE(covers(0.0f, ref));
    }
    {
        const reference ref = sum(std::vector<float>{1.0f, 2.0f});
        EXPECT_FALSE(covers(inf, ref));
        EXPECT_FALSE(covers(nan, ref));
    }
}

TEST(SpecialValues, NegativeZero) {
    const reference zeros = sum(std::vector<double>{-0.0, -0.0, -0.0});
    EXPECT_TRUE(covers(-0.0, zeros, any_order()));
    EXPECT_TRUE(covers(0.0, zeros, any_order()));  // a fold starting from +0.0 gives +0.0
    EXPECT_TRUE(covers(-0.0, zeros, exact()));
    EXPECT_FALSE(covers(0.0, zeros, exact()));
    const reference cancel = sum(std::vector<double>{1.0, -1.0});
    EXPECT_TRUE(covers(0.0, cancel));
    const verdict v = covers(-0.0, cancel);
    EXPECT_FALSE(v.covered);
    EXPECT_THAT(v.reason, ::testing::HasSubstr("-0.0"));
    EXPECT_TRUE(covers(-0.0, cancel, directed(any_order())));  // RD gives -0.0 for 1 + (-1)
    standard relaxed = any_order();
    relaxed.any_zero_sign = true;
    EXPECT_TRUE(covers(-0.0, cancel, relaxed));
}

// A tree of height 0 is one term (γ_0 = 0); a tree of height h holds at most 2^h terms, so a shallower model than
// ceil(log2 n) is refused rather than judged with a bound that no tree over n terms has.
TEST(Bound, TreeHeightsMustHoldTheTerms) {
    const reference one = sum(std::vector<float>{3.0f});
    EXPECT_EQ(bound(one, tree(0), binary32_info), 0.0);
    EXPECT_TRUE(covers(3.0f, one, tree(0)));
    EXPECT_FALSE(covers(std::nextafter(3.0f, 4.0f), one, tree(0)));
    const reference nine = sum(std::vector<float>(9, 1.0f));
    EXPECT_NO_THROW(bound(nine, tree(4), binary32_info));
    try {
        covers(9.0f, nine, tree(3));
        FAIL() << "expected std::invalid_argument";
    } catch (const std::invalid_argument& e) {
        EXPECT_THAT(e.what(), ::testing::HasSubstr("holds at most 8 terms"));
        EXPECT_THAT(e.what(), ::testing::HasSubstr("ceil(log2 n) = 4"));
    }
}

// Counts past 2^64 - n once wrapped k = ceil(K/s) to 0 and gave a zero bound; a depth + the product rounding past
// 2^64 - 1 wrapped to γ_0. Any chunk count >= K is K chunks of one term; any depth that large has no finite bound.
TEST(Bound, HugeChunkCountsAndHeights) {
    const reference ref = sum(std::vector<double>{0.1, 0.2, 0.3});
    const std::uint64_t huge = std::numeric_limits<std::uint64_t>::max();
    EXPECT_EQ(bound(ref, split_k(huge), binary64_info), bound(ref, split_k(3), binary64_info));
    EXPECT_EQ(bound(ref, split_k(huge - 1, split_combine::pairwise), binary64_info),
              bound(ref, split_k(3, split_combine::pairwise), binary64_info));
    EXPECT_TRUE(covers(0.6, ref, split_k(huge)));  // RN(s)
    const std::vector<double> x{1.5, 2.5};
    EXPECT_TRUE(std::isinf(bound(dot(std::span<const double>(x), std::span<const double>(x)), tree(huge),
                                 binary64_info)));
}

// Dot products, like sums, must not be judged in a format that cannot hold their inputs.
TEST(Bound, DotInputsMustFitTheAccumulationFormat) {
    const double a = 1 + 0x1p-24 + 0x1p-40;
    const std::vector<double> x{a};
    const reference ref = dot(std::span<const double>(x), std::span<const double>(x));
    const float r = static_cast<float>(x[0]) * static_cast<float>(x[0]);  // a float32 kernel
    try {
        covers(r, ref, any_order());
        FAIL() << "expected std::invalid_argument";
    } catch (const std::invalid_argument& e) {
        EXPECT_THAT(e.what(), ::testing::HasSubstr("build the reference from the rounded inputs"));
        EXPECT_THAT(e.what(), ::testing::HasSubstr("use mixed:float64:float32"));
    }
    // what the message advises for this kernel: the reference of the inputs it multiplied
    const std::vector<float> seen{static_cast<float>(x[0])};
    EXPECT_TRUE(covers(r, dot(std::span<const float>(seen), std::span<const float>(seen)), any_order()));
    // mixed models a kernel that accumulates the float64 products and rounds once; it is not this kernel
    EXPECT_NO_THROW(covers(r, ref, mixed(dtype::float64, dtype::float32)));
}

// Directed rounding does not keep an overflow: RZ gives max for max + max (IEEE 754-2019 §7.4), and a later -max
// brings the sum to 0, far outside the bound. So when overflow is reachable, a directed standard covers every finite
// result; round-to-nearest keeps the overflow (Inf - max = Inf), so any_order still rejects 0.
TEST(SpecialValues, DirectedOverflowSaturates) {
    const double max = std::numeric_limits<double>::max();
    const reference ref = sum(std::vector<double>{max, max, -max});
    std::fesetround(FE_TOWARDZERO);
    volatile double a = max, b = -max;
    const double rz = (a + a) + b;
    std::fesetround(FE_TONEAREST);
    ASSERT_EQ(rz, 0.0);
    const verdict v = covers(rz, ref, directed(any_order()));
    EXPECT_TRUE(v.covered) << v.message();
    EXPECT_THAT(v.reason, ::testing::HasSubstr("saturate"));
    EXPECT_FALSE(covers(rz, ref, any_order()));
    EXPECT_TRUE(covers(max, sum(std::vector<double>{max, max}), directed(any_order())));
    EXPECT_TRUE(covers(float16(65504.0f), sum(std::vector<float16>{float16(60000.0f), float16(60000.0f)}),
                       directed(any_order())));
    // no reachable overflow: the directed bound still decides
    const reference small = sum(std::vector<double>{1.0, 2.0});
    EXPECT_FALSE(covers(0.0, small, directed(any_order())));
    // a single max: no partial sum exceeds max (an exact max does not overflow), so nothing saturates
    const reference one_max = sum(std::vector<double>{max});
    EXPECT_FALSE(covers(0.0, one_max, directed(any_order())));
    EXPECT_FALSE(covers(-1e300, one_max, directed(tree(0))));
    // terms of one sign: partial sums only grow, so a saturated sum stays at max: max is covered, nothing else is
    // added (64 × 984 = 62976 in float16: (1 + 63·2u)·P exceeds 65504)
    const reference near_top = sum(std::vector<float16>(64, float16(984.0f)));
    EXPECT_TRUE(covers(float16(65504.0f), near_top, directed(any_order())));
    EXPECT_FALSE(covers(float16(65504.0f), near_top, any_order()));  // RN: beyond Ω it is Inf, below it the bound
    for (const float bad : {0.0f, 1.0f, -65504.0f, 50000.0f}) {  // B = 63·2^-10·62976 ≈ 3875
        SCOPED_TRACE(bad);
        EXPECT_FALSE(covers(float16(bad), near_top, directed(any_order())));
    }
    const reference near_bottom = sum(std::vector<float16>(64, float16(-984.0f)));
    EXPECT_TRUE(covers(float16(-65504.0f), near_bottom, directed(any_order())));
    EXPECT_FALSE(covers(float16(65504.0f), near_bottom, directed(any_order())));
    // mixed with a float16 accumulator: the saturated value is float16's max, read as a float32 result
    EXPECT_TRUE(covers(65504.0f, near_top, directed(mixed(dtype::float16, dtype::float32))));
    EXPECT_FALSE(covers(0.0f, near_top, directed(mixed(dtype::float16, dtype::float32))));
}

// An existing output and no products: the result is the output itself, no product rounding to allow for.
TEST(Bound, ExistingOutputWithoutProducts) {
    const std::vector<float> none;
    const float c = 0x1.fffffep0f;
    const reference ref = dot(std::span<const float>(none), std::span<const float>(none), c);
    for (const standard& model : {split_k(1), tree(0), any_order()}) {
        SCOPED_TRACE(model.name());
        EXPECT_TRUE(covers(c, ref, model));
        EXPECT_FALSE(covers(2.0f, ref, model));  // one ulp off: γ_1·|c| would have covered it
    }
}

// mixed(acc, out): a float16 accumulator overflows at 65520 although float32 results do not.
TEST(SpecialValues, MixedOverflowInTheAccumulator) {
    const std::vector<float16> x{float16(-65504.0f), float16(-48896.0f)};
    const float inf = std::numeric_limits<float>::infinity();
    EXPECT_TRUE(covers(-inf, sum(x), mixed(dtype::float16, dtype::float32)));
    EXPECT_FALSE(covers(-inf, sum(x), mixed(dtype::float32, dtype::float32)));
}

// mixed(acc, out): rounding a tiny negative accumulated value into a narrower out gives -0.0 (RN(s) itself here),
// although no term is -0.0; a positive one cannot, nor can a rounding that keeps every acc value non-zero.
TEST(SpecialValues, MixedFinalRoundingMayGiveNegativeZero) {
    const reference negative = sum(std::vector<float>{-1e-10f});
    const float16 minus_zero = float16::from_bits(0x8000);
    EXPECT_TRUE(covers(minus_zero, negative, exact()));
    const verdict v = covers(minus_zero, negative, mixed(dtype::float32, dtype::float16));
    EXPECT_TRUE(v.covered) << v.message();
    EXPECT_FALSE(covers(minus_zero, sum(std::vector<float>{1e-10f}), mixed(dtype::float32, dtype::float16)));
    EXPECT_FALSE(covers(-0.0f, negative, mixed(dtype::float32, dtype::float32)));
    EXPECT_TRUE(covers(-0.0f, sum(std::vector<double>{-1e-50}), mixed(dtype::float64, dtype::float32)));
}

TEST(Verdict, MessageShowsTheNumbers) {
    const std::vector<float> xs{1.0f, 2.0f, 3.0f};
    const reference ref = sum(xs);
    const verdict v = covers(6.5f, ref, any_order());
    EXPECT_FALSE(v.covered);
    EXPECT_EQ(v.exact, "6");
    EXPECT_EQ(v.error_exact, "0.5");
    EXPECT_EQ(v.error, 0.5);
    EXPECT_EQ(v.ulps, 1048576.0);  // 6 in [4, 8): ulp = 2^(2-23), 0.5 / 2^-21 = 2^20
    const std::string m = v.message();
    for (const char* part : {"NOT COVERED by any_order (float32)", "exact s", "= 6", "result r", "6.5", "error r - s",
                             "bound B", "|error|/B", "ulps"})
        EXPECT_THAT(m, ::testing::HasSubstr(part));
}

TEST(ArrayVerdict, CountsViolationsAndFindsTheWorst) {
    std::vector<float> xs(100);
    for (int i = 0; i < 100; ++i) xs[static_cast<std::size_t>(i)] = 1.0f / static_cast<float>(i + 1);
    const reference ref = sum(xs);
    const float good = ref.nearest<float>();
    std::vector<float> runs(10, good);
    runs[3] = good + 0.01f;  // planted
    runs[7] = good - 0.5f;   // planted, worse
    const array_verdict v = covers(std::span<const float>(runs), ref, any_order());
    EXPECT_FALSE(v.covered);
    EXPECT_EQ(v.violations, 2u);
    EXPECT_EQ(v.worst_index, 7u);
    EXPECT_EQ(v.first_violations, (std::vector<std::size_t>{3, 7}));
    EXPECT_THAT(v.message(), ::testing::HasSubstr("2 of 10 results not covered by any_order; first violations at 3 7"));
    std::vector<float> ok(5, good);
    EXPECT_TRUE(covers(std::span<const float>(ok), ref, any_order()));
    EXPECT_TRUE(covers(ok, ref, any_order()));             // a std::vector directly
    EXPECT_EQ(covers(runs, ref, any_order()).violations, 2u);
    EXPECT_EQ(sum({1.0f, 2.0f, 3.5f}).exact(), "6.5");    // a braced list

    // one reference per element
    const std::vector<double> m{1, 2, 3, 4, 5, 6};
    const reference_array rows = sum_rows(std::span<const double>(m), 2, 3);
    const std::vector<double> row_sums{6, 15};
    EXPECT_TRUE(covers(std::span<const double>(row_sums), rows, exact()));
    const std::vector<double> wrong{6, 16};
    EXPECT_EQ(covers(std::span<const double>(wrong), rows, exact()).worst_index, 1u);
    const std::vector<double> short_results{6};
    EXPECT_THROW(covers(std::span<const double>(short_results), rows, exact()), std::invalid_argument);
}


// The message names the standard whether every result is covered or not, and stays a few lines long however many
// results there are: the summary, at most 8 violation indices and the worst element's verdict, never every value.
TEST(ArrayVerdict, MessageNamesTheStandardAndStaysShort) {
    const std::vector<float> xs{1.0f, 2.0f, 3.0f};
    const reference ref = sum(xs);
    const std::vector<float> good(32, 6.0f);
    const std::string all = covers(good, ref, any_order()).message();
    EXPECT_THAT(all, ::testing::StartsWith("all 32 results covered by any_order\nworst at index 0:\n"));
    EXPECT_THAT(all, ::testing::HasSubstr(covers(6.0f, ref, any_order()).message()));
    EXPECT_THAT(covers(good, ref, exact()).message(), ::testing::StartsWith("all 32 results covered by exact\n"));

    std::vector<float> runs(100000, 6.0f);
    for (std::size_t i = 100; i < runs.size(); i += 1000) runs[i] = 7.0f;  // planted: 100 wrong results
    runs[54321] = -6.0f;                                                      // planted, the worst
    const array_verdict v = covers(runs, ref, any_order());
    const std::string text = v.message();
    EXPECT_THAT(text, ::testing::StartsWith("101 of 100000 results not covered by any_order; first violations at "
                                            "100 1100 2100 3100 4100 5100 6100 7100\nworst at index 54321:\n"));
    EXPECT_THAT(text, ::testing::HasSubstr(covers(-6.0f, ref, any_order()).message()));
    EXPECT_LT(text.size(), 2000u) << text;
    // Through the matcher: GoogleTest prints at most 32 elements of a std::vector, the explanation is v.message().
    ::testing::TestPartResultArray failures;
    {
        const ::testing::ScopedFakeTestPartResultReporter reporter(
            ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &failures);
        EXPECT_THAT(runs, CoversAll(ref, any_order()));
    }
    ASSERT_EQ(failures.size(), 1);
    const std::string failure = failures.GetTestPartResult(0).message();
    EXPECT_THAT(failure, ::testing::HasSubstr(text));
    EXPECT_LT(failure.size(), 4000u) << failure;
}

TEST(Standard, NamesParseBack) {
    for (const char* name : {"exact", "faithful", "any_order", "tree:0", "tree:5", "split_k:4", "split_k:4:pairwise",
                             "mixed:float32:float16", "directed:any_order", "directed:tree:3"})
        EXPECT_EQ(parse_standard(name).name(), name);
    for (const char* bad : {"", "anyorder", "tree", "tree:", "tree:-1", "tree:x", "split_k:4:sideways", "mixed:float32",
                            "mixed:float32:float8", "directed:exact"}) {
        SCOPED_TRACE(bad);
        EXPECT_THROW(parse_standard(bad), std::invalid_argument);
    }
    try {
        parse_standard("nope");
    } catch (const std::invalid_argument& e) {
        EXPECT_THAT(e.what(), ::testing::HasSubstr("any_order"));
        EXPECT_THAT(e.what(), ::testing::HasSubstr("tree:H"));
    }
}

TEST(Matcher, AcceptsCoveredAndExplainsFailures) {
    const std::vector<float> xs{1.0f, 2.0f, 3.0f};
    const reference ref = sum(xs);
    EXPECT_THAT(6.0f, Covers(ref, any_order()));
    EXPECT_THAT(6.0f, Covers(ref));
    EXPECT_THAT(6.5f, ::testing::Not(Covers(ref, exact())));
    EXPECT_NONFATAL_FAILURE(EXPECT_THAT(6.5f, Covers(ref, any_order())), "NOT COVERED by any_order");
    EXPECT_NONFATAL_FAILURE(EXPECT_THAT(6.5f, Covers(ref, tree(2))), "bound B");
    EXPECT_NONFATAL_FAILURE(EXPECT_THAT(6.5f, Covers(ref, faithful())), "exact s     = 6");
    EXPECT_NONFATAL_FAILURE(EXPECT_THAT(6.5f, Covers(ref, exact())), "is covered by exact for the exact value 6");
    EXPECT_NONFATAL_FAILURE(EXPECT_THAT(6.5f, Covers(ref, split_k(2))), "|error|/B");
    EXPECT_NONFATAL_FAILURE(EXPECT_THAT(6.5f, Covers(ref, directed(any_order()))), "ulps");
    const std::vector<float> runs{6.0f, 6.0f, 7.0f};
    EXPECT_THAT(std::vector<float>(2, 6.0f), CoversAll(ref, any_order()));
    EXPECT_NONFATAL_FAILURE(EXPECT_THAT(runs, CoversAll(ref, any_order())), "1 of 3 results not covered");
}

TEST(Matcher, Float16AndBfloat16Results) {
    const std::vector<float16> xs{float16(1.0f), float16(0.5f), float16(0.25f)};
    const reference ref = sum(xs);
    EXPECT_THAT(float16(1.75f), Covers(ref, exact()));
    EXPECT_THAT(float16(1.75f), Covers(ref, mixed(dtype::float32, dtype::float16)));
    EXPECT_THAT(bfloat16(1.75f), Covers(ref, mixed(dtype::float32, dtype::bfloat16)));
    EXPECT_THAT(bfloat16(2.0f), ::testing::Not(Covers(ref, mixed(dtype::float32, dtype::bfloat16))));
    EXPECT_THROW(covers(float16(1.75f), ref, mixed(dtype::float32, dtype::bfloat16)), std::invalid_argument);
}

TEST(Matcher, Float16AndBfloat16PrintAsShortestDecimalAndHex) {
    EXPECT_EQ(::testing::PrintToString(float16(1.75f)), "1.75 (float16 0x1.cp+0)");
    EXPECT_EQ(::testing::PrintToString(bfloat16(-0.0f)), "-0 (bfloat16 -0x0p+0)");
    EXPECT_EQ(::testing::PrintToString(float16::from_bits(0x0001)), "6e-08 (float16 0x1p-24)");
    EXPECT_EQ(::testing::PrintToString(std::vector<bfloat16>{bfloat16(3.0f)}), "{ 3 (bfloat16 0x1.8p+1) }");
    const std::vector<float16> xs{float16(1.0f), float16(0.5f), float16(0.25f)};
    EXPECT_NONFATAL_FAILURE(EXPECT_THAT(float16(2.0f), Covers(sum(xs), exact())), "Actual: 2 (float16 0x1p+1)");
}

// An error inside covers() (sizes that differ, a standard that does not apply) is a non-match explained by the error,
// plus one failure of its own, so that ::testing::Not() cannot turn the error into a pass.
TEST(Matcher, AnErrorWhileJudgingFailsInBothPolaritiesWithItsMessage) {
    const std::vector<double> xs{1.0, 2.0};
    const reference ref = sum(xs);
    const standard inapplicable = mixed(dtype::float32, dtype::float16);  // the result must be float16
    std::string message;
    try {
        (void)covers(3.0, ref, inapplicable);
        FAIL() << "expected std::invalid_argument";
    } catch (const std::invalid_argument& e) {
        message = e.what();
    }
    const auto failures_of = [](const std::function<void()>& statement) {
        ::testing::TestPartResultArray results;
        {
            const ::testing::ScopedFakeTestPartResultReporter reporter(
                ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &results);
            statement();
        }
        std::vector<std::string> out;
        for (int i = 0; i < results.size(); ++i) {
            EXPECT_TRUE(results.GetTestPartResult(i).nonfatally_failed());
            out.emplace_back(results.GetTestPartResult(i).message());
        }
        return out;
    };
    // Covers: the test goes on after the failure (it used to end with "C++ exception thrown").
    std::vector<std::string> got = failures_of([&] { EXPECT_THAT(3.0, Covers(ref, inapplicable)); });
    ASSERT_EQ(got.size(), 2u);
    EXPECT_THAT(got[0], ::testing::HasSubstr("exactref::Covers could not judge the result: " + message));
    EXPECT_THAT(got[1], ::testing::HasSubstr("Actual: 3 (of type double), could not be judged: " + message));
    EXPECT_NONFATAL_FAILURE(EXPECT_THAT(3.0, ::testing::Not(Covers(ref, inapplicable))),
                            "exactref::Covers could not judge the result: " + message);
    EXPECT_NONFATAL_FAILURE(EXPECT_FALSE(::testing::Matches(Covers(ref, inapplicable))(3.0)),
                            "exactref::Covers could not judge the result: " + message);  // outside EXPECT_THAT too
    // CoversAll with a reference_array of another size.
    const std::vector<double> m{1, 2, 3, 4};
    const reference_array rows = sum_rows(std::span<const double>(m), 2, 2);
    const std::vector<double> three{3.0, 7.0, 1.0};
    std::string size_message;
    try {
        (void)covers(std::span<const double>(three), rows, exact());
        FAIL() << "expected std::invalid_argument";
    } catch (const std::invalid_argument& e) {
        size_message = e.what();
    }
    got = failures_of([&] { EXPECT_THAT(three, CoversAll(rows, exact())); });
    ASSERT_EQ(got.size(), 2u);
    EXPECT_THAT(got[0], ::testing::HasSubstr("exactref::CoversAll could not judge the result: " + size_message));
    EXPECT_THAT(got[1], ::testing::HasSubstr("could not be judged: " + size_message));
    EXPECT_NONFATAL_FAILURE(EXPECT_THAT(three, ::testing::Not(CoversAll(rows, exact()))),
                            "exactref::CoversAll could not judge the result: " + size_message);
    // A wrong value is still a plain non-match: one failure, no error.
    const std::vector<double> wrong{3.0, 8.0};
    got = failures_of([&] { EXPECT_THAT(wrong, CoversAll(rows, exact())); });
    ASSERT_EQ(got.size(), 1u);
    EXPECT_THAT(got[0], ::testing::HasSubstr("1 of 2 results not covered by exact; first violations at 1"));
}

TEST(Matcher, CoversAllDescribesTheExactValues) {
    const std::vector<float> xs{1.0f, 2.0f, 3.0f};
    const std::vector<float> runs{6.0f, 6.0f, 7.0f};
    EXPECT_NONFATAL_FAILURE(EXPECT_THAT(runs, CoversAll(sum(xs), any_order())),
                            "Expected: every element is covered by any_order for the exact value 6\n");
    EXPECT_EQ(::testing::DescribeMatcher<std::vector<float>>(CoversAll(sum(xs), exact()), true),
              "some element is not covered by exact for the exact value 6");
    const std::vector<double> m{1, 2, 3, 4, 0.1, 0.2, 5, 6, 7, 8};
    const reference_array rows = sum_rows(std::span<const double>(m), 5, 2);
    const std::vector<double> results{3, 7, 0.3, 11, 16};
    EXPECT_NONFATAL_FAILURE(EXPECT_THAT(results, CoversAll(rows, exact())),
                            "Expected: every element is covered by exact for their exact values [3, 7, "
                            "0.3000000000000000166533453693773481063544750213623046875, 11, ... 5 values] (5 x 1)");
    const reference_array two = sum_rows(std::span<const double>(m.data(), 4), 2, 2);
    EXPECT_EQ(::testing::DescribeMatcher<std::vector<double>>(CoversAll(two, exact())),
              "every element is covered by exact for their exact values [3, 7] (2 x 1)");
}

// ---- structured standards, what a check can see, explain() ------------------------------------------------------

// N(0, 1) float values from a fixed seed (libstdc++'s normal_distribution: the same values on every run).
std::vector<float> gaussian_floats(std::size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> xs(n);
    for (float& x : xs) x = normal(rng);
    return xs;
}

// A left fold in float of xs[begin, end) (one thread's loop over its static chunk).
float fold(const std::vector<float>& xs, std::size_t begin, std::size_t end) {
    float acc = 0.0f;
    for (std::size_t i = begin; i < end; ++i) acc += xs[i];
    return acc;
}

// An OpenMP-style reduction over 4 threads, static schedule (4 chunks of 2500), the chunk results combined in the
// order the atomics happened to run; the planted fault loses the last chunk (a thread that never reported).
TEST(Matcher, StructuredStandardSeesALostChunk) {
    constexpr unsigned seed = 20240601;
    SCOPED_TRACE("seed " + std::to_string(seed));
    const std::vector<float> xs = gaussian_floats(10000, seed);
    const standard model = parse_standard("levels:fold/4,any");
    const reference ref = sum(xs, {model});
    float chunk[4];
    for (std::size_t t = 0; t < 4; ++t) chunk[t] = fold(xs, 2500 * t, 2500 * (t + 1));
    const float honest = ((chunk[2] + chunk[0]) + chunk[3]) + chunk[1];
    const float dropped = (chunk[2] + chunk[0]) + chunk[1];
    EXPECT_THAT(honest, Covers(ref, model));
    // The fault must be visible for any bound the structure may give: the lost chunk's exact sum exceeds twice the
    // flat depth-form bound γ_{2499+3}·S (Higham §4.2), which the data bound never exceeds (standard.h), and the
    // rounding errors of `dropped` are below that flat bound too.
    mpq_class lost = 0, abs_total = 0;
    for (std::size_t i = 0; i < xs.size(); ++i) {
        abs_total += abs(mpq_class(static_cast<double>(xs[i])));
        if (i >= 7500) lost += mpq_class(static_cast<double>(xs[i]));
    }
    const mpq_class flat = gamma(2499 + 3, 24) * abs_total;
    ASSERT_GT(abs(lost), 2 * flat) << "the planted fault is too small for this seed";
    EXPECT_LE(mpq_class(bound(ref, model, binary32_info)), flat);
    EXPECT_THAT(dropped, ::testing::Not(Covers(ref, model)));
    EXPECT_NONFATAL_FAILURE(EXPECT_THAT(dropped, Covers(ref, model)), "NOT COVERED by levels:fold/4,any (float32)");
    EXPECT_NONFATAL_FAILURE(EXPECT_THAT(dropped, Covers(ref, model)), "sees        : a fault only if it moves the sum");
    // A reference built without the structure cannot judge it: an error, in both polarities.
    EXPECT_NONFATAL_FAILURE(EXPECT_THAT(honest, ::testing::Not(Covers(sum(xs), model))),
                            "the reference must be built with it");
}

TEST(Explain, AnExactlyRoundedResultListsExactFirstThenTheTightestBounds) {
    const std::vector<float> xs = gaussian_floats(1000, 7);
    const reference ref = sum(xs, {parse_standard("levels:fold/4,any")});
    const std::vector<verdict> list = explain(ref.nearest<float>(), ref);
    ASSERT_GE(list.size(), 4u);
    EXPECT_EQ(list[0].standard, "exact");
    EXPECT_EQ(list[1].standard, "faithful");
    bool seen_rejected = false;
    double last_bound = 0;
    bool seen_structure = false;
    for (std::size_t i = 0; i < list.size(); ++i) {
        SCOPED_TRACE(list[i].standard);
        EXPECT_TRUE(list[i].covered) << "RN(s) is covered by every standard";
        EXPECT_FALSE(seen_rejected);
        seen_rejected = seen_rejected || !list[i].covered;
        if (i >= 2) {
            EXPECT_GE(list[i].bound, last_bound) << "tightest first";
            last_bound = list[i].bound;
        }
        seen_structure = seen_structure || list[i].standard == "levels:fold/4,any";
    }
    EXPECT_TRUE(seen_structure) << "the reference's structure is among the candidates";
    // One float32 step away: no longer exact (listed after every covering standard), still faithful.
    const float rn = ref.nearest<float>();
    const mpq_class s = to_mpq(ref.sum);
    ASSERT_NE(s, mpq_class(static_cast<double>(rn))) << "s must not be a float32 for two faithful results";
    const float off = std::nextafter(rn, s > mpq_class(static_cast<double>(rn)) ? INFINITY : -INFINITY);
    const std::vector<verdict> other = explain(off, ref);
    ASSERT_FALSE(other.empty());
    EXPECT_EQ(other.front().standard, "faithful") << "the other faithful neighbour: faithful, not exact";
    EXPECT_TRUE(other.front().covered);
    EXPECT_EQ(other.back().standard, "exact");
    EXPECT_FALSE(other.back().covered);
}

TEST(Vacuity, AnyOrderOnTenThousandFloat16TermsIsVacuousTheStructureIsNot) {
    constexpr unsigned seed = 11;
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::vector<float16> xs;
    for (float x : gaussian_floats(10000, seed)) xs.push_back(float16(x));
    const standard folded = parse_standard("levels:fold/8,any");          // flat depth form γ_1256: vacuous too
    const standard blocked = parse_standard("levels:fold:16,tree:16,any");  // flat depth 15 + 4 + 39: γ_58 < 1
    const reference ref = sum(xs, {folded, blocked});
    const float16 rn = ref.nearest<float16>();

    // (n - 1)·u = 9999·2^-11 > 1: B > S, so even 0 is covered (|0 - s| <= S < B).
    const verdict any = covers(rn, ref, any_order());
    EXPECT_TRUE(any.covered);
    EXPECT_TRUE(any.vacuous);
    EXPECT_EQ(any.sensitivity.of_abs_sum, 9999.0 / 2048.0);  // B / S exactly
    EXPECT_THAT(any.advice, ::testing::HasSubstr("levels:"));
    EXPECT_THAT(any.message(), ::testing::HasSubstr("sees        : nothing (VACUOUS)"));
    EXPECT_TRUE(covers(float16(0.0f), ref, any_order()).covered);
    EXPECT_TRUE(covers(float16(0.0f), ref, any_order()).vacuous);

    for (const standard& m : {folded, blocked}) {
        SCOPED_TRACE(m.name());
        const verdict v = covers(rn, ref, m);
        EXPECT_TRUE(v.covered);
        EXPECT_FALSE(v.vacuous);
        EXPECT_TRUE(v.advice.empty());
        EXPECT_LT(v.sensitivity.of_abs_sum, 1.0);
        EXPECT_GT(v.sensitivity.of_abs_sum, 0.0);
        EXPECT_THAT(v.message(), ::testing::HasSubstr("sees        : a fault only if it moves the sum"));
    }
    EXPECT_LE(mpq_class(bound(ref, blocked, binary16_info)), gamma(58, 11) * to_mpq(ref.abs_sum));
}

}  // namespace

// suggest_narrower_format: a hint only. A float32 sum judged as float64 is rejected and named float32; the same
// result judged as float32 is covered and gets none; a float64 result far from s gets none; mixed gets none.
TEST(NarrowerFormatHint, Float32SumJudgedAsFloat64) {
    std::vector<double> xs;
    float fold = 0;
    for (int i = 1; i <= 1000; ++i) {
        const float x = 1.0f / static_cast<float>(i);
        xs.push_back(x);
        fold += x;
    }
    const exactref::reference ref64 = exactref::sum(xs);
    const std::uint64_t bits = std::bit_cast<std::uint64_t>(static_cast<double>(fold));
    ASSERT_FALSE(exactref::covers_bits(exactref::binary64_info, bits, ref64, exactref::any_order()).covered);
    EXPECT_EQ(exactref::suggest_narrower_format(exactref::binary64_info, bits, ref64, exactref::any_order()),
              std::optional<exactref::dtype>(exactref::dtype::float32));
    const std::uint64_t far = std::bit_cast<std::uint64_t>(static_cast<double>(fold) + 0x1p-30);  // not a float32
    EXPECT_EQ(exactref::suggest_narrower_format(exactref::binary64_info, far, ref64, exactref::any_order()),
              std::nullopt);
    const std::uint64_t wrong = std::bit_cast<std::uint64_t>(static_cast<double>(fold) * 2);  // a float32, far off
    EXPECT_EQ(exactref::suggest_narrower_format(exactref::binary64_info, wrong, ref64, exactref::any_order()),
              std::nullopt);
    const exactref::reference ref32 = exactref::sum(std::vector<float>(xs.begin(), xs.end()));
    EXPECT_EQ(exactref::suggest_narrower_format(exactref::binary32_info, std::bit_cast<std::uint32_t>(fold), ref32,
                                                exactref::any_order()),
              std::nullopt);  // covered as float32: no hint
}

// Never a hint towards a vacuous check: 10000 float32 terms judged as float32 reject a float16 value 64 away from
// s; any_order read in float16 covers it, but only because it covers everything there ((n-1)·2^-11 > 1: B >= S, 0
// covered too). Such a reading cannot have computed the result any better than it can see it: no hint.
TEST(NarrowerFormatHint, NeverTowardsAFormatWhereTheCheckIsVacuous) {
    constexpr unsigned seed = 5;
    SCOPED_TRACE("seed " + std::to_string(seed));
    const std::vector<float> xs = gaussian_floats(10000, seed);
    const reference ref = sum(xs);
    const float wrong = static_cast<float>(static_cast<double>(static_cast<float>(ref.nearest<float16>())) + 64.0);
    ASSERT_EQ(static_cast<float>(float16(wrong)), wrong) << "the planted result is a float16 value";
    const std::uint64_t bits = std::bit_cast<std::uint32_t>(wrong);
    ASSERT_FALSE(covers_bits(binary32_info, bits, ref, any_order()).covered);
    reference in16 = ref;  // the reading in float16 that suggest_narrower_format judges
    in16.term_format = dtype::float16;
    const verdict read16 = covers_bits(binary16_info, std::bit_cast<std::uint16_t>(float16(wrong)), in16, any_order());
    ASSERT_TRUE(read16.covered && read16.vacuous) << "the premise: float16's any_order covers it vacuously";
    EXPECT_EQ(suggest_narrower_format(binary32_info, bits, ref, any_order()), std::nullopt);
    // With few enough terms that float16's any_order sees something, the same kind of result gets its hint.
    const std::vector<float> few(xs.begin(), xs.begin() + 100);
    const reference ref100 = sum(few);
    const float fold100 = static_cast<float>(float16(fold(few, 0, few.size())));
    const std::uint64_t bits100 = std::bit_cast<std::uint32_t>(fold100);
    ASSERT_FALSE(covers_bits(binary32_info, bits100, ref100, any_order()).covered) << "float16's rounding is seen";
    EXPECT_EQ(suggest_narrower_format(binary32_info, bits100, ref100, any_order()),
              std::optional<dtype>(dtype::float16));
}

// explain(result, ref, any_zero_sign): the option reaches every candidate. The sum of -0.0 terms is -0.0; +0.0 (the
// answer of a fold that starts from +0.0, as numpy's) is rejected by exact and faithful unless either sign is taken.
TEST(Explain, AnyZeroSignAppliesToEveryCandidate) {
    const reference ref = sum(std::vector<double>(5, -0.0));
    auto covered_by = [](const std::vector<verdict>& list, const std::string& name) {
        for (const verdict& v : list)
            if (v.standard == name) return v.covered;
        ADD_FAILURE() << name << " is not among the candidates";
        return false;
    };
    const std::vector<verdict> plain = explain(0.0, ref);
    EXPECT_FALSE(covered_by(plain, "exact"));
    EXPECT_FALSE(covered_by(plain, "faithful"));
    const std::vector<verdict> either = explain(0.0, ref, true);
    for (const verdict& v : either) {
        SCOPED_TRACE(v.standard);
        EXPECT_TRUE(v.covered) << "+0.0 for a sum of -0.0 terms, either sign allowed";
    }
    EXPECT_EQ(either.front().standard, "exact");
    EXPECT_FALSE(explain(0x1p-1074, ref, true).front().covered) << "only a zero: a subnormal stays rejected";
}

// A vacuous check says so in the matcher's explanation, on success (seen under ::testing::Not) and on failure.
TEST(Matcher, AVacuousCheckSaysSoInTheExplanation) {
    const reference ref = sum(std::vector<float16>(3000, float16(0.5f)));  // any_order: B = 2196.5 >= S = 1500
    ::testing::StringMatchResultListener listener;
    EXPECT_TRUE(::testing::ExplainMatchResult(Covers(ref), float16(0.0f), &listener));
    EXPECT_THAT(listener.str(), ::testing::HasSubstr("(vacuous: no lost or doubled part of the terms can be seen"));
    EXPECT_NONFATAL_FAILURE(EXPECT_THAT(float16(0.0f), ::testing::Not(Covers(ref))), "(vacuous: ");
    const std::vector<float16> runs{float16(0.0f), float16(1500.0f)};
    EXPECT_NONFATAL_FAILURE(EXPECT_THAT(runs, ::testing::Not(CoversAll(ref))), "(vacuous: ");
    // Not vacuous: no note.
    ::testing::StringMatchResultListener tight;
    EXPECT_FALSE(::testing::ExplainMatchResult(Covers(ref, parse_standard("tree:12")), float16(0.0f), &tight));
    EXPECT_THAT(tight.str(), ::testing::Not(::testing::HasSubstr("vacuous:")));
}

// ftz: on terms far below 2^emin the absolute flush-to-zero term alone reaches S: the advice names it, not a count
// of terms from which the relative part would be vacuous (2^53 + 1 for float64, far beyond these 1000 terms).
TEST(Vacuity, FtzAdviceNamesTheFlushToZeroTerm) {
    const reference ref = sum(std::vector<double>(1000, 1e-310));
    const verdict v = covers(0.0, ref, ftz(any_order()));
    EXPECT_TRUE(v.vacuous);
    EXPECT_THAT(v.advice, ::testing::HasSubstr("the flush-to-zero term n·2^emin"));
    EXPECT_THAT(v.advice, ::testing::HasSubstr("2^emin = 2^-1022 in float64"));
    EXPECT_THAT(v.advice, ::testing::Not(::testing::HasSubstr("vacuous from n =")));
}
