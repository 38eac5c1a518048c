// bench_dot — the exact dot product against the plain loop it checks (issue 4, "Performance": exact dot <= 2x a plain
// ordered dot loop at n = 10^7; measured ratios in docs/performance.md).
//
// One thread, n = 10^3, 10^5, 10^7, side by side:
//   ordered/<T>   s += x[i]·y[i] left to right in T (binary32 arithmetic for float16/bfloat16): the loop a user writes.
//   exact/<T>     exactref::dot(x, y): exact s and T = Σ|x_i·y_i|, the underflow fields (everything covers() needs).
//   exact_nearest/<T>  the same, then rounded to T (what a "correct answer" costs).
//   threads/<T>   exactref::dot(x, y, {threads}) at 10^7 on 1, 2, 4 threads (wall time; chunks merged exactly).
// Inputs: fixed-seed N(0, 1) values rounded to T (mt19937_64, seed 20240603 + n).
// The baseline is noinline, built without -ffast-math and with the same target_clones as the library's kernels, and its
// result and input pointer go through benchmark::DoNotOptimize, so nothing is hoisted out of the timing loop.
#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <random>
#include <span>
#include <vector>

#include "bench_target_clones.h"
#include "exactref/dot.h"
#include "exactref/format.h"

namespace {

using exactref::bfloat16;
using exactref::float16;

template <class T>
T from_double(double v) {
    if constexpr (std::is_same_v<T, double>) return v;
    else if constexpr (std::is_same_v<T, float>) return static_cast<float>(v);
    else return T(static_cast<float>(v));
}

template <class T>
const std::vector<T>& input(std::size_t n, int which) {
    static std::map<std::pair<std::size_t, int>, std::vector<T>> cache;
    auto [it, fresh] = cache.try_emplace({n, which});
    if (fresh) {
        std::mt19937_64 gen(20240603u + n + 7919u * static_cast<unsigned>(which));
        std::normal_distribution<double> gauss(0.0, 1.0);
        it->second.reserve(n);
        for (std::size_t i = 0; i < n; ++i) it->second.push_back(from_double<T>(gauss(gen)));
    }
    return it->second;
}

BENCH_TARGET_CLONES double ordered_f64(const double* x, const double* y, std::size_t n) {
    double s = 0;
    for (std::size_t i = 0; i < n; ++i) s += x[i] * y[i];
    return s;
}
BENCH_TARGET_CLONES float ordered_f32(const float* x, const float* y, std::size_t n) {
    float s = 0;
    for (std::size_t i = 0; i < n; ++i) s += x[i] * y[i];
    return s;
}
template <class H>
__attribute__((noinline)) float ordered_half(const H* x, const H* y, std::size_t n) {
    float s = 0;
    for (std::size_t i = 0; i < n; ++i) s += static_cast<float>(x[i]) * static_cast<float>(y[i]);
    return s;
}

template <class T>
void bm_ordered(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    const T* x = input<T>(n, 0).data();
    const T* y = input<T>(n, 1).data();
    for (auto _ : state) {
        benchmark::DoNotOptimize(x);
        benchmark::DoNotOptimize(y);
        if constexpr (std::is_same_v<T, double>) benchmark::DoNotOptimize(ordered_f64(x, y, n));
        else if constexpr (std::is_same_v<T, float>) benchmark::DoNotOptimize(ordered_f32(x, y, n));
        else benchmark::DoNotOptimize(ordered_half(x, y, n));
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * n));
}

template <class T, bool Round>
void bm_exact(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    const std::span<const T> x(input<T>(n, 0)), y(input<T>(n, 1));
    for (auto _ : state) {
        exactref::reference r = exactref::dot(x, y);
        if constexpr (Round) benchmark::DoNotOptimize(r.nearest<T>());
        benchmark::DoNotOptimize(r);
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * n));
}

// exactref::dot(x, y, {threads}) at 10^7 on 1, 2, 4 threads: wall time (the other threads' work is not the caller's CPU
// time). Same bits for every count (tests/test_threads.cpp).
template <class T>
void bm_threads(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    const exactref::dot_options options{static_cast<unsigned>(state.range(1))};
    const std::span<const T> x(input<T>(n, 0)), y(input<T>(n, 1));
    for (auto _ : state) {
        exactref::reference r = exactref::dot(x, y, options);
        benchmark::DoNotOptimize(r);
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * n));
}
#define DOT_THREADS ->ArgsProduct({{10000000}, {1, 2, 4}})->UseRealTime()->Unit(benchmark::kMillisecond)
BENCHMARK(bm_threads<double>)->Name("threads/float64") DOT_THREADS;
BENCHMARK(bm_threads<float>)->Name("threads/float32") DOT_THREADS;

#define DOT_SIZES ->Arg(1000)->Arg(100000)->Arg(10000000)->Unit(benchmark::kMicrosecond)
BENCHMARK(bm_ordered<double>)->Name("ordered/float64") DOT_SIZES;
BENCHMARK(bm_exact<double, false>)->Name("exact/float64") DOT_SIZES;
BENCHMARK(bm_exact<double, true>)->Name("exact_nearest/float64") DOT_SIZES;
BENCHMARK(bm_ordered<float>)->Name("ordered/float32") DOT_SIZES;
BENCHMARK(bm_exact<float, false>)->Name("exact/float32") DOT_SIZES;
BENCHMARK(bm_exact<float, true>)->Name("exact_nearest/float32") DOT_SIZES;
BENCHMARK(bm_ordered<float16>)->Name("ordered/float16") DOT_SIZES;
BENCHMARK(bm_exact<float16, false>)->Name("exact/float16") DOT_SIZES;
BENCHMARK(bm_ordered<bfloat16>)->Name("ordered/bfloat16") DOT_SIZES;
BENCHMARK(bm_exact<bfloat16, false>)->Name("exact/bfloat16") DOT_SIZES;

}  // namespace

BENCHMARK_MAIN();
