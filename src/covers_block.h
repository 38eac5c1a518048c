// Internal to src/covers.cpp: the block-wise fused filter over compact arrays (docs/algorithms/covers-filter.md,
// Step K5): Steps F1-F3 and K2-K4a of compact_decider::decide_fast, written once over vectors of W binary64
// lanes and compiled three times — W = 8 for x86-64-v4 (AVX-512), W = 4 for x86-64-v3 (AVX2), W = 1 (portable) —
// with the widest the CPU runs chosen once at run time (EXACTREF_SIMD=avx2 or =base caps it, as for the sum kernels).
//
// Every lane computes the operations decide_fast computes, in the same order, on the same operands: an IEEE
// addition, subtraction, multiplication or division of vectors is the correctly rounded operation in every lane
// (vaddpd, vsubpd, vmulpd, vdivpd round by MXCSR, which detail::default_fp_environment sets to round-to-nearest
// without FTZ/DAZ), the file is compiled with -ffp-contract=off (no lane product is fused into an addition), and
// next_up / next_down are the same integer steps of the encoding. So a lane's verdict and ratio enclosure are
// decide_fast's bit for bit (Step K5); a lane the kernel does not decide is left to decide_fast and the paths behind
// it, element by element. Selections are bitwise (no branch per lane), so the kernel has no data-dependent branch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>  // std::memcpy: lane loads and stores of any alignment
#include <limits>

#include "simd_targets.h"

namespace exactref::detail {

/// One sub-block of a compact array's elements in structure-of-arrays form, filled by the caller (Step K5's first
/// pass): the result r as a binary64, the kept summary's RD(s), RD(S) and word, and what the element is:
/// kind 0 the kernel leaves it (the element-by-element path decides), 1 the kernel decides it with the factor of
/// its count (plain, gamma) or of f_lo, f_hi, saturation_w (table), 2 no finite factor (table only: covered, ratio
/// 0, once its enclosures are finite).
struct compact_lanes {
    static constexpr std::size_t capacity = 256;  // ~20 KB with the outputs: the first-level cache holds it
    alignas(64) double r[capacity];
    alignas(64) double s_lo[capacity];
    alignas(64) double w_lo[capacity];
    alignas(64) std::uint64_t word[capacity];  // filter_summary::word (count and the two inexact bits)
    alignas(64) std::int64_t kind[capacity];
    alignas(64) double f_lo[capacity];  // table: the factor's enclosure and Step K3b's limit
    alignas(64) double f_hi[capacity];
    alignas(64) double saturation_w[capacity];
    alignas(64) double data[capacity];  // with data_bound: the element's structured data bound (+inf: none)
};

/// How the factor of a kind-1 lane is found, and the constants of the call.
struct compact_lane_params {
    enum class factor_source : std::uint8_t {
        plain,  // (n - 1)·u, exact (any_order); count < 2^52
        gamma,  // γ_{n - 1} = k·u'/(1 - k·u'), u' = gamma_unit (directed:any_order; n = 0 has k = 0); count < 2^52
        table,  // f_lo, f_hi, saturation_w of the lane (the caller's factor_of)
        uniform,  // f_lo, f_hi, saturation_w below for every lane (one count: Step K5a)
    };
    factor_source source = factor_source::plain;
    bool directed = false;      // Step K3b applies
    bool ratios = false;        // Step F3 (covers()); covers_flags needs the decision only
    bool data_bound = false;    // Step F1's min(factor·S, data) with the lanes' data (kept structured bounds)
    double unit = 0;            // plain: u; gamma: u' (2u for directed)
    double threshold_lo = 0;    // Step K3b: a lower bound of the saturation threshold
    double below_floor = 0;     // Step K4a's f2 (0: nothing skipped)
    double skipped_ratio = -1;  // the enclosure [-1, -1] of a skipped element (compact_decider::below_floor)
    double f_lo = 0, f_hi = 0, saturation_w = 0;  // uniform: the factor of every kind-1 lane
};

/// What the kernel decided: decided[k] = 1 with covered[k] (and, with ratios, ratio_lo[k], ratio_hi[k]) written,
/// else 0 and nothing written for k.
struct compact_lane_outputs {
    std::uint8_t* covered;
    double* ratio_lo;
    double* ratio_hi;
    std::uint8_t* decided;
};

template <int W>
struct filter_lanes {
    typedef double vd __attribute__((vector_size(8 * W)));
    typedef std::int64_t vi __attribute__((vector_size(8 * W)));
    typedef std::uint64_t vu __attribute__((vector_size(8 * W)));
};

#define EXACTREF_LANES_INLINE [[gnu::always_inline]] inline

// Lane-wise select: m's lanes are all ones or all zeros (a comparison's result).
template <class VI, class V>
EXACTREF_LANES_INLINE V lanes_select(VI m, V a, V b) {
    return (V)(((VI)a & m) | ((VI)b & ~m));
}

// Keeps a lane vector opaque to the optimizer: GCC 12 otherwise forwards the integer bits of next_up / next_down
// (a select in integer lanes viewed as doubles) into the comparisons that use them, and then compares lane by lane
// in scalar code. No instruction is emitted; the value is unchanged.
template <class V>
EXACTREF_LANES_INLINE V lanes_opaque(V v) {
#if defined(__x86_64__) && defined(__GNUC__)
    if constexpr (sizeof(V) >= 16) asm("" : "+v"(v));  // one lane (W = 1) is scalar code anyway
#endif
    return v;
}

// A comparison's lanes (all ones or all zeros) as an integer vector, kept opaque for the same reason: GCC 12
// folds the selects of comparisons from inlined helpers into forms it then cannot compare in vector registers.
template <class VI, class M>
EXACTREF_LANES_INLINE VI lanes_mask(M m) {
    return lanes_opaque((VI)m);
}

// Step F0 per lane, for x >= +0.0 (lanes holding anything else are discarded by the caller): next_up(inf) = inf;
// next_down(x) = 0 for x <= 0. The same integer steps as next_up / next_down of covers_filter.h.
template <int W>
EXACTREF_LANES_INLINE typename filter_lanes<W>::vd lanes_next_up(typename filter_lanes<W>::vd x) {
    using L = filter_lanes<W>;
    constexpr std::uint64_t inf_bits = 0x7ff0000000000000;  // x != inf exactly when the encodings differ
    // Unsigned lanes: a discarded lane may hold any encoding (all ones, say), and unsigned arithmetic wraps there
    // instead of overflowing a signed integer (undefined; UBSan reports it).
    const typename L::vu bits = (typename L::vu)x;
    const typename L::vu step = (typename L::vu)lanes_mask<typename L::vi>(bits != inf_bits) & 1u;  // -1 or 0
    return lanes_opaque((typename L::vd)(bits + step));
}
template <int W>
EXACTREF_LANES_INLINE typename filter_lanes<W>::vd lanes_next_down(typename filter_lanes<W>::vd x) {
    using L = filter_lanes<W>;
    const typename L::vu positive = (typename L::vu)lanes_mask<typename L::vi>(x > 0);
    return lanes_opaque((typename L::vd)(((typename L::vu)x - 1u) & positive));  // 0 (+0.0) when !(x > 0)
}
// std::max(a, b) as a < b ? b : a.
template <class VI, class V>
EXACTREF_LANES_INLINE V lanes_max(V a, V b) {
    return lanes_select<VI>(lanes_mask<VI>(a < b), b, a);
}

// |x| < inf per lane, for every x (NaN included: its magnitude's encoding lies above that of inf), on the encoding.
template <int W>
EXACTREF_LANES_INLINE typename filter_lanes<W>::vi lanes_finite(typename filter_lanes<W>::vd x) {
    using L = filter_lanes<W>;
    constexpr std::int64_t magnitude = 0x7fffffffffffffff, inf_bits = 0x7ff0000000000000;
    return lanes_mask<typename L::vi>((((typename L::vi)x) & magnitude) < inf_bits);
}

// filter_summary::upper per lane: the next encoding away from zero for lo >= +0.0, toward zero for lo < 0, when the
// inexact bit is set.
template <int W>
EXACTREF_LANES_INLINE typename filter_lanes<W>::vd lanes_upper(typename filter_lanes<W>::vd lo,
                                                              typename filter_lanes<W>::vu inexact) {
    using L = filter_lanes<W>;
    const typename L::vu b = (typename L::vu)lo;
    const typename L::vu negative = b >> 63;
    return (typename L::vd)(b + inexact - 2 * negative * inexact);
}

// A count k < 2^52 as the double k, exactly: the encoding of 2^52 + k minus 2^52.
template <int W>
EXACTREF_LANES_INLINE typename filter_lanes<W>::vd lanes_from_count(typename filter_lanes<W>::vu k) {
    using L = filter_lanes<W>;
    constexpr std::uint64_t two52_bits = 0x4330000000000000;  // 2^52
    return (typename L::vd)(k | two52_bits) - 4503599627370496.0;
}

// Lanes [0, lanes) of two comparison masks as bytes 0 or 1 (a kernel's decided and covered flags).
template <int W, class VI>
EXACTREF_LANES_INLINE void lanes_store_flags(VI decided, VI covered, std::uint8_t* decided_out,
                                             std::uint8_t* covered_out, std::size_t lanes) {
    if constexpr (W > 1) {
        if (lanes == W) {  // a whole vector: the low bits narrowed to bytes (vpmovqb) and stored at once
            typedef std::uint8_t vb __attribute__((vector_size(W)));
            const vb d = __builtin_convertvector(decided & 1, vb), c = __builtin_convertvector(covered & 1, vb);
            std::memcpy(decided_out, &d, W);
            std::memcpy(covered_out, &c, W);
            return;
        }
    }
    alignas(64) std::int64_t decided_lanes[W], covered_lanes[W];
    std::memcpy(decided_lanes, &decided, sizeof decided);
    std::memcpy(covered_lanes, &covered, sizeof covered);
    for (std::size_t j = 0; j < lanes; ++j) {
        decided_out[j] = static_cast<std::uint8_t>(decided_lanes[j] & 1);
        covered_out[j] = static_cast<std::uint8_t>(covered_lanes[j] & 1);
    }
}

// Lanes [0, lanes) of v into to[0 .. lanes - 1].
// A whole vector is one store; GCC 12 merges a single memcpy of (lanes == W ? W : lanes) doubles into a variable-length
// copy through the stack (rep movsq), which took 40% of Step P5's kernel (2026-12-06, perf annotate).
template <int W, class V>
EXACTREF_LANES_INLINE void lanes_store(double* to, V v, std::size_t lanes) {
    if (lanes == W) {
        std::memcpy(to, &v, sizeof v);
        return;
    }
    alignas(64) double tail[W];
    std::memcpy(tail, &v, sizeof v);
    for (std::size_t j = 0; j < lanes; ++j) to[j] = tail[j];
}

// Step F3 per lane (filter_element): e_hi = next_up(max(d1, d2)) >= |r - s| >= e_lo, and the quotients of the
// outer ends moved outward, for lanes whose b_hi is finite; exact marks r = s (ratio 0, not applied here: lo and hi
// hold no quotient of decide_fast's in those lanes, and the caller must not use them).
template <int W>
struct lanes_ratio {
    using L = filter_lanes<W>;
    typename L::vd e_hi, lo, hi;
    typename L::vi exact;
    EXACTREF_LANES_INLINE lanes_ratio(typename L::vd d1, typename L::vd d2, typename L::vd b_lo, typename L::vd b_hi) {
        using vd = typename L::vd;
        using vi = typename L::vi;
        const vd zero = vd{} * 0, infs = zero + std::numeric_limits<double>::infinity();
        const vd up = lanes_max<vi>(d1, d2);
        exact = lanes_mask<vi>(up == 0);
        e_hi = lanes_next_up<W>(up);
        const vd e_lo = lanes_next_down<W>(lanes_max<vi>(lanes_max<vi>(zero, -d1), -d2));
        // The quotients of lanes with r = s are not used (ratio 0): they divide 0 by 1 instead, since e_hi is then
        // the smallest subnormal and b_hi often one too (a factor 0), and a quotient of subnormals is a microcode
        // assist of 100+ cycles on Intel CPUs. The other lanes divide what decide_fast divides.
        const vd one = zero + 1.0;
        const vd e_hi_used = lanes_select<vi>(exact, zero, e_hi), e_lo_used = lanes_select<vi>(exact, zero, e_lo);
        const vd b_lo_used = lanes_select<vi>(exact, one, b_lo), b_hi_used = lanes_select<vi>(exact, one, b_hi);
        hi = lanes_select<vi>(lanes_mask<vi>(b_lo > 0), lanes_next_up<W>(e_hi_used / b_lo_used), infs);
        lo = lanes_select<vi>(lanes_mask<vi>(b_hi > 0), lanes_next_down<W>(e_lo_used / b_hi_used),
                              lanes_select<vi>(lanes_mask<vi>(e_lo > 0), infs, zero));
    }
};

// Step K5 over lanes [0, count) of `in`: see docs/algorithms/covers-filter.md. count is any size <= capacity;
// the last partial vector reads lanes past count (the arrays are capacity long; their values are ignored).
template <int W>
EXACTREF_LANES_INLINE void decide_lanes(const compact_lanes& in, std::size_t count, const compact_lane_params& p,
                                        const compact_lane_outputs& out) {
    using L = filter_lanes<W>;
    using vd = typename L::vd;
    using vi = typename L::vi;
    using vu = typename L::vu;
    constexpr double inf = std::numeric_limits<double>::infinity();
    constexpr std::uint64_t count_mask = (std::uint64_t{1} << 61) - 1;
    const vd zero = vd{} * 0, infs = zero + inf;
    for (std::size_t base = 0; base < count; base += W) {
        vd r, s_lo, w_lo;
        vu word;
        vi kind;
        std::memcpy(&r, in.r + base, sizeof r);
        std::memcpy(&s_lo, in.s_lo + base, sizeof s_lo);
        std::memcpy(&w_lo, in.w_lo + base, sizeof w_lo);
        std::memcpy(&word, in.word + base, sizeof word);
        std::memcpy(&kind, in.kind + base, sizeof kind);
        const vd s_hi = lanes_upper<W>(s_lo, (word >> 61) & 1);
        const vd w_hi = lanes_upper<W>(w_lo, (word >> 62) & 1);
        const vu n = word & count_mask;
        // Step K2: the factor of the lane's count, as decide_fast (and gamma_enclosure, saturation_limit) finds it.
        vd f_lo, f_hi, saturation_w = zero;
        vi bounded = lanes_mask<vi>(kind == 1);  // kind 2: no finite factor
        if (p.source == compact_lane_params::factor_source::plain) {
            const vu k = n - (vu)(lanes_mask<vi>(n != 0) & 1);  // n - 1, 0 for n = 0
            f_lo = f_hi = lanes_from_count<W>(k) * p.unit;  // exact: k < 2^52, unit a power of two
        } else if (p.source == compact_lane_params::factor_source::gamma) {
            const vu k = n - (vu)(lanes_mask<vi>(n != 0) & 1);
            const vd ku = lanes_from_count<W>(k) * p.unit;  // exact
            bounded &= lanes_mask<vi>(ku < 1.0);  // k·u' >= 1: no finite factor (kind 2 below)
            const vd g = ku / (1.0 - ku);
            f_lo = lanes_next_down<W>(g);
            f_hi = lanes_select<vi>(lanes_mask<vi>(ku == 0), zero, lanes_next_up<W>(g));  // γ_0 = 0: the point 0
            if (p.directed) {  // saturation_limit(f_hi)
                const vd h = lanes_next_up<W>(1.0 + f_hi);
                const vd limit = lanes_next_down<W>(p.threshold_lo / h);
                saturation_w =
                    lanes_select<vi>(lanes_mask<vi>(f_hi <= 1.0), zero + p.threshold_lo * 0.25, limit);
            }
        } else if (p.source == compact_lane_params::factor_source::uniform) {
            f_lo = zero + p.f_lo;  // exact: 0 + x = x for x >= +0.0
            f_hi = zero + p.f_hi;
            saturation_w = zero + p.saturation_w;
        } else {
            std::memcpy(&f_lo, in.f_lo + base, sizeof f_lo);
            std::memcpy(&f_hi, in.f_hi + base, sizeof f_hi);
            std::memcpy(&saturation_w, in.saturation_w + base, sizeof saturation_w);
        }
        vi unbounded = lanes_mask<vi>(kind == 2) | (lanes_mask<vi>(kind == 1) & ~bounded);
        // The enclosures decide_fast requires finite (the same test; w_lo >= 0 excludes a negative RD(S)).
        const vi finite =
            lanes_finite<W>(s_lo) & lanes_finite<W>(s_hi) & lanes_finite<W>(w_hi) & lanes_mask<vi>(w_lo >= 0);
        // Step F1: B in [b_lo, b_hi].
        vd b_lo = lanes_next_down<W>(f_lo * w_lo);
        vd b_hi = lanes_next_up<W>(f_hi * w_hi);
        if (p.data_bound) {  // min(factor·S, data) as decide_fast (std::min: data < b ? data : b)
            vd data;
            std::memcpy(&data, in.data + base, sizeof data);
            b_lo = lanes_select<vi>(lanes_mask<vi>(data < b_lo), data, b_lo);
            b_hi = lanes_select<vi>(lanes_mask<vi>(data < b_hi), data, b_hi);
            // A lane without a finite factor but with a finite data bound is bounded by it: decide_fast's general
            // path decides it (the caller marks such table lanes kind 0; gamma lanes are left here).
            unbounded &= ~lanes_mask<vi>(data < infs);
        }
        vi usable = bounded & finite & lanes_finite<W>(b_hi);  // b_hi >= 0 where bounded & finite: b_hi < inf
        if (p.directed) usable &= lanes_mask<vi>(w_hi <= saturation_w);  // Step K3b
        // Step F2.
        const vd covered_below = lanes_next_down<W>(b_lo), violated_above = lanes_next_up<W>(b_hi);
        const vd d1 = r - s_lo, d2 = s_hi - r;
        const vi covered = lanes_mask<vi>(d1 <= covered_below) & lanes_mask<vi>(d2 <= covered_below);
        const vi violated =
            ~covered & (lanes_mask<vi>(-d1 > violated_above) | lanes_mask<vi>(-d2 > violated_above));
        const vi decided_bounded = usable & (covered | violated);
        const vi decided_unbounded = unbounded & finite;
        const vi decided = decided_bounded | decided_unbounded;
        const vi covered_out = decided_unbounded | (decided_bounded & covered);
        const std::size_t lanes = count - base < W ? count - base : W;
        lanes_store_flags<W>(decided, covered_out, out.decided + base, out.covered + base, lanes);
        if (!p.ratios) continue;
        // Step F3, with Step K4a's skip for covered elements below the worst-candidate floor.
        const lanes_ratio<W> ratio(d1, d2, b_lo, b_hi);
        const vi exact = ratio.exact;
        const vd e_hi = ratio.e_hi;
        const vi skip = covered & lanes_mask<vi>(e_hi <= lanes_next_down<W>(p.below_floor * b_lo));
        const vd ratio_hi = ratio.hi, ratio_lo = ratio.lo;
        const vd skipped = zero + p.skipped_ratio;
        // The order of decide_fast: r = s first, then the skip, then the two quotients; unbounded lanes ratio 0.
        const vi zero_ratio = exact | unbounded;
        const vd lo = lanes_select<vi>(zero_ratio, zero, lanes_select<vi>(skip, skipped, ratio_lo));
        const vd hi = lanes_select<vi>(zero_ratio, zero, lanes_select<vi>(skip, skipped, ratio_hi));
        lanes_store<W>(out.ratio_lo + base, lo, lanes);
        lanes_store<W>(out.ratio_hi + base, hi, lanes);
    }
}

}  // namespace exactref::detail
