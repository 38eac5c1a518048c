// The exact device sum and dot product: enqueueing the init and exact kernels (exact_kernels.h) on the caller's
// stream. The host side of the result (the state -> exactref::reference) is in src/cuda/api.cpp.
#include <cuda_runtime.h>

#include <array>
#include <atomic>
#include <cstddef>

#include "cuda_check.h"
#include "exact_kernels.h"
#include "exactref/cuda.h"

namespace exactref::cuda {
namespace detail {

/// Refuses bad pointers and work buffers (src/cuda/api.cpp): std::invalid_argument naming the problem.
void check_exact_call(const char* function, std::uint64_t n, bool has_data, const void* work, std::size_t work_bytes);
/// Multiprocessors of the current device (the persistent grid's size), cuda_error when it cannot be queried.
unsigned multiprocessor_count();

/// Blocks of exact_kernel<Source> that one multiprocessor of the current device holds at once (its registers and
/// shared memory decide), at most tuning::exact_blocks_per_sm: the persistent grid is then one wave, with no partly
/// filled last wave (the kernels use 64 to 105 registers a thread on sm_90, so 2 to 4 blocks of 256 threads fit, not
/// 8). Only the speed depends on it. Asked once per device and kernel instantiation (per_device_once): an enqueue
/// should not pay for an occupancy query between its two launches.
template <class Source>
unsigned resident_blocks_per_sm() {
    static std::array<std::atomic<unsigned>, 64> cache{};
    return per_device_once(cache, [](int) {
        int blocks = 0;
        check_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, exact_kernel<Source>,
                                                                 static_cast<int>(tuning::block_threads), 0),
                   "cudaOccupancyMaxActiveBlocksPerMultiprocessor(exact_kernel)", "check that a CUDA device is present");
        const unsigned fit = blocks < 1 ? 1u : static_cast<unsigned>(blocks);
        return fit < tuning::exact_blocks_per_sm ? fit : tuning::exact_blocks_per_sm;
    });
}

template <class Source>
void enqueue_exact(const Source& src, std::uint64_t n, dtype format, bool is_dot, void* d_work, cudaStream_t stream) {
    auto* st = static_cast<exact_state*>(d_work);
    exact_init_kernel<<<1, tuning::block_threads, 0, stream>>>(st, n, static_cast<unsigned>(format), is_dot);
    check_launch("the exact-sum init kernel");
    if (n == 0) return;
    const exact_plan plan = make_exact_plan(n, std::uint64_t{multiprocessor_count()} * resident_blocks_per_sm<Source>(),
                                            tuning::exact_elements_per_lane);
    exact_kernel<Source><<<dim3(static_cast<unsigned>(plan.blocks)), tuning::block_threads, 0, stream>>>(
        src, n, plan.elements_per_block, st);
    check_launch(is_dot ? "the exact dot kernel" : "the exact sum kernel");
}

}  // namespace detail

template <class T>
void device_exact_sum(const T* d_xs, std::size_t n, void* d_work, std::size_t work_bytes, cudaStream_t stream) {
    detail::check_exact_call("device_exact_sum", n, d_xs != nullptr, d_work, work_bytes);
    const detail::sum_source<T, tuning::exact_elements_per_lane> src{d_xs};
    detail::enqueue_exact(src, n, format_traits<T>::info.id, false, d_work, stream);
}

template <class T>
void device_exact_dot(const T* d_x, const T* d_y, std::size_t n, void* d_work, std::size_t work_bytes,
                      cudaStream_t stream) {
    detail::check_exact_call("device_exact_dot", n, d_x != nullptr && d_y != nullptr, d_work, work_bytes);
    const detail::dot_source<T, tuning::exact_elements_per_lane> src{d_x, d_y};
    detail::enqueue_exact(src, n, format_traits<T>::info.id, true, d_work, stream);
}

#define EXACTREF_CUDA_INSTANTIATE_EXACT(T)                                                                    \
    template void device_exact_sum<T>(const T*, std::size_t, void*, std::size_t, cudaStream_t);              \
    template void device_exact_dot<T>(const T*, const T*, std::size_t, void*, std::size_t, cudaStream_t);
EXACTREF_CUDA_INSTANTIATE_EXACT(double)
EXACTREF_CUDA_INSTANTIATE_EXACT(float)
EXACTREF_CUDA_INSTANTIATE_EXACT(float16)
EXACTREF_CUDA_INSTANTIATE_EXACT(bfloat16)
#undef EXACTREF_CUDA_INSTANTIATE_EXACT

}  // namespace exactref::cuda
