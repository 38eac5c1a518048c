// The cost of a structured reference (standard.h "levels:", structured.cpp) beside the plain exact reference it
// extends, and the cost of covers() with a structured standard beside a flat one.
//
//   plain/<T>/<n>             exactref::sum(span): s, S and the largest term
//   structured/<T>/<kernel>   exactref::sum(span, {structure}): the plain reference and the data bound (one more pass)
//   bound_pass/<T>/<kernel>   structured_bound(span, structure) alone
//   covers/<flat|structured>  covers(result, ref, model) on a reference of 10^6 float32 terms
// Kernels: 0 = levels:fold/4,any (4 threads, static chunks), 1 = levels:fold:8,tree:256,any (blocks of
// 2048), 2 = levels:fold%65536,tree:256,any (a grid-stride atomicAdd kernel), 3 = levels:any.
// Inputs: fixed-seed N(0, 1) values (mt19937_64, seed 20261201 + n). The ratio docs/performance.md quotes is
// structured / plain at the same n and dtype, from one run.
#include <benchmark/benchmark.h>

#include <cstddef>
#include <random>
#include <vector>

#include "exactref/covers.h"
#include "exactref/reference.h"
#include "exactref/standard.h"

namespace {

const char* const kernels[] = {"levels:fold/4,any", "levels:fold:8,tree:256,any", "levels:fold%65536,tree:256,any",
                               "levels:any"};

template <class T>
const std::vector<T>& gauss(std::size_t n) {
    static std::vector<T> xs;
    if (xs.size() != n) {
        std::mt19937_64 rng(20261201 + n);
        std::normal_distribution<double> g;
        xs.resize(n);
        for (T& x : xs) x = static_cast<T>(g(rng));
    }
    return xs;
}

template <class T>
void plain(benchmark::State& state) {
    const std::vector<T>& xs = gauss<T>(static_cast<std::size_t>(state.range(0)));
    for (auto _ : state) {
        const T* p = xs.data();
        benchmark::DoNotOptimize(p);
        exactref::reference r = exactref::sum(std::span<const T>(p, xs.size()));
        benchmark::DoNotOptimize(r);
    }
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(xs.size()));
}

template <class T>
void structured(benchmark::State& state) {
    const std::vector<T>& xs = gauss<T>(static_cast<std::size_t>(state.range(0)));
    const std::vector<exactref::standard> model{exactref::parse_standard(kernels[state.range(1)])};
    state.SetLabel(kernels[state.range(1)]);
    for (auto _ : state) {
        const T* p = xs.data();
        benchmark::DoNotOptimize(p);
        exactref::reference r = exactref::sum(std::span<const T>(p, xs.size()), model);
        benchmark::DoNotOptimize(r);
    }
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(xs.size()));
}

template <class T>
void bound_pass(benchmark::State& state) {
    const std::vector<T>& xs = gauss<T>(static_cast<std::size_t>(state.range(0)));
    const exactref::standard model = exactref::parse_standard(kernels[state.range(1)]);
    state.SetLabel(kernels[state.range(1)]);
    for (auto _ : state) {
        const T* p = xs.data();
        benchmark::DoNotOptimize(p);
        exactref::structure_bound b = exactref::structured_bound(std::span<const T>(p, xs.size()), model);
        benchmark::DoNotOptimize(b);
    }
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(xs.size()));
}

void covers_cost(benchmark::State& state) {
    const std::vector<float>& xs = gauss<float>(1000000);
    const exactref::standard s = exactref::parse_standard("levels:fold:8,tree:256,any");
    const exactref::reference ref = exactref::sum(std::span<const float>(xs), {s});
    const exactref::standard model = state.range(0) == 0 ? exactref::split_k(489) : s;
    state.SetLabel(state.range(0) == 0 ? "flat split_k:489" : "levels:fold:8,tree:256,any");
    const float r = ref.nearest<float>();
    for (auto _ : state) {
        exactref::verdict v = exactref::covers(r, ref, model);
        benchmark::DoNotOptimize(v);
    }
}

void sizes(benchmark::internal::Benchmark* b) {
    for (std::int64_t n : {100000, 10000000})
        for (std::int64_t k = 0; k < 4; ++k) b->Args({n, k});
}

}  // namespace

BENCHMARK(plain<float>)->Arg(100000)->Arg(10000000)->Unit(benchmark::kMillisecond);
BENCHMARK(plain<double>)->Arg(100000)->Arg(10000000)->Unit(benchmark::kMillisecond);
BENCHMARK(structured<float>)->Apply(sizes)->Unit(benchmark::kMillisecond);
BENCHMARK(structured<double>)->Apply(sizes)->Unit(benchmark::kMillisecond);
BENCHMARK(bound_pass<float>)->Apply(sizes)->Unit(benchmark::kMillisecond);
BENCHMARK(covers_cost)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
