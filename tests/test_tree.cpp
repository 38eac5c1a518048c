// The deterministic trees of tree.h: bit for bit against the literal spec trees of test_tree_oracle.h (oracle
// arithmetic, no library code), for every float format and accumulation, every op, halving and fold shapes of many
// leaf sizes, masks, integers wrapped and checked; the same bits for 1, 2, 3, 4, 8 and 64 threads; the acceptance
// values of issue 3 (harmonic series, overflow in tree order, the lone -0.0); coverage by tree(h); the argument checks.
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <memory>
#include <string>
#include <vector>

#include "exactref/covers.h"
#include "exactref/io.h"
#include "exactref/reference.h"
#include "exactref/standard.h"
#include "exactref/tree.h"
#include "test_tree_oracle.h"

namespace {
using namespace exactref;
using test::oracle_engine;

constexpr reduce_op all_ops[] = {reduce_op::sum, reduce_op::product, reduce_op::min,
                                 reduce_op::max, reduce_op::any,     reduce_op::all};

template <floating_format T>
std::vector<T> random_values(std::size_t n, oracle::term_mix mix, std::mt19937_64& rng) {
    const std::vector<std::uint64_t> bits = oracle::random_terms(format_traits<T>::info, n, mix, rng);
    return oracle::from_bits<T>(bits);
}

// Products of many random values overflow or vanish; keep them near 1 so that products stay informative.
template <floating_format T>
std::vector<T> near_one_values(std::size_t n, std::mt19937_64& rng) {
    std::vector<T> out;
    std::uniform_real_distribution<double> u(0.5, 2.0);
    std::bernoulli_distribution neg(0.3);
    for (std::size_t i = 0; i < n; ++i) {
        const double v = neg(rng) ? -u(rng) : u(rng);
        out.push_back(format_traits<T>::from_bits(static_cast<typename format_traits<T>::bits_type>(
            round_double_to(format_traits<T>::info, v, rounding::to_nearest_even))));
    }
    return out;
}

template <class Acc>
std::uint64_t bits_of(Acc x) {
    return static_cast<std::uint64_t>(format_traits<Acc>::to_bits(x));
}

std::string describe(const tree_shape& shape, reduce_op op, std::size_t n, std::uint64_t seed) {
    return shape.name() + " " + std::string(to_string(op)) + " n=" + std::to_string(n) + " seed=" +
           std::to_string(seed);
}

template <class T, class Acc>
void expect_matches_spec(const std::vector<T>& xs, reduce_op op, const tree_shape& shape,
                         std::span<const bool> mask = {}, oracle_engine engine = oracle_engine::integer) {
    tree_options options;
    options.mask = mask;
    const Acc got = tree_reduce<Acc>(std::span<const T>(xs), op, shape, options);
    const std::uint64_t want = test::spec_float_tree<T, Acc>(std::span<const T>(xs), op, shape, mask, engine);
    const format_info& f = format_traits<Acc>::info;
    EXPECT_TRUE(test::same_bits(f, bits_of(got), want))
        << "library " << to_hex_string(f, bits_of(got)) << ", spec " << to_hex_string(f, want);
}

// Every op, shapes with leaves 2 .. 256, lengths around the leaf boundaries and random ones, several input kinds.
template <class T, class Acc>
void check_float_pair(std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    const tree_shape shapes[] = {halving(2), halving(4), halving(16), halving(256), fold(2), fold(4), fold(16), fold(64)};
    for (const tree_shape& shape : shapes) {
        std::vector<std::size_t> lengths{0, 1, 2, 3, shape.leaf - 1, shape.leaf, shape.leaf + 1, 2 * shape.leaf + 3};
        lengths.push_back(std::uniform_int_distribution<std::size_t>(1, 1500)(rng));
        for (reduce_op op : all_ops) {
            for (std::size_t n : lengths) {
                for (oracle::term_mix mix : {oracle::term_mix::cancelling, oracle::term_mix::ties,
                                             oracle::term_mix::specials, oracle::term_mix::subnormal}) {
                    const std::uint64_t case_seed = rng();
                    std::mt19937_64 case_rng(case_seed);
                    const std::vector<T> xs =
                        op == reduce_op::product ? near_one_values<T>(n, case_rng) : random_values<T>(n, mix, case_rng);
                    SCOPED_TRACE(describe(shape, op, n, case_seed) + " mix=" + oracle::to_string(mix) + " " +
                                 format_traits<T>::info.name.data() + "->" + format_traits<Acc>::info.name.data());
                    expect_matches_spec<T, Acc>(xs, op, shape);
                    if (op == reduce_op::product) break;  // one input kind is enough for the near-one products
                }
            }
        }
    }
}

TEST(TreeSpec, Float64MatchesTheLiteralTreeBitForBit) { check_float_pair<double, double>(0x7e11); }
TEST(TreeSpec, Float32MatchesTheLiteralTreeBitForBit) { check_float_pair<float, float>(0x7e12); }
TEST(TreeSpec, Float16InItsOwnFormatMatchesTheLiteralTree) { check_float_pair<float16, float16>(0x7e13); }
TEST(TreeSpec, Bfloat16InItsOwnFormatMatchesTheLiteralTree) { check_float_pair<bfloat16, bfloat16>(0x7e14); }
TEST(TreeSpec, Float16WithFloat32AccumulationMatchesTheLiteralTree) { check_float_pair<float16, float>(0x7e15); }
TEST(TreeSpec, Bfloat16WithFloat32AccumulationMatchesTheLiteralTree) { check_float_pair<bfloat16, float>(0x7e16); }

// The spec's second engine (MPFR sums, MPFR products) agrees with the first, and with the library.
TEST(TreeSpec, SecondOracleEngineAgrees) {
    std::mt19937_64 rng(0x5ec0);
    for (const tree_shape& shape : {halving(8), halving(256), fold(16)}) {
        for (reduce_op op : {reduce_op::sum, reduce_op::product}) {
            const std::uint64_t seed = rng();
            std::mt19937_64 case_rng(seed);
            const std::size_t n = 700;
            SCOPED_TRACE(describe(shape, op, n, seed));
            const auto d = op == reduce_op::sum ? random_values<double>(n, oracle::term_mix::cancelling, case_rng)
                                                : near_one_values<double>(n, case_rng);
            expect_matches_spec<double, double>(d, op, shape, {}, oracle_engine::mpfr);
            const auto h = op == reduce_op::sum ? random_values<float16>(n, oracle::term_mix::ties, case_rng)
                                                : near_one_values<float16>(n, case_rng);
            expect_matches_spec<float16, float16>(h, op, shape, {}, oracle_engine::mpfr);
            const auto b = op == reduce_op::sum ? random_values<bfloat16>(n, oracle::term_mix::full_range, case_rng)
                                                : near_one_values<bfloat16>(n, case_rng);
            expect_matches_spec<bfloat16, bfloat16>(b, op, shape, {}, oracle_engine::mpfr);
        }
    }
}

// bfloat16 sums whose exponents differ by more than 44 round twice (binary64, then bfloat16); Figueroa's condition
// 53 >= 2·8 + 2 makes that innocuous. Two-element trees near bfloat16 ties, where a double rounding would show.
TEST(TreeSpec, Bfloat16DoubleRoundingIsInnocuous) {
    std::mt19937_64 rng(0xbf16);
    for (int i = 0; i < 20000; ++i) {
        const std::uint16_t big = static_cast<std::uint16_t>(rng() & 0x7f7f);  // finite
        const int gap = 40 + static_cast<int>(rng() % 80);
        const oracle::parts p = oracle::decode(bfloat16_info, big);
        const int small_exp = p.exponent - gap + 7;
        const int field = small_exp + 127;  // biased exponent of the small operand
        if (field < 1 || field > 254) continue;
        const std::uint16_t small = static_cast<std::uint16_t>((rng() & 0x8000) | (field << 7) | (rng() & 0x7f));
        const std::vector<bfloat16> xs{bfloat16::from_bits(big), bfloat16::from_bits(small)};
        SCOPED_TRACE("big " + std::to_string(big) + " small " + std::to_string(small));
        expect_matches_spec<bfloat16, bfloat16>(xs, reduce_op::sum, halving(2));
        expect_matches_spec<bfloat16, bfloat16>(xs, reduce_op::sum, fold(2));
    }
}

TEST(TreeSpec, MaskedFoldSkipsElementsAndAbsentLeavesMoveUp) {
    std::mt19937_64 rng(0x3a5c);
    for (const tree_shape& shape : {fold(2), fold(16), fold(64)}) {
        for (double density : {0.0, 0.05, 0.5, 0.95, 1.0}) {
            for (reduce_op op : all_ops) {
                const std::uint64_t seed = rng();
                std::mt19937_64 case_rng(seed);
                const std::size_t n = std::uniform_int_distribution<std::size_t>(0, 2000)(case_rng);
                const auto xs = op == reduce_op::product ? near_one_values<double>(n, case_rng)
                                                         : random_values<double>(n, oracle::term_mix::cancelling, case_rng);
                std::bernoulli_distribution keep(density);
                std::unique_ptr<bool[]> mask(new bool[n + 1]);
                for (std::size_t i = 0; i < n; ++i) mask[i] = keep(case_rng);
                SCOPED_TRACE(describe(shape, op, n, seed) + " density=" + std::to_string(density));
                expect_matches_spec<double, double>(xs, op, shape, std::span<const bool>(mask.get(), n));
                const auto hs = random_values<float16>(n, oracle::term_mix::ties, case_rng);
                expect_matches_spec<float16, float>(hs, reduce_op::sum, shape, std::span<const bool>(mask.get(), n));
            }
        }
    }
}

// An absent leaf's partner moves up unchanged: with leaves a, (masked), c, d the root is a + (c + d), not (a + c) + d.
TEST(TreeSpec, AbsentLeafIsNotAZero) {
    // fold(2) leaves: [2^53, 0] -> 2^53, [1, 1] masked out, [1, 0] -> 1, [1, 0] -> 1.
    const std::vector<double> xs{0x1p53, 0, 1, 1, 1, 0, 1, 0};
    const bool mask[] = {true, true, false, false, true, true, true, true};
    tree_options options;
    options.mask = mask;
    // level 1: (2^53, absent) -> 2^53; (1, 1) -> 2; level 2: 2^53 + 2 (exact). Compacting the leaves instead would
    // give (2^53 + 1) + 1 = 2^53 (two ties to even).
    EXPECT_EQ(tree_reduce(std::span<const double>(xs), reduce_op::sum, fold(2), options), 0x1p53 + 2);
    const bool none[8] = {};
    options.mask = none;
    EXPECT_EQ(tree_reduce(std::span<const double>(xs), reduce_op::sum, fold(2), options), 0.0);
    EXPECT_EQ(tree_reduce(std::span<const double>(xs), reduce_op::min, fold(2), options),
              std::numeric_limits<double>::infinity());
}

// ---- integers ------------------------------------------------------------------------------------------------------

template <class I>
std::vector<I> random_integers(std::size_t n, std::mt19937_64& rng, int kind) {
    std::vector<I> out(n);
    for (auto& v : out) {
        const std::uint64_t r = rng();
        if (kind == 0) v = static_cast<I>(r);                  // full range: sums wrap
        else if (kind == 1) v = static_cast<I>(r % 7) - (std::is_signed_v<I> ? 3 : 0);  // small: products informative
        else v = (r & 1) ? std::numeric_limits<I>::max() / static_cast<I>(2 + (r >> 1) % 3) : static_cast<I>(r % 5);
    }
    return out;
}

template <class I>
void check_integer_type(std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    for (const tree_shape& shape : {halving(2), halving(256), fold(4), fold(16)}) {
        for (reduce_op op : all_ops) {
            for (std::size_t n : {std::size_t{0}, std::size_t{1}, shape.leaf - 1, shape.leaf + 1, std::size_t{1000}}) {
                const std::uint64_t case_seed = rng();
                std::mt19937_64 case_rng(case_seed);
                const auto xs = random_integers<I>(n, case_rng, op == reduce_op::product ? 1 : 0);
                SCOPED_TRACE(describe(shape, op, n, case_seed) + " " + std::to_string(sizeof(I) * 8) + "-bit");
                const I got = tree_reduce(std::span<const I>(xs), op, shape);
                const auto want = test::spec_integer_tree<I>(std::span<const I>(xs), op, shape, false);
                ASSERT_TRUE(want.value.has_value());
                EXPECT_EQ(got, *want.value);
            }
        }
    }
}

TEST(TreeIntegers, EveryTypeWrapsModuloTwoToTheBits) {
    check_integer_type<std::int8_t>(1);
    check_integer_type<std::int16_t>(2);
    check_integer_type<std::int32_t>(3);
    check_integer_type<std::int64_t>(4);
    check_integer_type<long long>(5);
    check_integer_type<std::uint8_t>(6);
    check_integer_type<std::uint16_t>(7);
    check_integer_type<std::uint32_t>(8);
    check_integer_type<std::uint64_t>(9);
    check_integer_type<unsigned long long>(10);
}

// Issue 3, acceptance: overflow decided in tree order, fold(16).
TEST(TreeOverflow, TreeReportsWhatTheLeftFoldHides) {
    constexpr std::int64_t max = std::numeric_limits<std::int64_t>::max();
    std::vector<std::int64_t> xs(32, 0);
    xs[0] = -max;
    xs[16] = max;
    xs[17] = max;
    // Left fold: -max + max + max = max, never out of range.
    std::int64_t left = 0;
    for (std::int64_t x : xs) ASSERT_FALSE(__builtin_add_overflow(left, x, &left));
    EXPECT_EQ(left, 9223372036854775807);
    tree_options checked;
    checked.check_overflow = true;
    try {
        (void)tree_reduce(std::span<const std::int64_t>(xs), reduce_op::sum, fold(), checked);
        ADD_FAILURE() << "no overflow reported";
    } catch (const tree_overflow_error& e) {
        EXPECT_EQ(e.level(), 0u);
        EXPECT_EQ(e.index(), 1u);  // leaf 1 = elements 16..31: max + max
        const std::string what = e.what();
        EXPECT_NE(what.find("leaf 1 (level 0, node 1, elements 16..31)"), std::string::npos) << what;
        EXPECT_NE(what.find("element 17"), std::string::npos) << what;
        EXPECT_NE(what.find("9223372036854775807 + 9223372036854775807"), std::string::npos) << what;
        EXPECT_NE(what.find("int64"), std::string::npos) << what;
    }
    // Without the check the tree wraps, and the wrapped result is still the modular sum (max).
    EXPECT_EQ(tree_reduce(std::span<const std::int64_t>(xs), reduce_op::sum, fold()), max);
}

TEST(TreeOverflow, LeftFoldReportsWhatTheTreeAvoids) {
    constexpr std::int64_t max = std::numeric_limits<std::int64_t>::max();
    std::vector<std::int64_t> xs(64, 0);
    xs[0] = max;
    xs[16] = -5;
    xs[32] = 10;
    xs[48] = -10;
    tree_options checked;
    checked.check_overflow = true;
    // Tree: leaves max, -5, 10, -10; level 1: max - 5, 0; level 2: max - 5.
    EXPECT_EQ(tree_reduce(std::span<const std::int64_t>(xs), reduce_op::sum, fold(), checked), 9223372036854775802);
    // Left fold: max - 5 + 10 overflows at element 32.
    std::int64_t left = 0;
    std::size_t overflow_at = xs.size();
    for (std::size_t i = 0; i < xs.size(); ++i)
        if (__builtin_add_overflow(left, xs[i], &left)) {
            overflow_at = i;
            break;
        }
    EXPECT_EQ(overflow_at, 32u);
}

TEST(TreeOverflow, PairwiseLevelNodeIsNamed) {
    constexpr std::int32_t max = std::numeric_limits<std::int32_t>::max();
    std::vector<std::int32_t> xs(16 * 6, 0);
    xs[16 * 4] = max;  // leaf 4
    xs[16 * 5] = 1;    // leaf 5: level 1 node 2 = leaf 4 + leaf 5 overflows
    tree_options checked;
    checked.check_overflow = true;
    try {
        (void)tree_reduce(std::span<const std::int32_t>(xs), reduce_op::sum, fold(), checked);
        ADD_FAILURE() << "no overflow reported";
    } catch (const tree_overflow_error& e) {
        EXPECT_EQ(e.level(), 1u);
        EXPECT_EQ(e.index(), 2u);
        EXPECT_NE(std::string(e.what()).find("pairwise level 1, node 2 (leaves 4..5)"), std::string::npos) << e.what();
    }
    // In a halving leaf the step is named.
    std::vector<std::int32_t> ys(256, 0);
    ys[3] = max;
    ys[3 + 64] = 1;
    try {
        (void)tree_reduce(std::span<const std::int32_t>(ys), reduce_op::sum, halving(), checked);
        ADD_FAILURE() << "no overflow reported";
    } catch (const tree_overflow_error& e) {
        EXPECT_EQ(e.level(), 0u);
        EXPECT_EQ(e.index(), 0u);
        EXPECT_NE(std::string(e.what()).find("halving step 64: slot 3 + slot 67"), std::string::npos) << e.what();
    }
}

// Random checked sums and products: the library reports the spec's first overflow (level order) or its value.
template <class I>
void check_checked_integers(std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    int overflows = 0, values = 0;
    for (int round = 0; round < 60; ++round) {
        const tree_shape shape = (round % 3 == 0) ? halving(8) : (round % 3 == 1 ? fold(4) : halving(256));
        const reduce_op op = round % 2 ? reduce_op::sum : reduce_op::product;
        const std::uint64_t case_seed = rng();
        std::mt19937_64 case_rng(case_seed);
        const std::size_t n = std::uniform_int_distribution<std::size_t>(1, 600)(case_rng);
        // Mostly neutral values (small addends, factors ±1), and with probability q a value that can overflow:
        // about half of the cases overflow somewhere, at a level that varies.
        const double q = std::vector<double>{0.5, 2.0, 6.0}[case_rng() % 3] / static_cast<double>(n);
        std::bernoulli_distribution big(std::min(q, 1.0));
        std::vector<I> xs(n);
        for (auto& v : xs) {
            const std::uint64_t r = case_rng();
            const bool negative = std::is_signed_v<I> && (r & 1);
            if (op == reduce_op::sum) {
                v = big(case_rng) ? static_cast<I>(std::numeric_limits<I>::max() / static_cast<I>(2 + (r >> 1) % 3))
                                  : static_cast<I>((r >> 1) % 3);
            } else {
                v = big(case_rng) ? static_cast<I>(2 + (r >> 1) % 30) : I{1};
            }
            if (negative) v = static_cast<I>(-v);
        }
        SCOPED_TRACE(describe(shape, op, n, case_seed));
        const auto want = test::spec_integer_tree<I>(std::span<const I>(xs), op, shape, true);
        tree_options checked;
        checked.check_overflow = true;
        try {
            const I got = tree_reduce(std::span<const I>(xs), op, shape, checked);
            ASSERT_TRUE(want.value.has_value()) << "the spec overflows at level " << want.overflow->level << " node "
                                                << want.overflow->index << " but the library returned " << +got;
            EXPECT_EQ(got, *want.value);
            ++values;
        } catch (const tree_overflow_error& e) {
            ASSERT_TRUE(want.overflow.has_value()) << "spurious overflow: " << e.what();
            EXPECT_EQ(e.level(), want.overflow->level) << e.what();
            EXPECT_EQ(e.index(), want.overflow->index) << e.what();
            ++overflows;
        }
    }
    EXPECT_GT(overflows, 5);  // both outcomes were exercised
    EXPECT_GT(values, 5);
}

TEST(TreeOverflow, RandomCheckedReductionsMatchTheSpec) {
    check_checked_integers<std::int8_t>(11);
    check_checked_integers<std::int16_t>(12);
    check_checked_integers<std::int64_t>(13);
    check_checked_integers<std::uint8_t>(14);
    check_checked_integers<std::uint32_t>(15);
}

// ---- threads -------------------------------------------------------------------------------------------------------

class ThreadCount {
public:
    explicit ThreadCount(int n) : saved_(omp_get_max_threads()) { omp_set_num_threads(n); }
    ~ThreadCount() { omp_set_num_threads(saved_); }

private:
    int saved_;
};

template <class T, class Acc>
void check_thread_counts(const std::vector<T>& xs, const tree_shape& shape, const std::string& what) {
    SCOPED_TRACE(what + " " + shape.name() + " n=" + std::to_string(xs.size()));
    const std::uint64_t want = test::spec_float_tree<T, Acc>(std::span<const T>(xs), reduce_op::sum, shape);
    for (int threads : {1, 2, 3, 4, 8, 64}) {
        ThreadCount guard(threads);
        for (int run = 0; run < 2; ++run) {
            const Acc got = tree_reduce<Acc>(std::span<const T>(xs), reduce_op::sum, shape);
            EXPECT_TRUE(test::same_bits(format_traits<Acc>::info, bits_of(got), want))
                << threads << " threads, run " << run << ": " << to_hex_string(got) << " vs spec "
                << to_hex_string(format_traits<Acc>::info, want);
        }
    }
}

TEST(TreeThreads, SameBitsForEveryThreadCountAndRun) {
    std::mt19937_64 rng(0x0e1);
    std::vector<std::size_t> lengths{0, 1, 255, 256, 257, (std::size_t{1} << 20) + 1};
    for (int i = 0; i < 3; ++i) lengths.push_back(std::uniform_int_distribution<std::size_t>(1000, 400000)(rng));
    for (std::size_t n : lengths) {
        const std::uint64_t seed = rng();
        std::mt19937_64 case_rng(seed);
        const std::string tag = "seed=" + std::to_string(seed);
        const auto d = random_values<double>(n, oracle::term_mix::cancelling, case_rng);
        const auto f = random_values<float>(n, oracle::term_mix::clustered, case_rng);
        for (const tree_shape& shape : {halving(), fold()}) {
            check_thread_counts<double, double>(d, shape, tag + " float64");
            check_thread_counts<float, float>(f, shape, tag + " float32");
        }
        if (n <= 300000) {  // the 16-bit formats' spec is slower; their kernels are the generic ones anyway
            const auto h = random_values<float16>(n, oracle::term_mix::clustered, case_rng);
            check_thread_counts<float16, float16>(h, halving(), tag + " float16");
            check_thread_counts<float16, float>(h, fold(), tag + " float16->float32");
        }
    }
}

TEST(TreeThreads, IntegersAndOtherOpsAgreeAcrossThreadCounts) {
    std::mt19937_64 rng(0x0e2);
    const std::size_t n = (std::size_t{1} << 20) + 1;
    const auto ints = random_integers<std::int64_t>(n, rng, 0);
    const auto d = random_values<double>(n, oracle::term_mix::specials, rng);
    for (const tree_shape& shape : {halving(), fold()}) {
        const auto want_int = test::spec_integer_tree<std::int64_t>(std::span<const std::int64_t>(ints), reduce_op::sum,
                                                                     shape, false);
        const std::uint64_t want_max = test::spec_float_tree<double, double>(std::span<const double>(d), reduce_op::max, shape);
        for (int threads : {1, 3, 64}) {
            ThreadCount guard(threads);
            EXPECT_EQ(tree_reduce(std::span<const std::int64_t>(ints), reduce_op::sum, shape), *want_int.value);
            EXPECT_TRUE(test::same_bits(binary64_info,
                                        bits_of(tree_reduce(std::span<const double>(d), reduce_op::max, shape)), want_max));
        }
    }
}

// ---- acceptance values of issue 3 -----------------------------------------------------------------------------------

TEST(TreeAcceptance, HarmonicSeriesTenToTheSeven) {
    std::vector<double> xs(10000000);
    for (std::size_t i = 0; i < xs.size(); ++i) xs[i] = 1.0 / static_cast<double>(i + 1);
    const double halving256 = tree_sum(xs);
    const double fold16 = tree_sum(xs, fold());
    double left = 0.0;
    for (double x : xs) left += x;
    EXPECT_EQ(to_shortest_string(fold16), "16.69531136585985");
    EXPECT_EQ(to_shortest_string(left), "16.695311365857272");
    EXPECT_EQ(to_shortest_string(halving256), "16.695311365859855");
    // The exact sum of these (rounded) terms; the 16.6953113658598518153991... is H_(10^7) itself, the sum of
    // the unrounded 1/i (checked in test_long_tree.cpp). Both round to fold16's value.
    const reference ref = sum(xs);
    EXPECT_EQ(ref.exact().substr(0, 30), "16.695311365859851761239017191");
    EXPECT_EQ(ref.nearest<double>(), fold16);
    EXPECT_TRUE(covers(halving256, ref, tree(tree_height(halving(), xs.size()))));
    EXPECT_TRUE(covers(fold16, ref, tree(tree_height(fold(), xs.size()))));
}

TEST(TreeAcceptance, LoneNegativeZero) {
    const std::vector<double> xs{-0.0};
    EXPECT_TRUE(std::signbit(tree_sum(xs)));          // halving: absent slots, no zero padding
    EXPECT_FALSE(std::signbit(tree_sum(xs, fold())));  // fold: +0.0 + -0.0 = +0.0
    // Any length: halving keeps -0.0 when every element is -0.0, fold never does.
    for (std::size_t n : {2u, 255u, 256u, 257u, 5000u}) {
        const std::vector<float> zs(n, -0.0f);
        EXPECT_TRUE(std::signbit(tree_sum(zs))) << n;
        EXPECT_FALSE(std::signbit(tree_sum(zs, fold()))) << n;
    }
    const std::vector<float16> hs{float16::from_bits(0x8000)};
    EXPECT_EQ(tree_sum(hs).bits, 0x8000);
    EXPECT_EQ(tree_sum(hs, fold()).bits, 0x0000);
}

// Every result is covered by tree(h) with h its tree's height; the bound is not vacuous (planted: a result a few
// bounds away is rejected).
TEST(TreeCovers, EveryResultIsCoveredByItsTreeHeight) {
    std::mt19937_64 rng(0xc0e);
    for (int round = 0; round < 40; ++round) {
        const std::uint64_t seed = rng();
        std::mt19937_64 case_rng(seed);
        const std::size_t n = std::uniform_int_distribution<std::size_t>(2, 100000)(case_rng);
        const auto xs = random_values<float>(n, round % 2 ? oracle::term_mix::cancelling : oracle::term_mix::clustered,
                                             case_rng);
        const reference ref = sum(xs);
        for (const tree_shape& shape : {halving(), fold(), halving(4), fold(64)}) {
            SCOPED_TRACE(shape.name() + " n=" + std::to_string(n) + " seed=" + std::to_string(seed));
            const float r = tree_sum(xs, shape);
            const standard model = tree(tree_height(shape, n));
            const verdict v = covers(r, ref, model);
            EXPECT_TRUE(v) << v.message();
            if (std::isfinite(v.bound) && std::isfinite(r)) {
                // The first float beyond r + 2·bound + |error|: its error exceeds the bound by construction.
                const double target = static_cast<double>(r) + 2 * v.bound + std::abs(v.error);
                float planted = static_cast<float>(target);
                while (static_cast<double>(planted) <= target) planted = std::nextafter(planted, INFINITY);
                EXPECT_FALSE(covers(planted, ref, model)) << "planted " << planted;
            }
        }
        const auto hs = random_values<float16>(std::min<std::size_t>(n, 5000), oracle::term_mix::clustered, case_rng);
        const reference href = sum(hs);
        const float16 own = tree_sum(hs, fold());
        EXPECT_TRUE(covers(own, href, tree(tree_height(fold(), hs.size()))));
        const float wide = tree_sum<float>(hs);
        EXPECT_TRUE(covers(wide, href, tree(tree_height(halving(), hs.size()))));
    }
}

// ---- the floating-point environment (tree.h: what is and is not promised) -----------------------------------------

// No tree depends on the caller's rounding mode or FTZ/DAZ: they run in the default environment (round to nearest,
// no FTZ/DAZ) on every thread, detail/fp_environment.h; tests/test_fp_environment.cpp checks every format and thread
// count, this is the short version.
TEST(TreeEnvironment, TreesIgnoreRoundingModeAndFtzDaz) {
    std::mt19937_64 rng(0xe4f);
    const auto hs = random_values<float16>(5000, oracle::term_mix::subnormal, rng);
    const auto bs = random_values<bfloat16>(5000, oracle::term_mix::full_range, rng);
    const auto ds = random_values<double>(5000, oracle::term_mix::subnormal, rng);
    const float16 h = tree_sum(hs, fold());
    const bfloat16 b = tree_sum(bs);
    const float16 hp = tree_reduce(std::span<const float16>(hs), reduce_op::product);
    const double dmin = tree_reduce(std::span<const double>(ds), reduce_op::min);
    for (rounding mode : {rounding::upward, rounding::downward, rounding::toward_zero}) {
        for (bool ftz_daz : {false, true}) {
            if (ftz_daz && !oracle::ftz_daz_supported()) continue;
            oracle::fp_environment_guard guard(mode, ftz_daz);
            SCOPED_TRACE(std::string(to_string(mode)) + (ftz_daz ? " FTZ+DAZ" : ""));
            EXPECT_EQ(tree_sum(hs, fold()).bits, h.bits);
            EXPECT_EQ(tree_sum(bs).bits, b.bits);
            EXPECT_EQ(tree_reduce(std::span<const float16>(hs), reduce_op::product).bits, hp.bits);
            EXPECT_EQ(bits_of(tree_reduce(std::span<const double>(ds), reduce_op::min)), bits_of(dmin));
        }
    }
    if (oracle::ftz_daz_supported()) {
        const std::vector<double> tiny{std::numeric_limits<double>::denorm_min(), std::numeric_limits<double>::denorm_min()};
        EXPECT_EQ(bits_of(tree_sum(tiny)), 2u);  // 2 * denorm_min
        double under_daz;
        {
            oracle::fp_environment_guard guard(rounding::to_nearest_even, true);
            under_daz = tree_sum(tiny);
        }
        EXPECT_EQ(bits_of(under_daz), 2u);  // DAZ would read both as zero: the tree runs without it
    }
}

// ---- shapes and argument checks -------------------------------------------------------------------------------------

TEST(TreeShapes, NamesParsingAndHeights) {
    EXPECT_EQ(halving().name(), "halving256");
    EXPECT_EQ(fold().name(), "fold16");
    EXPECT_EQ(parse_tree_shape("halving256"), halving());
    EXPECT_EQ(parse_tree_shape("fold"), fold());
    EXPECT_EQ(parse_tree_shape("fold:32"), fold(32));
    EXPECT_EQ(parse_tree_shape("halving8"), halving(8));
    EXPECT_THROW(parse_tree_shape("pairwise"), std::invalid_argument);
    EXPECT_THROW(parse_tree_shape("fold12"), std::invalid_argument);
    EXPECT_THROW(parse_tree_shape("fold:"), std::invalid_argument);
    EXPECT_THROW(parse_tree_shape("halving:"), std::invalid_argument);
    EXPECT_THROW(halving(3), std::invalid_argument);
    EXPECT_THROW(fold(1), std::invalid_argument);
    EXPECT_THROW(fold(0), std::invalid_argument);
    try {
        (void)halving(100);
        ADD_FAILURE();
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("power of two"), std::string::npos) << e.what();
    }
    EXPECT_EQ(tree_height(halving(), 0), 0u);
    EXPECT_EQ(tree_height(halving(), 1), 0u);
    EXPECT_EQ(tree_height(halving(), 2), 1u);
    EXPECT_EQ(tree_height(halving(), 256), 8u);
    EXPECT_EQ(tree_height(halving(), 257), 9u);
    EXPECT_EQ(tree_height(halving(), 1000), 10u);
    EXPECT_EQ(tree_height(fold(), 1), 0u);
    EXPECT_EQ(tree_height(fold(), 16), 15u);
    EXPECT_EQ(tree_height(fold(), 1000), 21u);
    EXPECT_EQ(leaf_count(fold(), 17), 2u);
    EXPECT_EQ(parse_reduce_op("max"), reduce_op::max);
    EXPECT_THROW(parse_reduce_op("mean"), std::invalid_argument);
}

TEST(TreeArguments, BadOptionsAreRefusedWithAReason) {
    const std::vector<double> xs(10, 1.0);
    const bool mask[10] = {};
    tree_options options;
    options.mask = mask;
    try {
        (void)tree_reduce(std::span<const double>(xs), reduce_op::sum, halving(), options);
        ADD_FAILURE();
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("a mask needs a fold shape"), std::string::npos) << e.what();
    }
    options.mask = std::span<const bool>(mask, 9);
    try {
        (void)tree_reduce(std::span<const double>(xs), reduce_op::sum, fold(), options);
        ADD_FAILURE();
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("the mask has 9 elements but the data has 10"), std::string::npos)
            << e.what();
    }
    tree_options checked;
    checked.check_overflow = true;
    EXPECT_THROW((void)tree_reduce(std::span<const double>(xs), reduce_op::sum, fold(), checked), std::invalid_argument);
    const std::vector<int> is(10, 1);
    EXPECT_THROW((void)tree_reduce(std::span<const int>(is), reduce_op::max, fold(), checked), std::invalid_argument);
    EXPECT_EQ(tree_reduce(std::span<const int>(is), reduce_op::sum, fold(), checked), 10);
}

TEST(TreeOps, IdentitiesSpecialValuesAndTruth) {
    const std::vector<double> none;
    EXPECT_EQ(tree_reduce(std::span<const double>(none), reduce_op::sum), 0.0);
    EXPECT_FALSE(std::signbit(tree_reduce(std::span<const double>(none), reduce_op::sum)));
    EXPECT_EQ(tree_reduce(std::span<const double>(none), reduce_op::product), 1.0);
    EXPECT_EQ(tree_reduce(std::span<const double>(none), reduce_op::min), std::numeric_limits<double>::infinity());
    EXPECT_EQ(tree_reduce(std::span<const double>(none), reduce_op::max), -std::numeric_limits<double>::infinity());
    EXPECT_EQ(tree_reduce(std::span<const double>(none), reduce_op::any), 0.0);
    EXPECT_EQ(tree_reduce(std::span<const double>(none), reduce_op::all), 1.0);
    const std::vector<int> no_ints;
    EXPECT_EQ(tree_reduce(std::span<const int>(no_ints), reduce_op::min), std::numeric_limits<int>::max());
    // min/max: IEEE 754-2019 minimum/maximum: -0.0 < +0.0, NaN propagates, whatever the shape.
    const std::vector<double> zeros{0.0, -0.0, 0.0};
    EXPECT_TRUE(std::signbit(tree_reduce(std::span<const double>(zeros), reduce_op::min)));
    EXPECT_FALSE(std::signbit(tree_reduce(std::span<const double>(zeros), reduce_op::max, fold())));
    const std::vector<double> with_nan{1.0, std::nan(""), -3.0};
    EXPECT_TRUE(std::isnan(tree_reduce(std::span<const double>(with_nan), reduce_op::min)));
    EXPECT_TRUE(std::isnan(tree_reduce(std::span<const double>(with_nan), reduce_op::max, fold())));
    // any/all: NaN is true, -0.0 is false, the result is exactly 1 or 0.
    const std::vector<double> truth{-0.0, std::nan(""), 0.0};
    EXPECT_EQ(tree_reduce(std::span<const double>(truth), reduce_op::any), 1.0);
    EXPECT_EQ(tree_reduce(std::span<const double>(truth), reduce_op::all), 0.0);
    const std::vector<double> one_value{5.0};
    EXPECT_EQ(tree_reduce(std::span<const double>(one_value), reduce_op::any), 1.0);  // normalised, not 5.0
    // sums: Inf and -Inf give NaN; a NaN term gives NaN.
    const std::vector<double> infs{std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()};
    EXPECT_TRUE(std::isnan(tree_sum(infs)));
}

}  // namespace
