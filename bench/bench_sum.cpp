// bench_sum — exact sums against the plain loops they are meant to check (issue 2, "Performance";
// docs/performance.md holds the measured ratios and how they were obtained).
//
// One thread (except threads/), n = 10^3, 10^5, 10^7, side by side in one run:
//   ordered/<T>       s += x[i] left to right in T: the loop a user would write (latency bound).
//   acc8/<T>          eight interleaved partial sums in T, combined at the end (throughput/bandwidth bound).
//   exact/<T>         superaccumulator::add(span) then round<T>(): the exact sum, correctly rounded.
//   reference/<T>     exactref::sum(span): exact s and S = Σ|x_i| (what covers() needs).
//   fused/<T>         add_sum_and_abs(span, s, S): the same two sums in one pass over the data.
//   term_by_term/<T>  superaccumulator::add(T) per element: the scalar path the fast path replaces.
//   threads/<T>       exactref::sum(span, {threads}) at 10^7 on 1, 2, 4 threads (wall time; chunks merged exactly).
// for T = float64, float32, and the exact kinds also for float16 and bfloat16.
//
// Honesty of the baselines: the library is built without -ffast-math (and so is this file), so the compiler may not
// reassociate the ordered loop; each kernel is noinline and its result goes through benchmark::DoNotOptimize, and the
// input pointer is laundered through DoNotOptimize too, so nothing can be hoisted out of the timing loop. The
// baselines are compiled for AVX-512 / AVX2 / baseline by target_clones, so they get AVX-512 where the exact sum's
// AVX-512 version runs.
//
// Memory, O(1) in n: a replaced global operator new counts allocations; every exact benchmark reports the
// allocations and bytes per iteration (counters "allocs", "alloc_bytes") and fails (SkipWithError) if add(span) or
// exactref::sum allocates at all. "state_bytes" is the size of the accumulator object(s), the only memory used.
//
// Inputs are fixed-seed pseudo-random values (mt19937_64, seed 20240602 + size): "gauss" is N(0, 1) rounded to T,
// the common case; "wide" spreads exponents over 2^-40 .. 2^40 (float16: 2^-12 .. 2^12) so most terms fall below a
// block's first window and need further windows (Step F4): the adversarial case, reported so nobody is surprised.
#include <benchmark/benchmark.h>

#include <atomic>
#include <cmath>    // std::ldexp
#include <cstddef>
#include <cstdint>
#include <cstdio>   // std::fprintf
#include <cstdlib>
#include <cstring>  // std::memcpy
#include <map>
#include <new>
#include <random>
#include <span>
#include <utility>  // std::pair
#include <vector>

#include "bench_target_clones.h"
#include "exactref/accumulator.h"
#include "exactref/format.h"
#include "exactref/reference.h"

// ---- allocation counting (global operator new/delete replacements) --------------------------------------------------
namespace {
std::atomic<std::uint64_t> g_alloc_count{0};
std::atomic<std::uint64_t> g_alloc_bytes{0};
}  // namespace

// Not inlined, so that GCC does not pair a visible malloc with a visible free and warn (-Wmismatched-new-delete).
[[gnu::noinline]] void* operator new(std::size_t size) {
    g_alloc_count.fetch_add(1, std::memory_order_relaxed);
    g_alloc_bytes.fetch_add(size, std::memory_order_relaxed);
    if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
    throw std::bad_alloc();
}
[[gnu::noinline]] void* operator new[](std::size_t size) { return operator new(size); }
[[gnu::noinline]] void operator delete(void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete[](void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, std::size_t) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

namespace {

using exactref::bfloat16;
using exactref::float16;

// ---- inputs ---------------------------------------------------------------------------------------------------------
enum class dist { gauss, wide };

template <class T>
T from_double(double v) {
    if constexpr (std::is_same_v<T, double>) return v;
    else if constexpr (std::is_same_v<T, float>) return static_cast<float>(v);
    else return T(static_cast<float>(v));  // float16 / bfloat16: round to nearest even from float
}

template <class T>
const std::vector<T>& input(std::size_t n, dist d) {
    static std::map<std::pair<std::size_t, dist>, std::vector<T>> cache;
    auto [it, fresh] = cache.try_emplace({n, d});
    if (fresh) {
        std::mt19937_64 gen(20240602u + n);
        std::normal_distribution<double> gauss(0.0, 1.0);
        const int span = std::is_same_v<T, float16> ? 12 : 40;
        std::uniform_int_distribution<int> exponent(-span, span);
        std::uniform_real_distribution<double> mantissa(1.0, 2.0);
        it->second.reserve(n);
        for (std::size_t i = 0; i < n; ++i) {
            double v = d == dist::gauss ? gauss(gen) : std::ldexp(mantissa(gen), exponent(gen));
            if (d == dist::wide && (gen() & 1u)) v = -v;
            it->second.push_back(from_double<T>(v));
        }
    }
    return it->second;
}

// ---- baselines ------------------------------------------------------------------------------------------------------
// The loops are inlined into their target_clones wrappers (a call out of a clone would run baseline-ISA code); the
// wrappers, called through an ifunc, are never inlined into the benchmark loop.
template <class T>
[[gnu::always_inline]] inline T ordered_sum(const T* x, std::size_t n) {
    T s = 0;
    for (std::size_t i = 0; i < n; ++i) s += x[i];
    return s;
}

// Eight partial sums: lane j adds x[j], x[j+8], x[j+16], ... in order (a vector of 8, so the compiler keeps them in
// one SIMD register instead of guessing at a layout), combined pairwise at the end; the tail goes into lane 0.
template <class T>
[[gnu::always_inline]] inline T acc8_sum(const T* x, std::size_t n) {
    typedef T lanes __attribute__((vector_size(8 * sizeof(T))));
    lanes a{};
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        lanes v;
        std::memcpy(&v, x + i, sizeof v);
        a += v;
    }
    for (; i < n; ++i) a[0] += x[i];
    return ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
}

[[gnu::noinline]] BENCH_TARGET_CLONES double ordered_f64(const double* x, std::size_t n) { return ordered_sum(x, n); }
[[gnu::noinline]] BENCH_TARGET_CLONES float ordered_f32(const float* x, std::size_t n) { return ordered_sum(x, n); }
[[gnu::noinline]] BENCH_TARGET_CLONES double acc8_f64(const double* x, std::size_t n) { return acc8_sum(x, n); }
[[gnu::noinline]] BENCH_TARGET_CLONES float acc8_f32(const float* x, std::size_t n) { return acc8_sum(x, n); }

double ordered(const double* x, std::size_t n) { return ordered_f64(x, n); }
float ordered(const float* x, std::size_t n) { return ordered_f32(x, n); }
double acc8(const double* x, std::size_t n) { return acc8_f64(x, n); }
float acc8(const float* x, std::size_t n) { return acc8_f32(x, n); }

// ---- counters -------------------------------------------------------------------------------------------------------
template <class T>
void set_throughput(benchmark::State& state, std::size_t n) {
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * n));
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * n * sizeof(T)));
}

struct alloc_probe {
    std::uint64_t count0 = g_alloc_count.load(std::memory_order_relaxed);
    std::uint64_t bytes0 = g_alloc_bytes.load(std::memory_order_relaxed);
    // Reports allocations per iteration; an O(1)-memory kernel must not allocate at all.
    void report(benchmark::State& state, std::size_t state_bytes) const {
        const auto iters = static_cast<double>(state.iterations());
        const auto count = static_cast<double>(g_alloc_count.load(std::memory_order_relaxed) - count0);
        const auto bytes = static_cast<double>(g_alloc_bytes.load(std::memory_order_relaxed) - bytes0);
        state.counters["allocs"] = benchmark::Counter(count / iters);
        state.counters["alloc_bytes"] = benchmark::Counter(bytes / iters);
        state.counters["state_bytes"] = benchmark::Counter(static_cast<double>(state_bytes));
        if (count != 0) state.SkipWithError("the exact sum allocated memory: O(1) memory promise broken");
    }
};

// ---- benchmarks -----------------------------------------------------------------------------------------------------
template <class T, dist D>
void bm_ordered(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    const T* x = input<T>(n, D).data();
    for (auto _ : state) {
        benchmark::DoNotOptimize(x);
        T s = ordered(x, n);
        benchmark::DoNotOptimize(s);
    }
    set_throughput<T>(state, n);
}

template <class T, dist D>
void bm_acc8(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    const T* x = input<T>(n, D).data();
    for (auto _ : state) {
        benchmark::DoNotOptimize(x);
        T s = acc8(x, n);
        benchmark::DoNotOptimize(s);
    }
    set_throughput<T>(state, n);
}

template <class T, dist D>
void bm_exact(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    const std::span<const T> xs(input<T>(n, D));
    const alloc_probe probe;
    for (auto _ : state) {
        benchmark::DoNotOptimize(xs);
        exactref::superaccumulator acc;
        acc.add(xs);
        T s = acc.round<T>();
        benchmark::DoNotOptimize(s);
    }
    probe.report(state, sizeof(exactref::superaccumulator));
    set_throughput<T>(state, n);
}

template <class T, dist D>
void bm_reference(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    const std::span<const T> xs(input<T>(n, D));
    const alloc_probe probe;
    for (auto _ : state) {
        benchmark::DoNotOptimize(xs);
        exactref::reference r = exactref::sum(xs);
        T s = r.nearest<T>();
        benchmark::DoNotOptimize(s);
        benchmark::DoNotOptimize(r);
    }
    probe.report(state, sizeof(exactref::reference));
    set_throughput<T>(state, n);
}

template <class T, dist D>
void bm_fused(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    const std::span<const T> xs(input<T>(n, D));
    const alloc_probe probe;
    for (auto _ : state) {
        benchmark::DoNotOptimize(xs);
        exactref::superaccumulator s, a;
        exactref::add_sum_and_abs(xs, s, a);
        T r = s.round<T>();
        benchmark::DoNotOptimize(r);
        benchmark::DoNotOptimize(a);
    }
    probe.report(state, 2 * sizeof(exactref::superaccumulator));
    set_throughput<T>(state, n);
}

template <class T, dist D>
void bm_term_by_term(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    const T* x = input<T>(n, D).data();
    const alloc_probe probe;
    for (auto _ : state) {
        benchmark::DoNotOptimize(x);
        exactref::superaccumulator acc;
        for (std::size_t i = 0; i < n; ++i) acc.add(x[i]);
        T s = acc.round<T>();
        benchmark::DoNotOptimize(s);
    }
    probe.report(state, sizeof(exactref::superaccumulator));
    set_throughput<T>(state, n);
}

// exactref::sum(span, {threads}) at n = 10^7 on 1, 2, 4 threads: wall time (UseRealTime; the CPU time of the calling
// thread would hide the others). The parallel path allocates one accumulator pair per chunk (O(threads) memory), so
// it is not under the allocation probe. Same bits for every count (tests/test_threads.cpp).
template <class T, dist D>
void bm_threads(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    const exactref::sum_options options{static_cast<unsigned>(state.range(1))};
    const std::span<const T> xs(input<T>(n, D));
    for (auto _ : state) {
        benchmark::DoNotOptimize(xs);
        exactref::reference r = exactref::sum(xs, options);
        benchmark::DoNotOptimize(r);
    }
    set_throughput<T>(state, n);
}

void sizes(benchmark::internal::Benchmark* b) {
    b->Arg(1000)->Arg(100000)->Arg(10000000)->Unit(benchmark::kMicrosecond);
}

// Names: <kind>/<dtype>/<distribution>/<n>; scripts/run-benchmarks pairs them up by dtype, distribution and n.
#define EXACTREF_BENCH_FLOATS(kind, fn, T, tname)                                   \
    BENCHMARK(fn<T, dist::gauss>)->Name(#kind "/" tname "/gauss")->Apply(sizes);   \
    BENCHMARK(fn<T, dist::wide>)->Name(#kind "/" tname "/wide")->Apply(sizes)

EXACTREF_BENCH_FLOATS(ordered, bm_ordered, double, "float64");
EXACTREF_BENCH_FLOATS(acc8, bm_acc8, double, "float64");
// threads/<dtype>/<distribution>/<n>/<threads>
#define EXACTREF_BENCH_THREADS(T, tname, D, dname)                                                     \
    BENCHMARK(bm_threads<T, D>)->Name("threads/" tname "/" dname)->ArgsProduct({{10000000}, {1, 2, 4}}) \
        ->UseRealTime()->Unit(benchmark::kMillisecond)
EXACTREF_BENCH_THREADS(double, "float64", dist::gauss, "gauss");
EXACTREF_BENCH_THREADS(double, "float64", dist::wide, "wide");
EXACTREF_BENCH_THREADS(float, "float32", dist::wide, "wide");
EXACTREF_BENCH_THREADS(float16, "float16", dist::wide, "wide");

EXACTREF_BENCH_FLOATS(exact, bm_exact, double, "float64");
EXACTREF_BENCH_FLOATS(reference, bm_reference, double, "float64");
EXACTREF_BENCH_FLOATS(fused, bm_fused, double, "float64");
EXACTREF_BENCH_FLOATS(term_by_term, bm_term_by_term, double, "float64");

EXACTREF_BENCH_FLOATS(ordered, bm_ordered, float, "float32");
EXACTREF_BENCH_FLOATS(acc8, bm_acc8, float, "float32");
EXACTREF_BENCH_FLOATS(exact, bm_exact, float, "float32");
EXACTREF_BENCH_FLOATS(reference, bm_reference, float, "float32");
EXACTREF_BENCH_FLOATS(fused, bm_fused, float, "float32");
EXACTREF_BENCH_FLOATS(term_by_term, bm_term_by_term, float, "float32");

EXACTREF_BENCH_FLOATS(exact, bm_exact, float16, "float16");
EXACTREF_BENCH_FLOATS(reference, bm_reference, float16, "float16");
EXACTREF_BENCH_FLOATS(fused, bm_fused, float16, "float16");
EXACTREF_BENCH_FLOATS(term_by_term, bm_term_by_term, float16, "float16");

EXACTREF_BENCH_FLOATS(exact, bm_exact, bfloat16, "bfloat16");
EXACTREF_BENCH_FLOATS(reference, bm_reference, bfloat16, "bfloat16");
EXACTREF_BENCH_FLOATS(fused, bm_fused, bfloat16, "bfloat16");
EXACTREF_BENCH_FLOATS(term_by_term, bm_term_by_term, bfloat16, "bfloat16");

}  // namespace

int main(int argc, char** argv) {
    // allocs = 0 proves something only if the counter sees allocations: check it on one that must happen.
    const std::uint64_t before = g_alloc_count.load();
    auto* probe = new std::vector<double>(16);
    benchmark::DoNotOptimize(probe);
    delete probe;
    if (g_alloc_count.load() == before) {
        std::fprintf(stderr, "bench_sum: the allocation counter saw no allocation; allocs = 0 would prove nothing\n");
        return 1;
    }
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
