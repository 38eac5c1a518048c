// Internal to src/covers.cpp: Step P4's decisions over vectors of W binary64 lanes (docs/algorithms/covers-filter.md,
// Step P5): the flat branch of source_decider::decide_block_fast (B = factor·W + extra, then Steps F2-F3) and
// fill_bounds' for directed rounding on it (the same B once no partial sum can saturate), compiled
// for AVX-512, AVX2 and portable code as the compact arrays' block filter (covers_block.h) is, from its lane helpers.
//
// Every lane computes the operations the scalar branch computes (the interval product and sum of covers_filter.h,
// make_filter_bounds, filter_element), in the same order, on the same operands: IEEE vector operations round each
// lane correctly under the default environment, the file is compiled with -ffp-contract=off, and next_up / next_down
// are the same integer steps. So a lane's verdict and ratio enclosure are the scalar branch's bit for bit; a lane the
// kernel does not decide is left to the scalar path, element by element.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>  // std::memcpy: lane loads and stores of any alignment
#include <limits>

#include "covers_block.h"  // filter_lanes and the lane helpers

namespace exactref::detail {

/// A block of a producer's enclosed elements (element_source::enclose) in structure-of-arrays form, each array
/// readable up to count rounded up to a multiple of 8 (the last vector's extra lanes are ignored): the result r as a
/// binary64, the enclosures of s and W, and whether the kernel may decide the element (1: enclosed, r finite and
/// not -0.0; else 0).
struct source_lanes {
    const double* r;
    const double* s_lo;
    const double* s_hi;
    const double* w_lo;
    const double* w_hi;
    const std::int64_t* kind;
};

/// The key's flat part B = factor·W + extra (array_filter::flat_of: enclosures of non-negative numbers), whether
/// Step F3's ratio is wanted, and for directed rounding fill_bounds' saturation test: grow_hi = next_up(1 + f_hi)
/// (point(1) + factor) and the lower bound of the largest finite value it compares with.
struct source_lane_params {
    double f_lo = 0, f_hi = 0, x_lo = 0, x_hi = 0;
    bool ratios = false;
    bool directed = false;
    double grow_hi = 0, threshold_lo = 0;
};

/// decided[k] = 1 with covered[k] (and with ratios ratio_lo[k], ratio_hi[k]) written, else 0 and nothing written.
struct source_lane_outputs {
    std::uint8_t* covered;
    double* ratio_lo;
    double* ratio_hi;
    std::uint8_t* decided;
};

template <int W>
EXACTREF_LANES_INLINE void decide_lanes(const source_lanes& in, std::size_t count, const source_lane_params& p,
                                        const source_lane_outputs& out) {
    using L = filter_lanes<W>;
    using vd = typename L::vd;
    using vi = typename L::vi;
    const vd zero = vd{} * 0;
    for (std::size_t base = 0; base < count; base += W) {
        vd r, s_lo, s_hi, w_lo, w_hi;
        vi kind;
        std::memcpy(&r, in.r + base, sizeof r);
        std::memcpy(&s_lo, in.s_lo + base, sizeof s_lo);
        std::memcpy(&s_hi, in.s_hi + base, sizeof s_hi);
        std::memcpy(&w_lo, in.w_lo + base, sizeof w_lo);
        std::memcpy(&w_hi, in.w_hi + base, sizeof w_hi);
        std::memcpy(&kind, in.kind + base, sizeof kind);
        // The scalar branch's conditions: finite enclosures of s, a finite W_hi, W_lo >= 0, then a finite B_hi.
        const vi finite = lanes_mask<vi>(kind == 1) & lanes_finite<W>(s_lo) & lanes_finite<W>(s_hi) &
                          lanes_finite<W>(w_hi) & lanes_mask<vi>(w_lo >= 0);
        // Step F1: factor·[w_lo, w_hi] + extra, one RN per end moved outward (covers_filter.h's operator* and +).
        const vd m_lo = lanes_next_down<W>(p.f_lo * w_lo), m_hi = lanes_next_up<W>(p.f_hi * w_hi);
        const vd b_lo = lanes_next_down<W>(m_lo + p.x_lo), b_hi = lanes_next_up<W>(m_hi + p.x_hi);
        vi usable = finite & lanes_finite<W>(b_hi);  // b_hi >= 0 where finite: b_hi < inf
        if (p.directed) {
            // fill_bounds: no partial sum can pass max, (grow·(W + max(±s, 0))/2 + extra).hi <= threshold_lo for
            // both signs, the upper ends of its interval operations (std::max(x, 0.0) as x < 0 ? 0.0 : x).
            const vd up_s = lanes_select<vi>(lanes_mask<vi>(s_hi < 0), zero, s_hi);
            const vd down_s = lanes_select<vi>(lanes_mask<vi>(-s_lo < 0), zero, -s_lo);
            const vd positive = lanes_next_up<W>(lanes_next_up<W>(w_hi + up_s) * 0.5);
            const vd negative = lanes_next_up<W>(lanes_next_up<W>(w_hi + down_s) * 0.5);
            const vd grown_positive = lanes_next_up<W>(lanes_next_up<W>(p.grow_hi * positive) + p.x_hi);
            const vd grown_negative = lanes_next_up<W>(lanes_next_up<W>(p.grow_hi * negative) + p.x_hi);
            usable &= lanes_mask<vi>(grown_positive <= p.threshold_lo) & lanes_mask<vi>(grown_negative <= p.threshold_lo);
        }
        // Step F2 (make_filter_bounds, filter_element).
        const vd covered_below = lanes_next_down<W>(b_lo), violated_above = lanes_next_up<W>(b_hi);
        const vd d1 = r - s_lo, d2 = s_hi - r;
        const vi covered = lanes_mask<vi>(d1 <= covered_below) & lanes_mask<vi>(d2 <= covered_below);
        const vi violated = ~covered & (lanes_mask<vi>(-d1 > violated_above) | lanes_mask<vi>(-d2 > violated_above));
        const vi decided = usable & (covered | violated);
        const std::size_t lanes = count - base < W ? count - base : W;
        lanes_store_flags<W>(decided, covered, out.decided + base, out.covered + base, lanes);
        if (!p.ratios) continue;
        // Step F3 as filter_element: r = s gives 0, else the outer ends' quotients moved outward (b_hi is finite).
        const lanes_ratio<W> ratio(d1, d2, b_lo, b_hi);
        lanes_store<W>(out.ratio_lo + base, lanes_select<vi>(ratio.exact, zero, ratio.lo), lanes);
        lanes_store<W>(out.ratio_hi + base, lanes_select<vi>(ratio.exact, zero, ratio.hi), lanes);
    }
}

}  // namespace exactref::detail
