// exactref/reference.h — the exact reference of a reduction: exact s, exact S = Σ|t_i|, n, the term format.
#pragma once

#include "exactref/config.h"  // C++20, or a clear error

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <ranges>
#include <span>
#include <string>
#include <vector>

#include "exactref/accumulator.h"
#include "exactref/format.h"
#include "exactref/standard.h"

namespace exactref {

struct standard;
struct verdict;
struct array_verdict;

/// The data-dependent error bound of one structure (standard.h, "levels:..."), computed when the reference is built
/// (docs/algorithms/structured-bounds.md): for every accumulation format that holds the terms exactly, and for
/// round-to-nearest and directed rounding, an upper bound of |r - s| for every evaluation consistent with the
/// structure. Doubles rounded upward (never below the bound of the derivation); +inf where a format cannot
/// accumulate the terms or the bound is infinite.
struct structure_bound {
    std::string structure;                   // standard::structure(): "levels:fold/4,any"
    std::array<double, 8> error{};           // [2·dtype + directed]
    std::uint64_t leaves = 0;                // the terms (products) it was computed over
    double error_for(dtype accumulate, bool directed) const noexcept {
        return error[2 * static_cast<std::size_t>(accumulate) + (directed ? 1 : 0)];
    }
};

/// The exact reference of one sum (or dot product, dot.h).
///
///   s  = sum       exact value of Σ t_i (superaccumulator, with the special-value state)
///   S  = abs_sum   exact Σ |t_i| over the finite terms
///   n  = count     number of terms (zeros and specials included)
///   term_format    the format the terms came in
/// For dot products (dot.h, gemm.h), t_i = x_i·y_i exactly and abs_sum holds T = Σ|x_i·y_i|. Which products could
/// lose accuracy to underflow when a computed product is rounded (Higham (3.5)):
///   min_product_exponent   floor(log2 |x_i·y_i|) of the smallest non-zero finite product when that lies below
///                          2^emin of term_format; otherwise (and when no product is non-zero) emin of term_format.
///                          A product underflows in an accumulation format F with F.emin <= emin(term_format) only
///                          if min_product_exponent < F.emin (exact); for a narrower F (F.emin > emin(term_format))
///                          a value equal to emin(term_format) leaves it open, so assume it may.
///   product_may_underflow  min_product_exponent < emin(term_format): some non-zero product lies below the smallest
///                          normal number of the input format.
///   has_initial            dot products only: one of the n terms is an existing output accumulated into (BLAS
///                          beta = 1: dot(x, y, initial), a matmul with C), not a product. Split-K depths count the
///                          combine roundings onto it (standard.h).
struct reference {
    superaccumulator sum;
    superaccumulator abs_sum;
    std::uint64_t count = 0;
    dtype term_format = dtype::float64;
    bool is_dot = false;
    bool product_may_underflow = false;
    int min_product_exponent = 0;  // dot products only, see above
    bool has_initial = false;      // dot products only, see above
    std::vector<structure_bound> structures;  // the structured standards it was built with (levels:)
    double largest = std::numeric_limits<double>::quiet_NaN();  // max |t_i| over the finite terms (sums; NaN when
                                                                // not known: dots, GEMM)

    /// Caches the binary64 enclosures of s and S (superaccumulator::cache_enclosure) that covers() over arrays
    /// reads; every producer of references calls it last. A reference whose accumulators changed afterwards (or that
    /// was never cached) is still judged exactly, only slower.
    void cache_enclosures() noexcept {
        sum.cache_enclosure();
        abs_sum.cache_enclosure();
    }

    /// The bound of `model`'s structure, or nullptr when the reference was not built with it.
    const structure_bound* find_structure(const standard& model) const noexcept;

    /// s correctly rounded to T in `mode` (IEEE 754-2019 §4.3; NaN/Inf by the superaccumulator's rules).
    template <floating_format T>
    T nearest(rounding mode = rounding::to_nearest_even) const noexcept {
        return sum.round<T>(mode);
    }
    /// s as an exact decimal string ("30.604261366177525..." with every digit; "nan", "inf", "-inf", "-0").
    std::string exact() const { return sum.to_decimal(); }

    /// Does `result` lie within `model`? Decided in exact arithmetic (covers.h).
    template <floating_format T>
    verdict covers(T result, const standard& model) const;
    template <floating_format T>
    verdict covers(T result) const;
};
using Reference = reference;

/// The exact reference of Σ xs. O(1) memory; the superaccumulator's fast path. Empty input gives s = +0.0, n = 0.
///   exactref::sum(std::vector<float>{0.1f, 0.2f}).exact()  // -> "0.300000004470348358154296875"
/// max |x_i| over the finite terms (0 for none), exactly; integer comparisons of the encodings.
template <floating_format T>
double largest_magnitude(std::span<const T> xs) noexcept;

/// How exactref::sum runs (the values never depend on it).
struct sum_options {
    /// Threads: 0 = exactref/threads.h's resolve_threads (EXACTREF_NUM_THREADS, else OMP_NUM_THREADS, else every
    /// core; a bad value of a variable is std::invalid_argument). The input is cut into contiguous chunks of at least
    /// detail::min_chunk_terms terms, one superaccumulator pair per chunk, merged exactly: the same bits for every
    /// count, and no thread starts for short inputs.
    unsigned threads = 0;
};

/// The exact reference of Σ xs, on up to options.threads threads (sum_options). One pass over the data for s, S and
/// max|x_i|; memory O(threads). Throws std::invalid_argument only for a bad EXACTREF_NUM_THREADS / OMP_NUM_THREADS
/// when options.threads == 0.
///   exactref::sum(std::span<const double>(xs), {.threads = 4});   // the same bits as exactref::sum(xs)
template <floating_format T>
reference sum(std::span<const T> xs, const sum_options& options);

/// One thread (never reads the environment, never throws).
template <floating_format T>
reference sum(std::span<const T> xs) {
    return sum(xs, sum_options{1});
}

template <std::ranges::contiguous_range R>
    requires floating_format<std::remove_cv_t<std::ranges::range_value_t<R>>>
reference sum(const R& xs) {
    using T = std::remove_cv_t<std::ranges::range_value_t<R>>;
    return sum(std::span<const T>(std::ranges::data(xs), std::ranges::size(xs)));
}

/// The data-dependent bound of a structured standard over xs (one pass; memory O(levels), O(N) for "%N").
/// Throws std::invalid_argument when `model` is not a structured (levels:) standard or its groups do not fit.
template <floating_format T>
structure_bound structured_bound(std::span<const T> xs, const standard& model);

/// The exact reference of Σ xs with the data-dependent bounds of structured standards (standard.h, levels:): one
/// more pass over xs per structure. covers(r, ref, model) with such a model then decides against
/// min(flat bound of the structure, data bound). Throws std::invalid_argument for a standard that is not structured.
///   auto ref = exactref::sum(xs, {exactref::parse_standard("levels:fold/4,any")});
template <floating_format T>
reference sum(std::span<const T> xs, const std::vector<standard>& structures) {
    reference r = sum(xs);
    for (const standard& m : structures) r.structures.push_back(structured_bound(xs, m));
    return r;
}
template <std::ranges::contiguous_range R>
    requires floating_format<std::remove_cv_t<std::ranges::range_value_t<R>>>
reference sum(const R& xs, const std::vector<standard>& structures) {
    using T = std::remove_cv_t<std::ranges::range_value_t<R>>;
    return sum(std::span<const T>(std::ranges::data(xs), std::ranges::size(xs)), structures);
}

/// The exact reference of a braced list: exactref::sum({0.1, 0.2, 0.3}).
template <floating_format T>
reference sum(std::initializer_list<T> xs) {
    return sum(std::span<const T>(xs.begin(), xs.size()));
}

/// One reference per output element (row sums, GEMM entries), row-major rows x cols.
struct reference_array {
    std::size_t rows = 0;
    std::size_t cols = 0;
    std::vector<reference> elements;
    const reference& operator()(std::size_t i, std::size_t j) const { return elements[i * cols + j]; }
    std::size_t size() const noexcept { return elements.size(); }
};
using ReferenceArray = reference_array;

/// Row sums of a row-major rows x cols matrix: one reference per row (a rows x 1 reference_array).
/// Throws std::invalid_argument when data.size() != rows * cols.
template <floating_format T>
reference_array sum_rows(std::span<const T> data, std::size_t rows, std::size_t cols);

}  // namespace exactref
