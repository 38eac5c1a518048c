// exactref/dot.h — exact dot products: the reference of Σ x_i·y_i with every product exact at its true position.
//
// The reference (reference.h) holds s = Σ x_i·y_i and T = Σ |x_i·y_i| exactly (no product and no sum is rounded),
// n, the input format, and which products could underflow when rounded (min_product_exponent,
// product_may_underflow). covers() then applies the dot-product rows of the standards (standard.h, docs/standards.md):
//   any_order        |r - s| <= n·u·T                                   no product below 2^emin, no FMA
//                    |r - s| <= γ_n·T + n·(1 + (n-1)u)·η, η = 2^(emin-p) otherwise
//                    (Higham, ASNA 2nd ed., (3.5); Jeannerod & Rump, SIMAX 34 (2013))
//   split_k, tree, mixed, directed   the same composition with the depth of the order (Higham §4.2).
//
// How (docs/algorithms/ozaki.md, "Exact dot"): values are decoded with integer operations only, so the result does not
// depend on the rounding mode or on FTZ/DAZ. binary32/16 and bfloat16 products are exact binary64 numbers
// (at most 48 significand bits, exponents within [-298, 256]): they are formed from exactly converted operands and
// summed by the superaccumulator's blocked fast path. A binary64 product is split without error into p + e,
// p = fl(x·y), e = fma(x, y, -p) (exact when both operands are normal and -918 <= E_x + E_y <= 1021, which is
// checked on the encodings; a CPU without FMA and every other product take the 128-bit integer product).
#pragma once

#include "exactref/config.h"  // C++20, or a clear error

#include <cstddef>
#include <cstdint>
#include <optional>
#include <ranges>
#include <span>
#include <vector>

#include "exactref/format.h"
#include "exactref/reference.h"

namespace exactref {

/// The exact reference of the dot product Σ_i x_i·y_i.
///
///   x, y      two vectors of the same length n and format T (double, float, float16, bfloat16)
///   returns   reference with is_dot = true, count = n, term_format = T, sum = Σ x_i·y_i and abs_sum = Σ |x_i·y_i|
///             exactly, min_product_exponent and product_may_underflow (reference.h)
/// Special values: a NaN operand or Inf·0 gives a NaN term; Inf·(non-zero finite) a signed Inf term; the superaccumulator
/// rules then decide (NaN, ±Inf). A zero product is a signed zero (sign x XOR sign y), so Σ of products that are all
/// -0.0 rounds to -0.0 as IEEE 754 arithmetic would. n = 0 gives s = +0.0, count 0.
/// Exact for every input (no overflow, no underflow: the accumulator covers 2^-2176 .. 2^2176), deterministic, and
/// independent of the floating-point environment. Cost: O(n), a few ns per product.
/// Throws std::invalid_argument when x and y differ in length.
///
///   std::vector<float> x{1e20f, 1.0f, -1e20f}, y{1.0f, 1.0f, 1.0f};
///   exactref::dot(x, y).nearest<float>();              // -> 1.0f (a left fold in float gives 0.0f)
///   exactref::dot(x, y).covers(0.0f, exactref::any_order());   // covered: n·u·T = 3·2^-24·2e20 is far above 1
template <floating_format T>
reference dot(std::span<const T> x, std::span<const T> y);

/// How exactref::dot runs (the values never depend on it).
struct dot_options {
    /// Threads: 0 = exactref/threads.h's resolve_threads (EXACTREF_NUM_THREADS, else OMP_NUM_THREADS, else every
    /// core; a bad value of a variable is std::invalid_argument). Contiguous chunks of at least
    /// detail::min_chunk_terms pairs, one exact accumulator each, merged exactly: the same bits for every count, and
    /// no thread starts for short inputs.
    unsigned threads = 0;
};

/// dot(x, y) on up to options.threads threads: the same reference, bit for bit.
///   exactref::dot(x, y, {.threads = 2});
template <floating_format T>
reference dot(std::span<const T> x, std::span<const T> y, const dot_options& options);

/// The data-dependent bound of a structured standard over the products x_i·y_i (reference.h, structured_bound):
/// each product's own rounding in the accumulation format (u·|x_i·y_i| + η, which also bounds an FMA chain) at the
/// leaves. Throws std::invalid_argument when x and y differ in length or `model` is not structured.
template <floating_format T>
structure_bound structured_dot_bound(std::span<const T> x, std::span<const T> y, const standard& model);

/// The exact reference of Σ x_i·y_i with the bounds of structured standards ("levels:fold/8,any+fma").
template <floating_format T>
reference dot(std::span<const T> x, std::span<const T> y, const std::vector<standard>& structures) {
    reference r = dot(x, y);
    for (const standard& m : structures) r.structures.push_back(structured_dot_bound(x, y, m));
    return r;
}

/// The exact reference of initial + Σ_i x_i·y_i: an existing output accumulated into (BLAS beta = 1). The initial value
/// counts as one more term: count = n + 1, abs_sum = |initial| + Σ |x_i·y_i| (docs/standards.md).
/// Throws std::invalid_argument when x and y differ in length.
template <floating_format T>
reference dot(std::span<const T> x, std::span<const T> y, T initial);

/// Dot product of strided vectors (BLAS increments, in elements, may be negative or zero):
/// Σ_{i<n} x[i·incx]·y[i·incy]. Same result and guarantees as dot(span, span).
template <floating_format T>
reference dot_strided(const T* x, std::ptrdiff_t incx, const T* y, std::ptrdiff_t incy, std::size_t n,
                      std::optional<T> initial = std::nullopt);
/// dot_strided on up to options.threads threads (dot_options): the same reference, bit for bit.
template <floating_format T>
reference dot_strided(const T* x, std::ptrdiff_t incx, const T* y, std::ptrdiff_t incy, std::size_t n,
                      std::optional<T> initial, const dot_options& options);

/// Range form: any two contiguous ranges of the same element type.
template <std::ranges::contiguous_range R1, std::ranges::contiguous_range R2>
    requires floating_format<std::remove_cv_t<std::ranges::range_value_t<R1>>> &&
             std::same_as<std::remove_cv_t<std::ranges::range_value_t<R1>>,
                          std::remove_cv_t<std::ranges::range_value_t<R2>>>
reference dot(const R1& x, const R2& y) {
    using T = std::remove_cv_t<std::ranges::range_value_t<R1>>;
    return dot(std::span<const T>(std::ranges::data(x), std::ranges::size(x)),
               std::span<const T>(std::ranges::data(y), std::ranges::size(y)));
}

/// floor(log2 |x·y|) of a non-zero finite product of two values of format f (raw bits), exact (integer operations).
/// Precondition: x and y finite and non-zero.
int product_exponent_bits(const format_info& f, std::uint64_t x_bits, std::uint64_t y_bits) noexcept;

}  // namespace exactref
