// exactref/orders.h — the summation orders people use today, for comparison with the trees of tree.h and with the
// exact sum (shared/DESIGN.md §4; the ULP study in docs/same-bits.md measures all of them).
//
//   fold_sum      the left fold ((x0 + x1) + x2) + ...: a plain loop. Error bound (n-1)·u·Σ|x_i| (Higham (4.4);
//                 Rump, BIT 52 (2012) for the sharp form); any_order() covers it.
//   kahan_sum     Kahan–Babuška compensated summation in Neumaier's form (A. Neumaier, ZAMM 54 (1974) 39–51):
//                 the rounding error of every addition is recovered exactly (Fast2Sum on the larger operand) and
//                 collected in a second accumulator, added once at the end. |error| <= u·|s| + O(n·u²)·Σ|x_i|
//                 (Neumaier 1974; Higham, Accuracy and Stability, 2nd ed., §4.3 on compensated summation).
//   pairwise_sum  numpy's pairwise_sum (numpy/_core/src/umath/loops_utils.h.src): blocks of at most 128 elements
//                 summed with 8 interleaved partial sums r[j] += x[i + j], then ((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7))
//                 plus the remainder left to right; longer runs split at n2 = n/2 rounded down to a multiple of 8
//                 and the halves added. np.sum of a contiguous array is 0.0 + pairwise_sum (so np.sum([-0.0]) is
//                 +0.0; pairwise_sum([-0.0]) is -0.0: its short runs start from -0.0, as numpy >= 1.23 does).
//                 Its error is within any_order(); in practice it behaves like a tree a few dozen levels deep.
//
// Each comes in the four float formats, each operation rounded to the accumulation format exactly as in tree.h (for
// float16 and bfloat16: exact in binary64, rounded once), and for float16 and bfloat16 also with float accumulation
// (numpy sums float16 that way: pairwise in float, one rounding at the end). Same template conventions as tree.h:
//   exactref::fold_sum(xs)            // accumulate in xs's own format
//   exactref::kahan_sum<float>(hs)    // float16 data, float accumulation (returns float)
//
// Empty input: +0.0. Special values: a NaN term gives NaN; +Inf and -Inf give NaN; an Inf among finite terms gives
// that Inf (for kahan_sum too: when the running sum is not finite, the compensation is dropped). Deterministic (single
// thread, a fixed order); compiled without contraction like the trees. FTZ/DAZ and the rounding mode affect float64
// and float32 as IEEE arithmetic does; the float16/bfloat16 own-format versions depend on neither.
#pragma once

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

/// numpy's pairwise summation (see the file comment for its exact order). +0.0 for n = 0.
///   exactref::pairwise_sum(xs) == numpy.add.reduce(xs) for a contiguous float64 xs with a non-zero sum
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
