// Comparisons of compact reference arrays shared by the scatter tests (test_scatter_threads.cpp,
// test_scatter_dense.cpp): where two arrays differ bit for bit, and one element against the MPFR and GMP oracles.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "exactref/scatter.h"
#include "oracle.h"

namespace scatter_checks {

namespace er = exactref;
namespace oracle = exactref::oracle;

// Where two arrays differ ("" when they hold the same bits): each element's cell, or its pair when spilled.
inline std::string difference(const er::compact_reference_array& a, const er::compact_reference_array& b) {
    if (a.size() != b.size() || a.shape() != b.shape()) return "shapes differ";
    if (a.spilled() != b.spilled())
        return "spilled " + std::to_string(a.spilled()) + " vs " + std::to_string(b.spilled());
    er::compact_reference_array::reader ra(a), rb(b);
    for (std::size_t i = 0; i < a.size(); ++i) {
        const er::compact_reference_array::cell ca = ra.state(i), cb = rb.state(i);
        const bool same_cell = ca.abs_lo == cb.abs_lo && ca.abs_hi == cb.abs_hi && ca.count == cb.count &&
                               ca.exponent == cb.exponent && ca.state == cb.state &&
                               ((ca.state & 1u) != 0 || (ca.sum_lo == cb.sum_lo && ca.sum_hi == cb.sum_hi));
        if (!same_cell) return "element " + std::to_string(i) + ": cells differ";
        if (ca.state & 1u) {  // spilled: the pairs, wherever each array keeps them
            const auto& pa = ra.pair(ca);
            const auto& pb = rb.pair(cb);
            auto same_value = [](er::superaccumulator x, er::superaccumulator y) {  // x - y == 0, exactly
                y.negate();
                x.merge(y);
                return x.sign() == 0;
            };
            if (!same_value(pa.sum, pb.sum) || !same_value(pa.abs_sum, pb.abs_sum) ||
                pa.sum.term_count() != pb.sum.term_count() ||
                pa.sum.has_nan() != pb.sum.has_nan() || pa.sum.positive_inf_count() != pb.sum.positive_inf_count() ||
                pa.sum.negative_inf_count() != pb.sum.negative_inf_count() ||
                pa.sum.all_negative_zero() != pb.sum.all_negative_zero())
                return "element " + std::to_string(i) + ": pairs differ";
        }
    }
    return "";
}

// Element k of refs against the MPFR and GMP oracles (its terms as raw bits of f).
inline void expect_oracle(const er::compact_reference_array& refs, std::size_t k, const er::format_info& f,
                   const std::vector<std::uint64_t>& terms, const std::string& where) {
    SCOPED_TRACE(where + ", element " + std::to_string(k));
    const oracle::mpfr_exact m = oracle::mpfr_sum(std::span<const std::uint64_t>(terms), f);
    ASSERT_EQ(refs.count(k), terms.size());
    for (er::rounding mode : {er::rounding::to_nearest_even, er::rounding::downward, er::rounding::upward})
        ASSERT_EQ(refs.nearest_bits(k, f, mode), m.round_bits(f, mode));
    ASSERT_EQ(refs.exact(k), oracle::gmp_sum(std::span<const std::uint64_t>(terms), f).decimal());
}

// A binary64 bincount loop, out[ids[i]] += values[i] in input order from `initial` (one value per segment), with a
// planted fault at position `at`: 0 none, 1 the update dropped, 2 applied twice, 3 applied to the next segment (an
// index off by one), 4 the segment's initial value lost.
inline std::vector<double> faulty_bincount(const std::vector<double>& values, const std::vector<std::int64_t>& ids,
                                           std::vector<double> initial, std::size_t at, int fault) {
    std::vector<double> out = std::move(initial);
    const std::size_t segments = out.size();
    if (fault == 4) out[static_cast<std::size_t>(ids[at])] = 0.0;
    for (std::size_t i = 0; i < values.size(); ++i) {
        auto k = static_cast<std::size_t>(ids[i]);
        if (i == at && fault == 1) continue;
        if (i == at && fault == 2) out[k] += values[i];
        if (i == at && fault == 3) k = (k + 1) % segments;
        out[k] += values[i];
    }
    return out;
}

}  // namespace scatter_checks
