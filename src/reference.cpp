// References of several sums at once.
#include <stdexcept>
#include <string>

#include "exactref/reference.h"

namespace exactref {

template <floating_format T>
reference_array sum_rows(std::span<const T> data, std::size_t rows, std::size_t cols) {
    if (cols != 0 && rows > data.size() / cols)
        throw std::invalid_argument("sum_rows: " + std::to_string(rows) + " x " + std::to_string(cols) +
                                    " does not fit in " + std::to_string(data.size()) + " elements");
    if (data.size() != rows * cols)
        throw std::invalid_argument("sum_rows: " + std::to_string(data.size()) + " elements for a " +
                                    std::to_string(rows) + " x " + std::to_string(cols) +
                                    " matrix: pass exactly rows * cols elements, row-major");
    reference_array out;
    out.rows = rows;
    out.cols = 1;
    out.elements.reserve(rows);
    for (std::size_t i = 0; i < rows; ++i) out.elements.push_back(sum(data.subspan(i * cols, cols)));
    return out;
}

template reference_array sum_rows<double>(std::span<const double>, std::size_t, std::size_t);
template reference_array sum_rows<float>(std::span<const float>, std::size_t, std::size_t);
template reference_array sum_rows<float16>(std::span<const float16>, std::size_t, std::size_t);
template reference_array sum_rows<bfloat16>(std::span<const bfloat16>, std::size_t, std::size_t);

}  // namespace exactref
