// examples/cuda/lost_update.cu — a planted bug that covers() must catch: the split-K GEMM of split_k_gemm.cu, with
// the chunk results combined by a read-modify-write that is not atomic (split_k_lost_update: every chunk reads C,
// then writes C + its partial, so only the last writer's partial survives). The honest atomicAdd kernel runs beside
// it on the same data. The lost partials are whole chunk sums, far above any rounding error, so split_k(s) and even
// any_order must reject the planted results.
//
// Exit 0 when the honest kernel is covered and the planted one is rejected, 1 otherwise, 77 without a GPU.
#include <cuda_runtime.h>

#include <iostream>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "example_support.h"
#include "exactref/covers.h"
#include "exactref/gemm.h"
#include "exactref/standard.h"
#include "split_k_kernels.cuh"

int main(int argc, char** argv) try {
    const example::options opt = example::parse(argc, argv, "a planted lost-update split-K GEMM rejected by covers()");
    example::require_device("cuda_lost_update");
    const int m = opt.quick ? 32 : 64, n = opt.quick ? 32 : 64, k = opt.quick ? 1024 : 4096, s = 8;
    const int chunk = (k + s - 1) / s;
    std::mt19937_64 rng(opt.seed);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> a(static_cast<std::size_t>(m) * k), b(static_cast<std::size_t>(k) * n);
    for (auto& v : a) v = normal(rng);
    for (auto& v : b) v = normal(rng);
    const exactref::reference_array refs = exactref::matmul(exactref::row_major<float>(std::span<const float>(a), m, k),
                                                            exactref::row_major<float>(std::span<const float>(b), k, n));
    const example::device_buffer<float> d_a(a), d_b(b);
    example::device_buffer<float> d_c(static_cast<std::size_t>(m) * n);
    const exactref::standard model = exactref::split_k(s);
    std::cout << "C = A·B (float32), " << m << " x " << k << " times " << k << " x " << n << ", s = " << s
              << " chunks; the planted kernel keeps one chunk's partial per element and loses " << s - 1 << "\n\n";

    example::table t({"kernel", "run", "elements", "split_k violations", "any_order violations", "worst error/bound",
                      "verdict"});
    bool honest_ok = true, planted_caught = true;
    for (int run = 0; run < opt.runs; ++run)
        for (int planted = 0; planted < 2; ++planted) {
            d_c.zero();
            if (planted)
                example::split_k_lost_update<float><<<dim3((n + 7) / 8, (m + 7) / 8), dim3(8, 8, s)>>>(
                    d_a.data(), d_b.data(), d_c.data(), m, n, k, chunk);
            else
                example::split_k_atomic<float><<<dim3((n + 15) / 16, (m + 15) / 16, s), dim3(16, 16)>>>(
                    d_a.data(), d_b.data(), d_c.data(), m, n, k, chunk);
            example::check(cudaGetLastError(), "kernel launch");
            const std::vector<float> c = d_c.to_host();
            const std::span<const float> cs(c);
            const exactref::array_verdict split = exactref::covers(cs, refs, model);
            const exactref::array_verdict any = exactref::covers(cs, refs, exactref::any_order());
            if (planted) planted_caught = planted_caught && !split.covered && !any.covered;
            else honest_ok = honest_ok && split.covered && any.covered;
            t.add({planted ? "lost update (planted)" : "atomicAdd (honest)", std::to_string(run), std::to_string(c.size()),
                   std::to_string(split.violations), std::to_string(any.violations),
                   example::format("%.3g", split.worst.ratio), split.covered ? "covered" : "REJECTED"});
            if (planted && run == 0 && !split.covered)
                std::cout << "worst planted element:\n" << split.worst.message() << "\n\n";
        }
    t.print(std::cout);
    const bool ok = honest_ok && planted_caught;
    std::cout << "\n"
              << (ok ? "verdicts as expected: the honest kernel is covered, the lost updates are rejected\n"
                     : "UNEXPECTED: the honest kernel was rejected or the planted lost update was not caught\n");
    return ok ? example::exit_ok : example::exit_unexpected;
} catch (const std::exception& e) {
    std::cerr << "cuda_lost_update: " << e.what() << "\n";
    return example::exit_unexpected;
}
