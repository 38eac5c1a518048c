// Internal to src/covers.cpp: the binary64 filter that decides covers() over arrays before the exact comparison
// (docs/algorithms/covers-filter.md has the proof; the steps below are its steps).
//
// Assumptions: the default floating-point environment (round to nearest even, no FTZ/DAZ; covers.cpp holds a
// detail::default_fp_environment for the whole call) and no contraction (the file is compiled with
// -ffp-contract=off, CMakeLists.txt). Every binary64 operation then returns RN(exact), and
//   (L1) RN is monotone, and RN(x) <= d for a double d > 0 implies x <= d + ulp/2 < next_up(d); likewise RN(x) > d
//        implies x > d;
//   (L2) a difference of two doubles that lands among the subnormals is exact, so RN(a - b) = 0 only when a = b and
//        RN(a - b) has the sign of a - b.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>

namespace exactref::detail {

// Step F0: neighbours of a non-negative double (every quantity of a bound is >= 0). next_down(0) = 0 is still a
// lower bound of a non-negative quantity; next_down(inf) = max is a lower bound of anything RN rounded to inf.
inline double next_up(double x) noexcept {
    if (x == std::numeric_limits<double>::infinity()) return x;
    return std::bit_cast<double>(std::bit_cast<std::uint64_t>(x) + 1);  // x >= +0.0: the next encoding is larger
}
inline double next_down(double x) noexcept {
    if (!(x > 0)) return 0;
    return std::bit_cast<double>(std::bit_cast<std::uint64_t>(x) - 1);
}

/// [lo, hi] with 0 <= lo <= exact <= hi (hi may be +inf).
struct nonnegative_interval {
    double lo = 0;
    double hi = 0;
};
// Step F1: interval operations on non-negative numbers; one RN per end, widened by one ulp (L1).
inline nonnegative_interval operator+(nonnegative_interval a, nonnegative_interval b) noexcept {
    return {next_down(a.lo + b.lo), next_up(a.hi + b.hi)};
}
inline nonnegative_interval operator*(nonnegative_interval a, nonnegative_interval b) noexcept {
    return {next_down(a.lo * b.lo), next_up(a.hi * b.hi)};
}
inline nonnegative_interval min(nonnegative_interval a, nonnegative_interval b) noexcept {
    return {std::min(a.lo, b.lo), std::min(a.hi, b.hi)};
}

/// What the filter knows of one reference: s in [s_lo, s_hi] (finite doubles) and B in [b_lo, b_hi], and the two
/// thresholds of Step F2.
struct filter_bounds {
    double s_lo = 0, s_hi = 0;
    double b_lo = 0, b_hi = 0;
    double covered_below = 0;   // next_down(b_lo), 0 when b_lo = 0
    double violated_above = 0;  // next_up(b_hi)
    bool unbounded = false;     // no finite bound: every finite result is covered, ratio 0
};

inline filter_bounds make_filter_bounds(double s_lo, double s_hi, nonnegative_interval b, bool unbounded) noexcept {
    filter_bounds f;
    f.s_lo = s_lo;
    f.s_hi = s_hi;
    f.b_lo = b.lo;
    f.b_hi = b.hi;
    f.covered_below = next_down(b.lo);
    f.violated_above = next_up(b.hi);
    f.unbounded = unbounded;
    return f;
}

enum class filter_verdict : std::uint8_t { covered, violated, undecided };

/// The filter's verdict on a finite result r (not -0.0) and an enclosure [ratio_lo, ratio_hi] of the ratio the
/// exact path reports, RN(|r - s| / B).
struct filter_outcome {
    filter_verdict verdict = filter_verdict::undecided;
    double ratio_lo = 0;
    double ratio_hi = std::numeric_limits<double>::infinity();
};

// Step F2 alone (no ratio): for covers_flags, whose callers need the decision only.
inline filter_verdict filter_decision(double r, const filter_bounds& f) noexcept {
    if (f.unbounded) return filter_verdict::covered;
    const double d1 = r - f.s_lo;
    const double d2 = f.s_hi - r;
    if (d1 <= f.covered_below && d2 <= f.covered_below) return filter_verdict::covered;
    if (-d1 > f.violated_above || -d2 > f.violated_above) return filter_verdict::violated;
    return filter_verdict::undecided;
}

inline filter_outcome filter_element(double r, const filter_bounds& f) noexcept {
    filter_outcome out;
    if (f.unbounded) {
        out.verdict = filter_verdict::covered;
        out.ratio_hi = 0;
        return out;
    }
    // Step F2: |r - s| <= max(r - s_lo, s_hi - r) and |r - s| >= max(0, s_lo - r, r - s_hi) for s in [s_lo, s_hi].
    // d1 = RN(r - s_lo) <= covered_below = next_down(b_lo) gives r - s_lo < b_lo (L1; for b_lo = 0, L2 gives
    // r - s_lo <= 0); -d1 = RN(s_lo - r) > violated_above > b_hi gives s_lo - r > b_hi (L1). So covered means
    // |r - s| < B and violated |r - s| > B: the exact comparison would say the same.
    const double d1 = r - f.s_lo;
    const double d2 = f.s_hi - r;
    if (d1 <= f.covered_below && d2 <= f.covered_below) out.verdict = filter_verdict::covered;
    else if (-d1 > f.violated_above || -d2 > f.violated_above) out.verdict = filter_verdict::violated;
    // Step F3: the ratio. e_hi >= |r - s| >= e_lo (L1, one ulp each way); RN of the quotient of the outer ends,
    // moved one ulp outward, encloses the exact quotient, and RN is monotone, so it encloses RN(|r - s| / B) too.
    const double up = std::max(d1, d2);  // >= 0: d1 + d2 = s_hi - s_lo >= 0
    if (up == 0) {                        // d1 = d2 = 0 (L2): r = s exactly, ratio 0 whatever B is
        out.ratio_hi = 0;
        return out;
    }
    const double e_hi = next_up(up);
    const double e_lo = next_down(std::max({0.0, -d1, -d2}));
    out.ratio_hi = f.b_lo > 0 ? next_up(e_hi / f.b_lo) : std::numeric_limits<double>::infinity();
    if (f.b_hi == std::numeric_limits<double>::infinity()) out.ratio_lo = 0;
    else if (f.b_hi > 0) out.ratio_lo = next_down(e_lo / f.b_hi);
    else out.ratio_lo = e_lo > 0 ? std::numeric_limits<double>::infinity() : 0;
    return out;
}

}  // namespace exactref::detail
