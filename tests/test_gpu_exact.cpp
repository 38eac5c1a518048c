// The exact device sum and dot product on a real GPU (exactref/cuda.h): device_sum / device_dot must give the
// reference exactref::sum / exactref::dot give on the host — s, S, n, special values, signed zeros, and for dot
// products min_product_exponent and product_may_underflow — for every format, the oracle's input mixes, extremes,
// sizes from 0 to 2^26, on user streams with a reused caller-owned work buffer; repeated runs must agree. Skips, saying
// why, when exactref::cuda is not built or no device is present (test_cuda_emulator.cpp checks the same algorithm on
// the host). Seeds printed on failure.
#include <gtest/gtest.h>

#if !defined(EXACTREF_HAVE_CUDA)

TEST(GpuExact, SkippedWithoutCuda) {
    GTEST_SKIP() << "exactref was built without CUDA (EXACTREF_CUDA=OFF or no working nvcc): the exact device sum is "
                    "not built; tests/test_cuda_emulator.cpp checks its algorithm on the host";
}

#else

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "exactref/cuda.h"
#include "exactref/dot.h"
#include "exactref/reference.h"
#include "test_cuda_checks.h"
#include "test_gpu_fixture.h"

namespace {

using namespace exactref;
using test_cuda::device_vector;
using test_cuda::same_reference;

class GpuExact : public test_cuda::gpu_test {};

template <class T>
void check_format(std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<std::size_t> sizes = test_cuda::interesting_sizes(rng);
    sizes.push_back(3'000'017);
    for (oracle::term_mix mix : oracle::all_term_mixes)
        for (std::size_t n : sizes) {
            SCOPED_TRACE(::testing::Message() << "seed " << seed << ", " << test_cuda::type_name<T>() << ", n " << n
                                              << ", mix " << oracle::to_string(mix));
            const auto xs = test_cuda::random_values<T>(n, mix, rng);
            const auto ys = test_cuda::random_values<T>(n, mix, rng);
            const std::span<const T> x(xs), y(ys);
            const device_vector<T> d_x(x), d_y(y);
            EXPECT_TRUE(same_reference(cuda::device_sum(d_x.data(), n), exactref::sum(x))) << "sum";
            EXPECT_TRUE(same_reference(cuda::device_dot(d_x.data(), d_y.data(), n), exactref::dot(x, y))) << "dot";
        }
}

TEST_F(GpuExact, Float64) { check_format<double>(2001); }
TEST_F(GpuExact, Float32) { check_format<float>(2002); }
TEST_F(GpuExact, Float16) { check_format<float16>(2003); }
TEST_F(GpuExact, Bfloat16) { check_format<bfloat16>(2004); }

TEST_F(GpuExact, LargeInputsOnStreamsWithAReusedWorkBuffer) {
    const std::uint64_t seed = 2101;
    std::mt19937_64 rng(seed);
    const std::size_t n = std::size_t{1} << 26;
    const auto xs = test_cuda::random_values<double>(n, oracle::term_mix::clustered, rng);
    const std::span<const double> x(xs);
    const reference host = exactref::sum(x);
    const device_vector<double> d_x(x);
    device_vector<unsigned char> work(cuda::device_exact_work_bytes());
    cudaStream_t a = nullptr, b = nullptr;
    ASSERT_EQ(cudaStreamCreate(&a), cudaSuccess);
    ASSERT_EQ(cudaStreamCreate(&b), cudaSuccess);
    for (cudaStream_t s : {a, b, a}) {
        cuda::device_exact_sum(d_x.data(), n, work.data(), work.size(), s);
        EXPECT_TRUE(same_reference(cuda::device_exact_reference(work.data(), s), host)) << "seed " << seed;
    }
    EXPECT_TRUE(same_reference(cuda::device_dot(d_x.data(), d_x.data(), n, b), exactref::dot(x, x))) << "seed " << seed;
    ASSERT_EQ(cudaStreamDestroy(a), cudaSuccess);
    ASSERT_EQ(cudaStreamDestroy(b), cudaSuccess);
}

TEST_F(GpuExact, ExtremesAndSpecialValues) {
    const double big = std::numeric_limits<double>::max(), tiny = std::numeric_limits<double>::denorm_min();
    const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
    const std::vector<std::vector<double>> rows{
        {}, {-0.0}, std::vector<double>(100000, -0.0), {0.0, -0.0}, {nan}, {inf, 1.0, inf}, {inf, -inf},
        {big, big, -big, tiny, -tiny, tiny}, std::vector<double>(70000, big)};
    for (std::size_t i = 0; i < rows.size(); ++i) {
        SCOPED_TRACE(::testing::Message() << "row " << i);
        const std::span<const double> x(rows[i]);
        const device_vector<double> d_x(x);
        EXPECT_TRUE(same_reference(cuda::device_sum(d_x.data(), x.size()), exactref::sum(x)));
        EXPECT_TRUE(same_reference(cuda::device_dot(d_x.data(), d_x.data(), x.size()), exactref::dot(x, x)));
    }
}

// Argument checks happen before any CUDA call, so they run with or without a device.
TEST(GpuExactArguments, RefusesBadCalls) {
    const double* fake = reinterpret_cast<const double*>(std::uintptr_t{256});
    void* work = reinterpret_cast<void*>(std::uintptr_t{256});
    const std::size_t bytes = cuda::device_exact_work_bytes();
    EXPECT_GT(bytes, 2u * 136u * 8u);
    EXPECT_THROW(cuda::device_exact_sum(fake, 10, nullptr, bytes), std::invalid_argument);
    EXPECT_THROW(cuda::device_exact_sum(fake, 10, work, bytes - 8), std::invalid_argument);
    EXPECT_THROW(cuda::device_exact_sum(static_cast<const double*>(nullptr), 10, work, bytes), std::invalid_argument);
    EXPECT_THROW(cuda::device_exact_dot(fake, static_cast<const double*>(nullptr), 10, work, bytes),
                 std::invalid_argument);
    EXPECT_THROW(cuda::device_exact_sum(fake, 10, reinterpret_cast<void*>(std::uintptr_t{260}), bytes),
                 std::invalid_argument);
    EXPECT_THROW(cuda::device_exact_reference(nullptr), std::invalid_argument);
}

}  // namespace

#endif
