// exactref/cuda/config.cuh — what every device header shares: the host/device function markers, bit casts that
// work on both sides, and the launch sizes of the device kernels (one tuning struct, as STYLE.md asks).
//
// The headers in include/exactref/cuda/ are written once for two compilers: nvcc compiles them into the kernels of
// src/cuda/, and the host compiler compiles the same step functions into the block emulator (emulator.cuh) that the
// CPU-only tests run. So nothing here may include a CUDA header unless __CUDACC__ is defined, and nothing may include
// GMP or MPFR (STYLE.md: .cu files never pull them in).
#pragma once

#include <cstdint>
#include <cstring>  // std::memcpy: host-side bit casts

#if defined(__CUDACC__)
#define EXACTREF_HD __host__ __device__
#define EXACTREF_HD_INLINE __host__ __device__ __forceinline__
#else
#define EXACTREF_HD
#define EXACTREF_HD_INLINE inline
#endif

// Loop unrolling for the device pass only (the host compiler does not know the pragma).
#if defined(__CUDA_ARCH__)
#define EXACTREF_UNROLL _Pragma("unroll")
#else
#define EXACTREF_UNROLL
#endif

namespace exactref::cuda {

/// Launch sizes of the device kernels. The bits of every result are independent of all of them (the trees compute
/// aligned subtrees, whose values do not depend on who computes them; the exact sum adds integers), so they are
/// pure speed settings: bench/cuda/device_bench.cu measures them (scripts/device-check), and the emulator tests
/// run several values to prove the independence.
struct tuning {
    /// Threads per block of every kernel: 8 warps. The halving(256) leaf shape is the shape of one such block.
    static constexpr unsigned block_threads = 256;
    static constexpr unsigned warp_threads = 32;
    static constexpr unsigned warps_per_block = block_threads / warp_threads;
    /// halving(256): consecutive leaves reduced by one warp (each warp holds a whole leaf in registers, 8 slots per
    /// lane); a block therefore reduces an aligned subtree of warps_per_block * halving_leaves_per_warp leaves.
    static constexpr unsigned halving_leaves_per_warp = 2;
    /// fold(16): one leaf per thread, so one block reduces an aligned subtree of 256 leaves.
    static constexpr unsigned fold_leaves_per_block = block_threads;
    /// Pairwise levels: one block reduces an aligned group of 256 nodes (8 levels) per launch.
    static constexpr unsigned level_nodes_per_block = block_threads;
    /// Exact sum: elements each lane holds per warp iteration (a warp takes 32 * terms_per_lane elements).
    static constexpr unsigned exact_elements_per_lane = 8;
    /// Exact sum: the most blocks per streaming multiprocessor in the persistent grid; the launcher takes fewer when
    /// fewer are resident at once (cudaOccupancyMaxActiveBlocksPerMultiprocessor), so that the grid is one wave.
    static constexpr unsigned exact_blocks_per_sm = 8;
    /// Exact sum: the most elements one block may take. Each shared-memory chunk then receives fewer than
    /// 4 * 2^28 additions of magnitude below 2^32, far from int64 overflow (exact_steps.cuh, "Headroom").
    static constexpr std::uint64_t exact_max_elements_per_block = std::uint64_t{1} << 28;

    static_assert(block_threads % warp_threads == 0 && warps_per_block <= warp_threads,
                  "the second reduction stage puts one node per warp into a single warp");
    static_assert(halving_leaves_per_warp >= 1 && warps_per_block * halving_leaves_per_warp <= warp_threads,
                  "a block's halving leaves are reduced by one warp");
};

namespace detail {

// ---- bit casts usable on both sides -----------------------------------------------------------------------------------

EXACTREF_HD_INLINE std::uint64_t bits_of(double x) noexcept {
#if defined(__CUDA_ARCH__)
    return static_cast<std::uint64_t>(__double_as_longlong(x));
#else
    std::uint64_t b;
    std::memcpy(&b, &x, sizeof b);
    return b;
#endif
}
EXACTREF_HD_INLINE std::uint32_t bits_of(float x) noexcept {
#if defined(__CUDA_ARCH__)
    return __float_as_uint(x);
#else
    std::uint32_t b;
    std::memcpy(&b, &x, sizeof b);
    return b;
#endif
}
EXACTREF_HD_INLINE double double_from_bits(std::uint64_t b) noexcept {
#if defined(__CUDA_ARCH__)
    return __longlong_as_double(static_cast<long long>(b));
#else
    double x;
    std::memcpy(&x, &b, sizeof x);
    return x;
#endif
}
EXACTREF_HD_INLINE float float_from_bits(std::uint32_t b) noexcept {
#if defined(__CUDA_ARCH__)
    return __uint_as_float(b);
#else
    float x;
    std::memcpy(&x, &b, sizeof x);
    return x;
#endif
}

/// Number of leading zero bits of a non-zero 64-bit value.
EXACTREF_HD_INLINE int leading_zeros(std::uint64_t x) noexcept {
#if defined(__CUDA_ARCH__)
    return __clzll(static_cast<long long>(x));
#else
    return __builtin_clzll(x);
#endif
}

}  // namespace detail
}  // namespace exactref::cuda
