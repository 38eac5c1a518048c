// The comparison orders of orders.h: left fold, Neumaier's compensated sum, numpy's pairwise sum. Each addition is
// one rounded operation of the accumulation format (detail/tree_arith.h); compiled with -ffp-contract=off. Each entry
// point runs in the default floating-point environment (detail/fp_environment.h): round to nearest even and no
// FTZ/DAZ whatever the caller set, so the bits are the promised ones (single thread: one guard per call).
#include "exactref/orders.h"

#include <cstddef>

#include "exactref/detail/fp_environment.h"
#include "exactref/detail/tree_arith.h"

#if defined(__FAST_MATH__)
#error "exactref's comparison orders promise bits: compile src/orders.cpp without -ffast-math"
#endif

namespace exactref::detail {
namespace {

template <class Acc>
Acc add(Acc a, Acc b) noexcept {
    return float_arith<Acc>::add(a, b);
}
template <class Acc>
Acc subtract(Acc a, Acc b) noexcept {
    return float_arith<Acc>::add(a, exactref::negate(b));  // negation is exact
}
template <class Acc>
Acc positive_zero() noexcept {
    return float_arith<Acc>::from_int(0);
}
template <class Acc>
Acc negative_zero() noexcept {
    return exactref::negate(positive_zero<Acc>());
}
// |a| >= |b| for non-NaN values, on the encodings (no FP compare, so DAZ cannot make a subnormal look like 0).
template <class Acc>
bool magnitude_at_least(Acc a, Acc b) noexcept {
    return (raw_bits(a) & ~sign_mask_v<Acc>) >= (raw_bits(b) & ~sign_mask_v<Acc>);
}
template <class Acc>
bool is_finite_value(Acc a) noexcept {
    return (raw_bits(a) & ~sign_mask_v<Acc>) < inf_magnitude_v<Acc>;
}

// numpy's pairwise_sum (loops_utils.h.src), step for step; n >= 1.
template <class T, class Acc>
Acc pairwise_run(const T* a, std::size_t n) noexcept {
    if (n < 8) {
        Acc res = negative_zero<Acc>();  // numpy >= 1.23 starts short runs from -0.0: -0.0 + x == x for every x
        for (std::size_t i = 0; i < n; ++i) res = add(res, widen<Acc>(a[i]));
        return res;
    }
    if (n <= 128) {
        // 8 interleaved partial sums, then a fixed 3-level combine, then the remainder left to right.
        Acc r[8];
        for (std::size_t j = 0; j < 8; ++j) r[j] = widen<Acc>(a[j]);
        std::size_t i = 8;
        for (; i < n - (n % 8); i += 8)
            for (std::size_t j = 0; j < 8; ++j) r[j] = add(r[j], widen<Acc>(a[i + j]));
        Acc res = add(add(add(r[0], r[1]), add(r[2], r[3])), add(add(r[4], r[5]), add(r[6], r[7])));
        for (; i < n; ++i) res = add(res, widen<Acc>(a[i]));
        return res;
    }
    // Split in two, the first half a multiple of 8 (numpy: "avoid non-multiples of unroll factor").
    std::size_t n2 = n / 2;
    n2 -= n2 % 8;
    return add(pairwise_run<T, Acc>(a, n2), pairwise_run<T, Acc>(a + n2, n - n2));
}

}  // namespace

template <class T, class Acc>
Acc fold_sum(std::span<const T> xs) noexcept {
    if (xs.empty()) return positive_zero<Acc>();
    return in_default_fp_environment([&] {
        Acc s = widen<Acc>(xs[0]);
        for (std::size_t i = 1; i < xs.size(); ++i) s = add(s, widen<Acc>(xs[i]));
        return s;
    });
}

template <class T, class Acc>
Acc kahan_sum(std::span<const T> xs) noexcept {
    if (xs.empty()) return positive_zero<Acc>();
    return in_default_fp_environment([&] {
        Acc s = widen<Acc>(xs[0]);
        Acc c = negative_zero<Acc>();  // so that a lone -0.0 stays -0.0, as in fold_sum
        for (std::size_t i = 1; i < xs.size(); ++i) {
            const Acc x = widen<Acc>(xs[i]);
            const Acc t = add(s, x);
            // Fast2Sum on the larger magnitude recovers the rounding error of s + x exactly (Neumaier 1974).
            const Acc error = magnitude_at_least(s, x) ? add(subtract(s, t), x) : add(subtract(x, t), s);
            c = add(c, error);
            s = t;
        }
        if (!is_finite_value(s)) return s;  // Inf or NaN: the compensation (Inf - Inf = NaN) carries no information
        // A zero compensation changes nothing but the sign of a -0.0 sum (-0.0 + +0.0 = +0.0): all -0.0 terms leave
        // s = -0.0 and c = +0.0 (the first error term (-0 - -0) + -0 is +0), and the sum is -0.0, as fold_sum says.
        if ((raw_bits(c) & ~sign_mask_v<Acc>) == 0) return s;
        return add(s, c);
    });
}

template <class T, class Acc>
Acc pairwise_sum(std::span<const T> xs) noexcept {
    if (xs.empty()) return positive_zero<Acc>();
    // np.add.reduce fills its output with the ufunc's identity, +0.0 (get_initial_from_ufunc, legacy_array_method.c),
    // and its reduce loop adds the run's pairwise sum to it: *out += pairwise_sum(...) (loops_arithm_fp.dispatch.c.src;
    // HALF_add likewise in float). +0.0 + r is r for every r but -0.0, so only an all -0.0 input changes: to +0.0.
    return in_default_fp_environment(
        [&] { return add(positive_zero<Acc>(), pairwise_run<T, Acc>(xs.data(), xs.size())); });
}

#define EXACTREF_ORDERS_INSTANTIATE(T, ACC)                      \
    template ACC fold_sum<T, ACC>(std::span<const T>) noexcept;  \
    template ACC kahan_sum<T, ACC>(std::span<const T>) noexcept; \
    template ACC pairwise_sum<T, ACC>(std::span<const T>) noexcept;

EXACTREF_ORDERS_INSTANTIATE(double, double)
EXACTREF_ORDERS_INSTANTIATE(float, float)
EXACTREF_ORDERS_INSTANTIATE(float16, float16)
EXACTREF_ORDERS_INSTANTIATE(bfloat16, bfloat16)
EXACTREF_ORDERS_INSTANTIATE(float16, float)
EXACTREF_ORDERS_INSTANTIATE(bfloat16, float)

#undef EXACTREF_ORDERS_INSTANTIATE

}  // namespace exactref::detail
