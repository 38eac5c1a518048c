// exactref/orders.h — the summation orders people use today, for comparison with the trees of tree.h and with the
// exact sum (the ULP study in docs/same-bits.md measures all of them).
//
//   fold_sum      the left fold ((x0 + x1) + x2) + ...: a plain loop. Error bound (n-1)·u·Σ|x_i| (Higham (4.4);
//                 Rump, BIT 52 (2012) for the sharp form); any_order() covers it.
//   kahan_sum     Kahan–Babuška compensated summation in Neumaier's form (A. Neumaier, ZAMM 54 (1974) 39–51):
//                 the rounding error of every addition is recovered exactly (Fast2Sum on the larger operand) and
//                 collected in a second accumulator, added once at the end (unless it is zero: s + 0 would turn a
//                 -0.0 sum into +0.0). |error| <= u·|s| + O(n·u²)·Σ|x_i|
//                 (Neumaier 1974; Higham, Accuracy and Stability, 2nd ed., §4.3 on compensated summation).
//   pairwise_sum  np.add.reduce's order: +0.0 + P(x), with P numpy's pairwise_sum (numpy/_core/src/umath/
//                 loops_utils.h.src): a run of fewer than 8 elements is folded left to right from -0.0 (as numpy >=
//                 1.23 does, so that P keeps an all -0.0 run -0.0); a run of 8 to 128 is summed with 8 interleaved
//                 partial sums r[j] += x[i + j], then ((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7)) plus the remainder left to
//                 right; a longer run is split at n2 = n/2 rounded down to a multiple of 8 and the halves' P added.
//                 The +0.0 is the add ufunc's identity, which np.add.reduce puts in its output before its reduce loop
//                 does out += P(x) (numpy's get_initial_from_ufunc and loops_arithm_fp.dispatch.c.src). It changes
//                 only the sign of a zero: P(x) is -0.0 exactly when every element is -0.0, and then pairwise_sum,
//                 like np.add.reduce, gives +0.0 (numpy 2.4: float64, float32, float16, n = 1..300, strided too).
//                 Its error is within any_order(); in practice it behaves like a tree a few dozen levels deep.
//
// Each comes in the four float formats, each operation rounded to the accumulation format exactly as in tree.h (for
// float16 and bfloat16: exact in binary64, rounded once), and for float16 and bfloat16 also with float accumulation
// (numpy sums float16 that way: pairwise in float, one rounding at the end). Same template conventions as tree.h:
//   exactref::fold_sum(xs)            // accumulate in xs's own format
//   exactref::kahan_sum<float>(hs)    // float16 data, float accumulation (returns float)
//
// Empty input: +0.0. All terms -0.0: -0.0 from fold_sum and kahan_sum, +0.0 from pairwise_sum (numpy's identity).
// Special values: a NaN term gives NaN; +Inf and -Inf give NaN; an Inf among finite terms gives that Inf (for
// kahan_sum too: when the running sum is not finite, the compensation is dropped). Deterministic (single thread, a
// fixed order); compiled without contraction like the trees. Independent of the caller's floating-point environment:
// each call computes in the default one (round to nearest even, no FTZ/DAZ; detail/fp_environment.h) and restores
// the caller's rounding mode and FTZ/DAZ on return, so fold_sum({1.0, 0x1p-60}) is 1.0 under FE_UPWARD too.
#pragma once

#include "exactref/config.h"  // C++20, or a clear error

#include <ranges>
#include <span>
#include <type_traits>

#include "exactref/format.h"
#include "exactref/tree.h"  // tree_accumulation, same_as_input, accumulation_t

namespace exactref {

/// The supported (element, accumulation) pairs of the comparison orders: the float pairs of tree_accumulation.
template <class T, class Acc>
concept order_accumulation = floating_format<T> && tree_accumulation<T, Acc>;

namespace detail {
// Defined in src/orders.cpp for every order_accumulation pair.
template <class T, class Acc>
Acc fold_sum(std::span<const T> xs) noexcept;
template <class T, class Acc>
Acc kahan_sum(std::span<const T> xs) noexcept;
template <class T, class Acc>
Acc pairwise_sum(std::span<const T> xs) noexcept;
}  // namespace detail

/// Left fold: s = x0; s = s + x_i for i = 1 .. n-1 (so a lone -0.0 stays -0.0); +0.0 for n = 0.
///   exactref::fold_sum(std::vector<float>{1e8f, 1.0f, -1e8f})  // -> 0 (1e8 + 1 rounds to 1e8)
template <class Acc = same_as_input, class T>
    requires order_accumulation<T, accumulation_t<Acc, T>>
accumulation_t<Acc, T> fold_sum(std::span<const T> xs) noexcept {
    return detail::fold_sum<T, accumulation_t<Acc, T>>(xs);
}
template <class Acc = same_as_input, std::ranges::contiguous_range R,
          class T = std::remove_cv_t<std::ranges::range_value_t<R>>>
    requires order_accumulation<T, accumulation_t<Acc, T>>
accumulation_t<Acc, T> fold_sum(const R& xs) noexcept {
    return detail::fold_sum<T, accumulation_t<Acc, T>>(std::span<const T>(std::ranges::data(xs), std::ranges::size(xs)));
}

/// Neumaier's compensated sum: s = x0, c = -0.0; for each further x: t = s + x; c += (|s| >= |x|) ? (s - t) + x
/// : (x - t) + s; s = t; result s + c (or s when s is not finite). +0.0 for n = 0.
///   exactref::kahan_sum(std::vector<double>{1.0, 1e100, 1.0, -1e100})  // -> 2 (a plain Kahan loop gives 0)
template <class Acc = same_as_input, class T>
    requires order_accumulation<T, accumulation_t<Acc, T>>
accumulation_t<Acc, T> kahan_sum(std::span<const T> xs) noexcept {
    return detail::kahan_sum<T, accumulation_t<Acc, T>>(xs);
}
template <class Acc = same_as_input, std::ranges::contiguous_range R,
          class T = std::remove_cv_t<std::ranges::range_value_t<R>>>
    requires order_accumulation<T, accumulation_t<Acc, T>>
accumulation_t<Acc, T> kahan_sum(const R& xs) noexcept {
    return detail::kahan_sum<T, accumulation_t<Acc, T>>(std::span<const T>(std::ranges::data(xs), std::ranges::size(xs)));
}

/// numpy's pairwise summation, +0.0 + P(x) (see the file comment for its exact order). +0.0 for n = 0 and for an
/// all -0.0 xs, as numpy gives.
///   exactref::pairwise_sum(xs) has the bits of numpy.add.reduce(xs) for a contiguous float64 or float32 xs, signed
///   zeros included
///   exactref::pairwise_sum(std::vector<double>{-0.0, -0.0})  // -> +0.0 (numpy 2.4: np.add.reduce gives 0.0)
template <class Acc = same_as_input, class T>
    requires order_accumulation<T, accumulation_t<Acc, T>>
accumulation_t<Acc, T> pairwise_sum(std::span<const T> xs) noexcept {
    return detail::pairwise_sum<T, accumulation_t<Acc, T>>(xs);
}
template <class Acc = same_as_input, std::ranges::contiguous_range R,
          class T = std::remove_cv_t<std::ranges::range_value_t<R>>>
    requires order_accumulation<T, accumulation_t<Acc, T>>
accumulation_t<Acc, T> pairwise_sum(const R& xs) noexcept {
    return detail::pairwise_sum<T, accumulation_t<Acc, T>>(
        std::span<const T>(std::ranges::data(xs), std::ranges::size(xs)));
}

}  // namespace exactref
