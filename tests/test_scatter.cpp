// Compact reference arrays and the scatter/scan builders (scatter.h): every element against the MPFR and GMP oracles
// bit for bit, the builders against their definitions, covers() per element against covers_bits on the element's
// full reference, and planted faults (an index off by one, a dropped update, an update applied twice, a lost initial
// value) rejected.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <numeric>  // std::gcd
#include <random>
#include <span>
#include <string>
#include <vector>

#include "exactref/covers.h"
#include "exactref/detail/covers_filter.h"
#include "exactref/scatter.h"
#include "exactref/standard.h"
#include "oracle.h"

namespace er = exactref;
namespace oracle = exactref::oracle;
using ::testing::HasSubstr;

namespace {

constexpr er::rounding all_modes[] = {er::rounding::to_nearest_even, er::rounding::toward_zero, er::rounding::upward,
                                      er::rounding::downward};
const er::format_info* const all_formats[] = {&er::binary64_info, &er::binary32_info, &er::binary16_info,
                                              &er::bfloat16_info};

// Element e of `refs` against the oracles and against exactref::sum of the same terms (raw bits of f).
void expect_element_exact(const er::compact_reference_array& refs, std::size_t e, const er::format_info& f,
                          const std::vector<std::uint64_t>& terms, const std::string& where) {
    SCOPED_TRACE(where + ", element " + std::to_string(e) + " of " + std::to_string(terms.size()) + " terms");
    const oracle::mpfr_exact m = oracle::mpfr_sum(std::span<const std::uint64_t>(terms), f);
    const oracle::gmp_exact g = oracle::gmp_sum(std::span<const std::uint64_t>(terms), f);
    ASSERT_EQ(refs.count(e), terms.size());
    for (const er::format_info* to : all_formats)
        for (er::rounding mode : all_modes)
            ASSERT_EQ(refs.nearest_bits(e, *to, mode), m.round_bits(*to, mode))
                << to->name << " " << er::to_string(mode);
    ASSERT_EQ(refs.exact(e), g.decimal());
    // The full reference equals exactref's own sum reference of the same terms.
    er::superaccumulator sum, abs_sum;
    for (std::uint64_t b : terms) {
        sum.add_bits(f, b);
        abs_sum.add_bits(f, b & ~(std::uint64_t{1} << (f.storage_bits - 1)));
    }
    const er::reference r = refs.element(e);
    ASSERT_EQ(r.count, terms.size());
    ASSERT_EQ(r.sum.to_decimal(), sum.to_decimal());
    ASSERT_EQ(r.abs_sum.to_decimal(), abs_sum.to_decimal());
    ASSERT_EQ(r.sum.term_count(), sum.term_count());
    ASSERT_EQ(r.sum.all_negative_zero(), sum.all_negative_zero());
    ASSERT_EQ(r.sum.all_positive_zero(), sum.all_positive_zero());
    ASSERT_EQ(r.abs_sum.all_positive_zero(), abs_sum.all_positive_zero());
    ASSERT_EQ(r.sum.has_nan(), sum.has_nan());
    ASSERT_EQ(r.sum.positive_inf_count() > 0, sum.positive_inf_count() > 0);
    ASSERT_EQ(r.sum.negative_inf_count() > 0, sum.negative_inf_count() > 0);
    for (er::rounding mode : all_modes) ASSERT_EQ(r.abs_sum.round_bits(f, mode), abs_sum.round_bits(f, mode));
}

template <class T>
std::vector<T> typed(const std::vector<std::uint64_t>& bits) {
    return oracle::from_bits<T>(std::span<const std::uint64_t>(bits));
}

// Random terms of every mix split over a few elements by random ids, for each format.
template <class T>
void check_random_segments(std::uint64_t seed) {
    const er::format_info& f = er::format_traits<T>::info;
    std::mt19937_64 rng(seed);
    for (oracle::term_mix mix : oracle::all_term_mixes) {
        for (int trial = 0; trial < 6; ++trial) {
            const std::size_t n = 1 + rng() % 200;
            const std::size_t segments = 1 + rng() % 7;
            const std::vector<std::uint64_t> bits = oracle::random_terms(f, n, mix, rng);
            std::vector<std::int64_t> ids(n);
            for (auto& id : ids) id = static_cast<std::int64_t>(rng() % segments);
            const std::vector<T> values = typed<T>(bits);
            const er::compact_reference_array refs =
                er::segment_sum(std::span<const T>(values), std::span<const std::int64_t>(ids), segments);
            std::vector<std::vector<std::uint64_t>> groups(segments);
            for (std::size_t i = 0; i < n; ++i) groups[static_cast<std::size_t>(ids[i])].push_back(bits[i]);
            for (std::size_t k = 0; k < segments; ++k)
                expect_element_exact(refs, k, f, groups[k],
                                     std::string(f.name) + " " + oracle::to_string(mix) + " seed " +
                                         std::to_string(seed) + " trial " + std::to_string(trial));
        }
    }
}

TEST(CompactReferenceArray, EveryElementEqualsTheOraclesBitForBit) {
    check_random_segments<double>(101);
    check_random_segments<float>(102);
    check_random_segments<er::float16>(103);
    check_random_segments<er::bfloat16>(104);
}

TEST(CompactReferenceArray, ExhaustiveSmallFloat16Pairs) {
    // Every pair of float16 values from a grid spanning zeros, subnormals, normals, max and specials, in one element.
    std::vector<std::uint16_t> grid;
    for (std::uint32_t b = 0; b < 0x10000; b += 0x0137) grid.push_back(static_cast<std::uint16_t>(b));
    for (std::uint16_t b : {0x0000, 0x8000, 0x0001, 0x8001, 0x03ff, 0x0400, 0x7bff, 0xfbff, 0x7c00, 0xfc00, 0x7e00})
        grid.push_back(b);
    for (std::uint16_t a : grid) {
        er::compact_reference_array refs({grid.size()}, er::dtype::float16);
        for (std::size_t j = 0; j < grid.size(); ++j) {
            refs.add_bits(j, a);
            refs.add_bits(j, grid[j]);
        }
        for (std::size_t j = 0; j < grid.size(); j += 7)
            expect_element_exact(refs, j, er::binary16_info, {a, grid[j]}, "pair");
    }
}

TEST(CompactReferenceArray, WideSpansSpillAndStayExact) {
    // 2^1000 and 2^-1000 need ~2000 bits: the element spills; its neighbours stay compact.
    er::compact_reference_array refs({3}, er::dtype::float64);
    refs.add(0, std::ldexp(1.0, 1000));
    refs.add(0, std::ldexp(1.0, -1000));
    refs.add(0, -std::ldexp(1.0, 1000));
    refs.add(1, 1.5);
    refs.add(1, -0.25);
    EXPECT_EQ(refs.spilled(), 1u);
    EXPECT_EQ(refs.nearest<double>(0), std::ldexp(1.0, -1000));
    EXPECT_EQ(refs.nearest<double>(1), 1.25);
    EXPECT_EQ(refs.nearest_bits(2, er::binary64_info), 0u);  // no terms: +0.0
    expect_element_exact(refs, 0, er::binary64_info,
                         {std::bit_cast<std::uint64_t>(std::ldexp(1.0, 1000)),
                          std::bit_cast<std::uint64_t>(std::ldexp(1.0, -1000)),
                          std::bit_cast<std::uint64_t>(-std::ldexp(1.0, 1000))},
                         "spilled");
}

TEST(CompactReferenceArray, TypicalDataStaysCompact) {
    // N(0,1) float32, 10^5 values into 10^3 segments: no element needs a superaccumulator; 48 bytes each.
    std::mt19937_64 rng(7);
    std::normal_distribution<float> normal;
    std::vector<float> values(100000);
    std::vector<std::int32_t> ids(values.size());
    for (std::size_t i = 0; i < values.size(); ++i) {
        values[i] = normal(rng);
        ids[i] = static_cast<std::int32_t>(rng() % 1000);
    }
    const auto refs = er::segment_sum(std::span<const float>(values), std::span<const std::int32_t>(ids), 1000);
    EXPECT_EQ(refs.spilled(), 0u);
    EXPECT_LE(refs.memory_bytes(), 1000u * 48 + 64);
    const auto scan = er::inclusive_scan(std::span<const float>(values), {values.size()});
    EXPECT_EQ(scan.spilled(), 0u);
}

TEST(CompactReferenceArray, AddRejectsAnotherFormatAndBadPositions) {
    er::compact_reference_array refs({2}, er::dtype::float32);
    EXPECT_THROW(refs.add(0, 1.0), std::invalid_argument);
    EXPECT_THROW(refs.add(2, 1.0f), std::out_of_range);
    EXPECT_THROW(er::compact_reference_array({1, 2, 3}, er::dtype::float32), std::invalid_argument);
}

// ---- builders against their definitions ---------------------------------------------------------------------------

// Each element's term list, built the slow way, against the compact array.
void expect_elements(const er::compact_reference_array& refs, const std::vector<std::vector<double>>& terms,
                     const std::string& where) {
    ASSERT_EQ(refs.size(), terms.size()) << where;
    for (std::size_t k = 0; k < terms.size(); ++k) {
        std::vector<std::uint64_t> bits;
        for (double v : terms[k]) bits.push_back(std::bit_cast<std::uint64_t>(v));
        expect_element_exact(refs, k, er::binary64_info, bits, where);
    }
}

// The builders' scatter loop and its inlined cell update on id patterns that stress them — ids sorted, reversed, one
// hot segment, every id distinct — with every term mix (wide spans that spill, NaN, ±Inf, signed zeros, subnormals),
// int32 and int64 ids; segment_sum, bincount and add_at (with initial terms), every element against the oracles.
template <class T, class I>
void check_id_patterns(std::uint64_t seed) {
    const er::format_info& f = er::format_traits<T>::info;
    std::mt19937_64 rng(seed);
    const char* const pattern_names[] = {"sorted", "reversed", "one hot segment", "all distinct"};
    for (oracle::term_mix mix : oracle::all_term_mixes) {
        const std::size_t n = 60 + rng() % 60;
        const std::vector<std::uint64_t> bits = oracle::random_terms(f, n, mix, rng);
        const std::vector<T> values = typed<T>(bits);
        for (int pattern = 0; pattern < 4; ++pattern) {
            const std::size_t segments = pattern == 3 ? n : 5;
            std::vector<I> ids(n);
            for (std::size_t i = 0; i < n; ++i)
                ids[i] = static_cast<I>(pattern == 0   ? i * segments / n
                                        : pattern == 1 ? (n - 1 - i) * segments / n
                                        : pattern == 2 ? 3
                                                       : (i * 7 + 3) % n);  // 7 and n coprime or not: a permutation
            if (pattern == 3 && std::gcd(std::size_t{7}, n) != 1)
                for (std::size_t i = 0; i < n; ++i) ids[i] = static_cast<I>(n - 1 - i);
            const std::vector<std::uint64_t> initial_bits = oracle::random_terms(f, segments, mix, rng);
            const std::vector<T> initial = typed<T>(initial_bits);
            std::vector<std::vector<std::uint64_t>> groups(segments), with_initial(segments);
            for (std::size_t k = 0; k < segments; ++k) with_initial[k].push_back(initial_bits[k]);
            for (std::size_t i = 0; i < n; ++i) {
                groups[static_cast<std::size_t>(ids[i])].push_back(bits[i]);
                with_initial[static_cast<std::size_t>(ids[i])].push_back(bits[i]);
            }
            const std::string where = std::string(f.name) + " " + oracle::to_string(mix) + " " +
                                      pattern_names[pattern] + " seed " + std::to_string(seed) + " int" +
                                      std::to_string(8 * sizeof(I));
            const auto seg = er::segment_sum(std::span<const T>(values), std::span<const I>(ids), segments);
            const auto bin = er::bincount(std::span<const I>(ids), std::span<const T>(values), segments);
            const auto at = er::add_at(std::span<const T>(initial), std::span<const I>(ids), std::span<const T>(values));
            ASSERT_EQ(bin.size(), segments);
            for (std::size_t k = 0; k < segments; ++k) {
                expect_element_exact(seg, k, f, groups[k], where + " segment_sum");
                expect_element_exact(bin, k, f, groups[k], where + " bincount");
                expect_element_exact(at, k, f, with_initial[k], where + " add_at");
            }
        }
    }
}

TEST(Scatter, EveryIdPatternEqualsTheOraclesBitForBit) {
    check_id_patterns<double, std::int64_t>(201);
    check_id_patterns<double, std::int32_t>(202);
    check_id_patterns<float, std::int32_t>(203);
    check_id_patterns<float, std::int64_t>(204);
    check_id_patterns<er::float16, std::int64_t>(205);
    check_id_patterns<er::bfloat16, std::int32_t>(206);
}

TEST(Scatter, TermsAtTheHeadroomLimitOfACell) {
    // A cell at exponent -70 (its first term 2^-70) takes (2^53 - 1)·2^2 with d + bitwidth(m) = 72 + 53 = 125, the
    // largest aligned term the common update accepts; a second and third such term carry the magnitude past 2^126,
    // so the cell spills. Both signs, each followed by a term below the exponent (the rare path).
    for (double sign : {1.0, -1.0}) {
        const double big = sign * std::ldexp(std::ldexp(1.0, 53) - 1, 2);
        const std::vector<double> values{std::ldexp(1.0, -70), big, -big / 2, big, big, std::ldexp(1.0, -75),
                                         std::ldexp(1.0, -71), -big};
        std::vector<std::uint64_t> bits;
        for (double v : values) bits.push_back(std::bit_cast<std::uint64_t>(v));
        for (std::size_t prefix = 1; prefix <= values.size(); ++prefix) {
            const std::vector<std::int32_t> ids(prefix, 0);
            const auto refs = er::segment_sum(std::span<const double>(values.data(), prefix),
                                              std::span<const std::int32_t>(ids), 1);
            expect_element_exact(refs, 0, er::binary64_info,
                                 std::vector<std::uint64_t>(bits.begin(), bits.begin() + prefix),
                                 "headroom, sign " + std::to_string(sign) + ", prefix " + std::to_string(prefix));
            EXPECT_EQ(refs.spilled(), prefix >= 4 ? 1u : 0u) << "prefix " << prefix;  // the fourth term spills
        }
    }
}

TEST(Scatter, TheFirstOffendingIndexInInputOrderIsNamed) {
    // The loop looks ahead (prefetch) but rejects in input order: a later bad index inside the look-ahead window
    // never hides or precedes an earlier one.
    const std::vector<double> values(100, 1.0);
    std::vector<std::int64_t> ids(100, 0);
    ids[40] = 7;
    ids[50] = -1;
    ids[45] = 99;
    EXPECT_THAT([&] { (void)er::segment_sum(std::span<const double>(values), std::span<const std::int64_t>(ids), 5); },
                ::testing::ThrowsMessage<std::invalid_argument>(HasSubstr("segment_ids[40] = 7 lies outside [0, 5)")));
    ids[30] = -3;
    EXPECT_THAT([&] { (void)er::segment_sum(std::span<const double>(values), std::span<const std::int64_t>(ids), 5); },
                ::testing::ThrowsMessage<std::invalid_argument>(HasSubstr("segment_ids[30] = -3 lies outside [0, 5)")));
    const auto dropped = er::segment_sum(std::span<const double>(values), std::span<const std::int64_t>(ids), 5, {},
                                         er::out_of_range::drop);
    EXPECT_EQ(dropped.count(0), 96u);
    const std::vector<double> initial(5, 0.0);
    std::vector<std::int32_t> at(100, -5);  // -5 is element 0 of 5 (numpy)
    at[60] = -6;
    at[70] = 5;
    EXPECT_THAT([&] {
        (void)er::add_at(std::span<const double>(initial), std::span<const std::int32_t>(at), std::span<const double>(values));
    }, ::testing::ThrowsMessage<std::invalid_argument>(HasSubstr("indices[60] = -6 is out of bounds")));
    std::vector<std::int64_t> index(100, 4);
    index[33] = 5;
    index[34] = -1;
    EXPECT_THAT([&] {
        (void)er::scatter_add(std::span<const double>(initial), {5}, 0, std::span<const std::int64_t>(index), {100},
                              std::span<const double>(values), {100});
    }, ::testing::ThrowsMessage<std::invalid_argument>(HasSubstr("index[33] = 5 lies outside [0, 5)")));
}

TEST(Scatter, SegmentSumWithInitialAndDroppedIds) {
    const std::vector<double> values{1, 2, 3, 4, 5};
    const std::vector<std::int64_t> ids{0, 2, 0, 5, -1};
    const std::vector<double> initial{10, 20, 30};
    EXPECT_THAT([&] { (void)er::segment_sum(std::span<const double>(values), std::span<const std::int64_t>(ids), 3); },
                ::testing::ThrowsMessage<std::invalid_argument>(HasSubstr("segment_ids[3] = 5 lies outside [0, 3)")));
    const auto refs = er::segment_sum(std::span<const double>(values), std::span<const std::int64_t>(ids), 3,
                                      std::span<const double>(initial), er::out_of_range::drop);
    expect_elements(refs, {{10, 1, 3}, {20}, {30, 2}}, "segment_sum");
    const std::vector<std::int64_t> short_ids{0};
    EXPECT_THAT(
        [&] { (void)er::segment_sum(std::span<const double>(values), std::span<const std::int64_t>(short_ids), 3); },
        ::testing::ThrowsMessage<std::invalid_argument>(HasSubstr("segment_ids has 1 elements, expected 5")));
}

TEST(Scatter, ScatterAddFollowsTorchInBothDims) {
    // initial 2 x 3, index and src 2 x 2.
    const std::vector<double> initial{0.5, 0.25, 0.125, 1, 2, 3};
    const std::vector<std::int64_t> index{2, 0, 1, 1};
    const std::vector<double> src{10, 20, 30, 40};
    const auto d1 = er::scatter_add(std::span<const double>(initial), {2, 3}, 1, std::span<const std::int64_t>(index),
                                    {2, 2}, std::span<const double>(src), {2, 2});
    // dim 1: out[i][index[i][j]] += src[i][j]
    expect_elements(d1, {{0.5, 20}, {0.25}, {0.125, 10}, {1}, {2, 30, 40}, {3}}, "scatter_add dim 1");
    const std::vector<std::int64_t> index0{1, 0, 0, 1};
    const auto d0 = er::scatter_add(std::span<const double>(initial), {2, 3}, 0,
                                    std::span<const std::int64_t>(index0), {2, 2}, std::span<const double>(src), {2, 2});
    // dim 0: out[index[i][j]][j] += src[i][j]
    expect_elements(d0, {{0.5, 30}, {0.25, 20}, {0.125}, {1, 10}, {2, 40}, {3}}, "scatter_add dim 0");
    const std::vector<std::int64_t> bad{0, 3, 0, 0};
    EXPECT_THAT(
        [&] {
            (void)er::scatter_add(std::span<const double>(initial), {2, 3}, 1, std::span<const std::int64_t>(bad),
                                  {2, 2}, std::span<const double>(src), {2, 2});
        },
        ::testing::ThrowsMessage<std::invalid_argument>(HasSubstr("index[1] = 3 lies outside [0, 3)")));
}

TEST(Scatter, IndexAddAddAtBincountAndEmbeddingBag) {
    const std::vector<double> initial{1, 2, 3, 4};  // 2 x 2
    const std::vector<std::int32_t> index{1, 1, 0};
    const std::vector<double> source{10, 20, 30, 40, 50, 60};  // 3 x 2 (dim 0)
    const auto ia = er::index_add(std::span<const double>(initial), {2, 2}, 0, std::span<const std::int32_t>(index),
                                  std::span<const double>(source), {3, 2});
    expect_elements(ia, {{1, 50}, {2, 60}, {3, 10, 30}, {4, 20, 40}}, "index_add dim 0");

    const std::vector<double> a{0, 0, 0};
    const std::vector<std::int64_t> at{0, -1, 2, 0};
    const std::vector<double> v{1, 2, 3, 4};
    expect_elements(er::add_at(std::span<const double>(a), std::span<const std::int64_t>(at), std::span<const double>(v)),
                    {{0, 1, 4}, {0}, {0, 2, 3}}, "add_at");
    const std::vector<std::int64_t> beyond{3};
    const std::vector<double> one{1};
    EXPECT_THAT(
        [&] {
            (void)er::add_at(std::span<const double>(a), std::span<const std::int64_t>(beyond),
                             std::span<const double>(one));
        },
        ::testing::ThrowsMessage<std::invalid_argument>(HasSubstr("indices[0] = 3 is out of bounds")));

    const std::vector<std::int64_t> x{2, 0, 2};
    const std::vector<double> w{0.5, 0.25, 0.125};
    expect_elements(er::bincount(std::span<const std::int64_t>(x), std::span<const double>(w), 5),
                    {{0.25}, {}, {0.5, 0.125}, {}, {}}, "bincount");
    const std::vector<std::int64_t> negative{1, -2};
    const std::vector<double> w2{1, 1};
    EXPECT_THAT([&] { (void)er::bincount(std::span<const std::int64_t>(negative), std::span<const double>(w2)); },
                ::testing::ThrowsMessage<std::invalid_argument>(HasSubstr("x[1] = -2 is negative")));

    const std::vector<double> weight{1, 2, 3, 4, 5, 6};  // 3 embeddings x 2
    const std::vector<std::int64_t> indices{2, 0, 2, 1};
    const std::vector<std::int64_t> offsets{0, 1, 1};    // bags [2], [], [0, 2, 1]
    expect_elements(er::embedding_bag_sum(std::span<const double>(weight), 3, 2, std::span<const std::int64_t>(indices),
                                          std::span<const std::int64_t>(offsets)),
                    {{5}, {6}, {}, {}, {1, 5, 3}, {2, 6, 4}}, "embedding_bag_sum");
    const std::vector<std::int64_t> bad_offsets{1, 2};
    EXPECT_THAT(
        [&] {
            (void)er::embedding_bag_sum(std::span<const double>(weight), 3, 2, std::span<const std::int64_t>(indices),
                                        std::span<const std::int64_t>(bad_offsets));
        },
        ::testing::ThrowsMessage<std::invalid_argument>(HasSubstr("offsets[0] = 1 must be 0")));
}

TEST(Scatter, ScansAlongEachAxis) {
    const std::vector<double> x{1, 2, 3, 4, 5, 6};  // 2 x 3
    expect_elements(er::inclusive_scan(std::span<const double>(x), {6}), {{1}, {1, 2}, {1, 2, 3}, {1, 2, 3, 4},
                                                                          {1, 2, 3, 4, 5}, {1, 2, 3, 4, 5, 6}},
                    "inclusive 1-D");
    expect_elements(er::exclusive_scan(std::span<const double>(x), {2, 3}, 1), {{}, {1}, {1, 2}, {}, {4}, {4, 5}},
                    "exclusive axis 1");
    expect_elements(er::inclusive_scan(std::span<const double>(x), {2, 3}, 0), {{1}, {2}, {3}, {1, 4}, {2, 5}, {3, 6}},
                    "inclusive axis 0");
    EXPECT_THROW((void)er::inclusive_scan(std::span<const double>(x), {2, 3}, 2), std::invalid_argument);
}

// Scans over every mix (specials and wide spans spill their checkpoints), lengths across several checkpoint blocks,
// rank 1 and 2 along each axis, inclusive and exclusive: every element against the oracles, read in order and not.
template <class T>
void check_random_scans(std::uint64_t seed) {
    const er::format_info& f = er::format_traits<T>::info;
    std::mt19937_64 rng(seed);
    for (oracle::term_mix mix : oracle::all_term_mixes) {
        const std::size_t rows = 1 + rng() % 3, cols = 1 + rng() % 90;
        const std::vector<std::uint64_t> bits = oracle::random_terms(f, rows * cols, mix, rng);
        const std::vector<T> values = typed<T>(bits);
        for (int axis : {0, 1}) {
            for (bool inclusive : {true, false}) {
                const er::array_shape shape = rows == 1 && axis == 0 ? er::array_shape{cols} : er::array_shape{rows, cols};
                const er::compact_reference_array refs =
                    inclusive ? er::inclusive_scan(std::span<const T>(values), shape, shape.size() == 1 ? 0 : axis)
                              : er::exclusive_scan(std::span<const T>(values), shape, shape.size() == 1 ? 0 : axis);
                ASSERT_TRUE(refs.is_scan());
                ASSERT_EQ(refs.size(), rows * cols);
                const bool along_rows = shape.size() == 1 || axis == 1;
                for (std::size_t probe = 0; probe < rows * cols; ++probe) {
                    const std::size_t i = (probe * 7919) % (rows * cols);  // out of order
                    const std::size_t line = along_rows ? i / cols : i % cols;
                    const std::size_t k = along_rows ? i % cols : i / cols;
                    std::vector<std::uint64_t> prefix;
                    for (std::size_t j = 0; j < k + (inclusive ? 1 : 0); ++j)
                        prefix.push_back(bits[along_rows ? line * cols + j : j * cols + line]);
                    expect_element_exact(refs, i, f, prefix,
                                         std::string(f.name) + " " + oracle::to_string(mix) + " scan axis " +
                                             std::to_string(axis) + (inclusive ? " inclusive" : " exclusive") +
                                             " seed " + std::to_string(seed));
                }
            }
        }
    }
}

TEST(CompactReferenceArray, ScansEqualTheOraclesBitForBit) {
    check_random_scans<double>(201);
    check_random_scans<float>(202);
    check_random_scans<er::float16>(203);
    check_random_scans<er::bfloat16>(204);
}

TEST(CompactReferenceArray, GatherPicksElementsOfCellsAndScans) {
    const std::vector<double> x{1, std::ldexp(1.0, 900), 3, -std::ldexp(1.0, 900), std::ldexp(1.0, -900)};
    const auto scan = er::inclusive_scan(std::span<const double>(x), {x.size()});  // spills from element 1 on
    const std::vector<std::size_t> pick{4, 0, 4, 2};
    const auto picked = scan.gather(pick);
    ASSERT_EQ(picked.size(), 4u);
    EXPECT_FALSE(picked.is_scan());
    for (std::size_t k = 0; k < pick.size(); ++k) {
        EXPECT_EQ(picked.exact(k), scan.exact(pick[k]));
        EXPECT_EQ(picked.count(k), scan.count(pick[k]));
    }
    const std::vector<std::size_t> beyond{5};
    EXPECT_THROW((void)scan.gather(beyond), std::out_of_range);
}

TEST(CompactReferenceArray, ScanStorageIsSmall) {
    std::vector<float> x(100000, 0.5f);
    const auto refs = er::inclusive_scan(std::span<const float>(x), {x.size()});
    EXPECT_LE(refs.memory_bytes(), x.size() * (sizeof(float) + 2) + 4096);
    EXPECT_EQ(refs.nearest<float>(99999), 50000.0f);
    EXPECT_THROW(er::compact_reference_array(refs).add(0, 1.0f), std::logic_error);
}

// ---- covers() per element ---------------------------------------------------------------------------------------

// covers over a compact array agrees with covers_bits on each element's full reference, for results at RN(s), at
// the bound's edges and one ulp beyond, for many standards; the exact path is taken for the near-bound ones.
template <class T>
void check_covers_agree(const std::vector<std::string>& standards, std::uint64_t seed) {
    using tr = er::format_traits<T>;
    const er::format_info& f = tr::info;
    std::mt19937_64 rng(seed);
    std::vector<T> values;
    std::vector<std::int64_t> ids;
    const std::size_t segments = 40;
    for (oracle::term_mix mix : {oracle::term_mix::clustered, oracle::term_mix::cancelling, oracle::term_mix::ties,
                                 oracle::term_mix::subnormal}) {
        const std::vector<std::uint64_t> bits = oracle::random_terms(f, 400, mix, rng);
        for (std::uint64_t b : bits) {
            values.push_back(tr::from_bits(static_cast<typename tr::bits_type>(b)));
            ids.push_back(static_cast<std::int64_t>(rng() % segments));
        }
    }
    const auto refs = er::segment_sum(std::span<const T>(values), std::span<const std::int64_t>(ids), segments);
    for (const std::string& text : standards) {
        SCOPED_TRACE(std::string(f.name) + " standard " + text + " seed " + std::to_string(seed));
        const er::standard model = er::parse_standard(text);
        // Results: RN(s), and the largest/smallest values within and just beyond s ± B.
        std::vector<std::vector<T>> result_sets(5, std::vector<T>(segments));
        for (std::size_t k = 0; k < segments; ++k) {
            const er::reference r = refs.element(k, model);
            const double b = er::bound(r, model, f);
            const double s = static_cast<double>(r.nearest<double>());
            const double edges[] = {s, s + b, s - b, std::nextafter(s + b, INFINITY), std::nextafter(s - b, -INFINITY)};
            for (int j = 0; j < 5; ++j)
                result_sets[static_cast<std::size_t>(j)][k] =
                    tr::from_bits(static_cast<typename tr::bits_type>(er::round_double_to(f, edges[j], er::rounding::to_nearest_even)));
        }
        for (const std::vector<T>& results : result_sets) {
            const er::array_verdict v = er::covers(std::span<const T>(results), refs, model);
            std::vector<std::size_t> expected_violations;
            for (std::size_t k = 0; k < segments; ++k)
                if (!er::covers(results[k], refs.element(k, model), model).covered) expected_violations.push_back(k);
            const std::size_t violations = expected_violations.size();
            if (expected_violations.size() > 8) expected_violations.resize(8);
            ASSERT_EQ(v.first_violations, expected_violations);
            ASSERT_EQ(v.violations, violations);
            std::vector<std::uint64_t> bits;
            for (T x : results) bits.push_back(tr::to_bits(x));
            std::vector<std::uint8_t> flags(segments);
            er::detail::covers_flags(f, bits, refs, model, flags);
            for (std::size_t k = 0; k < segments; ++k)
                ASSERT_EQ(flags[k] != 0, er::covers(results[k], refs.element(k, model), model).covered) << "element " << k;
        }
    }
}

const std::vector<std::string> per_element_standards{
    "any_order", "exact", "faithful", "tree:7", "split_k:4", "directed:any_order", "ftz:any_order",
    "levels:fold/4,any", "directed:tree:8"};

TEST(CompactCovers, AgreesWithTheFullReferencesOnEveryStandard) {
    const std::uint64_t before = er::detail::covers_exact_path_count();
    check_covers_agree<double>(per_element_standards, 11);
    check_covers_agree<float>(per_element_standards, 12);
    check_covers_agree<er::float16>(per_element_standards, 13);
    check_covers_agree<er::bfloat16>(per_element_standards, 14);
    check_covers_agree<float>({"mixed:float64:float32"}, 15);
    EXPECT_GT(er::detail::covers_exact_path_count(), before) << "near-bound results must reach the exact path";
}

TEST(CompactCovers, ScansAgreeWithTheFullReferences) {
    // Many short lines (more than the reader follows with cursors) and a few long ones, every standard.
    for (const er::array_shape& shape : {er::array_shape{70000, 2}, er::array_shape{3, 700}}) {
        std::mt19937_64 rng(41);
        const std::size_t n = shape[0] * shape[1];
        const std::vector<std::uint64_t> bits = oracle::random_terms(er::binary32_info, n, oracle::term_mix::clustered, rng);
        const std::vector<float> x = typed<float>(bits);
        for (int axis : {0, 1}) {
            const auto refs = er::inclusive_scan(std::span<const float>(x), shape, axis);
            for (const char* text : {"any_order", "exact", "faithful", "levels:fold", "tree:17"}) {
                const er::standard model = er::parse_standard(text);
                std::vector<float> results(n);
                for (std::size_t i = 0; i < n; ++i) {
                    results[i] = refs.nearest<float>(i);
                    if (i % 3 == 1) results[i] = std::nextafter(results[i], INFINITY);
                }
                std::vector<std::uint64_t> result_bits;
                for (float r : results) result_bits.push_back(std::bit_cast<std::uint32_t>(r));
                std::vector<std::uint8_t> flags(n);
                er::detail::covers_flags(er::binary32_info, result_bits, refs, model, flags);
                for (std::size_t i = 0; i < n; i += (n > 10000 ? 97 : 1))
                    ASSERT_EQ(flags[i] != 0, er::covers(results[i], refs.element(i, model), model).covered)
                        << text << " axis " << axis << " element " << i;
            }
        }
    }
}

TEST(CompactCovers, PlantedFaultsOfAScatterKernelAreRejected) {
    // A float32 atomics kernel: each segment a left fold of its updates onto the initial value, in a shuffled order.
    std::mt19937_64 rng(21);
    std::normal_distribution<float> normal;
    const std::size_t n = 20000, segments = 500;
    std::vector<float> values(n), initial(segments);
    std::vector<std::int64_t> ids(n);
    for (std::size_t i = 0; i < n; ++i) {
        values[i] = normal(rng);
        ids[i] = static_cast<std::int64_t>(rng() % segments);
    }
    for (float& x : initial) x = normal(rng);
    const auto refs = er::segment_sum(std::span<const float>(values), std::span<const std::int64_t>(ids), segments,
                                      std::span<const float>(initial));
    std::vector<std::size_t> order(n);
    for (std::size_t i = 0; i < n; ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), rng);
    auto kernel = [&](int fault) {
        std::vector<float> out = initial;
        if (fault == 4) std::fill(out.begin(), out.end(), 0.0f);  // the initial value lost
        bool planted = false;
        for (std::size_t i : order) {
            auto k = static_cast<std::size_t>(ids[i]);
            if (!planted && std::fabs(values[i]) > 0.5f) {
                planted = true;
                if (fault == 1) k = (k + 1) % segments;  // index off by one
                if (fault == 2) continue;                 // a dropped update
                if (fault == 3) out[k] += values[i];      // applied twice
            }
            out[k] += values[i];
        }
        return out;
    };
    const er::standard model = er::any_order();
    const std::vector<float> good = kernel(0);
    const er::array_verdict ok = er::covers(std::span<const float>(good), refs, model);
    EXPECT_TRUE(ok.covered) << ok.message();
    for (int fault = 1; fault <= 4; ++fault) {
        const std::vector<float> bad = kernel(fault);
        const er::array_verdict v = er::covers(std::span<const float>(bad), refs, model);
        EXPECT_FALSE(v.covered) << "fault " << fault;
        EXPECT_THAT(v.message(), HasSubstr("any_order")) << "fault " << fault;
    }
}

TEST(CompactCovers, ScansJudgedPerPrefix) {
    // np.cumsum-like sequential float32 scan: covered; a scan that skips one term from its middle on: rejected.
    std::mt19937_64 rng(31);
    std::normal_distribution<float> normal;
    std::vector<float> x(5000);
    for (float& v : x) v = normal(rng);
    x[2500] = 8;  // large enough to see: prefix 2500's any_order bound is about 2500·u·2000 = 0.3
    const auto refs = er::inclusive_scan(std::span<const float>(x), {x.size()});
    std::vector<float> scan(x.size());
    float running = 0;
    for (std::size_t i = 0; i < x.size(); ++i) scan[i] = running += x[i];
    EXPECT_TRUE(er::covers(std::span<const float>(scan), refs, er::any_order()).covered);
    EXPECT_TRUE(er::covers(std::span<const float>(scan), refs, er::parse_standard("levels:fold")).covered);
    std::vector<float> skipped = scan;
    for (std::size_t i = 2500; i < x.size(); ++i) skipped[i] -= x[2500];
    const er::array_verdict v = er::covers(std::span<const float>(skipped), refs, er::any_order());
    EXPECT_FALSE(v.covered);
    EXPECT_EQ(v.first_violations.front(), 2500u);
}

TEST(CompactCovers, AStandardThatDoesNotFitSomeElementIsAnError) {
    // tree:3 holds 8 terms: the element with 9 is refused even though the first element fits.
    std::vector<double> values(10, 1.0);
    std::vector<std::int64_t> ids(10, 1);
    ids[0] = 0;
    const auto refs = er::segment_sum(std::span<const double>(values), std::span<const std::int64_t>(ids), 2);
    const std::vector<double> results{1, 9};
    EXPECT_THAT([&] { (void)er::covers(std::span<const double>(results), refs, er::tree(3)); },
                ::testing::ThrowsMessage<std::invalid_argument>(HasSubstr("holds at most 8 terms")));
}

TEST(CompactCovers, SizeMismatchIsAClearError) {
    const std::vector<double> x{1, 2};
    const auto refs = er::inclusive_scan(std::span<const double>(x), {2});
    const std::vector<double> results{1};
    EXPECT_THAT([&] { (void)er::covers(std::span<const double>(results), refs, er::any_order()); },
                ::testing::ThrowsMessage<std::invalid_argument>(HasSubstr("1 results for 2 references")));
}

// ---- the kept filter summaries (compact_reference_array::filter_summaries) -----------------------------------------

// Results of every kind for a segment sum: RN(s), s ± B rounded, one ulp beyond, NaN, ±Inf, ±0.0.
template <class T>
std::vector<T> mixed_results(const er::compact_reference_array& refs, const er::standard& model, std::uint64_t seed) {
    using tr = er::format_traits<T>;
    std::mt19937_64 rng(seed);
    std::vector<T> out(refs.size());
    for (std::size_t k = 0; k < refs.size(); ++k) {
        const er::reference r = refs.element(k, model);
        const double b = er::bound(r, model, tr::info), s = r.nearest<double>();
        const double pick[] = {s, s + b, s - b, std::nextafter(s + b, INFINITY), std::nextafter(s - b, -INFINITY),
                               NAN, INFINITY, -0.0, 0.0, s * 2};
        out[k] = tr::from_bits(static_cast<typename tr::bits_type>(
            er::round_double_to(tr::info, pick[rng() % 10], er::rounding::to_nearest_even)));
    }
    return out;
}

TEST(CompactCovers, SummaryPathGivesTheReferenceArrayPathsVerdicts) {
    // The compact path (kept summaries, closed-form γ) and covers over the same elements as full references
    // (per-reference facts, exact rationals enclosed): identical verdicts, first violations, worst element, message.
    std::mt19937_64 rng(51);
    const std::size_t n = 6000, segments = 300;
    const std::vector<std::uint64_t> bits = oracle::random_terms(er::binary64_info, n, oracle::term_mix::cancelling, rng);
    const std::vector<double> x = typed<double>(bits);
    std::vector<std::int64_t> ids(n);
    for (auto& id : ids) id = static_cast<std::int64_t>(rng() % segments);
    const auto refs = er::segment_sum(std::span<const double>(x), std::span<const std::int64_t>(ids), segments);
    const er::reference_array full = refs.to_array();
    for (const char* text : {"any_order", "directed:any_order", "tree:12", "split_k:4", "directed:tree:12",
                             "mixed:float64:float32", "faithful"}) {
        SCOPED_TRACE(text);
        const er::standard model = er::parse_standard(text);
        for (std::uint64_t seed = 0; seed < 4; ++seed) {
            if (model.is_mixed()) {
                const std::vector<float> r = mixed_results<float>(refs, model, seed);
                const er::array_verdict a = er::covers(std::span<const float>(r), refs, model);
                const er::array_verdict b = er::covers(std::span<const float>(r), full, model);
                ASSERT_EQ(a.message(), b.message()) << "seed " << seed;
                continue;
            }
            const std::vector<double> r = mixed_results<double>(refs, model, seed);
            const er::array_verdict a = er::covers(std::span<const double>(r), refs, model);
            const er::array_verdict b = er::covers(std::span<const double>(r), full, model);
            ASSERT_EQ(a.covered, b.covered) << "seed " << seed;
            ASSERT_EQ(a.violations, b.violations) << "seed " << seed;
            ASSERT_EQ(a.first_violations, b.first_violations) << "seed " << seed;
            ASSERT_EQ(a.worst_index, b.worst_index) << "seed " << seed;
            ASSERT_EQ(a.message(), b.message()) << "seed " << seed;
        }
    }
}

TEST(CompactCovers, KeptSummariesFollowTheArray) {
    // A summary kept from one covers() call must not judge the array after it changed, nor a copy.
    std::vector<double> values{1, 2, 3, 4};
    std::vector<std::int64_t> ids{0, 1, 0, 1};
    auto refs = er::segment_sum(std::span<const double>(values), std::span<const std::int64_t>(ids), 2);
    const std::vector<double> before{4, 6}, after{4, 6.5};
    EXPECT_TRUE(er::covers(std::span<const double>(before), refs, er::any_order()).covered);
    EXPECT_FALSE(er::covers(std::span<const double>(after), refs, er::any_order()).covered);
    er::compact_reference_array copy = refs;
    refs.add(1, 0.5);
    EXPECT_FALSE(er::covers(std::span<const double>(before), refs, er::any_order()).covered);
    EXPECT_TRUE(er::covers(std::span<const double>(after), refs, er::any_order()).covered);
    EXPECT_TRUE(er::covers(std::span<const double>(before), copy, er::any_order()).covered);
    copy = refs;
    EXPECT_TRUE(er::covers(std::span<const double>(after), copy, er::any_order()).covered);
}

// Planted on the bound: each segment holds {2^60·c, -2^60·c, 2^20·c} (c a power of two), so s = 2^20·c,
// S = (2^61 + 2^20)·c and the any_order bound 2u·S = (2^9 + 2^-32)·c; s ± B are doubles (53 bits from 2^20 to 2^-32).
// For any_order the results s ± B lie exactly on the bound (covered) and one ulp beyond (not); the filter decides
// neither at the bound (its margins are strict), so the exact path does. For the γ-bounds (directed, structured) B
// is not dyadic: the doubles on each side of s ± B are planted, and the verdicts must be those of covers_bits.
template <class Refs>
void check_planted_at_the_bound(const char* what, const Refs& make) {
    SCOPED_TRACE(what);
    const std::size_t segments = 24;
    std::vector<double> values;
    std::vector<std::int64_t> ids;
    for (std::size_t k = 0; k < segments; ++k) {
        const double c = std::ldexp(1.0, static_cast<int>(k) - 12) * (k % 2 ? -1 : 1);
        for (double t : {std::ldexp(c, 60), -std::ldexp(c, 60), std::ldexp(c, 20)}) {
            values.push_back(t);
            ids.push_back(static_cast<std::int64_t>(k));
        }
    }
    const er::compact_reference_array refs =
        er::segment_sum(std::span<const double>(values), std::span<const std::int64_t>(ids), segments);
    for (const char* text : {"any_order", "directed:any_order", "levels:fold/3,any"}) {
        SCOPED_TRACE(text);
        const er::standard model = er::parse_standard(text);
        std::vector<double> results;
        std::vector<bool> expected;
        std::size_t on_the_bound = 0;
        for (std::size_t k = 0; k < segments; ++k) {
            const er::reference r = refs.element(k, model);
            const double s = r.nearest<double>(), b = er::bound(r, model, er::binary64_info);
            for (double edge : {s + b, s - b}) {
                const double out = edge > s ? INFINITY : -INFINITY, in = -out;
                const double near[] = {std::nextafter(edge, in), edge, std::nextafter(edge, out)};
                for (double x : near) {
                    results.push_back(x);
                    expected.push_back(er::covers(x, r, model).covered);  // the exact decision, element by element
                }
                if (std::string(text) == "any_order") {
                    ASSERT_TRUE(er::covers(edge, r, model).covered) << "exactly on the bound, element " << k;
                    ASSERT_FALSE(er::covers(near[2], r, model).covered) << "one ulp beyond, element " << k;
                    ++on_the_bound;
                }
            }
        }
        const auto judged = make(refs, results.size() / segments, model);
        const std::uint64_t exact_before = er::detail::covers_exact_path_count();
        const er::array_verdict v = er::covers(std::span<const double>(results), judged, model);
        const std::uint64_t decided_exactly = er::detail::covers_exact_path_count() - exact_before;
        std::vector<std::size_t> first_violations;
        std::size_t violations = 0;
        for (std::size_t i = 0; i < expected.size(); ++i) {
            if (expected[i]) continue;
            ++violations;
            if (first_violations.size() < 8) first_violations.push_back(i);
        }
        EXPECT_EQ(v.violations, violations);
        EXPECT_EQ(v.first_violations, first_violations);
        EXPECT_GE(decided_exactly, on_the_bound) << "results on the bound must be decided exactly";
        EXPECT_LE(decided_exactly, results.size());
        if (std::string(text) == "any_order") EXPECT_GT(violations, 0u);
    }
}

TEST(CompactCovers, PlantedAtTheBoundTheExactPathDecides) {
    // Each element's six planted results judged against its own reference: the array repeats each element 6 times.
    check_planted_at_the_bound("compact", [](const er::compact_reference_array& refs, std::size_t per,
                                             const er::standard&) {
        std::vector<std::size_t> index;
        for (std::size_t k = 0; k < refs.size(); ++k)
            for (std::size_t j = 0; j < per; ++j) index.push_back(k);
        return refs.gather(index);
    });
    check_planted_at_the_bound("reference_array", [](const er::compact_reference_array& refs, std::size_t per,
                                                     const er::standard& model) {
        er::reference_array out;
        out.rows = refs.size() * per;
        out.cols = 1;
        for (std::size_t k = 0; k < refs.size(); ++k)
            for (std::size_t j = 0; j < per; ++j) out.elements.push_back(refs.element(k, model));
        return out;
    });
}

}  // namespace
