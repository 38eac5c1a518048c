// bench_gemm — the exact GEMM reference against the binary64 GEMM it checks, on the same threads (issue 12 targets at
// 1024^3, one thread, vs OpenBLAS's DGEMM: float32 inputs <= 1.0x, float64 <= 3x, float16/bfloat16 <= 0.5x; 2 threads
// >= 1.7x one; measured ratios in docs/performance.md).
//
// Square N x N x N products, N = 256, 512, 1024, inputs N(0, 1) rounded to T (mt19937_64, fixed seeds), 1 and 2
// threads, side by side:
//   openblas64/<T>/N/threads  C = A·B with cblas_dgemm (OpenBLAS, the inputs converted to binary64): the baseline, on
//                            openblas_set_num_threads(threads) threads.
//   eigen64/<T>/N/threads    the same with Eigen::MatrixXd (the library's own Eigen build, for comparison).
//   exact/<T>/N/threads      exactref::exact_matmul with the sliced (Ozaki) method: exact s and T of every element in
//                            compact form. Counters: "gemms" = GEMMs for s and T together (T: its slice GEMMs, or
//                            1 binary64 GEMM of |A|·|B| for narrow terms, Step S6), "slices" =
//                            slices of A x 100 + slices of B, "memory" = plan().peak_bytes / the operands' bytes,
//                            "rss" = the resident memory one more build (untimed, after the loop) added at its peak
//                            over the memory before it, / the operands' bytes (Linux: /proc/self/clear_refs resets
//                            VmHWM; malloc_trim first returns the freed memory the allocator kept; 0 elsewhere).
//   exact_max3/float64/N/t   the same with at most 3 slices per side (is the planner's choice the faster one?).
//   exact_binary64/<T>/N/t, exact_int8_vnni/<T>/N/t  the same on one forced engine (matmul_options::engine; the
//                            exact/ rows are the planner's choice, counter "engine"). int8-vnni needs AVX-512 VNNI:
//                            elsewhere the rows end in an error. The portable int8-plain engine is not timed here
//                            (tens of seconds at 1024^3; tests/test_gemm.cpp checks its values).
//   array/<T>/N/threads      exactref::matmul: the same, then one reference (two superaccumulators, ~2.3 KB) per
//                            element, N <= 512 (1024^2 references need 2.4 GB).
//   per_element/<T>/N/threads  the per-element path (one exact dot per element) to a reference_array, N <= 512.
// Both sides are compiled with the same flags (whatever CMAKE_CXX_FLAGS says). "CPU" is the process CPU time (all
// threads): on a shared machine compare that, wall time only on an idle one.
#include <benchmark/benchmark.h>

#include <Eigen/Core>
#include <cblas.h>

#include <malloc.h>  // malloc_trim

#include <algorithm>
#include <cstddef>
#include <cstring>  // std::strlen
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "exactref/gemm.h"

namespace {

template <class T>
const std::vector<T>& input(std::size_t n, int which) {
    static std::map<std::pair<std::size_t, int>, std::vector<T>> cache;
    auto [it, fresh] = cache.try_emplace({n, which});
    if (fresh) {
        std::mt19937_64 gen(20240604u + n + 104729u * static_cast<unsigned>(which));
        std::normal_distribution<double> gauss(0.0, 1.0);
        it->second.reserve(n * n);
        for (std::size_t i = 0; i < n * n; ++i) it->second.push_back(static_cast<T>(gauss(gen)));
    }
    return it->second;
}

// C = A·B in binary64 with Eigen on `threads` threads (Eigen parallelises its GEMM with OpenMP).
void eigen_gemm(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b, Eigen::MatrixXd& c, unsigned threads) {
    Eigen::setNbThreads(static_cast<int>(threads));
    c.noalias() = a * b;
}

template <class T>
void bm_eigen64(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    const auto threads = static_cast<unsigned>(state.range(1));
    const auto& av = input<T>(n, 0);
    const auto& bv = input<T>(n, 1);
    Eigen::MatrixXd a(n, n), b(n, n), c(n, n);
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j) {
            a(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) = static_cast<double>(av[i * n + j]);
            b(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) = static_cast<double>(bv[i * n + j]);
        }
    for (auto _ : state) {
        eigen_gemm(a, b, c, threads);
        benchmark::DoNotOptimize(c.data());
        benchmark::ClobberMemory();
    }
    Eigen::setNbThreads(0);  // back to OpenMP's default, so that the library's own thread count applies later
    state.counters["flops"] = benchmark::Counter(2.0 * static_cast<double>(n * n * n),
                                                 benchmark::Counter::kIsIterationInvariantRate);
}

template <class T>
double to_double(T x) {
    if constexpr (std::is_floating_point_v<T>) return static_cast<double>(x);
    else return static_cast<double>(static_cast<float>(x));  // float16, bfloat16: exact through binary32
}

template <class T>
void bm_openblas64(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    const auto& av = input<T>(n, 0);
    const auto& bv = input<T>(n, 1);
    std::vector<double> a(n * n), b(n * n), c(n * n);
    for (std::size_t i = 0; i < n * n; ++i) {  // row-major data, so C = A·B row-major is CblasRowMajor
        a[i] = to_double(av[i]);
        b[i] = to_double(bv[i]);
    }
    const int saved = openblas_get_num_threads();
    openblas_set_num_threads(static_cast<int>(state.range(1)));
    const auto ni = static_cast<blasint>(n);
    for (auto _ : state) {
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, ni, ni, ni, 1.0, a.data(), ni, b.data(), ni, 0.0,
                    c.data(), ni);
        benchmark::DoNotOptimize(c.data());
        benchmark::ClobberMemory();
    }
    openblas_set_num_threads(saved);
    state.counters["flops"] = benchmark::Counter(2.0 * static_cast<double>(n * n * n),
                                                 benchmark::Counter::kIsIterationInvariantRate);
}

// The process's resident memory and its peak since the last reset_peak_kib() (Linux /proc/self/status), in KiB; -1
// where they cannot be read.
long status_kib(const char* field) {
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind(field, 0) == 0) return std::stol(line.substr(std::strlen(field)));
    return -1;
}
bool reset_peak_kib() {
    std::ofstream out("/proc/self/clear_refs");
    out << "5";  // resets VmHWM to VmRSS (Linux 4.0 and later)
    return static_cast<bool>(out.flush());
}

template <class T, int MaxSlices = 0, exactref::gemm_engine Engine = exactref::gemm_engine::automatic>
void bm_exact(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    const exactref::matmul_options options{exactref::matmul_method::sliced, static_cast<unsigned>(state.range(1)),
                                           MaxSlices, true, Engine};
    const auto a = exactref::row_major<T>(input<T>(n, 0), n, n);
    const auto b = exactref::row_major<T>(input<T>(n, 1), n, n);
    int gemms = 0, slices = 0, engine = 0;
    double memory = 0;
    for (auto _ : state) {
        exactref::product_reference p = exactref::exact_matmul(a, b, options);
        gemms = p.plan().slice_gemms + (p.plan().t_enclosed ? 1 : p.plan().slice_gemms);  // s, and T (Step S6: 1)
        slices = 100 * p.plan().slices_a + p.plan().slices_b;
        memory = static_cast<double>(p.plan().peak_bytes) / static_cast<double>(2 * n * n * sizeof(T));
        engine = static_cast<int>(p.plan().engine);
        benchmark::DoNotOptimize(p);
    }
    // One more build, untimed, for the resident memory it adds at its peak.
    malloc_trim(0);
    double rss = 0;
    if (const long before = status_kib("VmRSS:"); before >= 0 && reset_peak_kib()) {
        exactref::product_reference p = exactref::exact_matmul(a, b, options);
        benchmark::DoNotOptimize(p);
        const long peak = status_kib("VmHWM:");
        rss = static_cast<double>(peak - before) * 1024.0 / static_cast<double>(2 * n * n * sizeof(T));
    }
    state.counters["gemms"] = gemms;
    state.counters["slices"] = slices;
    state.counters["memory"] = memory;
    state.counters["rss"] = rss;
    state.counters["engine"] = engine;  // exactref::gemm_engine: 1 binary64, 2 int8-vnni, 3 int8-plain
}

template <class T>
void bm_array(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    const exactref::matmul_options options{exactref::matmul_method::automatic, static_cast<unsigned>(state.range(1)), 0};
    const auto a = exactref::row_major<T>(input<T>(n, 0), n, n);
    const auto b = exactref::row_major<T>(input<T>(n, 1), n, n);
    for (auto _ : state) {
        exactref::reference_array r = exactref::matmul(a, b, options);
        benchmark::DoNotOptimize(r.elements.data());
    }
}

template <class T>
void bm_per_element(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    const exactref::matmul_options options{exactref::matmul_method::per_element,
                                           static_cast<unsigned>(state.range(1)), 0};
    const auto a = exactref::row_major<T>(input<T>(n, 0), n, n);
    const auto b = exactref::row_major<T>(input<T>(n, 1), n, n);
    for (auto _ : state) {
        exactref::reference_array r = exactref::matmul(a, b, options);
        benchmark::DoNotOptimize(r.elements.data());
    }
}

void all_sizes(benchmark::internal::Benchmark* b) {
    for (long threads : {1, 2})
        for (long n : {256, 512, 1024}) b->Args({n, threads});
    b->ArgNames({"N", "threads"})->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime();
}
void small_sizes(benchmark::internal::Benchmark* b) {
    for (long threads : {1, 2})
        for (long n : {256, 512}) b->Args({n, threads});
    b->ArgNames({"N", "threads"})->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime()->Iterations(1);
}

BENCHMARK(bm_openblas64<float>)->Name("openblas64/float32")->Apply(all_sizes);
BENCHMARK(bm_eigen64<float>)->Name("eigen64/float32")->Apply(all_sizes);
BENCHMARK(bm_exact<float>)->Name("exact/float32")->Apply(all_sizes);
BENCHMARK(bm_openblas64<double>)->Name("openblas64/float64")->Apply(all_sizes);
BENCHMARK(bm_eigen64<double>)->Name("eigen64/float64")->Apply(all_sizes);
BENCHMARK(bm_exact<double>)->Name("exact/float64")->Apply(all_sizes);
BENCHMARK(bm_exact<double, 3>)->Name("exact_max3/float64")->Apply(all_sizes);
BENCHMARK(bm_openblas64<exactref::float16>)->Name("openblas64/float16")->Apply(all_sizes);
BENCHMARK(bm_exact<exactref::float16>)->Name("exact/float16")->Apply(all_sizes);
BENCHMARK(bm_exact<exactref::bfloat16>)->Name("exact/bfloat16")->Apply(all_sizes);
BENCHMARK(bm_exact<float, 0, exactref::gemm_engine::binary64>)->Name("exact_binary64/float32")->Apply(all_sizes);
BENCHMARK(bm_exact<float, 0, exactref::gemm_engine::int8_vnni>)->Name("exact_int8_vnni/float32")->Apply(all_sizes);
BENCHMARK(bm_exact<double, 0, exactref::gemm_engine::binary64>)->Name("exact_binary64/float64")->Apply(all_sizes);
BENCHMARK(bm_exact<double, 0, exactref::gemm_engine::int8_vnni>)->Name("exact_int8_vnni/float64")->Apply(all_sizes);
BENCHMARK(bm_exact<exactref::float16, 0, exactref::gemm_engine::binary64>)->Name("exact_binary64/float16")->Apply(all_sizes);
BENCHMARK(bm_exact<exactref::float16, 0, exactref::gemm_engine::int8_vnni>)->Name("exact_int8_vnni/float16")->Apply(all_sizes);
BENCHMARK(bm_exact<exactref::bfloat16, 0, exactref::gemm_engine::binary64>)->Name("exact_binary64/bfloat16")->Apply(all_sizes);
BENCHMARK(bm_exact<exactref::bfloat16, 0, exactref::gemm_engine::int8_vnni>)->Name("exact_int8_vnni/bfloat16")->Apply(all_sizes);
BENCHMARK(bm_array<float>)->Name("array/float32")->Apply(small_sizes);
BENCHMARK(bm_array<double>)->Name("array/float64")->Apply(small_sizes);
BENCHMARK(bm_per_element<float>)->Name("per_element/float32")->Apply(small_sizes);
BENCHMARK(bm_per_element<double>)->Name("per_element/float64")->Apply(small_sizes);

}  // namespace

BENCHMARK_MAIN();
