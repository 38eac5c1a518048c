// The threaded scatter builders (scatter.h, "Threads"; both ways: input chunks merged, output ranges): every builder
// gives the same cells, bit for bit, for
// threads = 1, 2, 3 and 7 — values, counts, signed-zero flags, spilled elements and their pairs — on inputs long
// enough to run threaded (>= 2 x detail::min_chunk_terms terms): random and sorted ids, one hot element, spills (wide
// exponents, Inf, NaN), empty elements, initial values, dropped and rejected ids; the one-thread arrays against the
// MPFR and GMP oracles; planted faults still rejected; a planted one-ulp change seen by the comparison itself; a bad
// EXACTREF_NUM_THREADS / OMP_NUM_THREADS an error naming the variable.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>  // setenv, unsetenv
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "exactref/covers.h"
#include "exactref/scatter.h"
#include "exactref/threads.h"
#include "oracle.h"
#include "scatter_checks.h"  // difference, expect_oracle
#include "test_scale.h"  // on_diagonal

namespace er = exactref;
namespace oracle = exactref::oracle;
using ::testing::HasSubstr;
using scatter_checks::difference;
using scatter_checks::expect_oracle;

namespace {

constexpr unsigned thread_counts[] = {2, 3, 7};
// Long enough for every thread count above to run threaded, with a ragged end.
constexpr std::size_t long_n = 4 * er::detail::min_chunk_terms + 1237;
static_assert(long_n > 130000, "the positions planted below");

// Builds with threads = 1 and with each of thread_counts, and requires the same bits.
template <class Build>
er::compact_reference_array expect_same_for_every_count(Build build, const std::string& where) {
    er::compact_reference_array one = build(1u);
    for (unsigned t : thread_counts) {
        const std::string d = difference(one, build(t));
        EXPECT_EQ(d, "") << where << ", threads " << t;
    }
    return one;
}

// Id patterns of the tests below: 0 random, 1 sorted, 2 all equal (one hot element), 3 only even ids (empty odd
// elements), 4 random with ids outside [0, segments) (drop mode).
std::vector<std::int64_t> make_ids(int pattern, std::size_t n, std::size_t segments, std::mt19937_64& rng) {
    std::vector<std::int64_t> ids(n);
    for (std::size_t i = 0; i < n; ++i) {
        const auto r = static_cast<std::int64_t>(rng() % segments);
        ids[i] = pattern == 0   ? r
                 : pattern == 1 ? static_cast<std::int64_t>(i * segments / n)
                 : pattern == 2 ? static_cast<std::int64_t>(segments / 2)
                 : pattern == 3 ? r & ~std::int64_t{1}
                                : (rng() % 8 == 0 ? (rng() % 2 ? -1 - r : static_cast<std::int64_t>(segments) + r) : r);
    }
    return ids;
}

const char* const pattern_names[] = {"random", "sorted", "one hot", "even only", "with outside ids"};

// segment_sum (with and without initial), bincount and add_at over every id pattern and term mix.
template <class T>
void check_builders(std::uint64_t seed) {
    const er::format_info& f = er::format_traits<T>::info;
    std::mt19937_64 rng(seed);
    constexpr std::size_t mixes = std::size(oracle::all_term_mixes);
    for (std::size_t m = 0; m < mixes; ++m) {
        const oracle::term_mix mix = oracle::all_term_mixes[m];
        const std::vector<std::uint64_t> bits = oracle::random_terms(f, long_n, mix, rng);
        const std::vector<T> values = oracle::from_bits<T>(std::span<const std::uint64_t>(bits));
        for (int pattern = 0; pattern < 5; ++pattern) {
            // Below full scale (the sanitize preset) a diagonal of mixes x patterns (tests/test_scale.h).
            if (!exactref_test::on_diagonal(m, static_cast<std::size_t>(pattern), mixes, 5)) continue;
            // Up to 3000 segments: >= 8 terms per cell, threads take input chunks merged at the end; "even only"
            // with 40,000: threads take ranges of the output (scatter.cpp, scatter_terms).
            const std::size_t segments = pattern == 2 ? 3 : pattern == 3 ? 40000 : 1 + rng() % 3000;
            const std::vector<std::int64_t> ids = make_ids(pattern, long_n, segments, rng);
            const std::vector<std::uint64_t> initial_bits = oracle::random_terms(f, segments, mix, rng);
            const std::vector<T> initial = oracle::from_bits<T>(std::span<const std::uint64_t>(initial_bits));
            const std::string where = std::string(f.name) + " " + oracle::to_string(mix) + " " +
                                      pattern_names[pattern] + " seed " + std::to_string(seed);
            const std::span<const T> v(values), init(initial);
            const std::span<const std::int64_t> id(ids);
            const er::compact_reference_array seg = expect_same_for_every_count(
                [&](unsigned t) { return er::segment_sum(v, id, segments, {}, er::out_of_range::drop, t); },
                where + " segment_sum");
            const er::compact_reference_array seg_init = expect_same_for_every_count(
                [&](unsigned t) { return er::segment_sum(v, id, segments, init, er::out_of_range::drop, t); },
                where + " segment_sum with initial");
            if (pattern != 4) {
                expect_same_for_every_count([&](unsigned t) { return er::bincount(id, v, segments, t); },
                                            where + " bincount");
                expect_same_for_every_count([&](unsigned t) { return er::add_at(init, id, v, t); }, where + " add_at");
            }
            // The one-thread arrays against the oracles on a few elements (the first, the hot one, the last).
            std::vector<std::vector<std::uint64_t>> groups(segments), with_initial(segments);
            for (std::size_t k = 0; k < segments; ++k) with_initial[k].push_back(initial_bits[k]);
            for (std::size_t i = 0; i < long_n; ++i) {
                if (ids[i] < 0 || static_cast<std::size_t>(ids[i]) >= segments) continue;
                groups[static_cast<std::size_t>(ids[i])].push_back(bits[i]);
                with_initial[static_cast<std::size_t>(ids[i])].push_back(bits[i]);
            }
            for (std::size_t k : {std::size_t{0}, segments / 2, segments - 1}) {
                expect_oracle(seg, k, f, groups[k], where + " segment_sum");
                expect_oracle(seg_init, k, f, with_initial[k], where + " segment_sum with initial");
            }
            if (::testing::Test::HasFailure()) return;
        }
    }
}

TEST(ScatterThreads, Float64SameBitsForEveryCount) { check_builders<double>(301); }
TEST(ScatterThreads, Float32SameBitsForEveryCount) { check_builders<float>(302); }
TEST(ScatterThreads, Float16SameBitsForEveryCount) { check_builders<er::float16>(303); }
TEST(ScatterThreads, Bfloat16SameBitsForEveryCount) { check_builders<er::bfloat16>(304); }

TEST(ScatterThreads, RankTwoScatterAddIndexAddAndEmbeddingBags) {
    std::mt19937_64 rng(305);
    const er::format_info& f = er::binary64_info;
    constexpr std::size_t mixes = std::size(oracle::all_term_mixes);
    for (std::size_t m = 0; m < mixes; ++m) {
        const oracle::term_mix mix = oracle::all_term_mixes[m];
        const std::string where = oracle::to_string(mix);
        const std::size_t rows = 700, cols = 150;  // 105,000 updates
        const std::vector<std::uint64_t> bits = oracle::random_terms(f, rows * cols, mix, rng);
        const std::vector<double> src = oracle::from_bits<double>(std::span<const std::uint64_t>(bits));
        for (int dim = 0; dim < 2; ++dim) {
            if (!exactref_test::on_diagonal(m, static_cast<std::size_t>(dim), mixes, 2)) continue;  // below full scale
            const std::size_t out_rows = dim == 0 ? 40 : rows, out_cols = dim == 0 ? cols : 40;
            const std::vector<double> initial(out_rows * out_cols, 0.5);
            std::vector<std::int64_t> index(rows * cols);
            for (auto& k : index) k = static_cast<std::int64_t>(rng() % 40);
            expect_same_for_every_count(
                [&](unsigned t) {
                    return er::scatter_add(std::span<const double>(initial), {out_rows, out_cols}, dim,
                                           std::span<const std::int64_t>(index), {rows, cols},
                                           std::span<const double>(src), {rows, cols}, t);
                },
                where + " scatter_add dim " + std::to_string(dim));
            const std::vector<std::int64_t> slices(index.begin(), index.begin() + (dim == 0 ? rows : cols));
            expect_same_for_every_count(
                [&](unsigned t) {
                    return er::index_add(std::span<const double>(initial), {out_rows, out_cols}, dim,
                                         std::span<const std::int64_t>(slices), std::span<const double>(src),
                                         {rows, cols}, t);
                },
                where + " index_add dim " + std::to_string(dim));
        }
        // 3000 bags of 0 .. 69 rows of a 700 x 4 table (some empty): ~420,000 terms.
        constexpr std::size_t dim = 4;
        const std::vector<double> table(src.begin(), src.begin() + rows * dim);
        std::vector<std::int64_t> indices, offsets;
        for (int b = 0; b < 3000; ++b) {
            offsets.push_back(static_cast<std::int64_t>(indices.size()));
            for (std::size_t k = rng() % 70; k > 0; --k) indices.push_back(static_cast<std::int64_t>(rng() % rows));
        }
        const er::compact_reference_array bags = expect_same_for_every_count(
            [&](unsigned t) {
                return er::embedding_bag_sum(std::span<const double>(table), rows, dim,
                                             std::span<const std::int64_t>(indices),
                                             std::span<const std::int64_t>(offsets), false, t);
            },
            where + " embedding_bag_sum");
        for (std::size_t b : {std::size_t{0}, std::size_t{1717}, std::size_t{2999}}) {
            const auto begin = static_cast<std::size_t>(offsets[b]);
            const std::size_t end = b + 1 < offsets.size() ? static_cast<std::size_t>(offsets[b + 1]) : indices.size();
            std::vector<std::uint64_t> terms;
            for (std::size_t k = begin; k < end; ++k) terms.push_back(bits[static_cast<std::size_t>(indices[k]) * dim + 3]);
            expect_oracle(bags, b * dim + 3, f, terms, where + " embedding_bag_sum");
        }
        if (::testing::Test::HasFailure()) return;
    }
}

TEST(ScatterThreads, TheFirstOffendingIdIsNamedOnEveryCount) {
    std::mt19937_64 rng(306);
    std::vector<double> values(long_n, 1.0);
    std::vector<std::int64_t> ids = make_ids(0, long_n, 1000, rng);
    ids[70001] = 1000;  // later bad ids in another thread's range and beyond
    ids[70002] = -3;
    ids[130000] = 5000;
    for (unsigned t : {1u, 2u, 3u, 7u}) {
        try {
            (void)er::segment_sum(std::span<const double>(values), std::span<const std::int64_t>(ids), 1000, {},
                                  er::out_of_range::error, t);
            ADD_FAILURE() << "no error, threads " << t;
        } catch (const std::invalid_argument& e) {
            EXPECT_THAT(e.what(), HasSubstr("segment_ids[70001] = 1000")) << "threads " << t;
        }
        try {
            (void)er::add_at(std::span<const double>(std::vector<double>(1000, 0.0)),
                             std::span<const std::int64_t>(ids), std::span<const double>(values), t);
            ADD_FAILURE() << "no error, threads " << t;
        } catch (const std::invalid_argument& e) {
            EXPECT_THAT(e.what(), HasSubstr("indices[70001] = 1000")) << "threads " << t;
        }
    }
}

TEST(ScatterThreads, PlantedFaultsAreRejectedAndAChangedTermIsSeen) {
    // A binary64 bincount loop against the threaded reference: covered; a dropped update, an update applied twice
    // and an index off by one rejected. And the comparison of the tests above sees a one-ulp change of one term, in
    // a compact element and in a spilled one.
    std::mt19937_64 rng(307);
    std::normal_distribution<double> normal;
    const std::size_t segments = 5000;
    std::vector<double> values(long_n);
    for (double& x : values) x = normal(rng);
    const std::vector<std::int64_t> ids = make_ids(0, long_n, segments, rng);
    const auto refs = er::segment_sum(std::span<const double>(values), std::span<const std::int64_t>(ids), segments,
                                      {}, er::out_of_range::error, 2);
    auto kernel = [&](int fault) {
        return scatter_checks::faulty_bincount(values, ids, std::vector<double>(segments, 0.0), 100000, fault);
    };
    const er::standard model = er::any_order();
    const std::vector<double> good = kernel(0);
    EXPECT_TRUE(er::covers(std::span<const double>(good), refs, model).covered);
    for (int fault = 1; fault <= 3; ++fault) {
        const std::vector<double> bad = kernel(fault);
        EXPECT_FALSE(er::covers(std::span<const double>(bad), refs, model).covered) << "fault " << fault;
    }
    std::vector<double> changed = values;
    changed[123456] = std::nextafter(changed[123456], 10.0);
    const auto other = er::segment_sum(std::span<const double>(changed), std::span<const std::int64_t>(ids),
                                       segments, {}, er::out_of_range::error, 3);
    EXPECT_THAT(difference(refs, other), HasSubstr("element " + std::to_string(ids[123456]) + ": cells differ"));
    // The same for a spilled element (an Inf among its terms): its pairs differ.
    std::vector<double> spilling = values;
    spilling[5] = std::ldexp(1.0, 1000);  // 2^1000 and N(0,1) terms span too many binades: the element spills
    std::size_t mate = 6;
    while (ids[mate] != ids[5]) ++mate;
    const auto a = er::segment_sum(std::span<const double>(spilling), std::span<const std::int64_t>(ids), segments,
                                   {}, er::out_of_range::error, 2);
    spilling[mate] = std::nextafter(spilling[mate], 10.0);
    const auto b = er::segment_sum(std::span<const double>(spilling), std::span<const std::int64_t>(ids), segments,
                                   {}, er::out_of_range::error, 7);
    EXPECT_EQ(a.spilled(), 1u);
    EXPECT_THAT(difference(a, b), HasSubstr("element " + std::to_string(ids[5]) + ": pairs differ"));
}

// Sets (or unsets, for nullptr) an environment variable for one scope.
class scoped_env {
public:
    scoped_env(const char* name, const char* value) : name_(name) {
        if (const char* old = std::getenv(name)) old_ = old, had_ = true;
        if (value) setenv(name, value, 1);
        else unsetenv(name);
    }
    ~scoped_env() {
        if (had_) setenv(name_, old_.c_str(), 1);
        else unsetenv(name_);
    }

private:
    const char* name_;
    std::string old_;
    bool had_ = false;
};

TEST(ScatterThreads, TheEnvironmentChoosesTheCountAndBadValuesAreErrors) {
    std::mt19937_64 rng(308);
    std::vector<float> values(long_n);
    std::normal_distribution<float> normal;
    for (float& x : values) x = normal(rng);
    const std::vector<std::int64_t> ids = make_ids(0, long_n, 777, rng);
    const std::span<const float> v(values);
    const std::span<const std::int64_t> id(ids);
    const auto one = er::bincount(id, v, 0, 1);
    {
        const scoped_env omp("OMP_NUM_THREADS", "junk");  // not read: EXACTREF_NUM_THREADS comes first
        const scoped_env env("EXACTREF_NUM_THREADS", "3");
        EXPECT_EQ(difference(one, er::bincount(id, v)), "");
    }
    for (const char* bad : {"0", "-2", "four", "4x"}) {
        const scoped_env env("EXACTREF_NUM_THREADS", bad);
        try {
            (void)er::bincount(id, v);
            ADD_FAILURE() << "EXACTREF_NUM_THREADS=" << bad << " accepted";
        } catch (const std::invalid_argument& e) {
            EXPECT_THAT(e.what(), HasSubstr("EXACTREF_NUM_THREADS")) << bad;
        }
        EXPECT_EQ(difference(one, er::bincount(id, v, 0, 2)), "") << "an explicit count does not read it";
    }
    {
        const scoped_env env("EXACTREF_NUM_THREADS", nullptr);
        const scoped_env omp("OMP_NUM_THREADS", "0");
        EXPECT_THROW((void)er::segment_sum(v, id, 777), std::invalid_argument);
        try {
            (void)er::embedding_bag_sum(v, values.size(), 1, id, std::span<const std::int64_t>(ids.data(), 1));
            ADD_FAILURE() << "OMP_NUM_THREADS=0 accepted";
        } catch (const std::invalid_argument& e) {
            EXPECT_THAT(e.what(), HasSubstr("OMP_NUM_THREADS"));
        }
    }
}

}  // namespace
