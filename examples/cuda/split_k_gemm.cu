// examples/cuda/split_k_gemm.cu — a split-K GEMM whose chunk results are combined with atomicAdd, for float32 inputs
// and for float16 inputs with float32 accumulation, validated element by element by covers() against the exact
// product (exactref::matmul: one exact dot-product reference per element).
//
// The error model is split_k(s) (DESIGN §3: K terms in s chunks of k = ceil(K/s), each folded in one order, the
// chunk results combined in any order): |c - s| <= γ_{k+s-1}·Σ|a·b| (one more rounding for the product, which an FMA
// only saves). Different runs give different bits (atomics), every one of them covered; the exact() column shows
// how many elements happen to be correctly rounded.
//
// Exit 0 when every run is covered by split_k(s) and by any_order, 1 otherwise, 77 without a GPU.
#include <cuda_runtime.h>

#include <cstdint>
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

namespace {

template <class T>
bool run_case(const char* input, int m, int n, int k, int s, const example::options& opt, example::table& t) {
    std::mt19937_64 rng(opt.seed + sizeof(T));
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<T> a(static_cast<std::size_t>(m) * k), b(static_cast<std::size_t>(k) * n);
    for (auto& v : a) v = T(normal(rng));
    for (auto& v : b) v = T(normal(rng));
    const exactref::reference_array refs =
        exactref::matmul(exactref::row_major<T>(std::span<const T>(a), m, k), exactref::row_major<T>(std::span<const T>(b), k, n));
    const example::device_buffer<T> d_a(a), d_b(b);
    example::device_buffer<float> d_c(static_cast<std::size_t>(m) * n);
    const int chunk = (k + s - 1) / s;
    const exactref::standard model = exactref::split_k(static_cast<std::uint64_t>(s));
    bool ok = true;
    std::vector<float> first;
    for (int run = 0; run < opt.runs; ++run) {
        d_c.zero();
        example::split_k_atomic<T><<<dim3((n + 15) / 16, (m + 15) / 16, s), dim3(16, 16)>>>(d_a.data(), d_b.data(),
                                                                                          d_c.data(), m, n, k, chunk);
        example::check(cudaGetLastError(), "split_k_atomic launch");
        const std::vector<float> c = d_c.to_host();
        if (run == 0) first = c;
        std::size_t changed = 0;
        for (std::size_t e = 0; e < c.size(); ++e)
            changed += exactref::format_traits<float>::to_bits(c[e]) != exactref::format_traits<float>::to_bits(first[e]);
        const std::span<const float> cs(c);
        const exactref::array_verdict split = exactref::covers(cs, refs, model);
        const exactref::array_verdict any = exactref::covers(cs, refs, exactref::any_order());
        const exactref::array_verdict exact = exactref::covers(cs, refs, exactref::exact());
        ok = ok && split.covered && any.covered;
        t.add({input, std::to_string(run), std::to_string(c.size()), std::to_string(changed),
               std::to_string(split.violations), example::format("%.3g", split.worst.ratio),
               std::to_string(any.violations), std::to_string(exact.size - exact.violations)});
    }
    return ok;
}

}  // namespace

int main(int argc, char** argv) try {
    const example::options opt = example::parse(argc, argv, "split-K GEMM with atomicAdd judged by covers()");
    example::require_device("cuda_split_k_gemm");
    const int m = opt.quick ? 32 : 96, n = opt.quick ? 32 : 96, k = opt.quick ? 1024 : 8192, s = 8;
    std::cout << "C = A·B, " << m << " x " << k << " times " << k << " x " << n << ", K split into s = " << s
              << " chunks of " << (k + s - 1) / s << " (fmaf fold per chunk, atomicAdd across chunks), seed "
              << opt.seed << "\nstandard " << exactref::split_k(s).name()
              << ": |c - s| <= γ_{k+s-1}·Σ|a·b| per element, decided exactly\n\n";
    example::table t({"inputs", "run", "elements", "bits changed vs run 0", "split_k violations", "worst error/bound",
                      "any_order violations", "exact() elements"});
    bool ok = run_case<float>("float32", m, n, k, s, opt, t);
    ok = run_case<exactref::float16>("float16 -> float32", m, n, k, s, opt, t) && ok;
    t.print(std::cout);
    std::cout << "\n"
              << (ok ? "verdicts as expected: every element of every run lies within split_k(" + std::to_string(s) + ")\n"
                     : std::string("UNEXPECTED: some element is outside the bound its error model promises\n"));
    return ok ? example::exit_ok : example::exit_unexpected;
} catch (const std::exception& e) {
    std::cerr << "cuda_split_k_gemm: " << e.what() << "\n";
    return example::exit_unexpected;
}
