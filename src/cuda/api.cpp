// Host side of exactref/cuda.h: argument checks, work sizes, device queries, the synchronous helpers, and the exact
// state turned into an exactref::reference (include/exactref/cuda/exact_result.cuh). Compiled by the host compiler.
#include <cuda_runtime_api.h>

#include <array>
#include <atomic>
#include <string>

#include "cuda_check.h"
#include "exactref/cuda.h"
#include "exactref/cuda/exact_result.cuh"
#include "exactref/cuda/tree_steps.cuh"

namespace exactref::cuda {

bool device_available() noexcept {
    int count = 0;
    return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

std::string device_unavailable_reason() {
    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess) {
        cudaGetLastError();  // clear the error so that later calls start clean
        return std::string("cudaGetDeviceCount: ") + cudaGetErrorName(status) + " (" + cudaGetErrorString(status) + ")";
    }
    if (count == 0) return "no CUDA device found (cudaGetDeviceCount returned 0)";
    return "";
}

namespace detail {

namespace {
bool is_device_shape(const tree_shape& shape) noexcept { return shape == halving(256) || shape == fold(16); }

tree_plan plan_for(std::uint64_t n, const tree_shape& shape) {
    return make_tree_plan(n, shape.leaf, tile_leaves_for(shape.kind, tuning::halving_leaves_per_warp));
}

/// Frees a cudaMallocAsync allocation on its stream when the scope ends (also when a launch throws).
struct async_buffer {
    void* ptr = nullptr;
    cudaStream_t stream = nullptr;
    async_buffer(std::size_t bytes, cudaStream_t s) : stream(s) {
        check_cuda(cudaMallocAsync(&ptr, bytes, s), "cudaMallocAsync",
                   "check that a CUDA device is present and has free memory");
    }
    async_buffer(const async_buffer&) = delete;
    async_buffer& operator=(const async_buffer&) = delete;
    ~async_buffer() {
        if (ptr != nullptr) cudaFreeAsync(ptr, stream);
    }
};
}  // namespace

std::uint64_t tree_work_elems(std::uint64_t n, const tree_shape& shape, std::size_t acc_size) {
    if (!is_device_shape(shape))
        throw std::invalid_argument("exactref::cuda::device_work_elems: the device trees are halving(256) and "
                                    "fold(16), not " + shape.name() + "; reduce other shapes with exactref::tree_reduce "
                                    "on the host");
    const tree_plan p = plan_for(n, shape);
    return p.tile_nodes + p.second_nodes + (p.flag_bytes() + acc_size - 1) / acc_size;
}

void check_tree_call(const tree_shape& shape, std::uint64_t n, bool has_data, bool has_result, bool has_work,
                     std::uint64_t work_elems, std::size_t acc_size, bool has_mask) {
    const std::string f = "exactref::cuda::device_tree_reduce: ";
    if (!is_device_shape(shape))
        throw std::invalid_argument(f + "the device trees are halving(256) and fold(16), not " + shape.name() +
                                    "; reduce other shapes with exactref::tree_reduce on the host");
    if (has_mask && shape.kind != tree_kind::fold)
        throw std::invalid_argument(f + "a mask needs fold(16); " + shape.name() + " has no masked form");
    if (!has_result) throw std::invalid_argument(f + "d_result is null; pass one element of device memory");
    if (n > 0 && !has_data) throw std::invalid_argument(f + "d_xs is null but n = " + std::to_string(n));
    const std::uint64_t needed = tree_work_elems(n, shape, acc_size);
    if (work_elems < needed || (needed > 0 && !has_work))
        throw std::invalid_argument(f + "the work buffer has " + std::to_string(has_work ? work_elems : 0) +
                                    " elements but " + std::to_string(needed) + " are needed for n = " +
                                    std::to_string(n) + "; allocate device_work_elems<Acc>(n, shape)");
    // A chunk of 2^30 elements starting at a multiple of 2^30 is one subtree of the host tree (tree.h), so the chunk
    // results are the tree's nodes at one level; pairing them as halving(2) leaves and levels does the rest.
    const std::uint64_t tile_blocks = plan_for(n, shape).tile_nodes;
    if (tile_blocks > 0x7FFFFFFFu)
        throw std::invalid_argument(f + "n = " + std::to_string(n) + " needs " + std::to_string(tile_blocks) +
                                    " tile blocks, more than one launch has (2^31 - 1); reduce each aligned chunk of "
                                    "2^30 elements with its own device_tree_reduce call (chunk k = elements "
                                    "[k*2^30, (k+1)*2^30), the last one shorter), copy the chunk results to the host "
                                    "and combine them with exactref::tree_reduce<Acc>(results, op, "
                                    "exactref::halving(2)) for the host tree's bits (leave out a chunk whose mask "
                                    "keeps no element)");
}

void check_exact_call(const char* function, std::uint64_t n, bool has_data, const void* work, std::size_t work_bytes) {
    const std::string f = std::string("exactref::cuda::") + function + ": ";
    if (n > 0 && !has_data) throw std::invalid_argument(f + "a data pointer is null but n = " + std::to_string(n));
    if (work == nullptr) throw std::invalid_argument(f + "d_work is null; allocate device_exact_work_bytes() bytes");
    if (work_bytes < sizeof(exact_state))
        throw std::invalid_argument(f + "the work buffer has " + std::to_string(work_bytes) + " bytes but " +
                                    std::to_string(sizeof(exact_state)) + " are needed (device_exact_work_bytes())");
    if (reinterpret_cast<std::uintptr_t>(work) % 8 != 0)
        throw std::invalid_argument(f + "d_work must be 8-byte aligned (cudaMalloc memory is)");
}

unsigned multiprocessor_count() {
    // Asked once per device (the exact kernels' grid size; a launch should not pay for a device query).
    static std::array<std::atomic<unsigned>, 64> cache{};
    return per_device_once(cache, [](int device) {
        int count = 0;
        check_cuda(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device),
                   "cudaDeviceGetAttribute(cudaDevAttrMultiProcessorCount)", "check that a CUDA device is present");
        return count > 0 ? static_cast<unsigned>(count) : 1u;
    });
}

template <class T, class Acc>
Acc tree_reduce_sync(const T* d_xs, std::size_t n, reduce_op op, const tree_shape& shape, cudaStream_t stream,
                     const bool* d_mask) {
    const std::size_t work = device_work_elems<Acc>(n, shape);
    async_buffer buffer((work + 1) * sizeof(Acc), stream);
    Acc* base = static_cast<Acc*>(buffer.ptr);
    launch_tree<T, Acc>(d_xs, n, base + work, base, work, op, shape, stream, d_mask);
    Acc result{};
    check_cuda(cudaMemcpyAsync(&result, base + work, sizeof(Acc), cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync",
               "the tree kernels or earlier work on the stream failed");
    check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize",
               "the tree kernels or earlier work on the stream failed");
    return result;
}

#define EXACTREF_CUDA_INSTANTIATE_SYNC(T, ACC)                                                                 \
    template ACC tree_reduce_sync<T, ACC>(const T*, std::size_t, reduce_op, const tree_shape&, cudaStream_t,   \
                                          const bool*);
EXACTREF_CUDA_INSTANTIATE_SYNC(double, double)
EXACTREF_CUDA_INSTANTIATE_SYNC(float, float)
EXACTREF_CUDA_INSTANTIATE_SYNC(float16, float16)
EXACTREF_CUDA_INSTANTIATE_SYNC(bfloat16, bfloat16)
EXACTREF_CUDA_INSTANTIATE_SYNC(float16, float)
EXACTREF_CUDA_INSTANTIATE_SYNC(bfloat16, float)
EXACTREF_CUDA_INSTANTIATE_SYNC(int, int)
EXACTREF_CUDA_INSTANTIATE_SYNC(unsigned, unsigned)
EXACTREF_CUDA_INSTANTIATE_SYNC(long, long)
EXACTREF_CUDA_INSTANTIATE_SYNC(unsigned long, unsigned long)
EXACTREF_CUDA_INSTANTIATE_SYNC(long long, long long)
EXACTREF_CUDA_INSTANTIATE_SYNC(unsigned long long, unsigned long long)
#undef EXACTREF_CUDA_INSTANTIATE_SYNC

}  // namespace detail

std::size_t device_exact_work_bytes() noexcept { return sizeof(detail::exact_state); }

reference device_exact_reference(const void* d_work, cudaStream_t stream) {
    if (d_work == nullptr)
        throw std::invalid_argument("exactref::cuda::device_exact_reference: d_work is null; pass the buffer given to "
                                    "device_exact_sum / device_exact_dot");
    detail::exact_state st{};
    detail::check_cuda(cudaMemcpyAsync(&st, d_work, sizeof st, cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync",
                       "the exact kernels or earlier work on the stream failed");
    detail::check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize",
                       "the exact kernels or earlier work on the stream failed");
    return detail::make_reference(st);
}

template <class T>
reference device_sum(const T* d_xs, std::size_t n, cudaStream_t stream) {
    detail::async_buffer work(device_exact_work_bytes(), stream);
    device_exact_sum(d_xs, n, work.ptr, device_exact_work_bytes(), stream);
    return device_exact_reference(work.ptr, stream);
}

template <class T>
reference device_dot(const T* d_x, const T* d_y, std::size_t n, cudaStream_t stream) {
    detail::async_buffer work(device_exact_work_bytes(), stream);
    device_exact_dot(d_x, d_y, n, work.ptr, device_exact_work_bytes(), stream);
    return device_exact_reference(work.ptr, stream);
}

#define EXACTREF_CUDA_INSTANTIATE_REFERENCE(T)                                                \
    template reference device_sum<T>(const T*, std::size_t, cudaStream_t);                   \
    template reference device_dot<T>(const T*, const T*, std::size_t, cudaStream_t);
EXACTREF_CUDA_INSTANTIATE_REFERENCE(double)
EXACTREF_CUDA_INSTANTIATE_REFERENCE(float)
EXACTREF_CUDA_INSTANTIATE_REFERENCE(float16)
EXACTREF_CUDA_INSTANTIATE_REFERENCE(bfloat16)
#undef EXACTREF_CUDA_INSTANTIATE_REFERENCE

}  // namespace exactref::cuda
