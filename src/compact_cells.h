// src/compact_cells.h — the cell operations of src/scatter.cpp that src/axis_sums.cpp builds on. Internal.
//
// scatter.cpp owns the compact cell (its invariant, the flag bits, the inlined cell update); these entries let
// another source file add terms to a cell and merge a superaccumulator pair into one without knowing its layout
// (docs/algorithms/compact-reference-array.md, Steps 1-4).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "exactref/accumulator.h"
#include "exactref/format.h"
#include "exactref/scatter.h"

namespace exactref::detail {

/// Adds terms to element i of `out` one by one with the builders' cell update (Step 1), spilling where the cell
/// cannot take a term (Step 3); the same state as out.add(i, terms[k]) for each k. Preconditions: i < out.size(), T
/// is out.term_format(), out is not a scan.
template <floating_format T>
void add_terms_to_cell(compact_reference_array& out, std::size_t i, std::span<const T> terms);

/// Element i of `out` becomes its state plus the pair (sum, abs_sum) over `count` terms, exactly (Step 4): a compact
/// cell when the merged Σt and Σ|t| fit one (no Inf or NaN, Σ|t| < 2^126 over the lowest set bit of both), else
/// a spill holding the merged pair. sum and abs_sum are consumed (left holding the merged pair, or anything), so no
/// ~2.2 KB copy is made. Preconditions as add_terms_to_cell; sum and abs_sum hold the same terms (Σt and Σ|t|, as
/// add_sum_and_abs gives them), count of them.
void merge_pair_into_cell(compact_reference_array& out, std::size_t i, superaccumulator& sum,
                          superaccumulator& abs_sum, std::uint64_t count);

/// How often each way of the one-dimensional scatters' Step D (docs/algorithms/compact-reference-array.md) ran since
/// the last call, summed over every thread and builder, then reset: ranges of terms through the dense parts with the
/// window of every term read first (Step D2) and one by one, folds of the dense parts into the cells (one per dense
/// range at its end, more when the counts outgrow their bits or a guess widens), blocks taken one by one for an Inf
/// or NaN; ranges under a guessed window (Step D5), guesses that met a term outside and went on under the joined
/// window, and guesses that met one and started again (the joined window did not fit); dense blocks of normal terms
/// only (the decode without the zero/subnormal clamp) and, of those, with every shift below 64 (two 64-bit shifts);
/// the other dense blocks take the general decode. For tests (every exit ran).
struct dense_scatter_counts {
    std::uint64_t dense_ranges = 0, one_by_one_ranges = 0, folds = 0, special_blocks = 0;
    std::uint64_t guessed_ranges = 0, guesses_widened = 0, guesses_restarted = 0;
    std::uint64_t normal_blocks = 0, narrow_blocks = 0;
};
dense_scatter_counts take_dense_scatter_counts() noexcept;

}  // namespace exactref::detail
