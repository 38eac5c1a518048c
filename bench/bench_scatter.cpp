// Scatter and scan references (scatter.h) beside what a user runs instead: a binary64 bincount loop
// (out[id] += w, what np.bincount(ids, weights) does) and a binary64 cumsum loop (np.cumsum), and covers() over a
// compact array; row sums as full references (sum_rows) and as compact cells (sum_rows_compact). Counters: bytes_per_element = the reference's memory_bytes() per output element, peak_bytes_per_element
// = the process's peak RSS growth while building it (VmHWM after resetting it through /proc/self/clear_refs), per
// output element.
#include <benchmark/benchmark.h>

#include <algorithm>  // std::min
#include <chrono>  // first_call_ms
#include <cstdint>
#include <cstdlib>  // std::getenv, std::atoi: EXACTREF_BENCH_COVERS_LANES
#include <fstream>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "exactref/covers.h"
#include "exactref/detail/covers_filter.h"  // set_covers_block_lanes
#include "exactref/reference.h"
#include "exactref/scatter.h"
#include "exactref/standard.h"

namespace er = exactref;

namespace {

// A /proc/self/status field in bytes ("VmHWM:" peak resident set size since reset_peak(), "VmRSS:" current), or 0.
std::size_t status_bytes(const std::string& field) {
    std::ifstream status("/proc/self/status");
    std::string key;
    while (status >> key) {
        if (key == field) {
            std::size_t kb = 0;
            status >> kb;
            return kb * 1024;
        }
        std::getline(status, key);
    }
    return 0;
}
std::size_t peak_rss() { return status_bytes("VmHWM:"); }
std::size_t current_rss() { return status_bytes("VmRSS:"); }
void reset_peak() { std::ofstream("/proc/self/clear_refs") << "5"; }

template <class T>
struct segment_data {
    std::vector<T> values;
    std::vector<std::int64_t> ids;
    segment_data(std::size_t n, std::size_t segments) : values(n), ids(n) {
        std::mt19937_64 rng(1);
        std::normal_distribution<double> normal;
        for (std::size_t i = 0; i < n; ++i) {
            values[i] = static_cast<T>(normal(rng));
            ids[i] = static_cast<std::int64_t>(rng() % segments);
        }
    }
};

// Baseline: np.bincount(ids, weights) in binary64.
template <class T>
void bincount_binary64(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0)), segments = static_cast<std::size_t>(state.range(1));
    const segment_data<T> d(n, segments);
    for (auto _ : state) {
        std::vector<double> out(segments, 0.0);
        for (std::size_t i = 0; i < n; ++i) out[static_cast<std::size_t>(d.ids[i])] += static_cast<double>(d.values[i]);
        benchmark::DoNotOptimize(out.data());
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * n));
}

template <class T>
void segment_sum(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0)), segments = static_cast<std::size_t>(state.range(1));
    const segment_data<T> d(n, segments);
    std::size_t bytes = 0, peak = 0, spilled = 0;
    for (auto _ : state) {
        reset_peak();
        const std::size_t before = current_rss();
        const er::compact_reference_array r =
            er::segment_sum(std::span<const T>(d.values), std::span<const std::int64_t>(d.ids), segments);
        peak = std::max(peak, peak_rss() - std::min(before, peak_rss()));
        bytes = r.memory_bytes();
        spilled = r.spilled();
        benchmark::DoNotOptimize(r.size());
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * n));
    state.counters["bytes_per_element"] = static_cast<double>(bytes) / static_cast<double>(segments);
    state.counters["peak_bytes_per_element"] = static_cast<double>(peak) / static_cast<double>(segments);
    state.counters["spilled"] = static_cast<double>(spilled);
}

// bincount(ids, weights) (np.bincount's face): segment_sum's scatter after one pass over the ids for their range.
template <class T>
void bincount(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0)), segments = static_cast<std::size_t>(state.range(1));
    const segment_data<T> d(n, segments);
    for (auto _ : state) {
        const er::compact_reference_array r =
            er::bincount(std::span<const std::int64_t>(d.ids), std::span<const T>(d.values), segments);
        benchmark::DoNotOptimize(r.size());
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * n));
}

// segment_sum on state.range(2) threads (the threads argument): wall time and the process's CPU time over all threads.
void segment_sum_threads(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0)), segments = static_cast<std::size_t>(state.range(1));
    const auto threads = static_cast<unsigned>(state.range(2));
    const segment_data<double> d(n, segments);
    for (auto _ : state) {
        const er::compact_reference_array r = er::segment_sum(
            std::span<const double>(d.values), std::span<const std::int64_t>(d.ids), segments, {},
            er::out_of_range::error, threads);
        benchmark::DoNotOptimize(r.size());
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * n));
}

// Baseline: np.cumsum in binary64.
template <class T>
void cumsum_binary64(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    const segment_data<T> d(n, 1);
    std::vector<double> out(n);
    for (auto _ : state) {
        double running = 0;
        for (std::size_t i = 0; i < n; ++i) out[i] = running += static_cast<double>(d.values[i]);
        benchmark::DoNotOptimize(out.data());
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * n));
}

template <class T>
void inclusive_scan(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    const segment_data<T> d(n, 1);
    std::size_t bytes = 0, peak = 0;
    for (auto _ : state) {
        reset_peak();
        const std::size_t before = current_rss();
        const er::compact_reference_array r = er::inclusive_scan(std::span<const T>(d.values), {n});
        peak = std::max(peak, peak_rss() - std::min(before, peak_rss()));
        bytes = r.memory_bytes();
        benchmark::DoNotOptimize(r.size());
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * n));
    state.counters["bytes_per_element"] = static_cast<double>(bytes) / static_cast<double>(n);
    state.counters["peak_bytes_per_element"] = static_cast<double>(peak) / static_cast<double>(n);
}

// Standards of the covers() benchmarks: 0 = any_order, 1 = levels:fold:8,any (structured; a compact element takes
// its flat bound), 2 = directed:any_order.
const char* const covers_standards[] = {"any_order", "levels:fold:8,any", "directed:any_order"};

// covers() in a loop; the first call (which builds the array's kept filter summaries) is timed apart, as
// first_call_ms: later calls stream 24 bytes per element. EXACTREF_BENCH_COVERS_LANES=0 runs the element-by-element
// filter (the block filter off: the previous path, for interleaved before/after rounds), =1 / =4 its portable and
// AVX2 versions.
void covers_loop(benchmark::State& state, const std::vector<float>& results, const er::compact_reference_array& r,
                 const char* failure) {
    if (const char* lanes = std::getenv("EXACTREF_BENCH_COVERS_LANES")) er::detail::set_covers_block_lanes(std::atoi(lanes));
    const er::standard model = er::parse_standard(covers_standards[state.range(1)]);
    state.SetLabel(covers_standards[state.range(1)]);
    const auto start = std::chrono::steady_clock::now();
    if (!er::covers(std::span<const float>(results), r, model).covered) state.SkipWithError(failure);
    state.counters["first_call_ms"] =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    for (auto _ : state) {
        const er::array_verdict v = er::covers(std::span<const float>(results), r, model);
        if (!v.covered) state.SkipWithError(failure);
        benchmark::DoNotOptimize(v.violations);
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * results.size()));
}

// covers() of a sequential binary32 cumsum against its compact reference, per element.
void covers_cumsum(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    const segment_data<float> d(n, 1);
    const er::compact_reference_array r = er::inclusive_scan(std::span<const float>(d.values), {n});
    std::vector<float> results(n);
    float running = 0;
    for (std::size_t i = 0; i < n; ++i) results[i] = running += d.values[i];
    covers_loop(state, results, r, "a correct cumsum was rejected");
}

// covers() of a binary32 segment sum (a left fold per segment) against its compact reference.
void covers_segments(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0)), segments = static_cast<std::size_t>(state.range(2));
    const segment_data<float> d(n, segments);
    const er::compact_reference_array r =
        er::segment_sum(std::span<const float>(d.values), std::span<const std::int64_t>(d.ids), segments);
    std::vector<float> results(segments, 0.0f);
    for (std::size_t i = 0; i < n; ++i) results[static_cast<std::size_t>(d.ids[i])] += d.values[i];
    covers_loop(state, results, r, "a correct segment sum was rejected");
}

// ---- axis sums: row sums of N(0,1) data as full references (sum_rows) and compact cells (sum_rows_compact) ------

template <class T>
struct row_data {
    std::vector<T> values;
    row_data(std::size_t rows, std::size_t cols) : values(rows * cols) {
        std::mt19937_64 rng(2);
        std::normal_distribution<double> normal;
        for (T& x : values) x = static_cast<T>(normal(rng));
    }
};

// Builds the references of rows x cols row sums (full: sum_rows; compact: sum_rows_compact) and reports their
// memory per row (bytes_per_element: what the references hold; peak_bytes_per_element as above).
template <class T, bool compact>
void axis_sum(benchmark::State& state) {
    const auto rows = static_cast<std::size_t>(state.range(0)), cols = static_cast<std::size_t>(state.range(1));
    const row_data<T> d(rows, cols);
    std::size_t bytes = 0, peak = 0;
    for (auto _ : state) {
        reset_peak();
        const std::size_t before = current_rss();
        if constexpr (compact) {
            const er::compact_reference_array r = er::sum_rows_compact(std::span<const T>(d.values), rows, cols);
            bytes = r.memory_bytes();
            benchmark::DoNotOptimize(r.size());
        } else {
            const er::reference_array r = er::sum_rows(std::span<const T>(d.values), rows, cols);
            bytes = r.elements.capacity() * sizeof(er::reference);
            benchmark::DoNotOptimize(r.size());
        }
        peak = std::max(peak, peak_rss() - std::min(before, peak_rss()));
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * rows * cols));
    state.counters["bytes_per_element"] = static_cast<double>(bytes) / static_cast<double>(rows);
    state.counters["peak_bytes_per_element"] = static_cast<double>(peak) / static_cast<double>(rows);
    state.counters["rows_per_s"] = benchmark::Counter(static_cast<double>(state.iterations() * rows),
                                                      benchmark::Counter::kIsRate);
}

// How kernel_terms was chosen: rows of `cols` float32 terms added to their cells as pieces of `piece` terms
// (compact_reference_array::add: pieces below kernel_terms take the cell update, longer ones the kernel).
void axis_sum_pieces(benchmark::State& state) {
    const std::size_t rows = 2000, cols = static_cast<std::size_t>(state.range(0));
    const auto piece = static_cast<std::size_t>(state.range(1));
    const row_data<float> d(rows, cols);
    for (auto _ : state) {
        er::compact_reference_array r({rows}, er::dtype::float32);
        for (std::size_t i = 0; i < rows; ++i)
            for (std::size_t k = 0; k < cols; k += piece)
                r.add(i, std::span<const float>(d.values).subspan(i * cols + k, std::min(piece, cols - k)));
        benchmark::DoNotOptimize(r.size());
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * rows * cols));
}

// covers() of row sums (each row folded in groups of 8 consecutive terms, the groups' results added in order: a
// result every standard of covers_standards covers) against, by `refs`: 0 the full references (sum_rows, or one
// exactref::sum(row, {model}) per row for a structured standard: the per-reference path), 1 the compact cells
// (sum_rows_compact: a structured standard takes its flat bound), 2 the compact cells keeping the standard's data
// bound per row (sum_rows_compact with structures). Args: rows, cols, standard (covers_standards).
template <class T, int refs>
void covers_rows(benchmark::State& state) {
    const auto rows = static_cast<std::size_t>(state.range(0)), cols = static_cast<std::size_t>(state.range(1));
    const row_data<T> d(rows, cols);
    std::vector<T> results(rows, T(0));
    for (std::size_t i = 0; i < rows; ++i)
        for (std::size_t g = 0; g < cols; g += 8) {
            T part = 0;
            for (std::size_t j = g; j < std::min(cols, g + 8); ++j) part += d.values[i * cols + j];
            results[i] += part;
        }
    const er::standard model = er::parse_standard(covers_standards[state.range(2)]);
    state.SetLabel(covers_standards[state.range(2)]);
    const std::span<const T> values(d.values);
    auto judge = [&](const auto& r) {
        const std::uint64_t path = er::detail::covers_exact_path_count(), ratios = er::detail::covers_exact_ratio_count();
        for (auto _ : state) {
            const er::array_verdict v = er::covers(std::span<const T>(results), r, model);
            if (!v.covered) state.SkipWithError("a correct row sum was rejected");
            benchmark::DoNotOptimize(v.violations);
        }
        // Per call: elements the exact path decided, and candidates for the worst whose ratio it computed.
        const double calls = static_cast<double>(std::max<benchmark::IterationCount>(1, state.iterations()));
        state.counters["exact_path"] = static_cast<double>(er::detail::covers_exact_path_count() - path) / calls;
        state.counters["exact_ratios"] = static_cast<double>(er::detail::covers_exact_ratio_count() - ratios) / calls;
    };
    if constexpr (refs == 0) {
        if (!model.structured) {
            judge(er::sum_rows(values, rows, cols));
        } else {
            er::reference_array full;
            full.rows = rows;
            full.cols = 1;
            for (std::size_t i = 0; i < rows; ++i) full.elements.push_back(er::sum(values.subspan(i * cols, cols), {model}));
            judge(full);
        }
    } else if constexpr (refs == 1) {
        judge(er::sum_rows_compact(values, rows, cols));
    } else {
        judge(er::sum_rows_compact(values, rows, cols, model.structured ? std::vector<er::standard>{model}
                                                                          : std::vector<er::standard>{}));
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * rows));
}

// Building compact row sums that keep a structure's data bounds (sum_rows_compact with structures), beside
// axis_sum's compact build: what the kept bounds cost per row.
template <class T>
void axis_sum_structured(benchmark::State& state) {
    const auto rows = static_cast<std::size_t>(state.range(0)), cols = static_cast<std::size_t>(state.range(1));
    const row_data<T> d(rows, cols);
    const std::vector<er::standard> structures{er::parse_standard("levels:fold:8,any")};
    std::size_t bytes = 0;
    for (auto _ : state) {
        const er::compact_reference_array r = er::sum_rows_compact(std::span<const T>(d.values), rows, cols, structures);
        bytes = r.memory_bytes();
        benchmark::DoNotOptimize(r.size());
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * rows * cols));
    state.counters["bytes_per_element"] = static_cast<double>(bytes) / static_cast<double>(rows);
}

}  // namespace

BENCHMARK(axis_sum<float, false>)->Args({1'000'000, 10})->Args({10'000, 1'000})->Unit(benchmark::kMillisecond);
BENCHMARK(axis_sum<float, true>)->Args({1'000'000, 10})->Args({10'000, 1'000})->Unit(benchmark::kMillisecond);
BENCHMARK(axis_sum<double, false>)->Args({1'000'000, 10})->Args({10'000, 1'000})->Unit(benchmark::kMillisecond);
BENCHMARK(axis_sum<double, true>)->Args({1'000'000, 10})->Args({10'000, 1'000})->Unit(benchmark::kMillisecond);
BENCHMARK(axis_sum_pieces)->ArgsProduct({{128, 256, 1024}, {32, 63, 64, 128, 256, 1024}})->Unit(benchmark::kMicrosecond);
// Full references only where they fit in memory (10^6 float64 rows of full references are 2.3 GB).
BENCHMARK(covers_rows<float, 0>)->ArgsProduct({{1'000'000}, {10}, {0, 1, 2}})->Args({10'000, 1'000, 0})->Args({10'000, 1'000, 1})->Unit(benchmark::kMillisecond);
BENCHMARK(covers_rows<float, 1>)->ArgsProduct({{1'000'000}, {10}, {0, 1, 2}})->ArgsProduct({{10'000}, {1'000}, {0, 1, 2}})->Unit(benchmark::kMillisecond);
BENCHMARK(covers_rows<float, 2>)->ArgsProduct({{1'000'000}, {10}, {1}})->ArgsProduct({{10'000}, {1'000}, {1}})->Unit(benchmark::kMillisecond);
BENCHMARK(covers_rows<double, 1>)->ArgsProduct({{1'000'000}, {10}, {0, 1, 2}})->ArgsProduct({{10'000}, {1'000}, {0, 1, 2}})->Unit(benchmark::kMillisecond);
BENCHMARK(covers_rows<double, 2>)->ArgsProduct({{1'000'000}, {10}, {1}})->ArgsProduct({{10'000}, {1'000}, {1}})->Unit(benchmark::kMillisecond);
BENCHMARK(axis_sum_structured<float>)->Args({1'000'000, 10})->Args({10'000, 1'000})->Unit(benchmark::kMillisecond);
BENCHMARK(axis_sum_structured<double>)->Args({1'000'000, 10})->Args({10'000, 1'000})->Unit(benchmark::kMillisecond);
BENCHMARK(covers_segments)->ArgsProduct({{10'000'000}, {0, 1, 2}, {1'000'000, 10'000'000}})->Unit(benchmark::kMillisecond);
BENCHMARK(bincount_binary64<double>)->Args({10'000'000, 100'000})->Unit(benchmark::kMillisecond);
BENCHMARK(segment_sum<double>)->Args({10'000'000, 1'000})->Args({10'000'000, 100'000})->Unit(benchmark::kMillisecond);
BENCHMARK(bincount<double>)->Args({10'000'000, 100'000})->Unit(benchmark::kMillisecond);
BENCHMARK(bincount<float>)->Args({10'000'000, 100'000})->Unit(benchmark::kMillisecond);
BENCHMARK(segment_sum_threads)->ArgsProduct({{10'000'000}, {100'000}, {1, 2}})->MeasureProcessCPUTime()->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(bincount_binary64<float>)->Args({10'000'000, 100'000})->Unit(benchmark::kMillisecond);
BENCHMARK(segment_sum<float>)->Args({10'000'000, 100'000})->Args({10'000'000, 1'000'000})->Unit(benchmark::kMillisecond);
BENCHMARK(cumsum_binary64<double>)->Arg(10'000'000)->Unit(benchmark::kMillisecond);
BENCHMARK(inclusive_scan<double>)->Arg(10'000'000)->Unit(benchmark::kMillisecond);
BENCHMARK(inclusive_scan<float>)->Arg(10'000'000)->Unit(benchmark::kMillisecond);
BENCHMARK(covers_cumsum)->ArgsProduct({{10'000'000}, {0, 1, 2}})->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
