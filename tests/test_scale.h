// EXACTREF_TEST_SCALE scales the trial counts of the longest property tests: 1 (the default) runs the counts as
// written. The sanitize test preset runs them at 0.2 (CMakePresets.json): the Release run of `make test` checks the
// full counts, and the sanitized run looks for memory errors and undefined behaviour, which need the code paths, not
// the counts. The SIMD-capped reruns (tests/cmake/simd.cmake) run at 0.3 for the same reason, and sanitized at 0.06.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace exactref_test {

inline double test_scale() {
    static const double scale = [] {
        const char* s = std::getenv("EXACTREF_TEST_SCALE");
        if (s == nullptr || *s == '\0') return 1.0;
        char* end = nullptr;
        const double v = std::strtod(s, &end);
        if (end == s || *end != '\0' || !(v > 0) || v > 1)
            throw std::invalid_argument(std::string("EXACTREF_TEST_SCALE='") + s + "': use a number in (0, 1]");
        return v;
    }();
    return scale;
}

// n scaled, at least `floor` (and never more than n).
template <class N>
N scaled(N n, N floor = 1) {
    const auto v = static_cast<N>(std::llround(static_cast<double>(n) * test_scale()));
    return std::min(n, std::max(v, floor));
}

// For a test over the cross product of two lists of cases (term mixes x id patterns, array sizes x term mixes), `rows`
// values of i by `columns` values of j: at scale 1 every pair runs; below 1 a diagonal of it, the pairs (i, j) with
// (i + j) % stride == 0, stride = min(rows, columns, round(1 / scale)), so every row i runs with at least one j (stride
// <= columns) and every column j with at least one i (stride <= rows): at the presets' scales, 0.2 and 0.3, about a
// fifth and a third of the pairs (a larger share where the rows or the columns are fewer than 5 or 3).
inline bool on_diagonal(std::size_t i, std::size_t j, std::size_t rows, std::size_t columns) {
    if (test_scale() >= 1) return true;
    const auto inverse = static_cast<std::size_t>(std::llround(1 / test_scale()));
    const std::size_t stride = std::max<std::size_t>(1, std::min({rows, columns, inverse}));
    return (i + j) % stride == 0;
}

}  // namespace exactref_test
