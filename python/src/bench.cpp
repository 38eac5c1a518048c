// The C++ side of bench/bench_python.py: exactref::sum timed inside the extension on the very buffer er.sum reads,
// so the ratio er.sum / C++ measures only what the Python layer adds (argument checks, DLPack import, the Reference
// object). Internal; not part of the API.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <ctime>
#include <span>
#include <tuple>
#include <vector>

#include "exactref/reference.h"
#include "references.h"

namespace exactref::python {

namespace {

double thread_cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

using contiguous_f64 = nb::ndarray<const double, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

// (wall seconds, thread CPU seconds) of each of `repeats` calls of exactref::sum on x.
std::vector<std::tuple<double, double>> time_sum(const contiguous_f64& x, int repeats) {
    const std::span<const double> xs(x.data(), x.shape(0));
    std::vector<std::tuple<double, double>> out;
    nb::gil_scoped_release release;
    for (int i = 0; i < repeats; ++i) {
        const auto wall0 = std::chrono::steady_clock::now();
        const double cpu0 = thread_cpu_seconds();
        const reference r = exactref::sum(xs);
        const double cpu1 = thread_cpu_seconds();
        const auto wall1 = std::chrono::steady_clock::now();
        volatile std::uint64_t sink = r.count;  // keep the result alive
        (void)sink;
        out.emplace_back(std::chrono::duration<double>(wall1 - wall0).count(), cpu1 - cpu0);
    }
    return out;
}

// (wall, thread CPU) seconds per call of exactref::sum(x, {threads}), averaged over `repeats` calls timed as one
// loop: for short inputs, where the clock reads of time_sum (a system call for the thread CPU clock) would be a
// visible part of each call.
std::tuple<double, double> time_sum_loop(const contiguous_f64& x, int repeats, unsigned threads) {
    const std::span<const double> xs(x.data(), x.shape(0));
    const sum_options options{threads};
    nb::gil_scoped_release release;
    std::uint64_t sink = 0;
    const auto wall0 = std::chrono::steady_clock::now();
    const double cpu0 = thread_cpu_seconds();
    for (int i = 0; i < repeats; ++i) sink += exactref::sum(xs, options).count;
    const double cpu1 = thread_cpu_seconds();
    const auto wall1 = std::chrono::steady_clock::now();
    volatile std::uint64_t keep = sink;
    (void)keep;
    const double n = repeats > 0 ? repeats : 1;
    return {std::chrono::duration<double>(wall1 - wall0).count() / n, (cpu1 - cpu0) / n};
}

}  // namespace

void bind_bench(nb::module_& m) {
    m.def("_time_sum_loop", &time_sum_loop, nb::arg("x"), nb::arg("repeats"), nb::arg("threads") = 1,
          "Internal (bench/bench_python.py): (wall, thread CPU) seconds per call of exactref::sum(x, {threads}) on a "
          "contiguous float64 array, averaged over `repeats` calls timed as one loop.");
    m.def("_time_sum", &time_sum, nb::arg("x"), nb::arg("repeats"),
          "Internal (bench/bench_python.py): (wall, thread CPU) seconds of exactref::sum on a contiguous float64 "
          "array, per repeat, measured in C++.");
}

}  // namespace exactref::python
