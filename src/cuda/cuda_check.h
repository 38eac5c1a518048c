// Turning CUDA runtime errors into exceptions that say what failed and what to check (host code of src/cuda/).
#pragma once

#include <cuda_runtime_api.h>

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

}  // namespace exactref::cuda::detail
