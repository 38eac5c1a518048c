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
#pragma once

#include <gmock/gmock.h>

#include <ostream>
#include <ranges>
#include <span>
#include <type_traits>
#include <utility>

#include "exactref/covers.h"
#include "exactref/reference.h"
#include "exactref/standard.h"

namespace exactref {

namespace detail {

class covers_matcher_impl {
public:
    covers_matcher_impl(reference ref, standard model) : ref_(std::move(ref)), model_(std::move(model)) {}

    template <class T>
        requires floating_format<std::remove_cvref_t<T>>
    bool MatchAndExplain(const T& result, ::testing::MatchResultListener* listener) const {
        const verdict v = covers(result, ref_, model_);
        *listener << "\n" << v.message();
        return v.covered;
    }

    void DescribeTo(std::ostream* os) const {
        *os << "is covered by " << model_.name() << " for the exact value " << ref_.exact();
    }
    void DescribeNegationTo(std::ostream* os) const {
        *os << "is not covered by " << model_.name() << " for the exact value " << ref_.exact();
    }

private:
    reference ref_;
    standard model_;
};

// One reference for every element (runs of one sum), or one per element (reference_array).
template <class Refs>
class covers_all_matcher_impl {
public:
    covers_all_matcher_impl(Refs refs, standard model) : refs_(std::move(refs)), model_(std::move(model)) {}

    template <class Range>
        requires std::ranges::contiguous_range<Range> &&
                 floating_format<std::remove_cv_t<std::ranges::range_value_t<Range>>>
    bool MatchAndExplain(const Range& results, ::testing::MatchResultListener* listener) const {
        using T = std::remove_cv_t<std::ranges::range_value_t<Range>>;
        const array_verdict v =
            covers(std::span<const T>(std::ranges::data(results), std::ranges::size(results)), refs_, model_);
        *listener << "\n" << v.message();
        return v.covered;
    }

    void DescribeTo(std::ostream* os) const { *os << "every element is covered by " << model_.name(); }
    void DescribeNegationTo(std::ostream* os) const { *os << "some element is not covered by " << model_.name(); }

private:
    Refs refs_;
    standard model_;
};

}  // namespace detail

/// Matches a scalar result (double, float, float16, bfloat16) covered by `model` for `ref`.
inline ::testing::PolymorphicMatcher<detail::covers_matcher_impl> Covers(reference ref,
                                                                          standard model = any_order()) {
    return ::testing::MakePolymorphicMatcher(detail::covers_matcher_impl(std::move(ref), std::move(model)));
}

/// Matches a contiguous range of results, each covered by `model` for the same `ref`.
inline ::testing::PolymorphicMatcher<detail::covers_all_matcher_impl<reference>> CoversAll(
    reference ref, standard model = any_order()) {
    return ::testing::MakePolymorphicMatcher(
        detail::covers_all_matcher_impl<reference>(std::move(ref), std::move(model)));
}

/// Matches a contiguous range of results, element i covered for refs.elements[i] (row-major).
inline ::testing::PolymorphicMatcher<detail::covers_all_matcher_impl<reference_array>> CoversAll(
    reference_array refs, standard model = any_order()) {
    return ::testing::MakePolymorphicMatcher(
        detail::covers_all_matcher_impl<reference_array>(std::move(refs), std::move(model)));
}

}  // namespace exactref
