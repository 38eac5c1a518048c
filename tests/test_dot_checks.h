// Shared by the dot and GEMM tests: a dot reference checked against the oracles (GMP rationals, MPFR's mpfr_sum,
// Boost rounding), bit for bit, including the special-value state and min_product_exponent.
#pragma once

#include <gtest/gtest.h>

#include <gmpxx.h>

#include <algorithm>
#include <bit>
#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include "exactref/multiprecision.h"
#include "exactref/reference.h"
#include "oracle.h"

namespace exactref::testing_support {
using namespace exactref;
namespace orc = exactref::oracle;

using bits_vector = std::vector<std::uint64_t>;

inline std::uint64_t sign_mask(const format_info& f) { return std::uint64_t{1} << (f.storage_bits - 1); }

inline bits_vector abs_bits(const bits_vector& v, const format_info& f) {
    bits_vector out(v);
    for (auto& b : out) b &= ~sign_mask(f);
    return out;
}

// floor(log2 |x·y|) of the smallest non-zero finite product, by the oracle's decode and GMP (independent of dot.cpp);
// INT_MAX when there is none.
inline int oracle_min_product_exponent(const bits_vector& x, const bits_vector& y, const format_info& f) {
    int best = INT_MAX;
    for (std::size_t i = 0; i < x.size(); ++i) {
        const orc::parts a = orc::decode(f, x[i]);
        const orc::parts b = orc::decode(f, y[i]);
        if (a.nan || a.inf || b.nan || b.inf || a.significand == 0 || b.significand == 0) continue;
        mpz_class m = mpz_class(std::to_string(a.significand)) * mpz_class(std::to_string(b.significand));
        const int e = static_cast<int>(mpz_sizeinbase(m.get_mpz_t(), 2)) - 1 + a.exponent + b.exponent;
        best = std::min(best, e);
    }
    return best;
}

inline void expect_same_special(const superaccumulator& acc, const orc::special_state& s, const char* what) {
    SCOPED_TRACE(what);
    EXPECT_EQ(acc.term_count(), s.count);
    EXPECT_EQ(acc.has_nan(), s.nan);
    EXPECT_EQ(acc.positive_inf_count(), s.pos_inf);
    EXPECT_EQ(acc.negative_inf_count(), s.neg_inf);
    EXPECT_EQ(acc.all_negative_zero(), s.all_negative_zero);
    EXPECT_EQ(acc.all_positive_zero(), s.all_positive_zero);
}

// Checks a dot reference against the oracles; `initial` (raw bits) is the beta = 1 term, if any.
inline void expect_matches_oracles(const reference& r, const bits_vector& x, const bits_vector& y, const format_info& f,
                            const std::uint64_t* initial = nullptr) {
    bits_vector xs = x, ys = y;
    if (initial != nullptr) {  // c = c·1 exactly: the oracles see the existing output as one more product
        xs.push_back(*initial);
        ys.push_back(static_cast<std::uint64_t>(f.emax) << (f.precision - 1));  // 1.0: biased exponent = bias = emax
    }
    const orc::gmp_exact g = orc::gmp_dot(xs, ys, f);
    const orc::gmp_exact g_abs = orc::gmp_dot(abs_bits(xs, f), abs_bits(ys, f), f);
    const orc::mpfr_exact m = orc::mpfr_dot(xs, ys, f);
    const orc::boost_exact b = orc::boost_dot(xs, ys, f);

    EXPECT_TRUE(r.is_dot);
    EXPECT_EQ(r.term_format, f.id);
    EXPECT_EQ(r.count, xs.size());
    expect_same_special(r.sum, g.special, "s");
    expect_same_special(r.abs_sum, g_abs.special, "T");
    EXPECT_EQ(to_mpq(r.sum), g.value) << "s = " << r.sum.to_decimal() << ", GMP: " << orc::gmp_decimal(g.value);
    EXPECT_EQ(to_mpq(r.abs_sum), g_abs.value) << "T = " << r.abs_sum.to_decimal();
    EXPECT_EQ(r.exact(), g.decimal());
    for (rounding mode : {rounding::to_nearest_even, rounding::toward_zero, rounding::upward, rounding::downward}) {
        SCOPED_TRACE(std::string(to_string(mode)));
        const std::uint64_t want = m.round_bits(f, mode);
        ASSERT_EQ(want, b.round_bits(f, mode)) << "the oracles disagree";
        EXPECT_EQ(r.sum.round_bits(f, mode), want)
            << "got " << orc::describe(r.sum.round_bits(f, mode), f) << ", want " << orc::describe(want, f);
    }
    const int smallest = oracle_min_product_exponent(x, y, f);
    const int clamped = std::min(smallest, f.emin);
    EXPECT_EQ(r.min_product_exponent, clamped);
    EXPECT_EQ(r.product_may_underflow, clamped < f.emin);
}


// Two references of the same dot product, field by field (exact values, special state, counts, underflow fields).
inline void expect_same_reference(const reference& got, const reference& want) {
    EXPECT_EQ(to_mpq(got.sum), to_mpq(want.sum)) << got.sum.to_decimal() << " vs " << want.sum.to_decimal();
    EXPECT_EQ(to_mpq(got.abs_sum), to_mpq(want.abs_sum));
    EXPECT_EQ(got.sum.term_count(), want.sum.term_count());
    EXPECT_EQ(got.abs_sum.term_count(), want.abs_sum.term_count());
    EXPECT_EQ(got.sum.has_nan(), want.sum.has_nan());
    EXPECT_EQ(got.sum.positive_inf_count(), want.sum.positive_inf_count());
    EXPECT_EQ(got.sum.negative_inf_count(), want.sum.negative_inf_count());
    EXPECT_EQ(got.abs_sum.has_nan(), want.abs_sum.has_nan());
    EXPECT_EQ(got.abs_sum.positive_inf_count(), want.abs_sum.positive_inf_count());
    EXPECT_EQ(got.sum.all_negative_zero(), want.sum.all_negative_zero());
    EXPECT_EQ(got.sum.all_positive_zero(), want.sum.all_positive_zero());
    EXPECT_EQ(got.abs_sum.all_positive_zero(), want.abs_sum.all_positive_zero());
    EXPECT_EQ(got.count, want.count);
    EXPECT_EQ(got.term_format, want.term_format);
    EXPECT_EQ(got.is_dot, want.is_dot);
    EXPECT_EQ(got.min_product_exponent, want.min_product_exponent);
    EXPECT_EQ(got.product_may_underflow, want.product_may_underflow);
}

}  // namespace exactref::testing_support
