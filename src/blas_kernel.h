// OpenBLAS's kernel choice, and its repair where OpenBLAS 0.3.21 (Debian 12) does not know the CPU (src/blas_kernel.cpp).
//
// OpenBLAS's DYNAMIC_ARCH build picks its kernels from the CPU's family and model when the library loads. Before
// 0.3.25 an Intel model it did not know fell back "hard" to Prescott, its SSE3 kernels (OpenBLAS issue #4267, fixed
// by pull request #4268: the fallback now goes by the instruction sets, AVX-512 with BF16 -> Cooperlake, AVX-512 ->
// SkylakeX, AVX2 -> Haswell, AVX -> Sandybridge). Emerald Rapids (family 6, model 207) is such a model: its DGEMM
// ran at 15.6 GFLOP/s on Prescott's kernel and 66-72 on SkylakeX's and Cooperlake's (docs/performance.md, "The BLAS kernel"), and the
// exact GEMM's slice GEMMs are DGEMMs. The values never depend on the kernel (docs/algorithms/ozaki.md, Step S4).
#pragma once
#include <string>

namespace exactref::detail {

// What happened to OpenBLAS's kernel when this library loaded.
struct blas_kernel_state {
    std::string chosen;    // the kernel OpenBLAS chose itself, e.g. "Prescott"
    std::string repaired;  // the kernel the repair switched to (empty: none)
    std::string setting;   // EXACTREF_BLAS_KERNEL's text ("" when unset)
    bool setting_valid = true;
};

// The state after the load-time repair (repair_blas_kernel(false), run once by a static initializer).
const blas_kernel_state& blas_kernel();

// Throws std::invalid_argument, naming the variable, its value and the valid spellings, when EXACTREF_BLAS_KERNEL
// holds anything but "keep" or "auto" (or nothing). exact_matmul calls it before its slice GEMMs.
void check_blas_kernel_setting();

// The kernel the upstream fallback (OpenBLAS >= 0.3.25) takes on this CPU: "Cooperlake", "SkylakeX", "Haswell",
// "Sandybridge", or "" where the CPU (or the OS) runs none of their instruction sets.
std::string fallback_blas_kernel();

// Switches OpenBLAS from Prescott to fallback_blas_kernel() when OpenBLAS runs Prescott on a CPU with AVX or more,
// OPENBLAS_CORETYPE is unset (or `even_if_forced`: tests) and EXACTREF_BLAS_KERNEL is not "keep". Returns the kernel it
// switched to, or "" when it changed nothing. Must not run while another thread is inside OpenBLAS: it runs once
// when the library loads (before main, or at the Python module's import), and tests call it on one thread.
std::string repair_blas_kernel(bool even_if_forced);

}  // namespace exactref::detail
