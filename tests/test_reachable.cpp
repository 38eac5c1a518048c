// The exhaustive enumerator of oracle/: add_rounded against MPFR, Boost and the host's own arithmetic in every mode;
// reachable_sums on hand-checked cases (float16 terms whose order matters, stagnation, overflow, signed zeros);
// reachable_sums and reachable_sums_height against a naive enumerator that merges two nodes at a time.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "exactref/format.h"
#include "oracle.h"

namespace {

using namespace exactref;
namespace orc = exactref::oracle;

constexpr rounding all_modes[] = {rounding::to_nearest_even, rounding::toward_zero, rounding::upward,
                                  rounding::downward};
const format_info* const all_formats[] = {&binary64_info, &binary32_info, &binary16_info, &bfloat16_info};

std::uint64_t h16(double v) { return round_double_to(binary16_info, v, rounding::to_nearest_even); }
std::uint64_t f32(float v) { return std::bit_cast<std::uint32_t>(v); }
std::uint64_t f64(double v) { return std::bit_cast<std::uint64_t>(v); }

std::vector<std::uint64_t> sorted(std::vector<std::uint64_t> v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    return v;
}

// a + b by the two exact oracles (Boost rational and MPFR), with the IEEE special and signed-zero rules.
std::uint64_t expected_sum(std::uint64_t a, std::uint64_t b, const format_info& f, rounding mode) {
    const orc::parts x = orc::decode(f, a), y = orc::decode(f, b);
    if (x.nan || y.nan || (x.inf && y.inf && x.negative != y.negative)) return orc::nan_bits(f);
    if (x.inf || y.inf) return orc::inf_bits(f, x.inf ? x.negative : y.negative);
    const orc::boost_rational s = orc::boost_value(a, f) + orc::boost_value(b, f);
    if (s == 0) {
        const bool both_zero = x.significand == 0 && y.significand == 0;
        const bool negative = both_zero ? (mode == rounding::downward ? (x.negative || y.negative)
                                                                       : (x.negative && y.negative))
                                        : mode == rounding::downward;
        return orc::zero_bits(f, negative);
    }
    const std::uint64_t by_boost = orc::boost_round_bits(s, f, mode);
    const orc::mpfr_number xa = orc::mpfr_value(a, f), yb = orc::mpfr_value(b, f);
    orc::mpfr_number exact(2 * 1100);
    mpfr_add(exact.get(), xa.get(), yb.get(), MPFR_RNDN);  // exact: the span of two binary64 values is < 2200 bits
    const std::uint64_t by_mpfr = orc::mpfr_round_bits(exact.get(), f, mode);
    EXPECT_EQ(by_boost, by_mpfr) << "oracles disagree: " << orc::describe(a, f) << " + " << orc::describe(b, f);
    return by_boost;
}

TEST(AddRounded, MatchesBothOraclesOnRandomPairsInEveryFormatAndMode) {
    std::mt19937_64 rng(3001);
    SCOPED_TRACE("seed 3001");
    for (const format_info* f : all_formats) {
        for (int i = 0; i < 40000; ++i) {
            const orc::term_mix mix = orc::all_term_mixes[i % std::size(orc::all_term_mixes)];
            const std::vector<std::uint64_t> t = orc::random_terms(*f, 2, mix, rng);
            for (rounding mode : all_modes) {
                const std::uint64_t got = orc::add_rounded(t[0], t[1], *f, mode);
                ASSERT_EQ(got, expected_sum(t[0], t[1], *f, mode))
                    << orc::describe(t[0], *f) << " + " << orc::describe(t[1], *f) << " in " << to_string(mode)
                    << " (" << orc::to_string(mix) << ") gave " << orc::describe(got, *f);
                ASSERT_EQ(got, orc::add_rounded(t[1], t[0], *f, mode)) << "not commutative";
            }
        }
    }
}

// The host's float and double additions are correctly rounded in each mode; add_rounded must give the same bits.
TEST(AddRounded, MatchesTheHostInEveryMode) {
    std::mt19937_64 rng(3002);
    SCOPED_TRACE("seed 3002");
    for (rounding mode : all_modes) {
        for (int i = 0; i < 20000; ++i) {
            const orc::term_mix mix = orc::all_term_mixes[i % std::size(orc::all_term_mixes)];
            const std::vector<std::uint64_t> d = orc::random_terms(binary64_info, 2, mix, rng);
            const std::vector<std::uint64_t> s = orc::random_terms(binary32_info, 2, mix, rng);
            std::uint64_t host_d, host_s;
            {
                orc::fp_environment_guard env(mode, false);
                volatile double a = std::bit_cast<double>(d[0]), b = std::bit_cast<double>(d[1]);
                volatile float c = std::bit_cast<float>(static_cast<std::uint32_t>(s[0]));
                volatile float e = std::bit_cast<float>(static_cast<std::uint32_t>(s[1]));
                const double sum_d = a + b;
                const float sum_s = c + e;
                host_d = f64(sum_d);
                host_s = f32(sum_s);
            }
            const std::uint64_t got_d = orc::add_rounded(d[0], d[1], binary64_info, mode);
            const std::uint64_t got_s = orc::add_rounded(s[0], s[1], binary32_info, mode);
            if (orc::is_nan_bits(binary64_info, host_d)) ASSERT_TRUE(orc::is_nan_bits(binary64_info, got_d));
            else ASSERT_EQ(got_d, host_d) << orc::describe(d[0], binary64_info) << " + "
                                          << orc::describe(d[1], binary64_info) << " " << to_string(mode);
            if (orc::is_nan_bits(binary32_info, host_s)) ASSERT_TRUE(orc::is_nan_bits(binary32_info, got_s));
            else ASSERT_EQ(got_s, host_s) << orc::describe(s[0], binary32_info) << " + "
                                          << orc::describe(s[1], binary32_info) << " " << to_string(mode);
        }
    }
}

TEST(AddRounded, HandCheckedCases) {
    // float16: ulp is 2 in [2048, 4096); 2049 is a tie (-> 2048, even), 2051 too (-> 2052).
    EXPECT_EQ(orc::add_rounded(h16(2048), h16(1), binary16_info), h16(2048));
    EXPECT_EQ(orc::add_rounded(h16(2050), h16(1), binary16_info), h16(2052));
    EXPECT_EQ(orc::add_rounded(h16(2048), h16(1), binary16_info, rounding::upward), h16(2050));
    EXPECT_EQ(orc::add_rounded(h16(65504), h16(16), binary16_info), orc::inf_bits(binary16_info, false));  // 65520
    EXPECT_EQ(orc::add_rounded(h16(65504), h16(8), binary16_info), h16(65504));                            // 65512
    EXPECT_EQ(orc::add_rounded(h16(65504), h16(16), binary16_info, rounding::toward_zero), h16(65504));
    // bfloat16 stagnation at 256: 256 + 1 is a tie between 256 and 258 (ulp 2) -> 256.
    const std::uint64_t b256 = round_double_to(bfloat16_info, 256, rounding::to_nearest_even);
    const std::uint64_t b1 = round_double_to(bfloat16_info, 1, rounding::to_nearest_even);
    EXPECT_EQ(orc::add_rounded(b256, b1, bfloat16_info), b256);
    // Signed zeros (IEEE 754-2019 §6.3).
    const std::uint64_t pz = f64(0.0), nz = f64(-0.0);
    EXPECT_EQ(orc::add_rounded(nz, nz, binary64_info), nz);
    EXPECT_EQ(orc::add_rounded(pz, nz, binary64_info), pz);
    EXPECT_EQ(orc::add_rounded(pz, nz, binary64_info, rounding::downward), nz);
    EXPECT_EQ(orc::add_rounded(f64(1.5), f64(-1.5), binary64_info), pz);
    EXPECT_EQ(orc::add_rounded(f64(1.5), f64(-1.5), binary64_info, rounding::downward), nz);
    EXPECT_EQ(orc::add_rounded(nz, f64(3.0), binary64_info), f64(3.0));
    // Far apart: 1 + 2^-80 is 1 in RN, the next double up in RU; 1 - 2^-80 is the double below 1 in RD.
    EXPECT_EQ(orc::add_rounded(f64(1.0), f64(0x1p-80), binary64_info), f64(1.0));
    EXPECT_EQ(orc::add_rounded(f64(1.0), f64(0x1p-80), binary64_info, rounding::upward), f64(1.0 + 0x1p-52));
    EXPECT_EQ(orc::add_rounded(f64(1.0), f64(-0x1p-80), binary64_info, rounding::downward), f64(1.0 - 0x1p-53));
    EXPECT_EQ(orc::add_rounded(f64(1.0), f64(-0x1p-80), binary64_info, rounding::toward_zero), f64(1.0 - 0x1p-53));
    // Specials.
    EXPECT_TRUE(orc::is_nan_bits(binary64_info, orc::add_rounded(f64(INFINITY), f64(-INFINITY), binary64_info)));
    EXPECT_EQ(orc::add_rounded(f64(INFINITY), f64(-1e308), binary64_info), f64(INFINITY));
}

// ---- reachable_sums ----------------------------------------------------------------------------------------------

std::vector<std::uint64_t> reach16(std::initializer_list<double> values) {
    std::vector<std::uint64_t> bits;
    for (double v : values) bits.push_back(h16(v));
    return orc::reachable_sums(bits, binary16_info);
}
std::vector<std::uint64_t> h16s(std::initializer_list<double> values) {
    std::vector<std::uint64_t> bits;
    for (double v : values) bits.push_back(h16(v));
    return sorted(bits);
}

TEST(ReachableSums, HandCheckedFloat16CasesWhereOrderMatters) {
    // (2048 + 1) + 1 = 2048 (each 2049 is a tie to even), 2048 + (1 + 1) = 2050.
    EXPECT_EQ(reach16({2048, 1, 1}), h16s({2048, 2050}));
    // Four terms: 2048+1+1+1 stagnates; 2048+(1+1) = 2050, then +1 = 2051 -> 2052; 2048+(1+1+1) = 2051 -> 2052;
    // (2048+1)+(1+1) = 2050.
    EXPECT_EQ(reach16({2048, 1, 1, 1}), h16s({2048, 2050, 2052}));
    // Heights: over 4 leaves, height 2 is the balanced tree only: (2048+1)+(1+1) = 2050; height 1 has no tree.
    std::vector<std::uint64_t> t = {h16(2048), h16(1), h16(1), h16(1)};
    EXPECT_EQ(orc::reachable_sums_height(t, binary16_info, 2), h16s({2050}));
    EXPECT_TRUE(orc::reachable_sums_height(t, binary16_info, 1).empty());
    EXPECT_EQ(orc::reachable_sums_height(t, binary16_info, 3), h16s({2048, 2050, 2052}));
    // Overflow: max + max overflows whatever follows; max + (max - max) does not.
    EXPECT_EQ(reach16({65504, 65504, -65504}), sorted({h16(65504), orc::inf_bits(binary16_info, false)}));
    // A single term, an empty list.
    EXPECT_EQ(reach16({3.5}), h16s({3.5}));
    EXPECT_EQ(orc::reachable_sums(std::vector<std::uint64_t>{}, binary16_info), h16s({0.0}));
}

TEST(ReachableSums, HandCheckedDoubleAndSpecialCases) {
    // 1 + 2^-53 is a tie (-> 1); 2^-53 + 2^-53 = 2^-52 is not lost.
    EXPECT_EQ(orc::reachable_sums(std::vector<std::uint64_t>{f64(1), f64(0x1p-53), f64(0x1p-53)}, binary64_info),
              sorted({f64(1), f64(1 + 0x1p-52)}));
    // Exact cancellation in any order gives +0; -0.0 only from -0.0 terms.
    EXPECT_EQ(orc::reachable_sums(std::vector<std::uint64_t>{f64(1), f64(-1)}, binary64_info), sorted({f64(0.0)}));
    EXPECT_EQ(orc::reachable_sums(std::vector<std::uint64_t>{f64(-0.0), f64(-0.0), f64(-0.0)}, binary64_info),
              sorted({f64(-0.0)}));
    EXPECT_EQ(orc::reachable_sums(std::vector<std::uint64_t>{f64(-0.0), f64(0.0)}, binary64_info), sorted({f64(0.0)}));
    // Inf and -Inf meet in every tree: NaN only; a NaN term: NaN only.
    EXPECT_EQ(orc::reachable_sums(std::vector<std::uint64_t>{f64(INFINITY), f64(1), f64(-INFINITY)}, binary64_info),
              sorted({orc::nan_bits(binary64_info)}));
    EXPECT_EQ(orc::reachable_sums(std::vector<std::uint64_t>{f64(NAN), f64(1)}, binary64_info),
              sorted({orc::nan_bits(binary64_info)}));
    // float32: 2^24 + 1 + 1: the left fold stagnates at 2^24, 1 + 1 first does not.
    EXPECT_EQ(orc::reachable_sums(std::vector<std::uint64_t>{f32(0x1p24f), f32(1), f32(1)}, binary32_info),
              sorted({f32(0x1p24f), f32(0x1p24f + 2)}));
}

TEST(ReachableSums, RejectsMoreThanEightTerms) {
    const std::vector<std::uint64_t> nine(9, f64(1.0));
    try {
        orc::reachable_sums(nine, binary64_info);
        ADD_FAILURE() << "nine terms accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_THAT(e.what(), testing::HasSubstr("at most 8"));
    }
}

// The naive enumeration: merge any two current nodes, recursively, tracking each node's height. Every binary tree
// over every order is reached this way (merging is how any tree is built bottom-up).
void naive(std::vector<std::pair<std::uint64_t, unsigned>>& nodes, const format_info& f,
           std::set<std::pair<std::uint64_t, unsigned>>& out) {
    if (nodes.size() == 1) {
        out.insert(nodes[0]);
        return;
    }
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        for (std::size_t j = i + 1; j < nodes.size(); ++j) {
            std::vector<std::pair<std::uint64_t, unsigned>> next;
            for (std::size_t k = 0; k < nodes.size(); ++k)
                if (k != i && k != j) next.push_back(nodes[k]);
            next.emplace_back(orc::add_rounded(nodes[i].first, nodes[j].first, f),
                              std::max(nodes[i].second, nodes[j].second) + 1);
            naive(next, f, out);
        }
    }
}

TEST(ReachableSums, EqualsNaiveEnumerationOnRandomSmallSets) {
    std::mt19937_64 rng(3003);
    SCOPED_TRACE("seed 3003");
    for (const format_info* f : all_formats) {
        for (int i = 0; i < 120; ++i) {
            const std::size_t n = 1 + static_cast<std::size_t>(rng() % 6);
            const orc::term_mix mix = orc::all_term_mixes[rng() % std::size(orc::all_term_mixes)];
            const std::vector<std::uint64_t> t = orc::random_terms(*f, n, mix, rng);
            std::vector<std::pair<std::uint64_t, unsigned>> nodes;
            for (std::uint64_t b : t) nodes.emplace_back(orc::is_nan_bits(*f, b) ? orc::nan_bits(*f) : b, 0u);
            std::set<std::pair<std::uint64_t, unsigned>> all;
            naive(nodes, *f, all);
            SCOPED_TRACE(std::string(f->name) + " n=" + std::to_string(n) + " " + orc::to_string(mix) + " case " +
                         std::to_string(i));
            for (unsigned h = 0; h <= n; ++h) {
                std::vector<std::uint64_t> expect;
                for (const auto& [bits, height] : all)
                    if (height <= h) expect.push_back(bits);
                ASSERT_EQ(orc::reachable_sums_height(t, *f, h), sorted(expect)) << "height " << h;
            }
            std::vector<std::uint64_t> every;
            for (const auto& node : all) every.push_back(node.first);
            ASSERT_EQ(orc::reachable_sums(t, *f), sorted(every));
            const auto by_height = orc::reachable_sums_by_height(t, *f);
            ASSERT_EQ(by_height.size(), n);
            for (unsigned h = 0; h < n; ++h) ASSERT_EQ(by_height[h], orc::reachable_sums_height(t, *f, h)) << h;
        }
    }
}

// Eight terms: 135135 distinct trees. The memoized enumerator must contain the left fold of every one of the 40320
// orders, and for some sets strictly more (results only non-fold trees reach), so it is more than a fold enumerator.
TEST(ReachableSums, EightTermsContainEveryOrderOfTheLeftFold) {
    std::mt19937_64 rng(3004);
    SCOPED_TRACE("seed 3004");
    for (const format_info* f : all_formats) {
        int richer = 0;
        for (int i = 0; i < 20; ++i) {
            std::vector<std::uint64_t> t = orc::random_terms(*f, 8, orc::term_mix::clustered, rng);
            const std::vector<std::uint64_t> all = orc::reachable_sums(t, *f);
            std::vector<std::size_t> order = {0, 1, 2, 3, 4, 5, 6, 7};
            std::set<std::uint64_t> folds;
            do {
                std::uint64_t acc = t[order[0]];
                for (std::size_t k = 1; k < 8; ++k) acc = orc::add_rounded(acc, t[order[k]], *f);
                folds.insert(acc);
            } while (std::next_permutation(order.begin(), order.end()));
            for (std::uint64_t r : folds)
                ASSERT_TRUE(std::binary_search(all.begin(), all.end(), r)) << orc::describe(r, *f) << " missing";
            if (all.size() > folds.size()) ++richer;
        }
        EXPECT_GT(richer, 0) << f->name << ": no set where trees reach more than left folds";
    }
}

}  // namespace
