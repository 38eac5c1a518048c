// Row and axis sums into compact reference arrays (include/exactref/scatter.h: compact_reference_array::add of a run
// of terms, merge of a sum reference, sum_rows_compact; docs/scatter.md "Axis sums").
//
// A run of terms reaches one cell by one of two exact routes: term by term through the builders' cell update
// (src/scatter.cpp, Step 1 of docs/algorithms/compact-reference-array.md), or, for runs of kernel_terms and more,
// through the superaccumulator's one-pass kernel (add_sum_and_abs) whose pair is then merged into the cell (Step 4).
// Both give an element that answers what exactref::sum of the same terms answers; only the cell's exponent may
// differ (Step 4 stores over the lowest set bit of the sums, Step 1 over that of the terms), never the value.
//
// Row sums may also keep each row's structured data bounds (keep_structures): one binary64 column per structure and
// (accumulation format, rounding) pair that holds the terms exactly, so covers() under a structured standard reads 8
// bytes per element more instead of a ~2.3 KB reference per row.
#include <algorithm>  // std::find
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
    check_no_structures();
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
    check_no_structures();
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

void compact_reference_array::check_no_structures() const {
    if (!structures_.names.empty())
        throw std::logic_error("compact_reference_array: the elements keep structured data bounds (" +
                               structures_.names.front() + ") computed over their terms, so they take no more terms: "
                               "add every term first, then keep_structures");
}

void compact_reference_array::keep_structures(const std::vector<standard>& models) {
    if (scan_) throw std::logic_error("compact_reference_array: a scan's references keep no structured bounds");
    kept_structures kept;
    for (const standard& m : models) {
        if (m.decides != rule::bound || !m.structured)
            throw std::invalid_argument("keep_structures: '" + m.name() + "' is not a structured standard; give one "
                                        "spelled levels:... (e.g. levels:fold/4,any)");
        std::string name = m.structure();
        if (std::find(kept.names.begin(), kept.names.end(), name) == kept.names.end())
            kept.names.push_back(std::move(name));
    }
    // The slots structured_bound computes: accumulation formats that hold every term exactly (else +inf there).
    const format_info& t = info(term_format_);
    kept.column_of.fill(-1);
    for (dtype acc : {dtype::float64, dtype::float32, dtype::float16, dtype::bfloat16}) {
        const format_info& a = info(acc);
        if (t.precision > a.precision || t.emax > a.emax || t.subnormal_lsb_exponent() < a.subnormal_lsb_exponent())
            continue;
        for (int directed = 0; directed < 2; ++directed)
            kept.column_of[2 * static_cast<std::size_t>(acc) + static_cast<std::size_t>(directed)] =
                static_cast<std::int8_t>(kept.columns++);
    }
    kept.bounds.assign(kept.names.size() * kept.columns * size_, std::numeric_limits<double>::infinity());
    structures_ = std::move(kept);
}

void compact_reference_array::set_structure_bound(std::size_t i, const structure_bound& b) {
    check_index(i);
    const auto found = std::find(structures_.names.begin(), structures_.names.end(), b.structure);
    if (found == structures_.names.end())
        throw std::invalid_argument("set_structure_bound: structure '" + b.structure + "' is not kept: call "
                                    "keep_structures with it first");
    if (b.leaves != cells_[i].count)
        throw std::invalid_argument("set_structure_bound: a bound over " + std::to_string(b.leaves) +
                                    " terms for element " + std::to_string(i) + " of " +
                                    std::to_string(cells_[i].count) + ": compute it over the element's terms");
    const auto j = static_cast<std::size_t>(found - structures_.names.begin());
    for (std::size_t slot = 0; slot < b.error.size(); ++slot) {
        const int column = structures_.column_of[slot];
        if (column >= 0)
            structures_.bounds[(j * structures_.columns + static_cast<std::size_t>(column)) * size_ + i] =
                b.error[slot];
    }
}

const double* compact_reference_array::structure_bounds(const std::string& structure, dtype acc,
                                                       bool directed) const noexcept {
    const auto found = std::find(structures_.names.begin(), structures_.names.end(), structure);
    const int column = structures_.column_of[2 * static_cast<std::size_t>(acc) + (directed ? 1 : 0)];
    if (found == structures_.names.end() || column < 0) return nullptr;
    const auto j = static_cast<std::size_t>(found - structures_.names.begin());
    return structures_.bounds.data() + (j * structures_.columns + static_cast<std::size_t>(column)) * size_;
}

void compact_reference_array::append_structures(std::size_t i, reference& out) const {
    for (std::size_t j = 0; j < structures_.names.size(); ++j) {
        structure_bound b;
        b.structure = structures_.names[j];
        b.leaves = out.count;
        for (std::size_t slot = 0; slot < b.error.size(); ++slot) {
            const int column = structures_.column_of[slot];
            b.error[slot] = column < 0 ? std::numeric_limits<double>::infinity()
                                       : structures_.bounds[(j * structures_.columns +
                                                             static_cast<std::size_t>(column)) * size_ + i];
        }
        out.structures.push_back(std::move(b));
    }
}

template <floating_format T>
compact_reference_array sum_rows_compact(std::span<const T> data, std::size_t rows, std::size_t cols,
                                         const std::vector<standard>& structures) {
    compact_reference_array out = sum_rows_compact(data, rows, cols);
    out.keep_structures(structures);
    for (const standard& m : structures)
        for (std::size_t r = 0; r < rows; ++r) out.set_structure_bound(r, structured_bound(data.subspan(r * cols, cols), m));
    return out;
}

#define EXACTREF_AXIS_SUMS(T)                                                                                      \
    template void compact_reference_array::add<T>(std::size_t, std::span<const T>);                               \
    template compact_reference_array sum_rows_compact<T>(std::span<const T>, std::size_t, std::size_t);            \
    template compact_reference_array sum_rows_compact<T>(std::span<const T>, std::size_t, std::size_t,            \
                                                         const std::vector<standard>&);
EXACTREF_AXIS_SUMS(double)
EXACTREF_AXIS_SUMS(float)
EXACTREF_AXIS_SUMS(float16)
EXACTREF_AXIS_SUMS(bfloat16)
#undef EXACTREF_AXIS_SUMS

}  // namespace exactref
