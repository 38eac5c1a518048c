// covers() over arrays, in elements judged per second (covers.h; the floating-point filter of covers.cpp with the
// exact decision behind it, docs/algorithms/covers-filter.md).
//
//   matmul/<T>/<standard>/<m>      covers(C, refs, model): C = A·B computed in T by a plain loop (m x m, K = 256),
//                                  refs = exactref::matmul(A, B) (one dot reference per element)
//   product/<T>/<standard>/<m>     covers(C, p, model): the same C against p = exactref::exact_matmul(A, B) itself
//                                  (the compact product: no reference per element, src/gemm_covers.cpp)
//   rows/<T>/<standard>/<m>        covers(r, refs, model): m row sums of 32 terms, references built with the
//                                  structure (exactref::sum(row, {levels:fold/4,any})), results 4 folded chunks of 8 added
//   runs/<T>/<standard>/<m>        covers(runs, ref, model): m results of one sum of 4096 terms (one reference)
// Standards: 0 = any_order, 1 = split_k:8, 2 = levels:fold/4,any (structured), 3 = directed:any_order.
// Inputs: fixed-seed N(0, 1) values (mt19937_64, seed 20261201 + m). items_per_second is elements judged per second;
// the verdict (counts, worst element, its message) is built in every iteration.
#include <benchmark/benchmark.h>

#include <cstddef>
#include <random>
#include <vector>

#include "exactref/covers.h"
#include "exactref/gemm.h"
#include "exactref/reference.h"
#include "exactref/standard.h"

namespace {

const char* const standards[] = {"any_order", "split_k:8", "levels:fold/4,any", "directed:any_order"};
constexpr std::size_t inner = 256;

template <class T>
std::vector<T> gauss(std::size_t n, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> g;
    std::vector<T> xs(n);
    for (T& x : xs) x = static_cast<T>(g(rng));
    return xs;
}

// A and B (m x inner, inner x m, N(0, 1)) and C = A·B by a plain loop in T.
template <class T>
struct product_case {
    std::vector<T> a, b, c;
    explicit product_case(std::size_t m) : a(gauss<T>(m * inner, 20261201 + m)), b(gauss<T>(inner * m, 20261202 + m)) {
        c.resize(m * m);
        for (std::size_t i = 0; i < m; ++i)
            for (std::size_t j = 0; j < m; ++j) {
                T acc = 0;
                for (std::size_t l = 0; l < inner; ++l) acc += a[i * inner + l] * b[l * m + j];
                c[i * m + j] = acc;
            }
    }
};

// covers(C, refs, model) of product_case<T>(m) against refs = make(A, B): a reference_array (matmul) or the compact
// product itself (product).
template <class T, class Make>
void time_product(benchmark::State& state, Make&& make) {
    const std::size_t m = static_cast<std::size_t>(state.range(0));
    const exactref::standard model = exactref::parse_standard(standards[state.range(1)]);
    state.SetLabel(standards[state.range(1)]);
    const product_case<T> in(m);
    const auto refs = make(exactref::row_major<T>(in.a, m, inner), exactref::row_major<T>(in.b, inner, m));
    for (auto _ : state) {
        exactref::array_verdict v = exactref::covers(std::span<const T>(in.c), refs, model);
        benchmark::DoNotOptimize(v);
        if (!v.covered) state.SkipWithError("an honest product was not covered");
    }
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(in.c.size()));
}

template <class T>
void matmul(benchmark::State& state) {
    time_product<T>(state, [](auto a, auto b) { return exactref::matmul(a, b); });
}

template <class T>
void product(benchmark::State& state) {
    time_product<T>(state, [](auto a, auto b) { return exactref::exact_matmul(a, b); });
}

template <class T>
void rows(benchmark::State& state) {
    const std::size_t m = static_cast<std::size_t>(state.range(0));
    const exactref::standard model = exactref::parse_standard(standards[state.range(1)]);
    state.SetLabel(standards[state.range(1)]);
    constexpr std::size_t cols = 32;
    const std::vector<T> xs = gauss<T>(m * cols, 20261201 + m);
    const std::vector<exactref::standard> structure{exactref::parse_standard("levels:fold/4,any")};
    exactref::reference_array refs;
    refs.rows = m;
    refs.cols = 1;
    std::vector<T> r(m);
    for (std::size_t i = 0; i < m; ++i) {
        const std::span<const T> row(xs.data() + i * cols, cols);
        refs.elements.push_back(exactref::sum(row, structure));
        // As the structure says: 4 chunks of 8 folded, the chunk results added in order.
        T total = 0;
        for (std::size_t c = 0; c < 4; ++c) {
            T acc = 0;
            for (std::size_t l = 0; l < 8; ++l) acc += row[c * 8 + l];
            total += acc;
        }
        r[i] = total;
    }
    for (auto _ : state) {
        exactref::array_verdict v = exactref::covers(std::span<const T>(r), refs, model);
        benchmark::DoNotOptimize(v);
        if (!v.covered) state.SkipWithError("an honest row sum was not covered");
    }
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(r.size()));
}

template <class T>
void runs(benchmark::State& state) {
    const std::size_t m = static_cast<std::size_t>(state.range(0));
    const exactref::standard model = exactref::parse_standard(standards[state.range(1)]);
    state.SetLabel(standards[state.range(1)]);
    const std::vector<T> xs = gauss<T>(4096, 20261201 + m);
    const exactref::reference ref = exactref::sum(xs, {exactref::parse_standard("levels:fold/4,any")});
    // Runs that differ in their last bits: the left fold plus up to a few units of the fold's own rounding.
    std::vector<T> results(m);
    T fold = 0;
    for (T x : xs) fold += x;
    std::mt19937_64 rng(7);
    for (std::size_t i = 0; i < m; ++i) results[i] = fold + static_cast<T>(static_cast<double>(rng() % 9) * 1e-7);
    for (auto _ : state) {
        exactref::array_verdict v = exactref::covers(std::span<const T>(results), ref, model);
        benchmark::DoNotOptimize(v);
    }
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(results.size()));
}

}  // namespace

BENCHMARK(matmul<float>)->ArgsProduct({{128, 512}, {0, 1, 3}})->Unit(benchmark::kMillisecond);
BENCHMARK(matmul<double>)->ArgsProduct({{128, 512}, {0, 1, 3}})->Unit(benchmark::kMillisecond);
BENCHMARK(product<float>)->ArgsProduct({{512, 1024}, {0, 1, 3}})->Unit(benchmark::kMillisecond);
BENCHMARK(product<double>)->ArgsProduct({{512, 1024}, {0, 1, 3}})->Unit(benchmark::kMillisecond);
BENCHMARK(rows<float>)->ArgsProduct({{16384, 262144}, {0, 2}})->Unit(benchmark::kMillisecond);
BENCHMARK(rows<double>)->ArgsProduct({{16384, 262144}, {0, 2}})->Unit(benchmark::kMillisecond);
BENCHMARK(runs<float>)->ArgsProduct({{16384, 262144}, {0, 2}})->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
