// exactref/eigen.h — the Eigen face: exact references of products of Eigen matrices, and covers() of a result matrix.
//
//   Eigen::MatrixXf a = ..., b = ...;                       // any dense matrix, map, block or expression
//   exactref::reference_array refs = exactref::matmul(a, b); // exact s and T per element (gemm.h)
//   Eigen::MatrixXf c = a * b;                              // Eigen's own float GEMM
//   auto v = exactref::covers(c, refs, exactref::any_order());
//   v.covered;                                              // -> true: every element within n·u·T
//   v.message();                                            // count, worst (i, j) and its ratio, first violations
//
// Scalars: double, float, exactref::float16, exactref::bfloat16, and Eigen::half / Eigen::bfloat16 (the same bits as
// exactref::float16 / bfloat16). Storage: column- or row-major, any inner and outer stride (Map with Stride, blocks,
// transposes); an expression without direct access is evaluated once into a temporary first (its elements are
// rounded to the scalar type by Eigen, as the expression says); this holds for a result passed to covers() too. The
// exactness and bounds are those of gemm.h and standard.h (dot rows: any_order n·u·T, split_k, mixed, directed;
// Higham (3.5), Jeannerod–Rump SIMAX 34 (2013)). With exactref/gtest.h, EXPECT_THAT(c, exactref::CoversAll(refs))
// takes an Eigen result too, and EXPECT_THAT(h, exactref::Covers(ref)) an Eigen::half / Eigen::bfloat16 scalar.
#pragma once

#include "exactref/config.h"  // C++20, or a clear error

#include <Eigen/Core>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <ostream>  // PrintTo
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "exactref/covers.h"
#include "exactref/format.h"
#include "exactref/gemm.h"
#include "exactref/reference.h"
#include "exactref/standard.h"

namespace exactref {

namespace detail {

/// The library format of an Eigen scalar type (void when unsupported).
template <class S>
struct eigen_format {
    using type = void;
};
template <>
struct eigen_format<double> {
    using type = double;
};
template <>
struct eigen_format<float> {
    using type = float;
};
template <>
struct eigen_format<float16> {
    using type = float16;
};
template <>
struct eigen_format<bfloat16> {
    using type = bfloat16;
};
template <>
struct eigen_format<Eigen::half> {
    using type = float16;
};
template <>
struct eigen_format<Eigen::bfloat16> {
    using type = bfloat16;
};
template <class S>
using eigen_format_t = typename eigen_format<std::remove_cv_t<S>>::type;

template <class S>
inline constexpr bool is_eigen_format = !std::is_void_v<eigen_format_t<S>>;

/// A matrix_view of an Eigen dense object, with the storage it needs kept alive: the object's own memory when it has
/// direct access and the library's scalar type, else a row-major copy of its elements.
template <class T>
struct eigen_view {
    std::vector<T> copy;
    matrix_view<T> view;
};

template <class T, class Derived>
eigen_view<T> make_eigen_view(const Eigen::MatrixBase<Derived>& m) {
    using S = typename Derived::Scalar;
    static_assert(sizeof(S) == sizeof(T), "an Eigen scalar is stored as its library format");
    eigen_view<T> out;
    const auto rows = static_cast<std::size_t>(m.rows());
    const auto cols = static_cast<std::size_t>(m.cols());
    constexpr bool direct = (Eigen::internal::traits<Derived>::Flags & Eigen::DirectAccessBit) != 0;
    if constexpr (direct && std::is_same_v<S, T>) {
        const auto& d = m.derived();
        const auto inner = static_cast<std::ptrdiff_t>(d.innerStride());
        const auto outer = static_cast<std::ptrdiff_t>(d.outerStride());
        out.view.data = d.data();
        out.view.rows = rows;
        out.view.cols = cols;
        out.view.row_stride = Derived::IsRowMajor ? outer : inner;
        out.view.col_stride = Derived::IsRowMajor ? inner : outer;
    } else {
        // An expression (a product, a sum) is evaluated once here, not once per element read below.
        const auto& evaluated = m.derived().eval();
        out.copy.resize(rows * cols);
        for (std::size_t i = 0; i < rows; ++i)
            for (std::size_t j = 0; j < cols; ++j) {
                const S value = evaluated(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j));
                out.copy[i * cols + j] = std::bit_cast<T>(value);
            }
        out.view = {out.copy.data(), rows, cols, static_cast<std::ptrdiff_t>(cols), 1};
    }
    return out;
}

/// A result as row-major values of T, read once: the object's own memory when it is row-major contiguous storage of
/// T, else a copy (an expression is evaluated once by make_eigen_view, not once per element read). `values` may point
/// into `copy` or `source.copy`: moving keeps their buffers, copying would not, so it is only ever moved.
template <class T>
struct row_major_values {
    eigen_view<T> source;
    std::vector<T> copy;
    std::span<const T> values;
    row_major_values() = default;
    row_major_values(row_major_values&&) noexcept = default;
    row_major_values(const row_major_values&) = delete;
};

template <class T, class Derived>
row_major_values<T> read_row_major(const Eigen::MatrixBase<Derived>& m) {
    row_major_values<T> out;
    out.source = make_eigen_view<T>(m);
    const matrix_view<T>& v = out.source.view;
    if (v.col_stride == 1 && v.row_stride == static_cast<std::ptrdiff_t>(v.cols)) {
        out.values = std::span<const T>(v.data, v.rows * v.cols);
    } else {
        out.copy.reserve(v.rows * v.cols);
        for (std::size_t i = 0; i < v.rows; ++i)
            for (std::size_t j = 0; j < v.cols; ++j) out.copy.push_back(v(i, j));
        out.values = std::span<const T>(out.copy);
    }
    return out;
}

template <class DA, class DB>
void check_same_scalar() {
    static_assert(is_eigen_format<typename DA::Scalar>,
                  "exactref: the scalar type must be double, float, exactref::float16/bfloat16 or Eigen::half/bfloat16");
    static_assert(std::is_same_v<eigen_format_t<typename DA::Scalar>, eigen_format_t<typename DB::Scalar>>,
                  "exactref: both matrices must have the same scalar type (cast one of them first)");
}

}  // namespace detail

/// The exact product A·B of two Eigen matrices in compact form (gemm.h, product_reference). Any storage order and
/// stride; A is m x K, B is K x n, same scalar type. Throws std::invalid_argument when A.cols() != B.rows().
template <class DA, class DB>
product_reference exact_matmul(const Eigen::MatrixBase<DA>& a, const Eigen::MatrixBase<DB>& b,
                               const matmul_options& options = {}) {
    detail::check_same_scalar<DA, DB>();
    using T = detail::eigen_format_t<typename DA::Scalar>;
    const auto va = detail::make_eigen_view<T>(a);
    const auto vb = detail::make_eigen_view<T>(b);
    return exact_matmul<T>(va.view, vb.view, nullptr, options);
}

/// C0 + A·B (beta = 1): C0(i, j) counts as one more term of element (i, j). C0 is m x n.
template <class DA, class DB, class DC>
product_reference exact_matmul(const Eigen::MatrixBase<DA>& a, const Eigen::MatrixBase<DB>& b,
                               const Eigen::MatrixBase<DC>& c0, const matmul_options& options = {}) {
    detail::check_same_scalar<DA, DB>();
    detail::check_same_scalar<DA, DC>();
    using T = detail::eigen_format_t<typename DA::Scalar>;
    const auto va = detail::make_eigen_view<T>(a);
    const auto vb = detail::make_eigen_view<T>(b);
    const auto vc = detail::make_eigen_view<T>(c0);
    return exact_matmul<T>(va.view, vb.view, &vc.view, options);
}

/// The exact reference of A·B, one reference per element (rows x cols, row-major): exact_matmul(a, b).to_array().
///   Eigen::MatrixXd a(2, 2), b(2, 2); a << 1, 2, 3, 4; b << 5, 6, 7, 8;
///   exactref::matmul(a, b)(0, 1).exact();    // -> "22"
template <class DA, class DB>
reference_array matmul(const Eigen::MatrixBase<DA>& a, const Eigen::MatrixBase<DB>& b,
                       const matmul_options& options = {}) {
    return exact_matmul(a, b, options).to_array(options.threads);
}
template <class DA, class DB, class DC>
reference_array matmul(const Eigen::MatrixBase<DA>& a, const Eigen::MatrixBase<DB>& b,
                       const Eigen::MatrixBase<DC>& c0, const matmul_options& options = {}) {
    return exact_matmul(a, b, c0, options).to_array(options.threads);
}

/// covers() of a whole result matrix: array_verdict (count of violations, the worst element and its verdict, the
/// first violations as row-major indices) plus the same positions as (row, column).
struct matrix_verdict : array_verdict {
    std::size_t rows = 0;
    std::size_t cols = 0;
    std::size_t worst_row = 0, worst_col = 0;                              // position of `worst`
    std::vector<std::pair<std::size_t, std::size_t>> first_violation_positions;  // up to 8, in row-major order

    /// "3 of 262144 results not covered by any_order; first violations at (0, 5) (17, 2) ...", then the worst
    /// element's position and verdict (exact value, result, error, bound, ratio, ulps).
    std::string message() const {
        if (size == 0)
            return "no results to judge: the product is " + std::to_string(rows) + " x " + std::to_string(cols);
        std::ostringstream os;
        os << (covered ? "all " + std::to_string(size) + " results covered by " + worst.standard
                       : std::to_string(violations) + " of " + std::to_string(size) + " results not covered by " +
                             worst.standard);
        if (!first_violation_positions.empty()) {
            os << "; first violations at";
            for (const auto& [i, j] : first_violation_positions) os << " (" << i << ", " << j << ")";
        }
        os << "\nworst at (" << worst_row << ", " << worst_col << "), ratio " << worst.ratio << ":\n"
           << worst.message();
        return os.str();
    }
};

namespace detail {

inline matrix_verdict with_positions(array_verdict v, std::size_t rows, std::size_t cols) {
    matrix_verdict out;
    static_cast<array_verdict&>(out) = std::move(v);
    out.rows = rows;
    out.cols = cols;
    if (cols != 0) {
        out.worst_row = out.worst_index / cols;
        out.worst_col = out.worst_index % cols;
        for (std::size_t k : out.first_violations) out.first_violation_positions.emplace_back(k / cols, k % cols);
    }
    return out;
}

template <class Derived>
void check_result_shape(const Eigen::MatrixBase<Derived>& result, std::size_t rows, std::size_t cols) {
    if (static_cast<std::size_t>(result.rows()) != rows || static_cast<std::size_t>(result.cols()) != cols)
        throw std::invalid_argument("exactref::covers: the result is " + std::to_string(result.rows()) + " x " +
                                    std::to_string(result.cols()) + " but the reference is " + std::to_string(rows) +
                                    " x " + std::to_string(cols) + ": pass the result of the same product");
}

}  // namespace detail

/// Is every element of `result` covered by `model` for its reference? Decided exactly per element (covers.h).
///   result   rows x cols, any storage order, stride or expression (an expression is evaluated once first), scalar
///            among the supported ones (the result's format: for mixed(acc, out) it must be `out`)
///   refs     matmul(a, b) of the same shape
/// The result's scalar type is taken as its format: a float GEMM result cast to MatrixXd is judged as a float64
/// result, which it is not (pass the matrix the computation produced).
/// Throws std::invalid_argument for a shape mismatch (and whatever covers_bits throws for a standard that does not
/// apply).
template <class DR>
matrix_verdict covers(const Eigen::MatrixBase<DR>& result, const reference_array& refs, const standard& model) {
    static_assert(detail::is_eigen_format<typename DR::Scalar>, "exactref: unsupported result scalar type");
    using T = detail::eigen_format_t<typename DR::Scalar>;
    detail::check_result_shape(result, refs.rows, refs.cols);
    const auto values = detail::read_row_major<T>(result);
    return detail::with_positions(covers(values.values, refs, model), refs.rows, refs.cols);
}

/// Every element of `result` (any shape: runs of one sum as a vector, say) against the same reference `ref`.
/// Throws what covers_bits throws for a standard that does not apply.
///   Eigen::VectorXf runs = ...;   // the same sum computed in several orders
///   covers(runs, exactref::sum(terms), exactref::any_order()).covered;
template <class DR>
matrix_verdict covers(const Eigen::MatrixBase<DR>& result, const reference& ref, const standard& model) {
    static_assert(detail::is_eigen_format<typename DR::Scalar>, "exactref: unsupported result scalar type");
    using T = detail::eigen_format_t<typename DR::Scalar>;
    const auto values = detail::read_row_major<T>(result);
    return detail::with_positions(covers(values.values, ref, model), static_cast<std::size_t>(result.rows()),
                                  static_cast<std::size_t>(result.cols()));
}

/// covers() of one Eigen::half or Eigen::bfloat16 result: the same bits as exactref::float16 / bfloat16 (covers.h).
template <class S>
    requires(detail::is_eigen_format<S> && !floating_format<S>)
verdict covers(S result, const reference& ref, const standard& model) {
    return covers(std::bit_cast<detail::eigen_format_t<S>>(result), ref, model);
}

/// The same against a compact product_reference: covers() over the product itself (covers.h; no reference_array is
/// built, ~2 bytes of decisions and ratio bounds per element beside a copy of the result in the library's scalar type).
template <class DR>
matrix_verdict covers(const Eigen::MatrixBase<DR>& result, const product_reference& refs, const standard& model) {
    static_assert(detail::is_eigen_format<typename DR::Scalar>, "exactref: unsupported result scalar type");
    using T = detail::eigen_format_t<typename DR::Scalar>;
    detail::check_result_shape(result, refs.rows(), refs.cols());
    const auto values = detail::read_row_major<T>(result);
    return detail::with_positions(covers(values.values, refs, model), refs.rows(), refs.cols());
}

}  // namespace exactref

namespace Eigen {

/// GoogleTest's printer for Eigen matrices, arrays and expressions (found by argument-dependent lookup; GoogleTest
/// alone calls PrintTo): the shape and at most the first four values in row-major order, e.g.
///   "64 x 32 Eigen matrix, row-major [0.5, 0.25, 1, 2, ... 2048 values]"
/// instead of every value: a failing EXPECT_THAT(c, exactref::CoversAll(refs)) on a 64 x 32 result prints the
/// verdict's summary, standard and worst element (matrix_verdict::message()), not 2,048 numbers. An expression is
/// evaluated once. Beats GoogleTest's catch-all PrintTo by its constraint (the same parameter form, more constrained).
template <class T>
    requires std::is_base_of_v<DenseBase<T>, T>
void PrintTo(const T& m, std::ostream* os) {
    constexpr Index shown = 4;
    const typename T::PlainObject values = m;
    const Index n = values.rows() * values.cols();
    *os << values.rows() << " x " << values.cols() << " Eigen matrix, row-major [";
    for (Index k = 0; k < n && k < shown; ++k) {
        *os << (k ? ", " : "");
        if constexpr (std::is_arithmetic_v<typename T::Scalar>)
            *os << values(k / values.cols(), k % values.cols());
        else
            *os << static_cast<float>(values(k / values.cols(), k % values.cols()));  // Eigen::half, bfloat16
    }
    if (n > shown) *os << ", ... " << n << " values";
    *os << "]";
}

}  // namespace Eigen
