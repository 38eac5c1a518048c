// The device algorithms without a GPU: the host block emulator (include/exactref/cuda/emulator.cuh) runs the kernels'
// steps in the kernels' phase structure, and the results are compared bit for bit with
//   trees  exactref::tree_reduce (the host trees) and the literal spec tree of DESIGN §4 on the oracle's arithmetic
//          (tests/test_tree_oracle.h), for every op, every (element, accumulation) pair, both shapes, masks, and
//          n = 0, 1, 255, 256, 257, 65537, random sizes; several launch shapes must give the same bits; planted wrong
//          orders must be caught;
//   exact  exactref::sum / exactref::dot (the whole reference: s, S, n, specials, signed zeros, dot exponents) and
//          the GMP oracle's exact decimal, for every format, the oracle's input mixes (full range, clustered,
//          cancelling, ties, subnormal, specials), extremes and special-value tables; several grid sizes must give
//          the same reference; a kernel that stops after one window round (planted) must be caught.
// Seeds are fixed and printed on failure (SCOPED_TRACE).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "exactref/cuda/emulator.cuh"
#include "exactref/dot.h"
#include "exactref/reference.h"
#include "exactref/tree.h"
#include "oracle.h"
#include "test_cuda_checks.h"
#include "test_tree_oracle.h"

namespace {

using namespace exactref;
namespace emu = exactref::cuda::emulator;
using test_cuda::all_ops;
using test_cuda::same_reference;
using test_cuda::same_tree_bits;
using test_cuda::show;

// ---- trees ------------------------------------------------------------------------------------------------------------

const oracle::term_mix tree_mixes[] = {oracle::term_mix::clustered, oracle::term_mix::cancelling,
                                       oracle::term_mix::full_range, oracle::term_mix::specials,
                                       oracle::term_mix::ties,      oracle::term_mix::subnormal};

template <class Acc, class T>
void expect_tree(std::span<const T> xs, reduce_op op, const tree_shape& shape, std::span<const bool> mask,
                 bool with_spec) {
    tree_options options;
    options.mask = mask;
    const Acc host = exactref::tree_reduce<Acc>(xs, op, shape, options);
    const Acc device = emu::tree_reduce<Acc>(xs, op, shape, mask);
    EXPECT_TRUE(same_tree_bits(device, host, op)) << "emulated device " << show(device) << ", host " << show(host);
    if constexpr (floating_format<T>) {
        if (with_spec) {
            const std::uint64_t spec = test::spec_float_tree<T, Acc>(xs, op, shape, mask);
            EXPECT_TRUE(test::same_bits(format_traits<Acc>::info, test_cuda::raw(device), spec))
                << "emulated device " << show(device) << ", spec tree 0x" << std::hex << spec;
        }
    } else if (with_spec) {
        const auto spec = test::spec_integer_tree<T>(xs, op, shape, false, mask);
        EXPECT_EQ(device, *spec.value);
    }
}

/// Every op, both shapes, the interesting sizes (and masks for fold): emulated device tree == host tree (== spec tree
/// for n <= 4097).
template <class T, class Acc>
void check_trees(std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    const std::vector<std::size_t> sizes = test_cuda::interesting_sizes(rng);
    for (const tree_shape& shape : {halving(), fold()}) {
        for (reduce_op op : all_ops) {
            for (std::size_t k = 0; k < sizes.size(); ++k) {
                const std::size_t n = sizes[k];
                const oracle::term_mix mix = tree_mixes[(k + static_cast<std::size_t>(op)) % std::size(tree_mixes)];
                SCOPED_TRACE(::testing::Message() << "seed " << seed << ", " << test_cuda::type_name<T>() << " -> "
                                                  << test_cuda::type_name<Acc>() << ", " << to_string(op) << ", "
                                                  << shape.name() << ", n " << n << ", mix " << oracle::to_string(mix));
                const std::vector<T> xs = test_cuda::random_values<T>(n, mix, rng);
                const bool with_spec = n <= 4097;
                expect_tree<Acc, T>(xs, op, shape, {}, with_spec);
                if (shape.kind == tree_kind::fold && k % 2 == 0) {
                    const auto mask = test_cuda::random_mask(n, k % 4 == 0 ? 0.5 : 0.05, rng);
                    SCOPED_TRACE("with a mask");
                    expect_tree<Acc, T>(xs, op, shape, mask.view(), with_spec);
                }
            }
        }
    }
}

TEST(CudaEmulatorTree, Float64MatchesTheHostTrees) { check_trees<double, double>(101); }
TEST(CudaEmulatorTree, Float32MatchesTheHostTrees) { check_trees<float, float>(102); }
TEST(CudaEmulatorTree, Float16MatchesTheHostTrees) { check_trees<float16, float16>(103); }
TEST(CudaEmulatorTree, Bfloat16MatchesTheHostTrees) { check_trees<bfloat16, bfloat16>(104); }
TEST(CudaEmulatorTree, Float16InFloatMatchesTheHostTrees) { check_trees<float16, float>(105); }
TEST(CudaEmulatorTree, Bfloat16InFloatMatchesTheHostTrees) { check_trees<bfloat16, float>(106); }
TEST(CudaEmulatorTree, IntegersMatchTheHostTrees) {
    check_trees<int, int>(107);
    check_trees<unsigned, unsigned>(108);
    check_trees<long, long>(109);
    check_trees<unsigned long, unsigned long>(110);
    check_trees<long long, long long>(111);
    check_trees<unsigned long long, unsigned long long>(112);
}

TEST(CudaEmulatorTree, EveryLaunchShapeGivesTheSameBits) {
    // Leaves per warp (tile sizes of 8, 16, 32 leaves) and level groups (2 .. 256 nodes per block, so 1 to 17 level
    // launches alternating between buffers A and B) choose only who computes which aligned subtree.
    const std::uint64_t seed = 201;
    std::mt19937_64 rng(seed);
    for (std::size_t n : {std::size_t{300000}, std::size_t{70001}, std::size_t{5}}) {
        const auto xs = test_cuda::random_values<double>(n, oracle::term_mix::cancelling, rng);
        const auto hs = test_cuda::random_values<float16>(n, oracle::term_mix::clustered, rng);
        for (const tree_shape& shape : {halving(), fold()}) {
            const double host = exactref::tree_reduce(std::span<const double>(xs), reduce_op::sum, shape);
            const float16 host_h = exactref::tree_reduce(std::span<const float16>(hs), reduce_op::sum, shape);
            for (unsigned lpw : {1u, 2u, 4u})
                for (unsigned group : {2u, 16u, 256u}) {
                    SCOPED_TRACE(::testing::Message() << "seed " << seed << ", n " << n << ", " << shape.name()
                                                      << ", leaves per warp " << lpw << ", level group " << group);
                    emu::tree_launch launch;
                    launch.halving_leaves_per_warp = lpw;
                    launch.level_group = group;
                    const double d = emu::tree_reduce<double>(std::span<const double>(xs), reduce_op::sum, shape, {}, launch);
                    const float16 h = emu::tree_reduce<float16>(std::span<const float16>(hs), reduce_op::sum, shape, {}, launch);
                    EXPECT_EQ(test_cuda::raw(d), test_cuda::raw(host)) << show(d) << " vs " << show(host);
                    EXPECT_EQ(test_cuda::raw(h), test_cuda::raw(host_h)) << show(h) << " vs " << show(host_h);
                }
        }
    }
}

TEST(CudaEmulatorTree, HarmonicSeriesGivesTheDesignValues) {
    // shared/DESIGN.md §4: Σ 1/i, i = 1..10^7, in float64.
    std::vector<double> xs(10'000'000);
    for (std::size_t i = 0; i < xs.size(); ++i) xs[i] = 1.0 / static_cast<double>(i + 1);
    const std::span<const double> s(xs);
    EXPECT_EQ(emu::tree_reduce<double>(s, reduce_op::sum, halving()), 16.695311365859855);
    EXPECT_EQ(emu::tree_reduce<double>(s, reduce_op::sum, fold()), 16.69531136585985);
}

TEST(CudaEmulatorTree, SpecialValuesAndEmptyInputs) {
    const std::vector<double> lone_negative_zero{-0.0};
    EXPECT_EQ(test_cuda::raw(emu::tree_reduce<double>(std::span<const double>(lone_negative_zero), reduce_op::sum, halving())),
              test_cuda::raw(-0.0));  // the absent slots are not zeros
    EXPECT_EQ(test_cuda::raw(emu::tree_reduce<double>(std::span<const double>(lone_negative_zero), reduce_op::sum, fold())),
              test_cuda::raw(0.0));  // fold starts from +0.0
    const double inf = std::numeric_limits<double>::infinity();
    const std::vector<double> both_infinities{1.0, inf, 2.0, -inf};
    EXPECT_TRUE(std::isnan(emu::tree_reduce<double>(std::span<const double>(both_infinities), reduce_op::sum, halving())));
    EXPECT_EQ(emu::tree_reduce<double>(std::span<const double>(both_infinities), reduce_op::max, fold()), inf);
    const std::vector<double> empty;
    const std::span<const double> e(empty);
    EXPECT_EQ(test_cuda::raw(emu::tree_reduce<double>(e, reduce_op::sum, halving())), test_cuda::raw(0.0));
    EXPECT_EQ(emu::tree_reduce<double>(e, reduce_op::product, halving()), 1.0);
    EXPECT_EQ(emu::tree_reduce<double>(e, reduce_op::min, fold()), inf);
    EXPECT_EQ(emu::tree_reduce<double>(e, reduce_op::max, fold()), -inf);
    EXPECT_EQ(emu::tree_reduce<double>(e, reduce_op::any, halving()), 0.0);
    EXPECT_EQ(emu::tree_reduce<double>(e, reduce_op::all, halving()), 1.0);
    // every element masked out: the identity
    const std::vector<double> xs(100, 3.0);
    const std::unique_ptr<bool[]> none = std::make_unique<bool[]>(100);
    EXPECT_EQ(emu::tree_reduce<double>(std::span<const double>(xs), reduce_op::product, fold(),
                                       std::span<const bool>(none.get(), 100)),
              1.0);
}

TEST(CudaEmulatorTree, PlantedWrongOrdersAreCaught) {
    const std::uint64_t seed = 301;
    std::mt19937_64 rng(seed);
    for (emu::plant fault : {emu::plant::ascending_leaf_steps, emu::plant::halving_levels}) {
        int differ = 0;
        for (int trial = 0; trial < 8; ++trial) {
            const auto xs = test_cuda::random_values<double>(65537 + trial, oracle::term_mix::cancelling, rng);
            const std::span<const double> s(xs);
            emu::tree_launch launch;
            launch.fault = fault;
            const double host = exactref::tree_reduce(s, reduce_op::sum, halving());
            const double honest = emu::tree_reduce<double>(s, reduce_op::sum, halving());
            const double planted = emu::tree_reduce<double>(s, reduce_op::sum, halving(), {}, launch);
            ASSERT_EQ(test_cuda::raw(honest), test_cuda::raw(host)) << "seed " << seed << ", trial " << trial;
            differ += test_cuda::raw(planted) != test_cuda::raw(host);
        }
        EXPECT_GE(differ, 4) << "seed " << seed << ": a planted wrong order (" << static_cast<int>(fault)
                             << ") gave the host's bits in " << 8 - differ << " of 8 trials";
    }
}

TEST(CudaEmulatorTree, RefusesWhatTheDeviceTreesDoNotDo) {
    const std::vector<double> xs(10, 1.0);
    const std::span<const double> s(xs);
    const std::unique_ptr<bool[]> flags = std::make_unique<bool[]>(10);
    try {
        emu::tree_reduce<double>(s, reduce_op::sum, halving(128));
        ADD_FAILURE() << "halving(128) accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("halving(256) and fold(16)"), std::string::npos) << e.what();
    }
    EXPECT_THROW(emu::tree_reduce<double>(s, reduce_op::sum, halving(), std::span<const bool>(flags.get(), 10)),
                 std::invalid_argument);
    EXPECT_THROW(emu::tree_reduce<double>(s, reduce_op::sum, fold(), std::span<const bool>(flags.get(), 9)),
                 std::invalid_argument);
}

TEST(CudaEmulatorTree, WorkBufferSizes) {
    namespace cd = exactref::cuda::detail;
    const auto halving_plan = [](std::uint64_t n) { return cd::make_tree_plan(n, 256, 16); };
    // n = 2^20 doubles: 4096 leaves, 256 tiles -> one level launch; 256 values + 256 flag bytes (32 doubles)
    EXPECT_EQ(cd::work_elems<double>(halving_plan(1u << 20)), 288u);
    EXPECT_EQ(halving_plan(1u << 20).level_launches, 1u);
    // n = 2^28: 2^20 leaves, 65536 tiles -> 256 -> 1: two level launches; 65536 + 256 values, 65792 flag bytes
    EXPECT_EQ(cd::work_elems<double>(halving_plan(1u << 28)), 65536u + 256u + 8224u);
    EXPECT_EQ(halving_plan(1u << 28).level_launches, 2u);
    EXPECT_EQ(cd::work_elems<double>(halving_plan(0)), 0u);
    EXPECT_EQ(cd::work_elems<float16>(halving_plan(1)), 2u);  // one node and its flag byte (one float16 unit)
    EXPECT_EQ(cd::work_elems<float>(cd::make_tree_plan(4097, 16, 256)), 2u + 1u);
}

// ---- exact sum and dot ------------------------------------------------------------------------------------------------

template <class T>
void check_exact(std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<std::size_t> sizes = test_cuda::interesting_sizes(rng);
    sizes.push_back(300000);
    for (oracle::term_mix mix : oracle::all_term_mixes) {
        for (std::size_t n : sizes) {
            SCOPED_TRACE(::testing::Message() << "seed " << seed << ", " << test_cuda::type_name<T>() << ", n " << n
                                              << ", mix " << oracle::to_string(mix));
            const auto xs = test_cuda::random_values<T>(n, mix, rng);
            const auto ys = test_cuda::random_values<T>(n, mix, rng);
            const std::span<const T> x(xs), y(ys);
            const reference sum_device = emu::exact_sum(x);
            EXPECT_TRUE(same_reference(sum_device, exactref::sum(x))) << "sum";
            const reference dot_device = emu::exact_dot(x, y);
            EXPECT_TRUE(same_reference(dot_device, exactref::dot(x, y))) << "dot";
            if (n <= 4097) {  // the second, independent reference: GMP rationals
                EXPECT_EQ(sum_device.exact(), oracle::gmp_sum(x).decimal()) << "sum vs GMP";
                EXPECT_EQ(dot_device.exact(), oracle::gmp_dot(x, y).decimal()) << "dot vs GMP";
            }
        }
    }
}

TEST(CudaEmulatorExact, Float64MatchesTheHostReference) { check_exact<double>(401); }
TEST(CudaEmulatorExact, Float32MatchesTheHostReference) { check_exact<float>(402); }
TEST(CudaEmulatorExact, Float16MatchesTheHostReference) { check_exact<float16>(403); }
TEST(CudaEmulatorExact, Bfloat16MatchesTheHostReference) { check_exact<bfloat16>(404); }

TEST(CudaEmulatorExact, EveryGridGivesTheSameReference) {
    const std::uint64_t seed = 501;
    std::mt19937_64 rng(seed);
    const auto xs = test_cuda::random_values<double>(400'003, oracle::term_mix::full_range, rng);
    const auto ys = test_cuda::random_values<double>(400'003, oracle::term_mix::clustered, rng);
    const std::span<const double> x(xs), y(ys);
    const reference host_sum = exactref::sum(x), host_dot = exactref::dot(x, y);
    for (std::uint64_t blocks : {1u, 2u, 7u, 132u * 8u, 100000u}) {
        SCOPED_TRACE(::testing::Message() << "seed " << seed << ", " << blocks << " blocks wanted");
        emu::exact_launch launch;
        launch.blocks = blocks;
        EXPECT_TRUE(same_reference(emu::exact_sum(x, launch), host_sum));
        EXPECT_TRUE(same_reference(emu::exact_dot(x, y, launch), host_dot));
    }
}

TEST(CudaEmulatorExact, TheGridCoversTheDataWithNonEmptyBlocks) {
    namespace cd = exactref::cuda::detail;
    const std::uint64_t slice = std::uint64_t{cuda::tuning::block_threads} * cuda::tuning::exact_elements_per_lane;
    for (std::uint64_t n : {std::uint64_t{1}, slice - 1, slice, slice + 1, 9 * slice, 9 * slice + 5, std::uint64_t{1} << 28,
                            (std::uint64_t{1} << 31) + 3, std::uint64_t{1} << 40})
        for (std::uint64_t wanted : {1u, 4u, 7u, 1056u, 1u << 20}) {
            SCOPED_TRACE(::testing::Message() << "n " << n << ", blocks wanted " << wanted);
            const cd::exact_plan p = cd::make_exact_plan(n, wanted, cuda::tuning::exact_elements_per_lane);
            ASSERT_GE(p.blocks, 1u);
            EXPECT_EQ(p.elements_per_block % slice, 0u);
            EXPECT_LE(p.elements_per_block, cuda::tuning::exact_max_elements_per_block);
            EXPECT_GE(p.blocks * p.elements_per_block, n);                 // every element has a block
            EXPECT_LT((p.blocks - 1) * p.elements_per_block, n);           // the last block starts before n
            EXPECT_LE(p.blocks, std::max<std::uint64_t>(wanted, n / cuda::tuning::exact_max_elements_per_block + 1));
        }
}

TEST(CudaEmulatorExact, ExtremeMagnitudesAndNegativeTotals) {
    const double big = std::numeric_limits<double>::max();
    const double tiny = std::numeric_limits<double>::denorm_min();
    const double small_normal = std::numeric_limits<double>::min();
    // sums: 5000 copies of ±max (carries far up), subnormals (far down), and a negative total
    std::vector<double> xs;
    for (int i = 0; i < 5000; ++i) xs.push_back(big);
    for (int i = 0; i < 7001; ++i) xs.push_back(-big);
    for (int i = 0; i < 3000; ++i) xs.push_back(i % 2 ? tiny : -3 * tiny);
    xs.push_back(small_normal);
    const std::span<const double> x(xs);
    EXPECT_TRUE(same_reference(emu::exact_sum(x), exactref::sum(x)));
    // products: max·max (beyond binary64, the 106-bit path), subnormal·subnormal (below 2^-2000), and safe ones
    std::vector<double> a, b;
    for (int i = 0; i < 3000; ++i) {
        a.push_back(i % 3 == 0 ? big : i % 3 == 1 ? tiny : 1.5);
        b.push_back(i % 5 == 0 ? -big : i % 5 == 1 ? tiny : i % 5 == 2 ? small_normal : 0.75);
    }
    const std::span<const double> sa(a), sb(b);
    const reference device = emu::exact_dot(sa, sb), host = exactref::dot(sa, sb);
    EXPECT_TRUE(same_reference(device, host));
    EXPECT_TRUE(device.product_may_underflow);
    EXPECT_EQ(device.exact(), oracle::gmp_dot(sa, sb).decimal());
}

TEST(CudaEmulatorExact, SpecialValuesAndSignedZeros) {
    const double inf = std::numeric_limits<double>::infinity();
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const std::vector<std::vector<double>> sums{
        {}, {-0.0}, {-0.0, -0.0, -0.0}, {0.0, -0.0}, {0.0}, {nan}, {1.0, inf, inf}, {-inf, 2.0}, {inf, -inf},
        {nan, inf, -0.0}, std::vector<double>(5000, -0.0), {1.0, -1.0}, {-1.0, 1.0, -0.0}};
    for (std::size_t i = 0; i < sums.size(); ++i) {
        SCOPED_TRACE(::testing::Message() << "sum table row " << i);
        const std::span<const double> x(sums[i]);
        const reference device = emu::exact_sum(x);
        EXPECT_TRUE(same_reference(device, exactref::sum(x)));
        EXPECT_EQ(device.exact(), oracle::gmp_sum(x).decimal());
    }
    const std::vector<std::pair<std::vector<double>, std::vector<double>>> dots{
        {{-0.0}, {1.0}},   {{-1.0}, {0.0}},  {{-0.0}, {-0.0}}, {{inf}, {0.0}},  {{inf}, {-2.0}},
        {{nan}, {1.0}},    {{inf, 1.0}, {-inf, 1.0}},          {{-inf, inf}, {1.0, 1.0}},
        {{0.0, -0.0}, {-1.0, 1.0}}};
    for (std::size_t i = 0; i < dots.size(); ++i) {
        SCOPED_TRACE(::testing::Message() << "dot table row " << i);
        const std::span<const double> x(dots[i].first), y(dots[i].second);
        const reference device = emu::exact_dot(x, y);
        EXPECT_TRUE(same_reference(device, exactref::dot(x, y)));
        EXPECT_EQ(device.exact(), oracle::gmp_dot(x, y).decimal());
    }
}

TEST(CudaEmulatorExact, ARoundOfSixtyTermsInEveryBinadeIsExact) {
    // Terms in many binades at once: each warp needs many window rounds (Step E2's loop).
    std::vector<double> xs;
    for (int e = -1074; e <= 1023; e += 7) xs.push_back(std::ldexp(e % 2 ? -1.0 : 1.0, e));
    const std::span<const double> x(xs);
    EXPECT_TRUE(same_reference(emu::exact_sum(x), exactref::sum(x)));
}

TEST(CudaEmulatorExact, FullWindowsFlushBeforeTheirLaneSumsOverflow) {
    // Every term at the top of its window with all significand bits set: the largest lane-sum increments there are.
    // One block, so each warp runs 1024 iterations: without the flush every 2^11 terms a lane sum would pass 2^63.
    // (The squares of ±2^1000 and 2^-1000 leave binary64 and take the 106-bit path; those of 2^200 fill windows.)
    emu::exact_launch one_block;
    one_block.blocks = 1;
    for (double v : {0x1.fffffffffffffp+1000, -0x1.fffffffffffffp+1000, 0x1.fffffffffffffp-1000, -0x1.fffffffffffffp+200}) {
        SCOPED_TRACE(::testing::Message() << "float64 " << v);
        const std::vector<double> xs(std::size_t{1} << 21, v);
        const std::span<const double> x(xs);
        EXPECT_TRUE(same_reference(emu::exact_sum(x, one_block), exactref::sum(x)));
        EXPECT_TRUE(same_reference(emu::exact_dot(x, std::span<const double>(xs), one_block), exactref::dot(x, x)));
    }
    for (float v : {0x1.fffffep+100f, -0x1.fffffep-100f}) {
        SCOPED_TRACE(::testing::Message() << "float32 " << v);
        const std::vector<float> xs(std::size_t{1} << 21, v);
        const std::span<const float> x(xs);
        EXPECT_TRUE(same_reference(emu::exact_sum(x, one_block), exactref::sum(x)));
    }
}

TEST(CudaEmulatorExact, APlantedKernelWithoutExtraRoundsIsCaught) {
    // A kernel that drops the terms more than W binades below each warp round's largest must not pass.
    const std::uint64_t seed = 601;
    std::mt19937_64 rng(seed);
    const auto xs = test_cuda::random_values<double>(50000, oracle::term_mix::full_range, rng);
    const std::span<const double> x(xs);
    emu::exact_launch planted;
    planted.plant_skip_extra_rounds = true;
    EXPECT_TRUE(same_reference(emu::exact_sum(x), exactref::sum(x))) << "seed " << seed;
    EXPECT_FALSE(same_reference(emu::exact_sum(x, planted), exactref::sum(x))) << "seed " << seed;
    // and a corrupted state is refused with a message
    auto st = emu::exact_sum_state(x);
    st.positive_inf = st.count + 1;
    EXPECT_THROW(cuda::detail::make_reference(st), std::invalid_argument);
}

}  // namespace
