// examples/cuda/split_k_kernels.cuh — the split-K GEMM kernels of the examples: C = A·B (row-major, M x K times
// K x N) with K cut into s chunks of k = ceil(K / s); the partial dot product of each chunk is a left fold of fused
// multiply-adds in float32, and the s partials of an element are combined into C (zero on entry) ...
//   split_k_atomic       ... with atomicAdd: any order, a different order on every run (honest)
//   split_k_lost_update  ... with a read-modify-write that is not atomic: every chunk reads C before any writes it
//                        (a barrier between the read and the write makes the race deterministic), so all but one
//                        chunk's partial sum are lost (planted bug)
// Elements are float (float32 inputs) or exactref::float16 (float16 inputs, exact products in float32).
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "exactref/format.h"

namespace example {

__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(exactref::float16 v) { return __half2float(__ushort_as_half(v.bits)); }

/// The partial dot product of chunk z for element (i, j): fmaf from 0.0, l = z·chunk .. min(K, (z+1)·chunk) - 1.
template <class T>
__device__ float chunk_dot(const T* a, const T* b, int n, int k, int chunk, int i, int j, int z) {
    const int begin = z * chunk;
    const int end = begin + chunk < k ? begin + chunk : k;
    float acc = 0.0f;
    for (int l = begin; l < end; ++l) acc = __fmaf_rn(to_float(a[i * k + l]), to_float(b[l * n + j]), acc);
    return acc;
}

/// grid (ceil(N/16), ceil(M/16), s), block (16, 16): one thread per element and chunk.
template <class T>
__global__ void split_k_atomic(const T* a, const T* b, float* c, int m, int n, int k, int chunk) {
    const int j = blockIdx.x * 16 + threadIdx.x, i = blockIdx.y * 16 + threadIdx.y;
    if (i >= m || j >= n) return;
    atomicAdd(&c[i * n + j], chunk_dot(a, b, n, k, chunk, i, j, blockIdx.z));
}

/// grid (ceil(N/8), ceil(M/8)), block (8, 8, s): the s chunks of an element in one block, racing on C.
template <class T>
__global__ void split_k_lost_update(const T* a, const T* b, float* c, int m, int n, int k, int chunk) {
    const int j = blockIdx.x * 8 + threadIdx.x, i = blockIdx.y * 8 + threadIdx.y;
    const bool inside = i < m && j < n;
    const float partial = inside ? chunk_dot(a, b, n, k, chunk, i, j, threadIdx.z) : 0.0f;
    const float old = inside ? c[i * n + j] : 0.0f;  // every chunk reads C ...
    __syncthreads();
    if (inside) c[i * n + j] = old + partial;  // ... before any writes it: the other chunks' updates are lost
}

}  // namespace example
