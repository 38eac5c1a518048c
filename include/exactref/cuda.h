// exactref/cuda.h — the device face of exactref (target exactref::cuda, built when EXACTREF_CUDA is on; docs/cuda.md):
// deterministic device trees with the host's bits, and the exact device sum and dot product.
//
// Host code includes this header (it needs only the CUDA runtime API for cudaStream_t); the kernels live in
// src/cuda/*.cu. Every function that takes device pointers enqueues work on the caller's stream and returns without
// waiting, unless its name ends in _sync or it returns a host value (device_sum, device_dot, device_exact_reference),
// which wait for the stream. Errors are thrown at the call: std::invalid_argument for bad arguments, cuda_error for a
// failing CUDA call (with the call, the CUDA error name, and what to check).
//
//   Trees (docs/same-bits.md; a contract): device_tree_reduce computes halving(256) or fold(16) over device data,
//   with the bits exactref::tree_reduce gives on the host for the same data, op, shape and accumulation type —
//   identical bits, except that a NaN result of a sum or product is a NaN on both sides with payload and sign set by
//   each processor's NaN rules (min, max, any and all match even in the NaN payload). One warp per halving leaf
//   (256 threads' worth of slots in 8 registers per lane), one thread per fold leaf, aligned subtrees per block, one
//   small launch per 8 pairwise levels; the caller owns the work buffer (device_work_elems).
//
//   Exact sum and dot (accumulator.h's superaccumulator, per block in shared memory and once in global memory, with
//   integer atomics): device_exact_sum / device_exact_dot enqueue, device_exact_reference copies the state back and
//   builds the exactref::reference that exactref::sum / exactref::dot would give for the same data — exact s and S,
//   n, the special-value state and the signed-zero flags. Integer addition is associative, so the result is exact
//   and deterministic for every launch shape and every run.
#pragma once

#include "exactref/config.h"  // C++20, or a clear error

#include <cuda_runtime_api.h>  // cudaStream_t, cudaError_t

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "exactref/format.h"
#include "exactref/reference.h"
#include "exactref/tree.h"

namespace exactref::cuda {

/// A CUDA runtime call failed. what() names the call, the CUDA error and what to check; code() is the error.
class cuda_error : public std::runtime_error {
public:
    cuda_error(const std::string& what, cudaError_t code) : std::runtime_error(what), code_(code) {}
    cudaError_t code() const noexcept { return code_; }

private:
    cudaError_t code_;
};

/// True when the CUDA runtime sees at least one device. Never throws.
bool device_available() noexcept;
/// Why device_available() is false ("cudaGetDeviceCount: CUDA driver version is insufficient ..." or "no CUDA device
/// found"), or "" when a device is available. Never throws.
std::string device_unavailable_reason();

// ---- deterministic device trees -----------------------------------------------------------------------------------

/// The (element, accumulation) pairs of the device trees: (T, T) for double, float, float16, bfloat16 and for int,
/// unsigned, long, unsigned long, long long, unsigned long long; and (float16, float), (bfloat16, float).
template <class T, class Acc>
concept device_tree_accumulation =
    (std::is_same_v<T, Acc> &&
     (std::is_same_v<T, double> || std::is_same_v<T, float> || std::is_same_v<T, float16> ||
      std::is_same_v<T, bfloat16> || std::is_same_v<T, int> || std::is_same_v<T, unsigned> ||
      std::is_same_v<T, long> || std::is_same_v<T, unsigned long> || std::is_same_v<T, long long> ||
      std::is_same_v<T, unsigned long long>)) ||
    (std::is_same_v<Acc, float> && (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>));

/// Size, in elements of the accumulation type Acc, of the work buffer device_tree_reduce needs for n elements.
/// 0 when n = 0 (a null work pointer is then accepted). About n/4096 + n/2^20 elements for halving(256), n/4096 for
/// fold(16) — plus one byte per node for presence flags, counted in the same units.
/// Throws std::invalid_argument for a shape other than halving(256) and fold(16).
///   exactref::cuda::device_work_elems<double>(1 << 20);   // -> 288: 256 tile nodes + 256 flag bytes (32 doubles)
template <class Acc>
std::size_t device_work_elems(std::size_t n, const tree_shape& shape = halving());

namespace detail {
std::uint64_t tree_work_elems(std::uint64_t n, const tree_shape& shape, std::size_t acc_size);
template <class T, class Acc>
void launch_tree(const T* d_xs, std::size_t n, Acc* d_result, Acc* d_work, std::size_t work_elems, reduce_op op,
                 const tree_shape& shape, cudaStream_t stream, const bool* d_mask);
template <class T, class Acc>
Acc tree_reduce_sync(const T* d_xs, std::size_t n, reduce_op op, const tree_shape& shape, cudaStream_t stream,
                     const bool* d_mask);
}  // namespace detail

template <class Acc>
std::size_t device_work_elems(std::size_t n, const tree_shape& shape) {
    return static_cast<std::size_t>(detail::tree_work_elems(n, shape, sizeof(Acc)));
}

/// Enqueues the tree reduction of device data on `stream`; the result is written to *d_result (device memory).
///
///   d_xs        n elements of T in device memory (may be null when n = 0)
///   d_result    one Acc in device memory; receives the root (the op's identity for n = 0 or an all-false mask:
///               +0.0 / 0 for sum and any, 1 for product and all, +Inf / largest for min, -Inf / lowest for max)
///   d_work      work_elems elements of Acc in device memory, work_elems >= device_work_elems<Acc>(n, shape); the
///               caller owns it and may reuse it once the stream has passed this reduction
///   op, shape   sum | product | min | max | any | all over halving(256) (default) or fold(16)
///   d_mask      fold(16) only: n flags in device memory (element i takes part iff d_mask[i]), or null
/// Same bits as exactref::tree_reduce<Acc>(xs, op, shape, {mask}) on the host (file comment for NaN results); float
/// sums and products are made with __dadd_rn / __fadd_rn / __dmul_rn / __fmul_rn (never contracted into an FMA),
/// float16 and bfloat16 steps exactly in binary64 and rounded once with integer operations. Error bound of a sum:
/// γ_h·Σ|x_i| with h = tree_height(shape, n) (Higham §4.2), as on the host. Integer ops wrap modulo 2^bits.
/// Throws std::invalid_argument for another shape, a mask with halving, a small or null work buffer, a null result
/// or data pointer; cuda_error when a launch fails. Asynchronous: errors of the kernels themselves surface at the
/// next synchronizing call.
///
///   // d_xs: 1000 doubles 0.1 on the device
///   std::size_t w = exactref::cuda::device_work_elems<double>(1000);
///   exactref::cuda::device_tree_reduce(d_xs, 1000, d_sum, d_work, w);            // d_sum <-- halving(256) sum
///   exactref::cuda::device_tree_reduce<float>(d_halfs, n, d_f, d_work_f, wf);    // float16 data, float accumulation
template <class Acc = same_as_input, class T>
    requires device_tree_accumulation<T, accumulation_t<Acc, T>>
void device_tree_reduce(const T* d_xs, std::size_t n, accumulation_t<Acc, T>* d_result,
                        accumulation_t<Acc, T>* d_work, std::size_t work_elems, reduce_op op = reduce_op::sum,
                        const tree_shape& shape = halving(), cudaStream_t stream = nullptr,
                        const bool* d_mask = nullptr) {
    detail::launch_tree<T, accumulation_t<Acc, T>>(d_xs, n, d_result, d_work, work_elems, op, shape, stream, d_mask);
}

/// device_tree_reduce with its own work and result buffers (cudaMallocAsync on `stream`), waiting for the stream and
/// returning the result to the host. Same bits, errors as device_tree_reduce; cuda_error also for a failed
/// allocation or copy.
template <class Acc = same_as_input, class T>
    requires device_tree_accumulation<T, accumulation_t<Acc, T>>
accumulation_t<Acc, T> device_tree_reduce_sync(const T* d_xs, std::size_t n, reduce_op op = reduce_op::sum,
                                               const tree_shape& shape = halving(), cudaStream_t stream = nullptr,
                                               const bool* d_mask = nullptr) {
    return detail::tree_reduce_sync<T, accumulation_t<Acc, T>>(d_xs, n, op, shape, stream, d_mask);
}

// ---- exact device sum and dot ---------------------------------------------------------------------------------------

/// Bytes of device memory an exact sum or dot product needs for its state (independent of n; a few kilobytes).
std::size_t device_exact_work_bytes() noexcept;

/// Enqueues the exact sum of n device elements of T (double, float, float16, bfloat16) on `stream`, into the state
/// at d_work (device memory, at least device_exact_work_bytes() bytes, 8-byte aligned, owned by the caller). The
/// state is initialised by this call; read it with device_exact_reference.
/// Exact for every input (no rounding anywhere; the superaccumulator's range covers every finite value and product),
/// deterministic for every launch shape, independent of the device's floating-point settings (integer operations on
/// the encodings). Cost: one read of the data; see docs/performance.md.
/// Throws std::invalid_argument for a null pointer (d_xs may be null when n = 0), a small or misaligned work buffer;
/// cuda_error when a launch fails.
template <class T>
void device_exact_sum(const T* d_xs, std::size_t n, void* d_work, std::size_t work_bytes, cudaStream_t stream = nullptr);

/// Enqueues the exact dot product Σ x_i·y_i of two device vectors of n elements of T (every product exact at its
/// position, as exactref::dot). Same state, guarantees and errors as device_exact_sum.
template <class T>
void device_exact_dot(const T* d_x, const T* d_y, std::size_t n, void* d_work, std::size_t work_bytes,
                      cudaStream_t stream = nullptr);

/// Waits for `stream`, copies the state at d_work back and returns the reference: the same as exactref::sum(xs) (or
/// exactref::dot(x, y)) on the host for the same data — s, S, n, term format, special values, signed-zero flags, and
/// for dot products min_product_exponent and product_may_underflow.
/// Throws cuda_error for a failed copy (or an earlier kernel error), std::invalid_argument for a state no exact
/// kernel wrote.
reference device_exact_reference(const void* d_work, cudaStream_t stream = nullptr);

/// The exact reference of n device elements (allocates the state, enqueues, waits): device_exact_sum followed by
/// device_exact_reference.
///   exactref::cuda::device_sum(d_xs, n).nearest<float>();   // RN of the exact sum, as exactref::sum(xs) gives
template <class T>
reference device_sum(const T* d_xs, std::size_t n, cudaStream_t stream = nullptr);

/// The exact reference of the dot product of two device vectors (device_exact_dot + device_exact_reference).
template <class T>
reference device_dot(const T* d_x, const T* d_y, std::size_t n, cudaStream_t stream = nullptr);

}  // namespace exactref::cuda
