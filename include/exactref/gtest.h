// exactref/gtest.h — GoogleTest/GoogleMock matchers: EXPECT_THAT(result, exactref::Covers(ref, standard)).
//
// Link exactref::gtest (it brings GTest::gmock). On failure the message shows the exact value, the result, the
// error, the bound, the ratio error/bound and the error in ulps (verdict::message()):
//
//   auto ref = exactref::sum(values);                       // values: std::vector<float>
//   EXPECT_THAT(total, exactref::Covers(ref, exactref::any_order()));
//   // Value of: total
//   // Expected: is covered by any_order for the exact value 30.604261366177525...
//   //   Actual: 31.5 (of type float),
//   // NOT COVERED by any_order (float32)
//   //   exact s     = 30.604261366177525...
//   //   ...
//   EXPECT_THAT(std::span<const float>(runs), exactref::CoversAll(ref, exactref::tree(14)));
//
// With exactref/eigen.h included as well (either order), the matchers also take Eigen values:
//   EXPECT_THAT(Eigen::half(1.75f), exactref::Covers(ref));              // Eigen::half / Eigen::bfloat16 scalars
//   EXPECT_THAT(c, exactref::CoversAll(exactref::matmul(a, b)));         // c = a * b, any Eigen matrix or expression
//   EXPECT_THAT(c, exactref::CoversAll(exactref::exact_matmul(a, b)));   // the compact product_reference
//   EXPECT_THAT(runs, exactref::CoversAll(ref));                         // an Eigen vector of runs of one sum
// (the failure message then names positions as (row, column): eigen.h's matrix_verdict).
//
// Errors: when covers() throws while matching (a result array whose size differs from the references', a standard
// that does not apply to the result's format), the matcher reports a non-match whose explanation is the error's
// message ("could not be judged: ..."), and also records one test failure of its own: an input that cannot be judged
// fails the test under ::testing::Not() as well, instead of passing as "not covered".
//
// A vacuous check (verdict::vacuous: B >= S, it cannot see a lost or doubled term, not even a result of 0) starts
// the explanation with "(vacuous: <advice>)", so that a passing EXPECT_THAT under ::testing::Not() or a failure
// message shows it; for CoversAll, when the worst element's check is vacuous.
//
// float16 and bfloat16 values print in failure messages as "1.75 (float16 0x1.cp+0)" (shortest decimal that reads
// back, and the exact hex; io.h) instead of their raw bytes.
#pragma once

#include "exactref/config.h"  // C++20, or a clear error

#include <gmock/gmock.h>

#include <concepts>
#include <cstddef>
#include <exception>
#include <memory>
#include <ostream>
#include <ranges>
#include <span>
#include <string>
#include <type_traits>
#include <utility>

#include "exactref/covers.h"
#include "exactref/format.h"
#include "exactref/gemm.h"  // product_reference
#include "exactref/io.h"    // to_shortest_string, to_hex_string
#include "exactref/reference.h"
#include "exactref/standard.h"

namespace exactref {

/// GoogleTest's printer for float16: "1.75 (float16 0x1.cp+0)" (found by argument-dependent lookup).
inline void PrintTo(const float16& x, std::ostream* os) {
    *os << to_shortest_string(x) << " (float16 " << to_hex_string(x) << ")";
}
/// GoogleTest's printer for bfloat16: "1.75 (bfloat16 0x1.cp+0)".
inline void PrintTo(const bfloat16& x, std::ostream* os) {
    *os << to_shortest_string(x) << " (bfloat16 " << to_hex_string(x) << ")";
}

namespace detail {

// A scalar result that covers(result, reference, standard) judges: the library's formats (covers.h), and
// Eigen::half / Eigen::bfloat16 once eigen.h is included (its overload is found by argument-dependent lookup through
// exactref::reference).
template <class T>
concept matcher_scalar = requires(const T& r, const reference& ref, const standard& model) {
    { covers(r, ref, model) } -> std::same_as<verdict>;
};

// A contiguous range of library-format results judged through std::span (covers.h).
template <class Range, class Refs>
concept matcher_span = std::ranges::contiguous_range<Range> &&
                       floating_format<std::remove_cv_t<std::ranges::range_value_t<Range>>> &&
                       requires(std::span<const std::remove_cv_t<std::ranges::range_value_t<Range>>> s,
                                const Refs& refs, const standard& model) {
                           { covers(s, refs, model) } -> std::derived_from<array_verdict>;
                       };

// Any other collection for which covers() has an overload (eigen.h: Eigen matrices, vectors and expressions).
template <class Results, class Refs>
concept matcher_collection = requires(const Results& r, const Refs& refs, const standard& model) {
    { covers(r, refs, model) } -> std::derived_from<array_verdict>;
};

// covers() threw: a non-match explained by the error, plus one test failure of the matcher's own (once per matcher
// object: GoogleTest runs a failing matcher a second time to collect the explanation). Without that failure,
// ::testing::Not(Covers(...)) would read the error as "not covered" and pass.
inline bool report_error(const char* matcher, const std::exception& e, ::testing::MatchResultListener* listener,
                         bool& reported) {
    *listener << "could not be judged: " << e.what();
    if (!reported) {
        reported = true;
        ADD_FAILURE() << "exactref::" << matcher << " could not judge the result: " << e.what();
    }
    return false;
}

// " (vacuous: <advice>)" when the verdict's check could see no lost or doubled term (verdict::vacuous): a match then
// says nothing about the result, so the explanation says so first, in the success and in the failure message.
inline std::string vacuity_note(const verdict& v) { return v.vacuous ? " (vacuous: " + v.advice + ")" : ""; }

class covers_matcher_impl {
public:
    covers_matcher_impl(reference ref, standard model)
        : ref_(std::make_shared<const reference>(std::move(ref))), model_(std::move(model)) {}

    template <class T>
        requires matcher_scalar<std::remove_cvref_t<T>>
    bool MatchAndExplain(const T& result, ::testing::MatchResultListener* listener) const {
        try {
            const verdict v = covers(result, *ref_, model_);
            *listener << vacuity_note(v) << "\n" << v.message();
            return v.covered;
        } catch (const std::exception& e) {
            return report_error("Covers", e, listener, error_reported_);
        }
    }

    void DescribeTo(std::ostream* os) const {
        *os << "is covered by " << model_.name() << " for the exact value " << ref_->exact();
    }
    void DescribeNegationTo(std::ostream* os) const {
        *os << "is not covered by " << model_.name() << " for the exact value " << ref_->exact();
    }

private:
    std::shared_ptr<const reference> ref_;  // shared: GoogleTest copies matchers freely
    standard model_;
    mutable bool error_reported_ = false;
};

// "the exact value 6" / "their exact values [3, 7] (2 x 1)": at most four values, row-major.
inline void describe_exact(std::ostream* os, const reference& ref) { *os << "the exact value " << ref.exact(); }

template <class Element>
void describe_exact_values(std::ostream* os, std::size_t rows, std::size_t cols, const Element& element) {
    constexpr std::size_t shown = 4;
    const std::size_t n = rows * cols;
    *os << "their exact values [";
    for (std::size_t k = 0; k < n && k < shown; ++k) *os << (k ? ", " : "") << element(k / cols, k % cols);
    if (n > shown) *os << ", ... " << n << " values";
    *os << "] (" << rows << " x " << cols << ")";
}
inline void describe_exact(std::ostream* os, const reference_array& refs) {
    describe_exact_values(os, refs.rows, refs.cols, [&](std::size_t i, std::size_t j) { return refs(i, j).exact(); });
}
inline void describe_exact(std::ostream* os, const product_reference& refs) {
    describe_exact_values(os, refs.rows(), refs.cols(),
                          [&](std::size_t i, std::size_t j) { return refs.element(i, j).exact(); });
}

// One reference for every element (runs of one sum), or one per element (reference_array, product_reference).
template <class Refs>
class covers_all_matcher_impl {
public:
    covers_all_matcher_impl(Refs refs, standard model)
        : refs_(std::make_shared<const Refs>(std::move(refs))), model_(std::move(model)) {}

    template <class Results>
        requires matcher_span<Results, Refs> || matcher_collection<Results, Refs>
    bool MatchAndExplain(const Results& results, ::testing::MatchResultListener* listener) const {
        try {
            if constexpr (matcher_span<Results, Refs>) {
                using T = std::remove_cv_t<std::ranges::range_value_t<Results>>;
                const auto v =
                    covers(std::span<const T>(std::ranges::data(results), std::ranges::size(results)), *refs_, model_);
                *listener << vacuity_note(v.worst) << "\n" << v.message();
                return v.covered;
            } else {
                const auto v = covers(results, *refs_, model_);  // eigen.h: positions as (row, column)
                *listener << vacuity_note(v.worst) << "\n" << v.message();
                return v.covered;
            }
        } catch (const std::exception& e) {
            return report_error("CoversAll", e, listener, error_reported_);
        }
    }

    void DescribeTo(std::ostream* os) const {
        *os << "every element is covered by " << model_.name() << " for ";
        describe_exact(os, *refs_);
    }
    void DescribeNegationTo(std::ostream* os) const {
        *os << "some element is not covered by " << model_.name() << " for ";
        describe_exact(os, *refs_);
    }

private:
    std::shared_ptr<const Refs> refs_;  // shared: GoogleTest copies matchers; a product_reference is move-only
    standard model_;
    mutable bool error_reported_ = false;
};

}  // namespace detail

/// Matches a scalar result (double, float, float16, bfloat16; Eigen::half and Eigen::bfloat16 with eigen.h) covered
/// by `model` for `ref`. An error while judging (a standard that does not apply) is a failure (file comment).
inline ::testing::PolymorphicMatcher<detail::covers_matcher_impl> Covers(reference ref,
                                                                          standard model = any_order()) {
    return ::testing::MakePolymorphicMatcher(detail::covers_matcher_impl(std::move(ref), std::move(model)));
}

/// Matches results each covered by `model` for the same `ref`: a contiguous range (std::vector, std::array,
/// std::span) of double, float, float16 or bfloat16, or with eigen.h any Eigen matrix, vector or expression.
inline ::testing::PolymorphicMatcher<detail::covers_all_matcher_impl<reference>> CoversAll(
    reference ref, standard model = any_order()) {
    return ::testing::MakePolymorphicMatcher(
        detail::covers_all_matcher_impl<reference>(std::move(ref), std::move(model)));
}

/// Matches results, element i covered for refs.elements[i] (row-major): a contiguous range of refs.size() results,
/// or with eigen.h an Eigen matrix of refs.rows x refs.cols (matmul(a, b)'s result, any storage order). A size or
/// shape mismatch is a failure whose message gives both sizes.
inline ::testing::PolymorphicMatcher<detail::covers_all_matcher_impl<reference_array>> CoversAll(
    reference_array refs, standard model = any_order()) {
    return ::testing::MakePolymorphicMatcher(
        detail::covers_all_matcher_impl<reference_array>(std::move(refs), std::move(model)));
}

/// Matches an Eigen result matrix (eigen.h) against the compact exact product exact_matmul(a, b), element (i, j)
/// judged for p.element(i, j) one at a time (no reference_array is built).
inline ::testing::PolymorphicMatcher<detail::covers_all_matcher_impl<product_reference>> CoversAll(
    product_reference refs, standard model = any_order()) {
    return ::testing::MakePolymorphicMatcher(
        detail::covers_all_matcher_impl<product_reference>(std::move(refs), std::move(model)));
}

}  // namespace exactref
