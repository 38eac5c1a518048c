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

}  // namespace exactref_test
