// The device trees on a real GPU (exactref/cuda.h): device_tree_reduce must give exactref::tree_reduce's bits for the
// same data, op, shape and accumulation type, for every (element, accumulation) pair, both shapes, masks, sizes that
// end inside a warp, a leaf and a tile, sizes that need one, two and three level launches, and on a user stream with
// caller-owned buffers; two runs must agree. Skips, saying why, when exactref::cuda is not built or no device is
// present (the same algorithms are checked without a GPU by test_cuda_emulator.cpp). Seeds printed on failure.
#include <gtest/gtest.h>

#if !defined(EXACTREF_HAVE_CUDA)

TEST(GpuTrees, SkippedWithoutCuda) {
    GTEST_SKIP() << "exactref was built without CUDA (EXACTREF_CUDA=OFF or no working nvcc): the device trees are not "
                    "built; tests/test_cuda_emulator.cpp checks their algorithms on the host";
}

#else

#include <cstdint>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "exactref/cuda.h"
#include "exactref/tree.h"
#include "test_cuda_checks.h"
#include "test_gpu_fixture.h"

namespace {

using namespace exactref;
using test_cuda::all_ops;
using test_cuda::device_vector;
using test_cuda::same_tree_bits;
using test_cuda::show;

class GpuTrees : public test_cuda::gpu_test {};

/// One device tree (caller-owned buffers, default stream) against the host tree.
template <class Acc, class T>
void expect_device_tree(std::span<const T> xs, reduce_op op, const tree_shape& shape, std::span<const bool> mask) {
    const device_vector<T> d_xs(xs);
    device_vector<bool> d_mask(mask.size());
    if (!mask.empty()) {
        ASSERT_EQ(cudaMemcpy(d_mask.data(), mask.data(), mask.size(), cudaMemcpyHostToDevice), cudaSuccess);
    }
    const std::size_t work = cuda::device_work_elems<Acc>(xs.size(), shape);
    device_vector<Acc> d_work(work);
    device_vector<Acc> d_result(1);
    cuda::device_tree_reduce<Acc>(d_xs.data(), xs.size(), d_result.data(), d_work.data(), work, op, shape, nullptr,
                                  mask.empty() ? nullptr : d_mask.data());
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const Acc device = d_result.to_host()[0];
    tree_options options;
    options.mask = mask;
    const Acc host = exactref::tree_reduce<Acc>(xs, op, shape, options);
    EXPECT_TRUE(same_tree_bits(device, host, op)) << "device " << show(device) << ", host " << show(host);
}

template <class T, class Acc>
void check_pair(std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<std::size_t> sizes = test_cuda::interesting_sizes(rng);
    sizes.push_back(1'048'576 + 4097);  // several tiles per level block
    const oracle::term_mix mixes[] = {oracle::term_mix::clustered, oracle::term_mix::cancelling,
                                      oracle::term_mix::specials, oracle::term_mix::full_range};
    for (const tree_shape& shape : {halving(), fold()})
        for (reduce_op op : all_ops)
            for (std::size_t k = 0; k < sizes.size(); ++k) {
                const std::size_t n = sizes[k];
                const oracle::term_mix mix = mixes[(k + static_cast<std::size_t>(op)) % 4];
                SCOPED_TRACE(::testing::Message() << "seed " << seed << ", " << test_cuda::type_name<T>() << " -> "
                                                  << test_cuda::type_name<Acc>() << ", " << to_string(op) << ", "
                                                  << shape.name() << ", n " << n << ", mix " << oracle::to_string(mix));
                const auto xs = test_cuda::random_values<T>(n, mix, rng);
                expect_device_tree<Acc, T>(xs, op, shape, {});
                if (shape.kind == tree_kind::fold && k % 3 == 0) {
                    const auto mask = test_cuda::random_mask(n, 0.3, rng);
                    SCOPED_TRACE("with a mask");
                    expect_device_tree<Acc, T>(xs, op, shape, mask.view());
                }
            }
}

TEST_F(GpuTrees, Float64) { check_pair<double, double>(1001); }
TEST_F(GpuTrees, Float32) { check_pair<float, float>(1002); }
TEST_F(GpuTrees, Float16) { check_pair<float16, float16>(1003); }
TEST_F(GpuTrees, Bfloat16) { check_pair<bfloat16, bfloat16>(1004); }
TEST_F(GpuTrees, Float16InFloat) { check_pair<float16, float>(1005); }
TEST_F(GpuTrees, Bfloat16InFloat) { check_pair<bfloat16, float>(1006); }
TEST_F(GpuTrees, Integers) {
    check_pair<int, int>(1007);
    check_pair<unsigned, unsigned>(1008);
    check_pair<long, long>(1009);
    check_pair<unsigned long, unsigned long>(1010);
    check_pair<long long, long long>(1011);
    check_pair<unsigned long long, unsigned long long>(1012);
}

TEST_F(GpuTrees, ThreeLevelLaunchesOnAUserStreamAreDeterministic) {
    // 2^28 + 300000 floats: 2^20 + 1172 leaves in 65610 tiles, so levels 65610 -> 257 -> 2 -> 1 (three level launches).
    const std::uint64_t seed = 1101;
    std::mt19937_64 rng(seed);
    const std::size_t n = (std::size_t{1} << 28) + 300000;
    std::vector<float> xs(n);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (auto& x : xs) x = normal(rng);
    const device_vector<float> d_xs{std::span<const float>(xs)};
    cudaStream_t stream = nullptr;
    ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
    for (const tree_shape& shape : {halving(), fold()}) {
        SCOPED_TRACE(::testing::Message() << "seed " << seed << ", " << shape.name());
        const float host = exactref::tree_reduce(std::span<const float>(xs), reduce_op::sum, shape);
        const float first = cuda::device_tree_reduce_sync(d_xs.data(), n, reduce_op::sum, shape, stream);
        const float second = cuda::device_tree_reduce_sync(d_xs.data(), n, reduce_op::sum, shape, stream);
        EXPECT_EQ(test_cuda::raw(first), test_cuda::raw(host)) << show(first) << " vs host " << show(host);
        EXPECT_EQ(test_cuda::raw(second), test_cuda::raw(first));
    }
    ASSERT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

TEST_F(GpuTrees, HarmonicSeriesGivesTheDesignValues) {
    std::vector<double> xs(10'000'000);
    for (std::size_t i = 0; i < xs.size(); ++i) xs[i] = 1.0 / static_cast<double>(i + 1);
    const device_vector<double> d_xs{std::span<const double>(xs)};
    EXPECT_EQ(cuda::device_tree_reduce_sync(d_xs.data(), xs.size()), 16.695311365859855);
    EXPECT_EQ(cuda::device_tree_reduce_sync(d_xs.data(), xs.size(), reduce_op::sum, fold()), 16.69531136585985);
}

// Argument checks happen before any CUDA call, so they run with or without a device.
TEST(GpuTreesArguments, RefusesBadCalls) {
    double* fake = reinterpret_cast<double*>(std::uintptr_t{256});  // never dereferenced: the checks throw first
    const auto message = [&](auto&& call) -> std::string {
        try {
            call();
        } catch (const std::invalid_argument& e) {
            return e.what();
        }
        return "(no exception)";
    };
    EXPECT_NE(message([&] { cuda::device_work_elems<double>(100, halving(128)); }).find("halving(256) and fold(16)"),
              std::string::npos);
    EXPECT_NE(message([&] { cuda::device_tree_reduce(fake, 100, fake, fake, 0); }).find("device_work_elems"),
              std::string::npos);
    EXPECT_NE(message([&] { cuda::device_tree_reduce(fake, 100, static_cast<double*>(nullptr), fake, 100); })
                  .find("d_result is null"),
              std::string::npos);
    const bool* mask = reinterpret_cast<const bool*>(std::uintptr_t{256});
    EXPECT_NE(message([&] { cuda::device_tree_reduce(fake, 100, fake, fake, 100, reduce_op::sum, halving(), nullptr, mask); })
                  .find("a mask needs fold(16)"),
              std::string::npos);
    EXPECT_EQ(cuda::device_work_elems<double>(0), 0u);
    EXPECT_EQ(cuda::device_work_elems<double>(std::size_t{1} << 20), 288u);
}

}  // namespace

#endif
