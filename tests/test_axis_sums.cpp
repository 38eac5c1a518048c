// Row sums into compact reference arrays (scatter.h: sum_rows_compact, compact_reference_array::add of a run and
// merge of a reference): every element against sum_rows's full reference (every observable field) and the MPFR and
// GMP oracles bit for bit, on random and adversarial rows on both sides of kernel_terms; covers() over the compact
// rows against the reference_array's verdicts, and planted faults of a row-sum kernel rejected.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <utility>  // std::pair
#include <vector>

#include "accumulator_checks.h"  // expect_same_accumulators, all_formats, all_modes
#include "exactref/covers.h"
#include "exactref/detail/covers_filter.h"
#include "exactref/reference.h"
#include "exactref/scatter.h"
#include "exactref/standard.h"
#include "oracle.h"

namespace er = exactref;
namespace oracle = exactref::oracle;
using ::testing::HasSubstr;
using exactref_test::all_formats;
using exactref_test::all_modes;

namespace {

constexpr std::size_t kernel = er::compact_reference_array::kernel_terms;

// rows x cols N(0,1) values of T, row-major.
template <class T>
std::vector<T> normal_rows(std::size_t rows, std::size_t cols, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> normal;
    std::vector<T> out(rows * cols);
    for (T& x : out) x = static_cast<T>(normal(rng));
    return out;
}

// Element e of `refs` against the full reference `want` of the same terms (exactref::sum / sum_rows) and the oracles.
void expect_element(const er::compact_reference_array& refs, std::size_t e, const er::reference& want,
                    const er::format_info& f, std::span<const std::uint64_t> terms, const std::string& where) {
    SCOPED_TRACE(where + ", element " + std::to_string(e) + " of " + std::to_string(terms.size()) + " terms");
    ASSERT_EQ(refs.count(e), want.count);
    ASSERT_EQ(refs.count(e), terms.size());
    const er::reference got = refs.element(e);
    ASSERT_EQ(got.count, want.count);
    ASSERT_EQ(got.term_format, want.term_format);
    {
        SCOPED_TRACE("sum");
        exactref_test::expect_same_accumulators(got.sum, want.sum);
    }
    {
        SCOPED_TRACE("abs_sum");
        exactref_test::expect_same_accumulators(got.abs_sum, want.abs_sum);
    }
    ASSERT_FALSE(::testing::Test::HasFailure());
    const oracle::mpfr_exact m = oracle::mpfr_sum(terms, f);
    const oracle::gmp_exact g = oracle::gmp_sum(terms, f);
    for (const er::format_info* to : all_formats)
        for (er::rounding mode : all_modes)
            ASSERT_EQ(refs.nearest_bits(e, *to, mode), m.round_bits(*to, mode)) << to->name << " " << er::to_string(mode);
    ASSERT_EQ(refs.exact(e), g.decimal());
}

template <class T>
std::vector<T> typed(const std::vector<std::uint64_t>& bits) {
    return oracle::from_bits<T>(std::span<const std::uint64_t>(bits));
}

// sum_rows_compact of `bits` (rows x cols, raw bits of T) against sum_rows, element by element.
template <class T>
void check_matrix(const std::vector<std::uint64_t>& bits, std::size_t rows, std::size_t cols, const std::string& where) {
    const er::format_info& f = er::format_traits<T>::info;
    const std::vector<T> data = typed<T>(bits);
    const er::compact_reference_array refs = er::sum_rows_compact(std::span<const T>(data), rows, cols);
    const er::reference_array full = er::sum_rows(std::span<const T>(data), rows, cols);
    ASSERT_EQ(refs.size(), rows);
    ASSERT_EQ(refs.shape(), std::vector<std::size_t>{rows});
    for (std::size_t r = 0; r < rows; ++r)
        expect_element(refs, r, full.elements[r], f, std::span<const std::uint64_t>(bits).subspan(r * cols, cols),
                       where);
}

// Row lengths on both sides of every path: empty, one term, short, and around the kernel's threshold.
const std::size_t row_lengths[] = {0, 1, 2, 7, 31, kernel - 1, kernel, kernel + 1, 1000, 2049};

template <class T>
void check_random_rows(std::uint64_t seed) {
    const er::format_info& f = er::format_traits<T>::info;
    std::mt19937_64 rng(seed);
    for (oracle::term_mix mix : oracle::all_term_mixes)
        for (std::size_t cols : row_lengths) {
            const std::size_t rows = 1 + rng() % 4;
            const std::vector<std::uint64_t> bits = oracle::random_terms(f, rows * cols, mix, rng);
            check_matrix<T>(bits, rows, cols,
                            std::string(f.name) + " " + oracle::to_string(mix) + " cols " + std::to_string(cols) +
                                " seed " + std::to_string(seed));
            if (::testing::Test::HasFatalFailure()) return;
        }
}

TEST(AxisSums, EveryRowEqualsSumRowsAndTheOracles) {
    check_random_rows<double>(201);
    check_random_rows<float>(202);
    check_random_rows<er::float16>(203);
    check_random_rows<er::bfloat16>(204);
}

// Adversarial rows of float64 (raw bits), each alone, negated, and scaled by 2^-40 and 2^40 where that stays exact,
// short (the cell update) and repeated past kernel_terms (the kernel).
TEST(AxisSums, AdversarialRowsShortAndLong) {
    const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
    const double tiny = std::numeric_limits<double>::denorm_min(), big = std::ldexp(1.0, 1023);
    const std::vector<std::vector<double>> cases = {
        {-0.0},                          // every term -0.0: s = -0.0
        {-0.0, -0.0, -0.0},
        {0.0, -0.0},                     // mixed zeros: +0.0 (RD: -0.0)
        {0.0},
        {tiny, -tiny, tiny},             // subnormals
        {tiny, big},                     // 2^-1074 with 2^1023: ~2100 bits, spills
        {big, tiny, -big},               // the tiny term survives
        {big, big, -big},                // no overflow inside
        {1.0, inf},                      // specials spill
        {-inf, 2.0},
        {inf, -inf},                     // NaN
        {nan, 1.0},
        {0.0, nan},
        {1e308, 1e308},                  // overflows to +Inf when rounded
        {1.0, std::ldexp(1.0, -125)},    // just beyond the cell's window: spills
        {1.0, std::ldexp(1.0, -100)},    // within it
    };
    for (const std::vector<double>& row : cases)
        for (double sign : {1.0, -1.0})
            for (std::size_t repeat : {std::size_t{1}, kernel / row.size() + 1}) {
                std::vector<std::uint64_t> bits;
                for (std::size_t k = 0; k < repeat; ++k)
                    for (double x : row) bits.push_back(std::bit_cast<std::uint64_t>(sign * x));
                std::string text;
                for (double x : row) text += std::to_string(x) + " ";
                check_matrix<double>(bits, 1, bits.size(), "row " + text + "sign " + std::to_string(sign) +
                                                                 " x" + std::to_string(repeat));
                if (HasFatalFailure()) return;
            }
}

TEST(AxisSums, WideRowsSpillAndNarrowOnesStayCompact) {
    std::vector<double> data(3 * 300, 1.0);
    data[0] = std::numeric_limits<double>::denorm_min();    // row 0: 2^-1074 with 1.0 (a long row: the kernel)
    data[300] = std::numeric_limits<double>::infinity();     // row 1: an Inf
    const auto refs = er::sum_rows_compact(std::span<const double>(data), 3, 300);
    EXPECT_EQ(refs.spilled(), 2u);
    EXPECT_EQ(refs.nearest<double>(2), 300.0);
    EXPECT_EQ(refs.nearest<double>(1), std::numeric_limits<double>::infinity());
    EXPECT_EQ(refs.nearest<double>(0, er::rounding::upward), std::nextafter(299.0, 300.0));
    std::vector<float> short_rows(3 * 4, 1.0f);
    short_rows[0] = std::numeric_limits<float>::denorm_min();  // 2^-149 with 1.0: ~150 bits, spills
    EXPECT_EQ(er::sum_rows_compact(std::span<const float>(short_rows), 3, 4).spilled(), 1u);
}

TEST(AxisSums, TypicalRowsStayCompactIn48BytesEach) {
    // N(0,1) rows of 10 and of 1000 terms, float32 and float64: no spill, 48 bytes per row.
    for (std::size_t cols : {std::size_t{10}, std::size_t{1000}}) {
        const std::size_t rows = 2000;
        const std::vector<double> d = normal_rows<double>(rows, cols, 7);
        const std::vector<float> s(d.begin(), d.end());
        const auto r64 = er::sum_rows_compact(std::span<const double>(d), rows, cols);
        const auto r32 = er::sum_rows_compact(std::span<const float>(s), rows, cols);
        EXPECT_EQ(r64.spilled(), 0u) << cols;
        EXPECT_EQ(r32.spilled(), 0u) << cols;
        EXPECT_LE(r64.memory_bytes(), rows * 48 + 64) << cols;
        EXPECT_LE(r32.memory_bytes(), rows * 48 + 64) << cols;
    }
}

TEST(AxisSums, EmptyShapesAndErrors) {
    const std::vector<float> none;
    const auto zero_rows = er::sum_rows_compact(std::span<const float>(none), 0, 5);
    EXPECT_EQ(zero_rows.size(), 0u);
    const auto zero_cols = er::sum_rows_compact(std::span<const float>(none), 3, 0);
    ASSERT_EQ(zero_cols.size(), 3u);
    for (std::size_t i = 0; i < 3; ++i) {
        EXPECT_EQ(zero_cols.count(i), 0u);
        EXPECT_EQ(zero_cols.nearest_bits(i, er::binary32_info, er::rounding::downward), 0u);  // +0.0, every mode
        EXPECT_EQ(zero_cols.exact(i), "0");
    }
    const std::vector<float> five(5, 1.0f);
    try {
        (void)er::sum_rows_compact(std::span<const float>(five), 2, 3);
        FAIL() << "5 elements for 2 x 3 accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_THAT(e.what(), HasSubstr("5 elements for 2 rows of 3"));
    }
    EXPECT_THROW((void)er::sum_rows_compact(std::span<const float>(five), std::numeric_limits<std::size_t>::max(), 2),
                 std::invalid_argument);
    er::compact_reference_array refs({2}, er::dtype::float32);
    const std::vector<double> wrong(3, 1.0);
    EXPECT_THROW(refs.add(0, std::span<const double>(wrong)), std::invalid_argument);
    EXPECT_THROW(refs.add(2, std::span<const float>(five)), std::out_of_range);
    EXPECT_THROW(refs.merge(2, er::sum(std::span<const float>(five))), std::out_of_range);
    EXPECT_THROW(refs.merge(0, er::sum(std::span<const double>(wrong))), std::invalid_argument);
    er::reference dot;
    dot.term_format = er::dtype::float32;
    dot.is_dot = true;
    EXPECT_THROW(refs.merge(0, dot), std::invalid_argument);
    auto scan = er::inclusive_scan(std::span<const float>(five), {5});
    EXPECT_THROW(scan.add(0, std::span<const float>(five)), std::logic_error);
    EXPECT_THROW(scan.merge(0, er::sum(std::span<const float>(five))), std::logic_error);
}

// Runs added to one element in pieces (short, long, short; onto compact, zero-only and spilled cells) and
// references merged into it give the reference of all the terms together.
TEST(AxisSums, RunsAndMergesAccumulateInOneElement) {
    std::mt19937_64 rng(301);
    const er::format_info& f = er::binary64_info;
    for (oracle::term_mix mix : oracle::all_term_mixes)
        for (int trial = 0; trial < 8; ++trial) {
            er::compact_reference_array refs({2}, er::dtype::float64);
            std::vector<std::uint64_t> all;
            for (int piece = 0; piece < 4; ++piece) {
                const std::size_t n = (rng() % 2) ? rng() % 20 : kernel + rng() % 300;
                const std::vector<std::uint64_t> bits = oracle::random_terms(f, n, mix, rng);
                const std::vector<double> xs = typed<double>(bits);
                if (rng() % 3 == 0) refs.merge(1, er::sum(std::span<const double>(xs)));
                else refs.add(1, std::span<const double>(xs));
                all.insert(all.end(), bits.begin(), bits.end());
            }
            const std::vector<double> xs = typed<double>(all);
            expect_element(refs, 1, er::sum(std::span<const double>(xs)), f, all,
                           std::string("pieces ") + oracle::to_string(mix) + " trial " + std::to_string(trial));
            if (HasFatalFailure()) return;
            EXPECT_EQ(refs.count(0), 0u);
        }
    // Zeros first, then a long run; a spilled element then more runs.
    er::compact_reference_array refs({1}, er::dtype::float64);
    std::vector<double> xs = {-0.0, -0.0};
    refs.add(0, std::span<const double>(xs));
    std::vector<double> long_run(kernel, 0.5);
    long_run[3] = std::ldexp(1.0, -1074);
    refs.add(0, std::span<const double>(long_run));
    EXPECT_EQ(refs.spilled(), 1u);
    refs.add(0, std::span<const double>(xs));
    refs.add(0, std::span<const double>(long_run));
    std::vector<double> together = {-0.0, -0.0};
    together.insert(together.end(), long_run.begin(), long_run.end());
    together.insert(together.end(), {-0.0, -0.0});
    together.insert(together.end(), long_run.begin(), long_run.end());
    std::vector<std::uint64_t> bits;
    for (double x : together) bits.push_back(std::bit_cast<std::uint64_t>(x));
    expect_element(refs, 0, er::sum(std::span<const double>(together)), f, bits, "spilled, then runs");
}

// merge() reads the accumulators' chunks as they are (not normalized: chunks of both signs, carries pending, chunks
// that cancel) into a cell, or spills: random lane sums over windows of 0 to 200 bits, each value with its magnitude
// as Σ|t|; the element must hold both values exactly.
TEST(AxisSums, MergeReadsChunksInEveryState) {
    std::mt19937_64 rng(601);
    for (int width : {0, 31, 64, 100, 124, 140, 200})
        for (int trial = 0; trial < 300; ++trial) {
            er::reference part;
            part.term_format = er::dtype::float64;
            const int base = static_cast<int>(rng() % 1500) - 1100;
            const int lanes = 1 + static_cast<int>(rng() % 20);
            std::vector<std::pair<std::int64_t, int>> added;
            for (int k = 0; k < lanes; ++k) {
                const auto value = static_cast<std::int64_t>(rng()) >> (rng() % 60);  // either sign
                const int at = base + (width ? static_cast<int>(rng() % static_cast<unsigned>(width)) : 0);
                part.sum.add_lane_sum(value, at);
                added.emplace_back(value, at);
            }
            if (trial % 5 == 0)  // all but the last taken back: the chunks cancel down to one lane, or to zero
                for (std::size_t k = 0; k + (trial % 10 == 0 ? 0 : 1) < added.size(); ++k)
                    part.sum.add_lane_sum(-added[k].first, added[k].second);
            part.abs_sum = part.sum;
            if (part.abs_sum.sign() < 0) part.abs_sum.negate();
            part.count = static_cast<std::uint64_t>(lanes);
            part.sum.note_terms(part.count, true, true);
            part.abs_sum.note_terms(part.count, true, part.abs_sum.sign() != 0);
            er::compact_reference_array refs({1}, er::dtype::float64);
            refs.merge(0, part);
            const er::reference got = refs.element(0);
            SCOPED_TRACE("width " + std::to_string(width) + " trial " + std::to_string(trial));
            exactref_test::expect_same_accumulators(got.sum, part.sum);
            exactref_test::expect_same_accumulators(got.abs_sum, part.abs_sum);
            if (HasFailure()) return;
        }
    // Chunks that are not zero but whose value is: 2^32 in one chunk (two lane sums of 2^31) and -1 in the next.
    constexpr int chunk = er::superaccumulator::lsb_exponent + 32 * 60;
    er::reference part;
    part.term_format = er::dtype::float64;
    part.count = 3;
    for (er::superaccumulator* acc : {&part.sum, &part.abs_sum}) {
        acc->add_lane_sum(std::int64_t{1} << 31, chunk);
        acc->add_lane_sum(std::int64_t{1} << 31, chunk);
        acc->add_lane_sum(acc == &part.sum ? -1 : 1, chunk + 32);
        acc->note_terms(part.count, true, true);
    }
    ASSERT_EQ(part.sum.sign(), 0);
    er::compact_reference_array refs({1}, er::dtype::float64);
    refs.merge(0, part);
    EXPECT_EQ(refs.spilled(), 0u);
    exactref_test::expect_same_accumulators(refs.element(0).sum, part.sum);
    exactref_test::expect_same_accumulators(refs.element(0).abs_sum, part.abs_sum);
}

// covers() over the compact rows decides as over sum_rows's reference_array, element by element, for results at
// RN(s) and at and beyond the bound's edges, and every standard.
TEST(AxisSums, CoversAgreesWithTheReferenceArray) {
    std::mt19937_64 rng(401);
    const std::size_t rows = 60;
    for (std::size_t cols : {std::size_t{9}, kernel + 44}) {
        const std::vector<std::uint64_t> bits =
            oracle::random_terms(er::binary32_info, rows * cols, oracle::term_mix::cancelling, rng);
        const std::vector<float> data = typed<float>(bits);
        const auto refs = er::sum_rows_compact(std::span<const float>(data), rows, cols);
        const auto full = er::sum_rows(std::span<const float>(data), rows, cols);
        for (const char* text : {"any_order", "exact", "faithful", "tree:10", "split_k:4", "directed:any_order",
                                 "ftz:any_order", "levels:fold/4,any", "mixed:float64:float32"}) {
            SCOPED_TRACE(std::string(text) + " cols " + std::to_string(cols));
            const er::standard model = er::parse_standard(text);
            for (int edge = 0; edge < 5; ++edge) {
                std::vector<float> results(rows);
                for (std::size_t r = 0; r < rows; ++r) {
                    const er::reference e = refs.element(r, model);
                    const double b = er::bound(e, model, er::binary32_info);
                    const double s = e.nearest<double>();
                    const double at[] = {s, s + b, s - b, std::nextafter(s + b, INFINITY),
                                         std::nextafter(s - b, -INFINITY)};
                    results[r] = static_cast<float>(at[edge]);
                }
                std::vector<std::uint64_t> result_bits;
                for (float x : results) result_bits.push_back(std::bit_cast<std::uint32_t>(x));
                std::vector<std::uint8_t> flags(rows);
                er::detail::covers_flags(er::binary32_info, result_bits, refs, model, flags);
                for (std::size_t r = 0; r < rows; ++r) {
                    er::reference want = full.elements[r];
                    if (model.structured) want = refs.element(r, model);  // no data bound per compact element
                    ASSERT_EQ(flags[r] != 0, er::covers(results[r], want, model).covered) << "row " << r;
                }
            }
        }
    }
}

TEST(AxisSums, PlantedFaultsOfARowSumKernelAreRejected) {
    // A float32 row-sum kernel (a left fold per row); faults: a term dropped, a term added twice, a neighbour row's
    // term summed instead, rows swapped.
    for (std::size_t cols : {std::size_t{10}, std::size_t{1000}}) {
        const std::size_t rows = 300;
        std::vector<float> data = normal_rows<float>(rows, cols, 501);
        data[7 * cols + 3] = 16.0f;  // a term no bound hides
        const auto refs = er::sum_rows_compact(std::span<const float>(data), rows, cols);
        auto kernel = [&](int fault) {
            std::vector<float> out(rows);
            for (std::size_t r = 0; r < rows; ++r) {
                float acc = 0;
                for (std::size_t c = 0; c < cols; ++c) {
                    float x = data[r * cols + c];
                    if (r == 7 && c == 3) {
                        if (fault == 1) continue;
                        if (fault == 2) acc += x;
                        if (fault == 3) x = data[8 * cols + 3];
                    }
                    acc += x;
                }
                out[r] = acc;
            }
            if (fault == 4) std::swap(out[7], out[8]);
            return out;
        };
        const std::vector<float> good = kernel(0);
        const er::array_verdict ok = er::covers(std::span<const float>(good), refs, er::any_order());
        EXPECT_TRUE(ok.covered) << ok.message();
        for (int fault = 1; fault <= 4; ++fault) {
            const std::vector<float> bad = kernel(fault);
            const er::array_verdict v = er::covers(std::span<const float>(bad), refs, er::any_order());
            EXPECT_FALSE(v.covered) << "fault " << fault << " cols " << cols;
            EXPECT_THAT(v.first_violations, ::testing::Contains(7u)) << "fault " << fault;
            EXPECT_THAT(v.message(), HasSubstr("any_order")) << "fault " << fault;
        }
    }
}

}  // namespace
