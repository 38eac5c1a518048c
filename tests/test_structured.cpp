// Structured standards (standard.h "levels:", structured.cpp): spelling, the classic standards as flat structures bit
// for bit, soundness (every evaluation consistent with a structure covered: exhaustive for n <= 8, random and real
// threads beyond), never looser than the flat bound of the same structure, detection of planted faults, bad input.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "exactref/covers.h"
#include "exactref/dot.h"
#include "exactref/multiprecision.h"
#include "exactref/reference.h"
#include "exactref/standard.h"
#include "oracle.h"
#include "structured_checks.h"
#include "test_scale.h"

namespace exactref {
namespace {

using ::testing::HasSubstr;

const format_info* const all_formats[] = {&binary64_info, &binary32_info, &binary16_info, &bfloat16_info};

// A reference of raw bits of format f, with the data bounds of `models`.
reference reference_of_bits(const format_info& f, const std::vector<std::uint64_t>& bits,
                            const std::vector<standard>& models) {
    auto build = [&](auto tag) {
        using T = decltype(tag);
        std::vector<T> xs;
        for (std::uint64_t b : bits) xs.push_back(format_traits<T>::from_bits(static_cast<typename format_traits<T>::bits_type>(b)));
        return sum(std::span<const T>(xs), models);
    };
    switch (f.id) {
        case dtype::float64: return build(double{});
        case dtype::float32: return build(float{});
        case dtype::float16: return build(float16{});
        case dtype::bfloat16: return build(bfloat16{});
    }
    return {};
}

standard flat_of(standard s) {
    s.structured = false;
    return s;
}

// ---- spelling ------------------------------------------------------------------------------------------------------

TEST(StructuredSpelling, RoundTripsAndComposesPrefixes) {
    for (const char* name : {"levels:fold/4,any", "levels:fold%65536,tree:256,any", "levels:fold/8,any",
                             "levels:any", "levels:tree", "levels:fold:16,fold", "levels:tree@9", "directed:levels:fold/4,any",
                             "mixed:float32:float16:levels:fold/4,any", "directed:mixed:float32:float16:levels:tree:256,any",
                             "levels:fold/8,any+fma", "mixed:float32:float16:tree:5"}) {
        const standard s = parse_standard(name);
        EXPECT_EQ(s.name(), name);
        EXPECT_EQ(parse_standard(s.name()), s) << name;
    }
    EXPECT_TRUE(parse_standard("levels:fold/4,any").structured);
    EXPECT_EQ(parse_standard("levels:fold%65536,tree:256,any").levels.size(), 3u);
    // The classic factories are structures with the flat bound, spelled as before.
    EXPECT_EQ(any_order().structure(), "levels:any");
    EXPECT_EQ(split_k(8).structure(), "levels:fold/8,any");
    EXPECT_EQ(split_k(8, split_combine::pairwise).structure(), "levels:fold/8,tree");
    EXPECT_EQ(tree(7).structure(), "levels:tree@7");
    EXPECT_EQ(split_k(8).name(), "split_k:8");
    EXPECT_EQ(mixed(dtype::float32, dtype::float16).name(), "mixed:float32:float16");
    EXPECT_FALSE(split_k(8).structured);
}

TEST(StructuredSpelling, BadInputShowsTheAcceptedSpelling) {
    auto message_of = [](const char* name) {
        try {
            parse_standard(name);
        } catch (const std::invalid_argument& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_THAT(message_of("levels:scan/4,any"), HasSubstr("unknown level order 'scan'"));
    EXPECT_THAT(message_of("levels:scan/4,any"), HasSubstr("levels:fold/4,any"));
    EXPECT_THAT(message_of("levels:fold/0,any"), HasSubstr("positive integer"));
    EXPECT_THAT(message_of("levels:fold:0,any"), HasSubstr("positive integer"));
    EXPECT_THAT(message_of("levels:fold/4,any:3"), HasSubstr("the last level combines all that is left"));
    EXPECT_THAT(message_of("levels:fold,any"), HasSubstr("level 1 has no group suffix"));
    EXPECT_THAT(message_of("levels:"), HasSubstr("no levels"));
    EXPECT_THAT(message_of("levels:fold@3/4,any"), HasSubstr("only a tree level has a height"));
    EXPECT_THAT(message_of("exact:levels:fold/4,any"), HasSubstr("unknown standard"));
    EXPECT_THAT(message_of("mixed:float32:float16:exact"), HasSubstr("take no structure"));
    EXPECT_THAT(message_of("directed:faithful"), HasSubstr("take no structure"));
    EXPECT_THROW(levels({}), std::invalid_argument);
}

TEST(StructuredSpelling, GroupsThatDoNotFitAreRefused) {
    const std::vector<float> xs(10, 1.0f);
    try {
        sum(xs, {parse_standard("levels:fold/16,any")});
        FAIL() << "16 chunks of 10 terms accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_THAT(e.what(), HasSubstr("asks for 16 groups of 10 items"));
        EXPECT_THAT(e.what(), HasSubstr("fold/10"));
    }
    EXPECT_THROW(sum(xs, {parse_standard("levels:fold%11,any")}), std::invalid_argument);
    EXPECT_NO_THROW(sum(xs, {parse_standard("levels:fold%10,any")}));
    // Not structured: exact, faithful, the classic flat standards.
    EXPECT_THROW(sum(xs, {exact()}), std::invalid_argument);
    EXPECT_THROW(sum(xs, {split_k(4)}), std::invalid_argument);
    // A structured standard on a reference built without it.
    const reference plain = sum(xs);
    try {
        covers(10.0f, plain, parse_standard("levels:fold/4,any"));
        FAIL();
    } catch (const std::invalid_argument& e) {
        EXPECT_THAT(e.what(), HasSubstr("the reference must be built with it"));
    }
}

// ---- the classic standards through the model, and structured <= flat ------------------------------------------------

TEST(StructuredBound, FlatStructuresAreTheClassicStandardsBitForBit) {
    std::mt19937_64 rng(11);
    for (const format_info* f : all_formats) {
        for (std::size_t n : {0, 1, 2, 5, 100, 4097}) {
            const reference ref = reference_of_bits(*f, oracle::random_terms(*f, n, oracle::term_mix::clustered, rng), {});
            EXPECT_EQ(bound(ref, flat_of(parse_standard("levels:any")), *f), bound(ref, any_order(), *f));
            EXPECT_EQ(bound(ref, flat_of(parse_standard("levels:fold/4,any")), *f), bound(ref, split_k(4), *f));
            EXPECT_EQ(bound(ref, flat_of(parse_standard("levels:fold/4,tree")), *f),
                      bound(ref, split_k(4, split_combine::pairwise), *f));
            EXPECT_EQ(bound(ref, flat_of(parse_standard("levels:tree@13")), *f), bound(ref, tree(13), *f));
        }
    }
}

TEST(StructuredBound, NeverLooserThanTheFlatBoundOfTheSameStructure) {
    std::mt19937_64 rng(12);
    const char* structures[] = {"levels:any", "levels:fold/4,any", "levels:fold/4,tree", "levels:fold:8,tree:256,any",
                                "levels:fold%64,tree:16,any", "levels:tree:32,fold", "levels:any:16,any",
                                "levels:fold:3,fold:5,fold"};
    std::size_t tighter = 0, checks = 0;
    for (const format_info* f : all_formats)
        for (oracle::term_mix mix : {oracle::term_mix::clustered, oracle::term_mix::cancelling, oracle::term_mix::full_range})
            for (std::size_t n : {1, 7, 64, 1000, 5000}) {
                const std::vector<std::uint64_t> bits = oracle::random_terms(*f, n, mix, rng);
                for (const char* name : structures) {
                    for (bool dir : {false, true}) {
                        standard s = parse_standard(name);
                        if (s.levels[0].groups != level_groups::consecutive && s.levels[0].groups != level_groups::rest &&
                            s.levels[0].size > n)
                            continue;  // more groups than terms: refused (GroupsThatDoNotFitAreRefused)
                        if (dir) s = directed(s);
                        const reference ref = reference_of_bits(*f, bits, {s});
                        const double structured = bound(ref, s, *f);
                        const double flat = bound(ref, flat_of(s), *f);
                        if (std::isnan(flat)) continue;  // special terms decide
                        EXPECT_LE(structured, flat) << name << " " << f->name << " n=" << n;
                        tighter += structured < flat;
                        ++checks;
                    }
                }
            }
    EXPECT_GT(tighter, checks / 2);  // the data bound is the tighter one on most inputs
}

// ---- soundness: every evaluation consistent with the structure is covered -------------------------------------------

const char* const small_structures[] = {
    "levels:any",          "levels:fold",         "levels:tree",          "levels:fold/2,any",  "levels:fold/3,any",
    "levels:fold:3,tree",  "levels:fold%3,any",   "levels:fold%2,tree",   "levels:tree:4,any",  "levels:any:3,fold",
    "levels:fold:2,fold:2,any", "levels:tree:2,tree:2,any", "levels:fold/2,tree"};

TEST(StructuredSoundness, EveryReachableResultForSmallNIsCovered) {
    std::mt19937_64 rng(20261201);
    std::size_t checks = 0;
    for (const format_info* f : all_formats) {
        for (int trial = 0; trial < 60; ++trial) {
            const std::size_t n = 1 + trial % 8;
            const oracle::term_mix mix = trial % 3 == 0   ? oracle::term_mix::cancelling
                                         : trial % 3 == 1 ? oracle::term_mix::clustered
                                                          : oracle::term_mix::ties;
            const std::vector<std::uint64_t> bits = oracle::random_terms(*f, n, mix, rng);
            for (const char* name : small_structures) {
                const standard s = parse_standard(name);
                if ((s.levels[0].groups == level_groups::interleaved || s.levels[0].groups == level_groups::chunks) &&
                    s.levels[0].size > n)
                    continue;
                const standard d = directed(s);
                const reference ref = reference_of_bits(*f, bits, {s, d});
                for (rounding mode : {rounding::to_nearest_even, rounding::upward, rounding::downward,
                                      rounding::toward_zero}) {
                    const standard& model = mode == rounding::to_nearest_even ? s : d;
                    for (std::uint64_t r : test::reachable_under(s, bits, *f, mode)) {
                        const verdict v = covers_bits(*f, r, ref, model);
                        ASSERT_TRUE(v.covered) << name << " " << f->name << " trial " << trial << " mode "
                                               << static_cast<int>(mode) << "\n" << v.message();
                        ++checks;
                    }
                }
            }
        }
    }
    EXPECT_GT(checks, 20000u);
}

// Native arithmetic for binary64/binary32 in round-to-nearest; the oracle's add_rounded otherwise.
test::bits_add adder(const format_info& f, rounding mode) {
    if (mode == rounding::to_nearest_even && f.id == dtype::float64)
        return [](std::uint64_t a, std::uint64_t b) {
            return std::bit_cast<std::uint64_t>(std::bit_cast<double>(a) + std::bit_cast<double>(b));
        };
    if (mode == rounding::to_nearest_even && f.id == dtype::float32)
        return [](std::uint64_t a, std::uint64_t b) {
            return std::uint64_t{std::bit_cast<std::uint32_t>(std::bit_cast<float>(std::uint32_t(a)) +
                                                              std::bit_cast<float>(std::uint32_t(b)))};
        };
    return [&f, mode](std::uint64_t a, std::uint64_t b) { return oracle::add_rounded(a, b, f, mode); };
}

std::vector<std::uint64_t> gaussian_bits(const format_info& f, std::size_t n, double mean, std::mt19937_64& rng) {
    std::normal_distribution<double> g(mean, 1.0);
    std::vector<std::uint64_t> out;
    for (std::size_t i = 0; i < n; ++i) {
        const double x = g(rng);
        switch (f.id) {
            case dtype::float64: out.push_back(std::bit_cast<std::uint64_t>(x)); break;
            case dtype::float32: out.push_back(std::bit_cast<std::uint32_t>(static_cast<float>(x))); break;
            case dtype::float16: out.push_back(float16(static_cast<float>(x)).bits); break;
            case dtype::bfloat16: out.push_back(bfloat16(static_cast<float>(x)).bits); break;
        }
    }
    return out;
}

TEST(StructuredSoundness, RandomEvaluationsOfRandomStructuresAreCovered) {
    const char* structures[] = {"levels:fold/4,any",       "levels:fold/7,tree",       "levels:fold:8,tree:32,any",
                                "levels:fold%64,tree:16,any", "levels:any:32,any",     "levels:tree:64,fold",
                                "levels:fold:5,fold:3,any", "levels:fold",              "levels:tree:16,tree:4,any"};
    for (const format_info* f : all_formats) {
        std::mt19937_64 rng(0xC0FFEE + static_cast<unsigned>(f->id));
        std::size_t evaluations = 0;
        for (int data = 0; evaluations < exactref_test::scaled<std::size_t>(100000); ++data) {
            const std::size_t n = 64 + rng() % 600;
            std::vector<std::uint64_t> bits;
            switch (data % 4) {
                case 0: bits = gaussian_bits(*f, n, 0.0, rng); break;
                case 1: bits = gaussian_bits(*f, n, 3.0, rng); break;  // one sign mostly: little cancellation
                case 2: bits = oracle::random_terms(*f, n, oracle::term_mix::cancelling, rng); break;
                default: bits = oracle::random_terms(*f, n, oracle::term_mix::clustered, rng); break;
            }
            const standard s = parse_standard(structures[data % std::size(structures)]);
            const standard d = directed(s);
            const reference ref = reference_of_bits(*f, bits, {s, d});
            for (rounding mode : {rounding::to_nearest_even, rounding::toward_zero, rounding::upward}) {
                const test::bits_add add = adder(*f, mode);
                const int runs = mode == rounding::to_nearest_even ? 40 : 5;
                const standard& model = mode == rounding::to_nearest_even ? s : d;
                for (int run = 0; run < runs; ++run, ++evaluations) {
                    const std::uint64_t r = test::random_evaluation(s, bits, 0, add, rng);
                    if (decide_bits(*f, r, ref, model).covered) continue;
                    FAIL() << s.name() << " " << f->name << " data " << data << " run " << run << " (seed 0xC0FFEE + "
                           << static_cast<int>(f->id) << ")\n" << covers_bits(*f, r, ref, model).message();
                }
            }
        }
    }
}

// A real CPU kernel: T threads fold their static chunks (OpenMP's schedule), then add their partial sums to a shared
// std::atomic in whatever order they arrive. levels:fold/T,any must cover every run.
template <class T>
void check_real_threads(std::size_t runs, std::size_t n, unsigned threads, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> g;
    std::vector<T> xs(n);
    std::atomic<T> total{0};
    std::barrier<> sync(threads + 1);
    bool stop = false;
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
            while (true) {
                sync.arrive_and_wait();  // a run starts
                if (stop) return;
                const std::size_t begin = t * (n / threads) + std::min<std::size_t>(t, n % threads);
                const std::size_t end = begin + n / threads + (t < n % threads ? 1 : 0);
                T part = 0;
                for (std::size_t i = begin; i < end; ++i) part += xs[i];
                T seen = total.load();
                while (!total.compare_exchange_weak(seen, seen + part)) {
                }
                sync.arrive_and_wait();  // the run is over
            }
        });
    const standard s = parse_standard("levels:fold/" + std::to_string(threads) + ",any");
    std::size_t distinct = 0;
    reference kept;
    for (std::size_t run = 0; run < runs; ++run) {
        if (run % 50 == 0) {  // new data every 50 runs
            for (T& x : xs) x = static_cast<T>(g(rng) * (run % 100 == 0 ? 1.0 : 1e3));
            if (run % 150 == 0) xs[rng() % n] = static_cast<T>(1e6);  // one large term
            kept = sum(xs, {s});
        }
        total.store(0);
        sync.arrive_and_wait();
        sync.arrive_and_wait();
        const T r = total.load();
        distinct += r != kept.nearest<T>();
        const verdict v = covers(r, kept, s);
        ASSERT_TRUE(v.covered) << "run " << run << " seed " << seed << "\n" << v.message();
    }
    stop = true;
    sync.arrive_and_wait();
    for (std::thread& t : pool) t.join();
    ::testing::Test::RecordProperty("results_not_RN", static_cast<int>(distinct));
}

TEST(StructuredSoundness, RealThreadAtomicsAreCovered) {
    using exactref_test::scaled;
    check_real_threads<float>(scaled<std::size_t>(100000), 257, 4, 1);
    check_real_threads<double>(scaled<std::size_t>(100000), 257, 4, 2);
    check_real_threads<float>(scaled<std::size_t>(2000, 100), 100000, 2, 3);
}

// ---- detection --------------------------------------------------------------------------------------------------

// The case: 4 threads sum 10^5 float32 N(0, 1) values in static chunks and the last chunk is never added.
TEST(StructuredDetection, LostQuarterIsRejectedWithRatioAtLeastTen) {
    const standard s = parse_standard("levels:fold/4,any");
    int rejected = 0, ratio_at_least_ten = 0;
    double smallest_ratio = INFINITY;
    for (std::uint64_t seed = 1; seed <= 50; ++seed) {
        std::mt19937_64 rng(seed);
        std::normal_distribution<float> g;
        std::vector<float> xs(100000);
        for (float& x : xs) x = g(rng);
        const reference ref = sum(xs, {s});
        float part[4];
        for (int t = 0; t < 4; ++t) {
            float a = 0;
            for (std::size_t i = t * 25000; i < (t + 1) * 25000u; ++i) a += xs[i];
            part[t] = a;
        }
        // Every order of combining the four chunk results is covered...
        int order[4] = {0, 1, 2, 3};
        do {
            const float honest = ((part[order[0]] + part[order[1]]) + part[order[2]]) + part[order[3]];
            ASSERT_TRUE(covers(honest, ref, s)) << "seed " << seed;
            ASSERT_TRUE(covers((part[0] + part[1]) + (part[2] + part[3]), ref, s));
        } while (std::next_permutation(order, order + 4));
        // ...and the run that never adds the last chunk is not.
        const float lost = (part[0] + part[1]) + part[2];
        const verdict v = covers(lost, ref, s);
        rejected += !v.covered;
        ratio_at_least_ten += v.ratio >= 10;
        // The run lost a chunk summing to 260; a chunk of 25,000 N(0, 1) terms sums to about ±126.
        if (std::fabs(part[3]) >= 5) smallest_ratio = std::min(smallest_ratio, v.ratio);
        EXPECT_TRUE(covers(lost, ref, any_order())) << "seed " << seed;  // what the flat bound could not see
    }
    EXPECT_EQ(rejected, 50);
    EXPECT_GE(ratio_at_least_ten, 48);
    EXPECT_GE(smallest_ratio, 10.0);
}

// A device sum: each thread folds 8 consecutive terms, a block of 256 threads reduces them as a shared-memory halving tree (2048
// terms a block), blocks are combined with atomics. A lost block of 2048 float32 N(0, 1) terms at n = 2^20.
TEST(StructuredDetection, LostBlockOf2048IsRejected) {
    const standard s = parse_standard("levels:fold:8,tree:256,any");
    const std::size_t n = std::size_t{1} << 20, block = 2048;
    const int seeds = 200;  // not scaled: fewer seeds can leave the flat bound rejecting as many (seen at 40)
    int rejected = 0, flat_rejected = 0;
    for (int seed = 0; seed < seeds; ++seed) {
        std::mt19937_64 rng(1000 + seed);
        std::normal_distribution<float> g;
        std::vector<float> xs(n);
        for (float& x : xs) x = g(rng);
        const reference ref = sum(xs, {s});
        std::vector<float> blocks(n / block);
        for (std::size_t b = 0; b < blocks.size(); ++b) {
            float thread_sums[256];
            for (int t = 0; t < 256; ++t) {
                float a = 0;
                for (int i = 0; i < 8; ++i) a += xs[b * block + t * 8 + i];
                thread_sums[t] = a;
            }
            for (int stride = 128; stride > 0; stride /= 2)
                for (int t = 0; t < stride; ++t) thread_sums[t] += thread_sums[t + stride];
            blocks[b] = thread_sums[0];
        }
        std::shuffle(blocks.begin(), blocks.end(), rng);
        float honest = 0;
        for (float b : blocks) honest += b;
        ASSERT_TRUE(covers(honest, ref, s)) << "seed " << 1000 + seed;
        const float lost = honest - blocks[rng() % blocks.size()];  // the same run without one block
        rejected += !covers(lost, ref, s).covered;
        flat_rejected += !covers(lost, ref, tree(20)).covered;
    }
    RecordProperty("rejected", rejected);
    RecordProperty("rejected_by_tree_20", flat_rejected);
    EXPECT_GE(rejected, seeds * 99 / 100) << rejected << " of " << seeds;
    EXPECT_GT(rejected, flat_rejected);
}

TEST(StructuredDetection, DotProductsWithFma) {
    const standard s = parse_standard("levels:fold/8,any+fma");
    std::mt19937_64 rng(5);
    std::normal_distribution<float> g;
    std::vector<float> x(80000), y(80000);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = g(rng), y[i] = g(rng);
    const reference ref = dot(std::span<const float>(x), std::span<const float>(y), {s});
    float part[8];
    for (int c = 0; c < 8; ++c) {
        float a = 0;
        for (std::size_t i = c * 10000; i < (c + 1) * 10000u; ++i) a = std::fma(x[i], y[i], a);
        part[c] = a;
    }
    float honest = 0, lost = 0;
    for (int c = 7; c >= 0; --c) honest += part[c];
    for (int c = 0; c < 7; ++c) lost += part[c];
    EXPECT_TRUE(covers(honest, ref, s));
    EXPECT_FALSE(covers(lost, ref, s));
    EXPECT_GT(covers(lost, ref, s).ratio, 20 * covers(lost, ref, split_k(8)).ratio);
}

// The linear (n-1)·2u form, once used for directed rounding, fails when (n-1)·2u > 1: an RU fold of 760 bfloat16
// terms 1.0078125 = 129/128 lands 1.34·(n-1)·2u·S above s (each addition rounds up by up to an ulp, and the partial
// sums grow geometrically). Higham's γ_{n-1}
// with 2u holds (covers.cpp, Step B1a; structured.cpp, Step S2d).
TEST(DirectedBound, GammaNotLinearForDirectedRounding) {
    const std::vector<bfloat16> xs(760, bfloat16(1.0078125f));
    const reference ref = sum(xs, {parse_standard("levels:fold"), parse_standard("levels:any")});
    std::uint64_t acc = xs[0].bits;
    for (std::size_t i = 1; i < xs.size(); ++i) acc = oracle::add_rounded(acc, xs[i].bits, bfloat16_info, rounding::upward);
    const mpq_class error = oracle::gmp_value(acc, bfloat16_info) - to_mpq(ref.sum);
    const mpq_class linear = mpq_class(759) * mpq_class(1, 128) * to_mpq(ref.abs_sum);
    EXPECT_GT(abs(error), linear);  // the RU fold is farther from s than (n-1)·2u·S
    EXPECT_TRUE(covers_bits(bfloat16_info, acc, ref, directed(any_order())));
    EXPECT_TRUE(covers_bits(bfloat16_info, acc, ref, parse_standard("directed:levels:fold")));
    EXPECT_TRUE(covers_bits(bfloat16_info, acc, ref, parse_standard("directed:levels:any")));
}

// A long float16 fold: the flat factor γ_{c-1} is infinite, so the overflow rule once took Inf (and NaN) as reachable
// although the data bound keeps every partial sum far below 65504 (found by review: NaN covered, vacuous = false).
TEST(StructuredSpecials, OverflowNeedsTheDataBoundToReachIt) {
    std::mt19937_64 rng(1);
    std::normal_distribution<float> g;
    std::vector<float16> xs(10000);
    for (float16& x : xs) x = float16(g(rng));
    const standard s = parse_standard("levels:fold/4,any");
    const reference ref = sum(xs, {s});
    EXPECT_TRUE(covers(ref.nearest<float16>(), ref, s));
    EXPECT_FALSE(covers(float16::from_bits(0x7e00), ref, s));  // NaN
    EXPECT_FALSE(covers(float16::from_bits(0x7c00), ref, s));  // +Inf
    EXPECT_FALSE(covers(float16::from_bits(0xfc00), ref, s));  // -Inf
    EXPECT_FALSE(covers(float16(60000.0f), ref, s));
    // Terms that really can overflow: 40 x 2^15 in float16 reach +Inf in any order.
    const std::vector<float16> big(40, float16(32768.0f));
    const reference r2 = sum(big, {s});
    EXPECT_TRUE(covers(float16::from_bits(0x7c00), r2, s));
}

// any_zero_sign lets exact and faithful take either sign of an exact zero (RD gives x + (-x) = -0.0; order-free
// data with an even number of ±q terms sums to exactly 0), and nothing else.
TEST(StructuredSpecials, AllowNegativeZeroForExactZerosOnly) {
    standard e = exact();
    e.any_zero_sign = true;
    standard f = faithful();
    f.any_zero_sign = true;
    const reference zero = sum(std::vector<float>{1.0f, -1.0f});
    EXPECT_FALSE(covers(-0.0f, zero, exact()));
    EXPECT_TRUE(covers(-0.0f, zero, e));
    EXPECT_TRUE(covers(-0.0f, zero, f));
    const reference positive = sum(std::vector<float>{1.0f, -0.5f});
    EXPECT_FALSE(covers(-0.0f, positive, e));
    EXPECT_FALSE(covers(0.0f, positive, e));
}

// ---- what a check can see ----------------------------------------------------------------------------------------

TEST(StructuredVacuity, AnyOrderIsVacuousForLargeFloat16SumsTheStructureIsNot) {
    std::mt19937_64 rng(7);
    std::normal_distribution<float> g;
    std::vector<float16> xs(10000);
    for (float16& x : xs) x = float16(g(rng));
    const standard s = parse_standard("levels:fold/4,any");
    const reference ref = sum(xs, {s});
    const float16 r = ref.nearest<float16>();
    const verdict flat = covers(r, ref, any_order());
    EXPECT_TRUE(flat.vacuous);
    EXPECT_GE(flat.sensitivity.of_abs_sum, 1.0);
    EXPECT_THAT(flat.advice, HasSubstr("levels:"));
    EXPECT_THAT(flat.message(), HasSubstr("VACUOUS"));
    const verdict structured = covers(r, ref, s);
    EXPECT_FALSE(structured.vacuous);
    EXPECT_LT(structured.sensitivity.of_abs_sum, 0.1);
    EXPECT_THAT(structured.message(), HasSubstr("sees"));
    EXPECT_FALSE(covers(r, ref, exact()).vacuous);
}

TEST(StructuredVacuity, ExplainListsTheTightestFirst) {
    std::mt19937_64 rng(8);
    std::normal_distribution<float> g;
    std::vector<float> xs(4096);
    for (float& x : xs) x = g(rng);
    const reference ref = sum(xs, {parse_standard("levels:fold/4,any")});
    const std::vector<verdict> list = explain(ref.nearest<float>(), ref);
    ASSERT_GE(list.size(), 5u);
    EXPECT_EQ(list[0].standard, "exact");
    EXPECT_TRUE(list[0].covered);
    for (std::size_t i = 2; i + 1 < list.size(); ++i)
        if (list[i].covered && list[i + 1].covered) EXPECT_LE(list[i].bound, list[i + 1].bound) << i;
    bool listed = false;
    for (const verdict& v : list) listed |= v.standard == "levels:fold/4,any";
    EXPECT_TRUE(listed);
}

}  // namespace
}  // namespace exactref
