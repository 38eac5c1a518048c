// Turning CUDA runtime errors into exceptions that say what failed and what to check (host code of src/cuda/).
#pragma once

#include <cuda_runtime_api.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <string>

#include "exactref/cuda.h"

namespace exactref::cuda::detail {

/// Throws cuda_error naming `call` and the CUDA error when `status` is not cudaSuccess. `hint` says what to check.
inline void check_cuda(cudaError_t status, const char* call, const char* hint) {
    if (status == cudaSuccess) return;
    throw cuda_error(std::string("exactref::cuda: ") + call + " failed: " + cudaGetErrorName(status) + " (" +
                         cudaGetErrorString(status) + "); " + hint,
                     status);
}

/// After a kernel launch: a launch error (bad configuration, no device, no kernel image for this GPU) or an error
/// left by earlier asynchronous work.
inline void check_launch(const char* kernel) {
    check_cuda(cudaGetLastError(), kernel,
               "check that a CUDA device is present, that the build's CUDA architectures (CMAKE_CUDA_ARCHITECTURES) "
               "include this GPU, and that the pointers passed are device memory");
}

/// A per-device answer that never changes (a device attribute, a kernel's occupancy), asked once: `ask(device)` runs
/// on the first call for the current device and its answer is kept in `cache` (devices 0..63; a racing first call
/// just asks twice; other devices are asked every time). Answers of 0 are not kept.
template <class Ask>
unsigned per_device_once(std::array<std::atomic<unsigned>, 64>& cache, Ask ask) {
    int device = 0;
    check_cuda(cudaGetDevice(&device), "cudaGetDevice", "check that a CUDA device is present");
    const bool cached = device >= 0 && device < static_cast<int>(cache.size());
    if (cached) {
        const unsigned known = cache[static_cast<std::size_t>(device)].load(std::memory_order_relaxed);
        if (known != 0) return known;
    }
    const unsigned result = ask(device);
    if (cached) cache[static_cast<std::size_t>(device)].store(result, std::memory_order_relaxed);
    return result;
}

}  // namespace exactref::cuda::detail
