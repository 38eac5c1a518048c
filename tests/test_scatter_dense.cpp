// The dense scatter (Step D of docs/algorithms/compact-reference-array.md, src/scatter.cpp scatter_range): terms in
// one window of binades narrow enough that no cell can spill go through 32-byte dense parts with their counts in
// the low bits, folded into the cells. Every exit is driven here and counted (detail::take_dense_scatter_counts):
// a narrow window (one fold at the end), a wider one whose counts outgrow their bits (folds in between, a segment
// with far more updates than the count bits hold), a window one binade too wide (one by one), blocks with an Inf or
// a NaN (one by one, the others dense), zeros of both signs, subnormals, empty segments, unsorted and out-of-range
// ids, an initial value per element; each element against the MPFR and GMP oracles (value in three roundings, exact
// decimal, count, and Σ|t| exactly), the same bits on 1, 2 and 3 threads, and planted kernel faults rejected.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "../src/compact_cells.h"  // detail::take_dense_scatter_counts (which path ran)
#include "exactref/covers.h"
#include "exactref/scatter.h"
#include "oracle.h"
#include "scatter_checks.h"

namespace er = exactref;
namespace oracle = exactref::oracle;
using ::testing::HasSubstr;
namespace sc = scatter_checks;  // difference, expect_oracle, faulty_bincount

namespace {

// A binary64 ±m·2^e with a random 52-bit fraction and a biased exponent field in [lo, hi] (0: subnormal).
double random_double(std::mt19937_64& rng, int lo, int hi) {
    const auto span = static_cast<std::uint64_t>(hi - lo + 1);
    const auto field = static_cast<std::uint64_t>(lo + static_cast<int>(rng() % span));
    const std::uint64_t bits = (rng() & (std::uint64_t{1} << 63)) | (field << 52) | (rng() >> 12);
    return std::bit_cast<double>(bits);
}

struct input {
    std::vector<double> values;
    std::vector<std::int64_t> ids;
    std::size_t segments = 0;
    std::vector<double> initial;  // one per segment
};

// Every element of refs (built from in.values, in.ids, plus in.initial when `with_initial`) against the oracles:
// value (three roundings), exact decimal and count through expect_oracle, and Σ|t| as an exact decimal.
void expect_every_element(const er::compact_reference_array& refs, const input& in, bool with_initial,
                          const std::string& where) {
    const er::format_info& f = er::format_traits<double>::info;
    std::vector<std::vector<std::uint64_t>> terms(in.segments);
    if (with_initial)
        for (std::size_t k = 0; k < in.segments; ++k) terms[k].push_back(std::bit_cast<std::uint64_t>(in.initial[k]));
    for (std::size_t i = 0; i < in.values.size(); ++i)
        if (in.ids[i] >= 0 && static_cast<std::size_t>(in.ids[i]) < in.segments)
            terms[static_cast<std::size_t>(in.ids[i])].push_back(std::bit_cast<std::uint64_t>(in.values[i]));
    for (std::size_t k = 0; k < in.segments; ++k) {
        sc::expect_oracle(refs, k, f, terms[k], where);
        bool finite = true;
        std::vector<std::uint64_t> magnitudes;
        for (std::uint64_t b : terms[k]) {
            finite = finite && ((b >> 52) & 0x7ff) != 0x7ff;
            magnitudes.push_back(b & ~(std::uint64_t{1} << 63));
        }
        if (finite)
            ASSERT_EQ(refs.element(k).abs_sum.to_decimal(),
                      oracle::gmp_sum(std::span<const std::uint64_t>(magnitudes), f).decimal())
                << where << ", element " << k << ": Σ|t|";
        if (::testing::Test::HasFailure()) return;
    }
}

// The builders over `in` on 1, 2 and 3 threads: the same bits; segment_sum (with and without initial), bincount,
// add_at, rank-1 scatter_add and index_add against the oracles. Returns the counts of the paths taken.
er::detail::dense_scatter_counts check_builders(const input& in, const std::string& where) {
    (void)er::detail::take_dense_scatter_counts();
    const std::span<const double> v(in.values), init(in.initial);
    const std::span<const std::int64_t> id(in.ids);
    const std::size_t n = in.values.size(), m = in.segments;
    bool in_range = true;
    for (std::int64_t k : in.ids) in_range = in_range && k >= 0 && static_cast<std::size_t>(k) < m;
    for (unsigned t : {1u, 2u, 3u}) {
        const std::string at = where + ", threads " + std::to_string(t);
        const auto seg = er::segment_sum(v, id, m, {}, er::out_of_range::drop, t);
        const auto seg_init = er::segment_sum(v, id, m, init, er::out_of_range::drop, t);
        if (t == 1) {
            expect_every_element(seg, in, false, at + " segment_sum");
            expect_every_element(seg_init, in, true, at + " segment_sum with initial");
        } else {
            EXPECT_EQ(sc::difference(seg, er::segment_sum(v, id, m, {}, er::out_of_range::drop, 1)), "") << at;
            EXPECT_EQ(sc::difference(seg_init, er::segment_sum(v, id, m, init, er::out_of_range::drop, 1)), "") << at;
        }
        if (!in_range) continue;
        const auto bins = er::bincount(id, v, m, t);
        EXPECT_EQ(sc::difference(bins, seg), "") << at << " bincount";
        const auto added = er::add_at(init, id, v, t);
        EXPECT_EQ(sc::difference(added, seg_init), "") << at << " add_at";
        EXPECT_EQ(sc::difference(er::scatter_add(init, {m}, 0, id, {n}, v, {n}, t), seg_init), "")
            << at << " scatter_add";
        EXPECT_EQ(sc::difference(er::index_add(init, {m}, 0, id, v, {n}, t), seg_init), "") << at << " index_add";
    }
    return er::detail::take_dense_scatter_counts();
}

input make_input(std::mt19937_64& rng, std::size_t n, std::size_t segments, int lo, int hi) {
    input in;
    in.segments = segments;
    in.values.resize(n);
    in.ids.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        in.values[i] = random_double(rng, lo, hi);
        in.ids[i] = static_cast<std::int64_t>(rng() % segments);
    }
    in.initial.resize(segments);
    for (double& x : in.initial) x = random_double(rng, lo, hi);
    return in;
}

constexpr std::size_t n_terms = 150000;  // >= 2 x 65536: 2 and 3 threads take input chunks

TEST(ScatterDense, NarrowWindowOneFoldAtTheEnd) {
    // 30 binades (N(0,1)-like) into 3000 segments: dense, the counts' bits hold every term, one fold per range.
    std::mt19937_64 rng(401);
    input in = make_input(rng, n_terms, 3000, 1000, 1030);
    for (std::size_t k = 0; k < in.segments; k += 7) in.initial[k] = (k % 2) ? -0.0 : 0.0;
    for (std::size_t i = 0; i < n_terms; i += 97) in.values[i] = (i % 2) ? -0.0 : 0.0;  // zeros: counts only
    for (std::size_t i = 0; i < n_terms; ++i)  // odd segments from 2001 on take only zeros of one sign or none
        if (in.ids[i] > 2000 && in.ids[i] % 2)
            in.values[i] = in.ids[i] % 4 == 1 ? -0.0 : (in.ids[i] % 8 == 3 ? 0.0 : in.values[i]);
    for (std::size_t i = 0; i < n_terms; ++i)
        if (in.ids[i] >= 2900) in.ids[i] = 2899;  // segments 2900 .. 2999 empty
    const auto c = check_builders(in, "narrow window");
    EXPECT_GT(c.dense_ranges, 0u);      // 2 and 3 threads: the window read first
    EXPECT_GT(c.guessed_ranges, 0u);    // 1 thread: guessed from the first block, and every term lies in it
    EXPECT_EQ(c.guesses_widened + c.guesses_restarted, 0u);
    EXPECT_EQ(c.one_by_one_ranges, 0u);
    EXPECT_EQ(c.folds, c.dense_ranges + c.guessed_ranges);  // no fold but the last of each range
    EXPECT_EQ(c.special_blocks, 0u);
    EXPECT_EQ(c.normal_blocks + c.narrow_blocks, 0u);  // a zero in every block: the general decode
}

TEST(ScatterDense, CountsOutgrowTheirBitsAndFoldOnTheWay) {
    // 54 binades into 40 segments: 2c + 53 + 54 <= 128 leaves c = 10 count bits, so the parts fold every 1023 terms;
    // segment 0 takes a third of all terms (~50,000 updates, far more than 2^10).
    std::mt19937_64 rng(402);
    input in = make_input(rng, n_terms, 40, 970, 1024);
    for (std::size_t i = 0; i < n_terms; i += 3) in.ids[i] = 0;
    in.values[17] = std::bit_cast<double>(std::uint64_t{970} << 52);  // both ends of the window present
    in.values[18] = -std::bit_cast<double>(std::uint64_t{1024} << 52);
    const auto c = check_builders(in, "counts outgrow their bits");
    EXPECT_GT(c.dense_ranges, 0u);
    EXPECT_EQ(c.one_by_one_ranges, 0u);
    EXPECT_GT(c.folds, c.dense_ranges + 100);  // folds on the way
    EXPECT_GT(c.normal_blocks, 0u);  // normal terms only, shifts up to 10 + 54 = 64: one 128-bit shift
    EXPECT_EQ(c.narrow_blocks, 0u);
}

TEST(ScatterDense, TheWidestWindowIsDenseAndOneBinadeMoreIsNot) {
    // bitwidth(n + 1) + 53 + W <= 125 takes the dense path. With n = 150,000 (18 bits), W = 54 is the widest: every
    // term at the top of the window with the largest mantissa and one sign, in one segment, brings its part within
    // a factor 2^-0.2 of 2^125 at the window's lowest unit. W = 55 goes one by one.
    for (int width : {54, 55}) {
        input in;
        in.segments = 2;
        in.values.assign(n_terms, std::bit_cast<double>((std::uint64_t{1000 + static_cast<unsigned>(width)} << 52) |
                                                         ((std::uint64_t{1} << 52) - 1)));
        in.ids.assign(n_terms, 0);
        in.values[5] = std::bit_cast<double>((std::uint64_t{1000} << 52) | 1);  // the window's bottom
        in.ids[5] = 1;
        in.values[6] = -in.values[0];
        in.ids[6] = 1;
        in.initial = {in.values[0], -in.values[5]};
        const auto c = check_builders(in, "window " + std::to_string(width));
        if (width == 54) {
            EXPECT_GT(c.dense_ranges, 0u);
            EXPECT_EQ(c.one_by_one_ranges, 0u);
        } else {
            EXPECT_EQ(c.dense_ranges, 0u);
            EXPECT_GT(c.one_by_one_ranges, 0u);
        }
        const auto r = er::segment_sum(std::span<const double>(in.values), std::span<const std::int64_t>(in.ids), 2);
        EXPECT_EQ(r.spilled(), 0u);  // 2^125 is not reached either way
    }
}

TEST(ScatterDense, WideSpreadsSubnormalsAndSpills) {
    std::mt19937_64 rng(403);
    // Every binade: one by one (cells spill).
    input wide = make_input(rng, n_terms, 500, 0, 2046);
    const auto c1 = check_builders(wide, "every binade");
    EXPECT_EQ(c1.dense_ranges, 0u);
    EXPECT_GT(c1.one_by_one_ranges, 0u);
    EXPECT_GT(er::segment_sum(std::span<const double>(wide.values), std::span<const std::int64_t>(wide.ids), 500)
                  .spilled(),
              0u);
    // Subnormals and the lowest normal binades: a window at field 1, dense.
    input low = make_input(rng, n_terms, 500, 0, 20);
    const auto c2 = check_builders(low, "subnormals");
    EXPECT_GT(c2.dense_ranges, 0u);
    EXPECT_EQ(c2.one_by_one_ranges, 0u);
    // A narrow window with one initial value far outside it: one by one (the initial terms count for the window).
    input far = make_input(rng, n_terms, 500, 1000, 1030);
    far.initial[3] = std::ldexp(1.0, 900);
    const auto c3 = check_builders(far, "an initial value far out");
    EXPECT_GT(c3.one_by_one_ranges, 0u);
}

TEST(ScatterDense, BlocksWithInfOrNanGoOneByOne) {
    // A narrow window with a NaN, +Inf and -Inf in a few blocks: those blocks one by one (their elements spill),
    // the others dense; both kinds of terms meet in the same elements.
    std::mt19937_64 rng(404);
    input in = make_input(rng, n_terms, 2000, 1010, 1040);
    in.values[5000] = std::numeric_limits<double>::quiet_NaN();
    in.values[70001] = std::numeric_limits<double>::infinity();
    in.values[140002] = -std::numeric_limits<double>::infinity();
    in.ids[140002] = in.ids[70001];  // +Inf and -Inf in one element: NaN
    in.ids[5000] = (in.ids[70001] + 1) % 2000;
    const auto c = check_builders(in, "Inf and NaN blocks");
    EXPECT_GT(c.dense_ranges, 0u);
    EXPECT_GT(c.special_blocks, 0u);
    EXPECT_GT(c.guesses_widened, 0u);  // 1 thread: the NaN's block leaves the guess, which goes on with Inf blocks
    const auto r = er::segment_sum(std::span<const double>(in.values), std::span<const std::int64_t>(in.ids), 2000);
    EXPECT_EQ(r.spilled(), 2u);
}

TEST(ScatterDense, AGuessedWindowWidensOrStartsAgain) {
    // Step D5 on one thread: the first block spans fields 1000 .. 1010, so the guess is [972, 1011] (39 binades: one
    // fold at n = 150,000). One term outside it, late, at each kind of exit; 200 segments, so that a joined window
    // of 51 binades (12 count bits: folds every 4095 words) is still dense.
    struct exit_case {
        const char* what;
        int field;  // of the one term outside the guess
        bool widened, restarted_dense, one_by_one;
    };
    for (const exit_case& e : {exit_case{"below, joined window dense", 960, true, false, false},
                               exit_case{"above, joined window too wide, every term's dense", 1050, false, true, false},
                               exit_case{"far below, one by one", 900, false, false, true},
                               exit_case{"just below the guess", 971, true, false, false},
                               exit_case{"the guess's own ends", 972, false, false, false}}) {
        std::mt19937_64 rng(407);
        input in = make_input(rng, n_terms, 200, 1000, 1010);
        for (double& x : in.initial) x = std::ldexp(x, 0);  // in [1000, 1010] too
        in.values[123457] = -std::bit_cast<double>((static_cast<std::uint64_t>(e.field) << 52) | 12345);
        if (e.field == 972) in.values[99999] = std::bit_cast<double>((std::uint64_t{1011} << 52) | 7);
        (void)er::detail::take_dense_scatter_counts();
        const auto one = er::segment_sum(std::span<const double>(in.values), std::span<const std::int64_t>(in.ids),
                                         in.segments, {}, er::out_of_range::error, 1);
        const auto c = er::detail::take_dense_scatter_counts();
        EXPECT_EQ(c.guessed_ranges, 1u) << e.what;
        EXPECT_EQ(c.guesses_widened, e.widened ? 1u : 0u) << e.what;
        EXPECT_EQ(c.guesses_restarted, e.restarted_dense || e.one_by_one ? 1u : 0u) << e.what;
        EXPECT_EQ(c.dense_ranges, e.restarted_dense ? 1u : 0u) << e.what;
        EXPECT_EQ(c.one_by_one_ranges, e.one_by_one ? 1u : 0u) << e.what;
        if (e.widened) EXPECT_GE(c.folds, 2u) << e.what;  // the guess's, and the joined window's
        if (e.field == 960) EXPECT_GE(c.folds, 8u) << e.what;  // then every 4095 words of the 26,543 left
        EXPECT_EQ(one.spilled(), e.one_by_one ? 1u : 0u) << e.what;  // 110 binades apart: that segment spills
        if (!e.one_by_one) EXPECT_GT(c.narrow_blocks, 0u) << e.what;  // shifts 18 + (1010 - 972) = 56 at most
        check_builders(in, e.what);  // every builder on 1, 2, 3 threads, against the oracles and each other
    }
}

TEST(ScatterDense, NoGuessWhereTheFirstBlockCannotGiveOne) {
    // The first block holding an Inf, or spanning more than the guess may (40 binades at n = 150,000), or an initial
    // value outside the guess: the window of every term is read first (Steps D1, D2), dense where it fits.
    std::mt19937_64 rng(408);
    input inf = make_input(rng, n_terms, 300, 1000, 1010);
    inf.values[3] = std::numeric_limits<double>::infinity();
    input wide = make_input(rng, n_terms, 300, 990, 1030);
    input init = make_input(rng, n_terms, 300, 1000, 1010);
    init.initial[7] = std::ldexp(1.0, 1040 - 1023);  // above the guess [972, 1011]; within D2's 54 binades
    for (const auto& [what, in] : {std::pair<const char*, const input&>{"Inf in the first block", inf},
                                   std::pair<const char*, const input&>{"a wide first block", wide}}) {
        (void)er::detail::take_dense_scatter_counts();
        (void)er::segment_sum(std::span<const double>(in.values), std::span<const std::int64_t>(in.ids), in.segments,
                              {}, er::out_of_range::error, 1);
        const auto c = er::detail::take_dense_scatter_counts();
        EXPECT_EQ(c.guessed_ranges, 0u) << what;
        EXPECT_EQ(c.dense_ranges, 1u) << what;
        check_builders(in, what);
    }
    (void)er::detail::take_dense_scatter_counts();
    (void)er::segment_sum(std::span<const double>(init.values), std::span<const std::int64_t>(init.ids),
                          init.segments, std::span<const double>(init.initial), er::out_of_range::error, 1);
    const auto c = er::detail::take_dense_scatter_counts();
    EXPECT_EQ(c.guessed_ranges, 0u);
    EXPECT_EQ(c.dense_ranges, 1u);
    check_builders(init, "an initial value above the guess");
}

TEST(ScatterDense, OutOfRangeIdsAreDroppedOrNamed) {
    std::mt19937_64 rng(405);
    input in = make_input(rng, n_terms, 1000, 1000, 1030);
    for (std::size_t i = 300; i < n_terms; i += 1001)
        in.ids[i] = (i % 2) ? -3 : 1000 + static_cast<std::int64_t>(i % 5);
    const auto c = check_builders(in, "dropped ids");  // drop mode, against the oracles without them
    EXPECT_GT(c.dense_ranges, 0u);
    for (unsigned t : {1u, 2u}) {
        try {
            (void)er::segment_sum(std::span<const double>(in.values), std::span<const std::int64_t>(in.ids), 1000, {},
                                  er::out_of_range::error, t);
            ADD_FAILURE() << "an out-of-range id was accepted";
        } catch (const std::invalid_argument& e) {
            EXPECT_THAT(e.what(), HasSubstr("segment_ids[300] = 1000")) << t;
        }
    }
}

TEST(ScatterDense, PlantedKernelFaultsAreRejected) {
    // A binary64 bincount loop against the dense reference: covered; a dropped update, one applied twice, an index
    // off by one and a lost initial value rejected.
    std::mt19937_64 rng(406);
    std::normal_distribution<double> normal;
    const std::size_t n = n_terms, segments = 5000;
    std::vector<double> values(n), initial(segments);
    std::vector<std::int64_t> ids(n);
    for (std::size_t i = 0; i < n; ++i) values[i] = normal(rng), ids[i] = static_cast<std::int64_t>(rng() % segments);
    for (double& x : initial) x = normal(rng);
    (void)er::detail::take_dense_scatter_counts();
    const auto refs = er::segment_sum(std::span<const double>(values), std::span<const std::int64_t>(ids), segments,
                                      std::span<const double>(initial), er::out_of_range::error, 1);
    EXPECT_GT(er::detail::take_dense_scatter_counts().guessed_ranges, 0u);  // one thread: Step D5
    auto kernel = [&](int fault) { return sc::faulty_bincount(values, ids, initial, 100000, fault); };
    const er::standard model = er::any_order();
    EXPECT_TRUE(er::covers(std::span<const double>(kernel(0)), refs, model).covered);
    for (int fault = 1; fault <= 4; ++fault)
        EXPECT_FALSE(er::covers(std::span<const double>(kernel(fault)), refs, model).covered) << "fault " << fault;
}

}  // namespace
