// bench_tree — the deterministic trees against the OpenMP reduction they replace (issue 3, "Performance"; the measured
// ratios go to docs/performance.md).
//
// n = 10^7, float64 and float32, 1 and 2 threads, side by side in one run:
//   omp_simd/<T>/threads:k     #pragma omp parallel for simd reduction(+:s): fast, and its bits depend on the thread
//                              count and the vector width (the baseline, target: trees >= 0.9x its throughput).
//   halving256/<T>/threads:k   exactref::tree_sum(xs, halving()): the canonical tree, same bits for every k.
//   fold16/<T>/threads:k       exactref::tree_sum(xs, fold()).
// Throughput is reported as bytes_per_second (and items_per_second) of the input read once per iteration.
//
// Honesty of the baseline: this file and the library are built with the same flags (Release, no -march, no
// -ffast-math); the baseline is noinline, its input pointer is laundered through DoNotOptimize and its result kept,
// so nothing is hoisted out of the timing loop. Wall-clock time (UseRealTime) since the work is multi-threaded.
// Inputs: fixed-seed uniform [0, 1) values (mt19937_64, seed 20240603).
#include <benchmark/benchmark.h>
#include <omp.h>

#include <cstddef>
#include <random>
#include <span>
#include <vector>

#include "exactref/tree.h"

namespace {

constexpr std::size_t n = 10000000;

template <class T>
const std::vector<T>& input() {
    static const std::vector<T> xs = [] {
        std::vector<T> v(n);
        std::mt19937_64 rng(20240603);
        std::uniform_real_distribution<double> u(0.0, 1.0);
        for (auto& x : v) x = static_cast<T>(u(rng));
        return v;
    }();
    return xs;
}

template <class T>
__attribute__((noinline)) T omp_simd_sum(const T* x, std::size_t count, int threads) {
    T s = 0;
#pragma omp parallel for simd reduction(+ : s) num_threads(threads) schedule(static)
    for (std::size_t i = 0; i < count; ++i) s += x[i];
    return s;
}

template <class T>
void finish(benchmark::State& state) {
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(n));
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(n * sizeof(T)));
}

template <class T>
void omp_simd(benchmark::State& state) {
    const int threads = static_cast<int>(state.range(0));
    const T* x = input<T>().data();
    for (auto _ : state) {
        benchmark::DoNotOptimize(x);
        T s = omp_simd_sum(x, n, threads);
        benchmark::DoNotOptimize(s);
    }
    finish<T>(state);
}

template <class T>
void tree(benchmark::State& state, exactref::tree_shape shape) {
    const int threads = static_cast<int>(state.range(0));
    const int saved = omp_get_max_threads();
    omp_set_num_threads(threads);
    std::span<const T> xs(input<T>());
    for (auto _ : state) {
        const T* p = xs.data();
        benchmark::DoNotOptimize(p);
        T s = exactref::tree_sum(std::span<const T>(p, xs.size()), shape);
        benchmark::DoNotOptimize(s);
    }
    omp_set_num_threads(saved);
    finish<T>(state);
}

void args(benchmark::internal::Benchmark* b) { b->ArgName("threads")->Arg(1)->Arg(2)->UseRealTime()->MinTime(0.5); }

void halving256_float64(benchmark::State& state) { tree<double>(state, exactref::halving()); }
void fold16_float64(benchmark::State& state) { tree<double>(state, exactref::fold()); }
void halving256_float32(benchmark::State& state) { tree<float>(state, exactref::halving()); }
void fold16_float32(benchmark::State& state) { tree<float>(state, exactref::fold()); }

BENCHMARK(omp_simd<double>)->Name("omp_simd/float64")->Apply(args);
BENCHMARK(halving256_float64)->Name("halving256/float64")->Apply(args);
BENCHMARK(fold16_float64)->Name("fold16/float64")->Apply(args);
BENCHMARK(omp_simd<float>)->Name("omp_simd/float32")->Apply(args);
BENCHMARK(halving256_float32)->Name("halving256/float32")->Apply(args);
BENCHMARK(fold16_float32)->Name("fold16/float32")->Apply(args);

}  // namespace

BENCHMARK_MAIN();
