// Row and axis sums into compact reference arrays (include/exactref/scatter.h: compact_reference_array::add of a run
// of terms, merge of a sum reference, sum_rows_compact; docs/scatter.md "Axis sums").
//
// A run of terms reaches one cell by one of two exact routes: term by term through the builders' cell update
// (src/scatter.cpp, Step 1 of docs/algorithms/compact-reference-array.md), or, for runs of kernel_terms and more,
// through the superaccumulator's one-pass kernel (add_sum_and_abs) whose pair is then merged into the cell (Step 4).
// Both give an element that answers what exactref::sum of the same terms answers; only the cell's exponent may
// differ (Step 4 stores over the lowest set bit of the sums, Step 1 over that of the terms), never the value.
#include <limits>
#include <stdexcept>
#include <string>

#include "compact_cells.h"
#include "exactref/accumulator.h"
#include "exactref/scatter.h"

namespace exactref {

template <floating_format T>
void compact_reference_array::add(std::size_t i, std::span<const T> terms) {
    check_format(format_traits<T>::info);
    check_index(i);
    if (scan_) throw std::logic_error("compact_reference_array: a scan's references take no more terms");
    if (terms.size() < kernel_terms) {
        detail::add_terms_to_cell(*this, i, terms);
        return;
    }
    superaccumulator sum, abs_sum;
    add_sum_and_abs(terms, sum, abs_sum);
    detail::merge_pair_into_cell(*this, i, sum, abs_sum, terms.size());
}

void compact_reference_array::merge(std::size_t i, const reference& part) {
    check_format(info(part.term_format));
    check_index(i);
    if (scan_) throw std::logic_error("compact_reference_array: a scan's references take no more terms");
    if (part.is_dot)
        throw std::invalid_argument("compact_reference_array: merge takes sum references; a dot product's terms are "
                                    "products (use its reference_array)");
    superaccumulator sum = part.sum, abs_sum = part.abs_sum;
    detail::merge_pair_into_cell(*this, i, sum, abs_sum, part.count);
}

template <floating_format T>
compact_reference_array sum_rows_compact(std::span<const T> data, std::size_t rows, std::size_t cols) {
    const bool overflows = cols != 0 && rows > std::numeric_limits<std::size_t>::max() / cols;
    if (overflows || data.size() != rows * cols)
        throw std::invalid_argument("sum_rows_compact: " + std::to_string(data.size()) + " elements for " +
                                    std::to_string(rows) + " rows of " + std::to_string(cols) +
                                    ": pass exactly rows * cols elements, row-major");
    compact_reference_array out({rows}, format_traits<T>::info.id);
    for (std::size_t r = 0; r < rows; ++r) out.add(r, data.subspan(r * cols, cols));
    return out;
}

#define EXACTREF_AXIS_SUMS(T)                                                                                      \
    template void compact_reference_array::add<T>(std::size_t, std::span<const T>);                               \
    template compact_reference_array sum_rows_compact<T>(std::span<const T>, std::size_t, std::size_t);
EXACTREF_AXIS_SUMS(double)
EXACTREF_AXIS_SUMS(float)
EXACTREF_AXIS_SUMS(float16)
EXACTREF_AXIS_SUMS(bfloat16)
#undef EXACTREF_AXIS_SUMS

}  // namespace exactref
