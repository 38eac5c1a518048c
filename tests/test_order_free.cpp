// Order-free test data (exactref/testing.h, docs/order-free.md): every allowed evaluation gives RN(s) bit for bit.
//
//   (a) small n: every tree over every order (oracle reachable_sums), in every rounding mode, equals RN(s) from
//       MPFR, Boost and exactref::sum;
//   (b) large n: thousands of random left folds over random permutations and random trees, and random evaluations
//       consistent with a structure (random trees or permuted folds for tree/any groups, folds in order), computed
//       in the format;
//   (c) real std::thread workers adding the terms with compare-exchange atomics;
//   (d) planted faults (one term lost, one term counted twice) in allowed evaluations: the result is exactly
//       s - x_j or s + x_j and covers(r, ref, exact()) rejects every one;
//   and the sufficient condition itself (Theorem 1 and 2: every partial sum of every allowed evaluation within
//   2^p·q minus the largest term) checked in exact integers over every group, plus determinism, spread and errors.
// The groups of a structure are formed here by this file's own code from the rules of standard.h, not by the
// library's. Seeds are fixed and every failure names its format, n, structure and seed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cmath>      // std::frexp, std::fabs
#include <cstdint>
#include <cstdlib>    // std::abs
#include <functional>
#include <limits>
#include <optional>
#include <random>     // std::mt19937_64 (fully specified; the distributions are not, so below() is used)
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "exactref/covers.h"
#include "exactref/format.h"
#include "exactref/reference.h"
#include "exactref/standard.h"
#include "exactref/testing.h"
#include "oracle.h"
#include "test_scale.h"

namespace {

using namespace exactref;
namespace orc = exactref::oracle;
using exactref::testing::order_free_data;
using exactref::testing::order_free_max_terms;
using ::testing::HasSubstr;

// ---- arithmetic in the format --------------------------------------------------------------------------------

template <class T>
std::uint64_t bits_of(T x) {
    return format_traits<T>::to_bits(x);
}
template <class T>
const format_info& fmt() {
    return format_traits<T>::info;
}
template <class T>
double as_double(T x) {
    if constexpr (std::is_same_v<T, double> || std::is_same_v<T, float>) {
        return x;
    } else {
        // Exact: every float16/bfloat16 value is a float. A table of all 65536 encodings, built once.
        static const std::vector<double> table = [] {
            std::vector<double> t(65536);
            for (std::uint32_t b = 0; b < 65536; ++b)
                t[b] = static_cast<double>(static_cast<float>(T::from_bits(static_cast<std::uint16_t>(b))));
            return t;
        }();
        return table[x.bits];
    }
}

// a + b rounded to nearest in T. float and double: the host's IEEE addition. float16 and bfloat16: the exact sum in
// binary64 (checked exact with TwoSum; the operands of these tests are multiples of one q below 2^(p+2)·q), rounded
// once by round_double_to (integer operations).
template <class T>
T add(T a, T b) {
    if constexpr (std::is_same_v<T, double> || std::is_same_v<T, float>) {
        return a + b;
    } else {
        const double x = as_double(a), y = as_double(b);
        const double s = x + y;
        const double yy = s - x;
        if ((x - (s - yy)) + (y - yy) != 0.0) throw std::logic_error("test arithmetic: a binary64 sum was inexact");
        return format_traits<T>::from_bits(static_cast<typename format_traits<T>::bits_type>(
            round_double_to(fmt<T>(), s, rounding::to_nearest_even)));
    }
}

// ---- random choices (platform independent) -------------------------------------------------------------------

std::size_t below(std::mt19937_64& rng, std::size_t k) {
    __extension__ typedef unsigned __int128 u128;
    return static_cast<std::size_t>((u128{rng()} * k) >> 64);
}

template <class T>
void shuffle(std::vector<T>& v, std::mt19937_64& rng) {
    for (std::size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[below(rng, i)]);
}

// A random binary tree over the values (any shape, any order): merge two random nodes until one is left.
template <class T>
T random_tree(std::vector<T> pool, std::mt19937_64& rng) {
    while (pool.size() > 1) {
        const std::size_t i = below(rng, pool.size());
        const T a = pool[i];
        pool[i] = pool.back();
        pool.pop_back();
        const std::size_t j = below(rng, pool.size());
        pool[j] = add(pool[j], a);
    }
    return pool[0];
}

// A left fold over a random permutation.
template <class T>
T random_fold(std::vector<T> pool, std::mt19937_64& rng) {
    shuffle(pool, rng);
    T acc = pool[0];
    for (std::size_t i = 1; i < pool.size(); ++i) acc = add(acc, pool[i]);
    return acc;
}

// ---- the groups of a structure, formed here from standard.h's rules -------------------------------------------

std::vector<std::vector<std::size_t>> groups_of(const level& l, std::size_t m) {
    std::vector<std::vector<std::size_t>> out;
    const auto N = static_cast<std::size_t>(l.size);
    switch (l.groups) {
        case level_groups::rest:
            out.emplace_back();
            for (std::size_t i = 0; i < m; ++i) out.back().push_back(i);
            break;
        case level_groups::consecutive:
            for (std::size_t start = 0; start < m; start += N) {
                out.emplace_back();
                for (std::size_t i = start; i < std::min(m, start + N); ++i) out.back().push_back(i);
            }
            break;
        case level_groups::chunks: {  // m = q·N + r: the first r chunks hold q + 1 items
            std::size_t start = 0;
            for (std::size_t g = 0; g < N; ++g) {
                const std::size_t len = m / N + (g < m % N ? 1 : 0);
                out.emplace_back();
                for (std::size_t i = start; i < start + len; ++i) out.back().push_back(i);
                start += len;
            }
            break;
        }
        case level_groups::interleaved:
            for (std::size_t g = 0; g < N; ++g) {
                out.emplace_back();
                for (std::size_t i = g; i < m; i += N) out.back().push_back(i);
            }
            break;
    }
    return out;
}

// The levels to evaluate: the structure's, or one `any` level for data of any order.
std::vector<level> levels_of(const standard* structure) {
    if (structure == nullptr) return {level{}};
    return structure->levels;
}

// One random evaluation consistent with the levels: a fold group folds its items in order; a tree or any group
// combines them by a random tree, or (any, every other time) folds a random permutation. Fault injection: the
// leaf `lost` is left out, the leaf `doubled` is added twice (at its place in its group).
template <class T>
T evaluate(const std::vector<T>& x, const std::vector<level>& levels, std::mt19937_64& rng,
           std::size_t lost = SIZE_MAX, std::size_t doubled = SIZE_MAX) {
    std::vector<T> items = x;
    bool first = true;
    for (const level& l : levels) {
        std::vector<T> next;
        for (const std::vector<std::size_t>& g : groups_of(l, items.size())) {
            std::vector<T> values;
            values.reserve(g.size() + 1);
            for (std::size_t i : g) {
                if (first && i == lost) continue;
                values.push_back(items[i]);
                if (first && i == doubled) values.push_back(items[i]);
            }
            if (values.empty()) values.push_back(T{});  // a group that lost its one term adds +0.0
            if (l.order == level_order::fold) {
                T acc = values[0];
                for (std::size_t k = 1; k < values.size(); ++k) acc = add(acc, values[k]);
                next.push_back(acc);
            } else if (l.order == level_order::any && below(rng, 2) == 0) {
                next.push_back(random_fold(std::move(values), rng));
            } else {
                next.push_back(random_tree(std::move(values), rng));
            }
        }
        items = std::move(next);
        first = false;
    }
    return items[0];
}

// RN(s) three ways: exactref::sum (the library), MPFR's mpfr_sum and Boost's scaled integer; all must agree.
template <class T>
std::uint64_t nearest_bits(const std::vector<T>& x, const std::string& where) {
    const std::uint64_t lib = bits_of(exactref::sum(x).template nearest<T>());
    const std::vector<std::uint64_t> b = orc::to_bits(std::span<const T>(x));
    const std::uint64_t by_mpfr = orc::mpfr_sum(std::span<const std::uint64_t>(b), fmt<T>()).round_bits(fmt<T>());
    const std::uint64_t by_boost = orc::boost_sum(std::span<const std::uint64_t>(b), fmt<T>()).round_bits(fmt<T>());
    EXPECT_EQ(by_mpfr, by_boost) << "oracles disagree, " << where;
    EXPECT_EQ(lib, by_mpfr) << "exactref::sum disagrees with MPFR, " << where;
    return by_mpfr;
}

template <class T>
std::string describe(T x) {
    return orc::describe(bits_of(x), fmt<T>());
}

template <class T>
std::string where(std::size_t n, const char* structure, std::uint64_t seed) {
    return std::string(fmt<T>().name) + " n = " + std::to_string(n) + " " + (structure ? structure : "any order") +
           " seed " + std::to_string(seed);
}

template <class T>
std::vector<T> data(std::size_t n, std::uint64_t seed, const char* structure) {
    if (structure == nullptr) return order_free_data<T>(n, seed);
    return order_free_data<T>(n, seed, parse_standard(structure));
}

// ---- (a) every tree over every order of small data ---------------------------------------------------------------

template <class T>
void every_tree_of_small_data(int seeds) {
    const format_info& f = fmt<T>();
    for (std::size_t n = 1; n <= 8; ++n) {
        for (std::uint64_t seed = 0; seed < static_cast<std::uint64_t>(seeds); ++seed) {
            const std::vector<T> x = order_free_data<T>(n, seed);
            const std::string at = where<T>(n, nullptr, seed);
            const std::uint64_t rn = nearest_bits(x, at);
            const std::vector<std::uint64_t> b = orc::to_bits(std::span<const T>(x));
            // Every mode for the smaller n (exact data is exact under any rounding: directed: is accepted).
            for (rounding mode : {rounding::to_nearest_even, rounding::toward_zero, rounding::upward,
                                  rounding::downward}) {
                if (mode != rounding::to_nearest_even && n > 6) break;
                const std::vector<std::uint64_t> all = orc::reachable_sums(std::span<const std::uint64_t>(b), f, mode);
                ASSERT_EQ(all.size(), 1u) << at << " in " << to_string(mode) << ": " << all.size()
                                          << " different results over the trees and orders";
                ASSERT_EQ(all[0], rn) << at << " in " << to_string(mode) << ": every tree gives "
                                      << orc::describe(all[0], f) << ", RN(s) is " << orc::describe(rn, f);
            }
        }
    }
}

TEST(OrderFree, EveryTreeOverEveryOrderOfSmallDataGivesRNsInAllFourFormats) {
    every_tree_of_small_data<double>(150);
    every_tree_of_small_data<float>(150);
    every_tree_of_small_data<float16>(150);
    every_tree_of_small_data<bfloat16>(150);
}

// ---- (b) random evaluations of large data ------------------------------------------------------------------

template <class T>
void random_evaluations(std::size_t n, const char* structure, std::uint64_t seed, int evaluations) {
    const std::string at = where<T>(n, structure, seed);
    const std::vector<T> x = data<T>(n, seed, structure);
    ASSERT_EQ(x.size(), n) << at;
    const std::uint64_t rn = nearest_bits(x, at);
    std::optional<standard> model;
    if (structure != nullptr) model = parse_standard(structure);
    const std::vector<level> levels = levels_of(model ? &*model : nullptr);
    std::mt19937_64 rng(seed ^ 0x5eed);
    evaluations = exactref_test::scaled(evaluations);
    for (int e = 0; e < evaluations; ++e) {
        const T r = evaluate(x, levels, rng);
        ASSERT_EQ(bits_of(r), rn) << at << ", evaluation " << e << ": " << describe(r) << ", RN(s) is "
                                  << orc::describe(rn, fmt<T>());
        if (e == 0) {
            EXPECT_TRUE(covers(r, exactref::sum(x), exact()).covered) << at;
        }
    }
}

TEST(OrderFree, RandomOrdersAndTreesOfLargeDataGiveRNsBitForBit) {
    random_evaluations<double>(100'000, nullptr, 11, 400);
    random_evaluations<double>(1'000'000, nullptr, 12, 10);
    random_evaluations<float>(100'000, nullptr, 13, 400);
    random_evaluations<float>(1'000'000, nullptr, 14, 10);
    // float16 and bfloat16 without a structure: up to their limits, the limit itself included.
    random_evaluations<float16>(order_free_max_terms(dtype::float16), nullptr, 16, 2000);
    random_evaluations<float16>(1500, nullptr, 17, 2000);
    random_evaluations<bfloat16>(order_free_max_terms(dtype::bfloat16), nullptr, 18, 3000);
    random_evaluations<bfloat16>(300, nullptr, 19, 3000);
}

TEST(OrderFree, RandomEvaluationsConsistentWithAStructureGiveRNsBitForBit) {
    random_evaluations<float16>(1'000'000, "levels:fold/4,any", 21, 10);
    random_evaluations<float16>(100'000, "levels:fold/4,any", 22, 150);
    random_evaluations<float16>(1'000'000, "levels:fold%4096,tree:64,any", 23, 8);
    random_evaluations<float16>(100'000, "levels:any:64,fold:8,any", 24, 100);
    random_evaluations<bfloat16>(100'000, "levels:fold/8,any", 25, 150);
    random_evaluations<bfloat16>(100'000, "levels:fold%1024,tree:32,tree", 26, 100);
    random_evaluations<bfloat16>(20'000, "levels:tree:16,any:4,fold:8,any", 27, 150);
    random_evaluations<float>(1'000'000, "levels:fold%65536,tree:256,any", 28, 8);
    random_evaluations<double>(1'000'000, "levels:fold/16,tree", 29, 8);
    random_evaluations<float16>(100'001, "levels:fold:1000,any", 30, 100);  // a last group of one term
    random_evaluations<float16>(5, "levels:fold/4,any", 31, 200);           // chunks of 2, 1, 1, 1 terms
}

// ---- (c) real threads with compare-exchange atomics ------------------------------------------------------------

// total += x by compare-exchange: float and double in std::atomic<T>, float16 and bfloat16 as their bits.
template <class T>
using atomic_cell = std::conditional_t<std::is_same_v<T, double> || std::is_same_v<T, float>, std::atomic<T>,
                                       std::atomic<std::uint16_t>>;

template <class T>
void atomic_add(atomic_cell<T>& total, T x) {
    if constexpr (std::is_same_v<T, double> || std::is_same_v<T, float>) {
        T seen = total.load(std::memory_order_relaxed);
        while (!total.compare_exchange_weak(seen, seen + x, std::memory_order_relaxed)) {
        }
    } else {
        std::uint16_t seen = total.load(std::memory_order_relaxed);
        while (!total.compare_exchange_weak(seen, bits_of(add(T::from_bits(seen), x)), std::memory_order_relaxed)) {
        }
    }
}

template <class T>
T atomic_result(const atomic_cell<T>& total) {
    if constexpr (std::is_same_v<T, double> || std::is_same_v<T, float>) {
        return total.load();
    } else {
        return T::from_bits(total.load());
    }
}

// Starts the workers together (so their atomics interleave) and joins them.
template <class Work>
void run_workers(unsigned threads, const Work& work) {
    std::atomic<unsigned> ready{0};
    std::atomic<bool> go{false};
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
            ready.fetch_add(1);
            while (!go.load()) std::this_thread::yield();
            work(t);
        });
    while (ready.load() != threads) std::this_thread::yield();
    go.store(true);
    for (std::thread& th : pool) th.join();
}

// Every term through the atomic, worker t taking t, t + threads, ... (any order: data without a structure).
template <class T>
void atomics_of_every_term(std::size_t n, std::uint64_t seed, int runs, unsigned threads) {
    const std::string at = where<T>(n, nullptr, seed);
    const std::vector<T> x = order_free_data<T>(n, seed);
    const std::uint64_t rn = nearest_bits(x, at);
    for (int run = 0; run < runs; ++run) {
        atomic_cell<T> total{};
        run_workers(threads, [&](unsigned t) {
            for (std::size_t i = t; i < n; i += threads) atomic_add<T>(total, x[i]);
        });
        const T r = atomic_result<T>(total);
        ASSERT_EQ(bits_of(r), rn) << at << ", run " << run << ": " << describe(r);
    }
}

// levels:fold/K,any: K workers fold their static chunk (OpenMP's schedule) and add the chunk result atomically.
template <class T>
void atomics_of_chunk_folds(std::size_t n, unsigned threads, std::uint64_t seed, int runs) {
    const std::string spelled = "levels:fold/" + std::to_string(threads) + ",any";
    const std::string at = where<T>(n, spelled.c_str(), seed);
    const std::vector<T> x = order_free_data<T>(n, seed, parse_standard(spelled));
    const std::uint64_t rn = nearest_bits(x, at);
    for (int run = 0; run < runs; ++run) {
        atomic_cell<T> total{};
        run_workers(threads, [&](unsigned t) {
            const std::size_t q = n / threads, r = n % threads;
            const std::size_t start = t * q + std::min<std::size_t>(t, r), len = q + (t < r ? 1 : 0);
            T acc = x[start];
            for (std::size_t i = start + 1; i < start + len; ++i) acc = add(acc, x[i]);
            atomic_add<T>(total, acc);
        });
        const T r = atomic_result<T>(total);
        ASSERT_EQ(bits_of(r), rn) << at << ", run " << run << ": " << describe(r);
    }
}

TEST(OrderFree, ThreadsAddingWithCompareExchangeAtomicsGiveRNsEveryRun) {
    atomics_of_every_term<double>(200'000, 41, 6, 4);
    atomics_of_every_term<float>(200'000, 42, 6, 4);
    atomics_of_every_term<float16>(order_free_max_terms(dtype::float16), 43, 60, 4);
    atomics_of_every_term<bfloat16>(order_free_max_terms(dtype::bfloat16), 44, 100, 4);
    atomics_of_chunk_folds<float16>(1'000'000, 4, 45, 8);
    atomics_of_chunk_folds<bfloat16>(100'000, 8, 46, 20);
    atomics_of_chunk_folds<float>(1'000'000, 3, 47, 8);
}

// ---- (d) planted faults: one term lost, one term counted twice ------------------------------------------------

// For each leaf j in `leaves`: an allowed evaluation that loses x_j, and one that adds it twice. Theorem 2: each is
// exact, so its result is s - x_j (s + x_j) exactly, never RN(s), and covers(..., exact()) rejects it.
template <class T>
void planted_faults(std::size_t n, const char* structure, std::uint64_t seed, std::size_t samples) {
    const std::string at = where<T>(n, structure, seed);
    const std::vector<T> x = data<T>(n, seed, structure);
    std::optional<standard> model;
    if (structure != nullptr) model = parse_standard(structure);
    const std::vector<level> levels = levels_of(model ? &*model : nullptr);
    const reference ref = exactref::sum(x);
    const double s = as_double(ref.template nearest<T>());  // s itself: the data's sum is representable
    std::mt19937_64 rng(seed ^ 0xfa17);
    std::size_t rejected = 0;
    for (std::size_t c = 0; c < std::min(samples, n); ++c) {
        const std::size_t j = samples >= n ? c : below(rng, n);
        for (const bool lose : {true, false}) {
            const T r = lose ? evaluate(x, levels, rng, j) : evaluate(x, levels, rng, SIZE_MAX, j);
            const double expected = lose ? s - as_double(x[j]) : s + as_double(x[j]);  // exact in binary64
            const std::string fault = at + (lose ? ", term " : ", doubled term ") + std::to_string(j) + " (" +
                                      describe(x[j]) + ")";
            ASSERT_EQ(as_double(r), expected) << fault << ": the faulty evaluation was not exact: " << describe(r);
            const verdict v = covers(r, ref, exact());
            ASSERT_FALSE(v.covered) << fault << ": exact() accepted the faulty result\n" << v.message();
            ++rejected;
        }
    }
    EXPECT_EQ(rejected, 2 * std::min(samples, n)) << at;
}

TEST(OrderFree, PlantedLostAndDoubledTermsAreEveryOneRejectedByExact) {
    planted_faults<double>(2000, nullptr, 51, 2000);  // every term
    planted_faults<float>(2000, nullptr, 52, 2000);
    planted_faults<float16>(order_free_max_terms(dtype::float16), nullptr, 53, 800);
    planted_faults<bfloat16>(order_free_max_terms(dtype::bfloat16), nullptr, 54, 5000);  // every term
    planted_faults<float16>(100'000, "levels:fold/4,any", 55, 60);
    planted_faults<bfloat16>(50'000, "levels:fold%512,tree:16,any", 56, 80);
    planted_faults<float>(200'000, "levels:fold%65536,tree:256,any", 57, 25);
}

TEST(OrderFree, ThePlantedFaultsMessageSaysNotCoveredAndTheOneUlpError) {
    const std::vector<float16> x = order_free_data<float16>(1000, 58);
    const reference ref = exactref::sum(x);
    std::mt19937_64 rng(58);
    const float16 r = evaluate(x, levels_of(nullptr), rng, 0);
    const verdict v = covers(r, ref, exact());
    EXPECT_FALSE(v.covered);
    EXPECT_THAT(v.message(), HasSubstr("NOT COVERED by exact"));
    EXPECT_EQ(v.error, -as_double(x[0]));  // exactly the lost term
}

// ---- the sufficient condition, checked over every group in exact integers ---------------------------------------

// Theorem 1 and 2 ask: every term a non-zero multiple of q, and every partial sum an allowed evaluation can form —
// the prefixes of each fold group, the subset sums of each tree/any group, i.e. [-N_g, P_g] — of magnitude at most
// 2^p·q - max|x|. Checked here over every group of every level, with group sums in exact int64 units of q (the
// smallest power of two dividing every term), which covers every allowed evaluation, not a sample. Returns what
// fails, or "" when the condition holds.
template <class T>
std::string margin_violation(const std::vector<T>& x, const std::vector<level>& levels) {
    const format_info& f = fmt<T>();
    int e_low = std::numeric_limits<int>::max();
    for (const T& v : x) {
        const orc::parts d = orc::decode(f, bits_of(v));
        if (d.nan || d.inf || d.significand == 0) return "a zero or special term " + describe(v);
        if (((bits_of(v) >> (f.precision - 1)) & f.special_exponent_field()) == 0)
            return "a subnormal term " + describe(v);
        e_low = std::min(e_low, d.exponent + std::countr_zero(d.significand));
    }
    if (e_low + f.precision > f.emax) return "2^p·q overflows";
    std::vector<std::int64_t> items;
    std::int64_t largest = 0;
    for (const T& v : x) {
        const orc::parts d = orc::decode(f, bits_of(v));
        const int tz = std::countr_zero(d.significand);
        const auto u = static_cast<std::int64_t>((d.significand >> tz) << (d.exponent + tz - e_low));
        items.push_back(d.negative ? -u : u);
        largest = std::max(largest, u);
    }
    const std::int64_t limit = (std::int64_t{1} << f.precision) - largest;  // 2^p·q less the largest term, in q
    for (std::size_t l = 0; l < levels.size(); ++l) {
        std::vector<std::int64_t> next;
        for (const std::vector<std::size_t>& g : groups_of(levels[l], items.size())) {
            std::int64_t prefix = 0, positive = 0, negative = 0;
            for (std::size_t i : g) {
                prefix += items[i];
                (items[i] > 0 ? positive : negative) += items[i] > 0 ? items[i] : -items[i];
                if (levels[l].order == level_order::fold && std::abs(prefix) > limit)
                    return "level " + std::to_string(l + 1) + ": a fold prefix of " + std::to_string(prefix) +
                           " q beyond 2^p·q - max|x| = " + std::to_string(limit) + " q";
            }
            if (levels[l].order != level_order::fold && std::max(positive, negative) > limit)
                return "level " + std::to_string(l + 1) + ": subset sums up to " +
                       std::to_string(std::max(positive, negative)) + " q beyond 2^p·q - max|x| = " +
                       std::to_string(limit) + " q";
            next.push_back(prefix);
        }
        items = std::move(next);
    }
    return "";
}

template <class T>
void margin_holds(std::size_t n, const char* structure, std::uint64_t seed) {
    std::optional<standard> model;
    if (structure != nullptr) model = parse_standard(structure);
    ASSERT_EQ(margin_violation(data<T>(n, seed, structure), levels_of(model ? &*model : nullptr)), "")
        << where<T>(n, structure, seed);
}

TEST(OrderFree, EveryAllowedPartialSumIsAMultipleOfQWithinTheMargin) {
    for (std::uint64_t seed = 60; seed < 64; ++seed) {
        margin_holds<double>(200'000, nullptr, seed);
        margin_holds<float>(200'000, nullptr, seed);
        margin_holds<float16>(order_free_max_terms(dtype::float16), nullptr, seed);
        margin_holds<float16>(order_free_max_terms(dtype::float16) - 1, nullptr, seed);
        margin_holds<float16>(2000, nullptr, seed);
        margin_holds<bfloat16>(order_free_max_terms(dtype::bfloat16), nullptr, seed);
        margin_holds<bfloat16>(order_free_max_terms(dtype::bfloat16) - 1, nullptr, seed);
        margin_holds<bfloat16>(100, nullptr, seed);
        margin_holds<float16>(300'000, "levels:fold%65536,tree:256,any", seed);
        margin_holds<bfloat16>(300'000, "levels:fold%65536,tree:256,any", seed);
        margin_holds<bfloat16>(100'000, "levels:fold", seed);
        margin_holds<float16>(100'000, "levels:any:1000,any", seed);
        margin_holds<bfloat16>(100'000, "levels:any:16,tree:16,any:16,fold", seed);
        margin_holds<float16>(100'000, "directed:levels:fold/7,tree", seed);
        margin_holds<bfloat16>(1000, "levels:fold/300,any", seed);  // chunks of 3 and 4 terms
        margin_holds<float16>(999, "levels:fold%500,any", seed);    // interleaved groups of 1 and 2 terms
        margin_holds<float>(100'000, "mixed:float64:float32:levels:fold/4,any", seed);
    }
}

// The checks above can fail: data one term past the margin is caught by margin_violation, and small data that is
// not order-free shows several results in reachable_sums.
TEST(OrderFree, TheChecksSeeDataThatIsNotOrderFree) {
    std::vector<float16> x = order_free_data<float16>(order_free_max_terms(dtype::float16), 1);  // ±q, P = N = 2047q
    const std::vector<level> any = levels_of(nullptr);
    ASSERT_EQ(margin_violation(x, any), "");
    double q = 0;
    for (float16 v : x) q = std::max(q, std::fabs(as_double(v)));
    x.push_back(float16(static_cast<float>(as_double(x[0]) > 0 ? q : -q)));  // one more term of the larger side
    EXPECT_THAT(margin_violation(x, any), HasSubstr("subset sums up to 2048 q beyond 2^p·q - max|x| = 2047 q"));
    std::vector<float16> finer = order_free_data<float16>(order_free_max_terms(dtype::float16), 1);
    finer[0] = float16(static_cast<float>(as_double(finer[0]) * 1.5));  // ±1.5q: a quantum of q/2
    EXPECT_THAT(margin_violation(finer, any), HasSubstr("beyond"));

    std::mt19937_64 rng(71);
    int several = 0;
    for (int i = 0; i < 100; ++i) {
        const std::vector<std::uint64_t> b = orc::random_terms(bfloat16_info, 8, orc::term_mix::clustered, rng);
        several += orc::reachable_sums(std::span<const std::uint64_t>(b), bfloat16_info).size() > 1 ? 1 : 0;
    }
    EXPECT_GT(several, 50) << "random bfloat16 data should depend on the order";
}

// ---- determinism, spread, limits, errors ------------------------------------------------------------------------

template <class T>
std::set<int> binades(const std::vector<T>& x) {
    std::set<int> out;
    for (const T& v : x) {
        int e = 0;
        std::frexp(as_double(v), &e);
        out.insert(e);
    }
    return out;
}

template <class T>
double negative_share(const std::vector<T>& x) {
    std::size_t neg = 0;
    for (const T& v : x) neg += as_double(v) < 0 ? 1 : 0;
    return static_cast<double>(neg) / static_cast<double>(x.size());
}

TEST(OrderFree, TheSameSeedGivesTheSameBitsInAnyFloatingPointEnvironmentAndOtherSeedsOtherData) {
    const auto a = order_free_data<float>(10'000, 7), b = order_free_data<float>(10'000, 7);
    const auto c = order_free_data<float>(10'000, 8);
    EXPECT_TRUE(std::equal(a.begin(), a.end(), b.begin(), [](float p, float q) { return bits_of(p) == bits_of(q); }));
    std::size_t same = 0;
    for (std::size_t i = 0; i < a.size(); ++i) same += bits_of(a[i]) == bits_of(c[i]) ? 1 : 0;
    EXPECT_LT(same, 100u) << "seeds 7 and 8 gave nearly the same data";
    const standard s = parse_standard("levels:fold/4,any");
    const auto d = order_free_data<bfloat16>(50'000, 3, s), e = order_free_data<bfloat16>(50'000, 3, s);
    EXPECT_TRUE(std::equal(d.begin(), d.end(), e.begin(), [](bfloat16 p, bfloat16 q) { return p == q; }));
    // Integer arithmetic only: the same bits under another rounding mode and with FTZ/DAZ on.
    const standard grid = parse_standard("levels:fold%64,tree:8,any");
    const std::vector<double> f = order_free_data<double>(20'000, 9);
    const std::vector<float16> g = order_free_data<float16>(20'000, 9, grid);
    {
        orc::fp_environment_guard other(rounding::upward, orc::ftz_daz_supported());
        const std::vector<double> f2 = order_free_data<double>(20'000, 9);
        const std::vector<float16> g2 = order_free_data<float16>(20'000, 9, grid);
        EXPECT_TRUE(std::equal(f.begin(), f.end(), f2.begin(),
                               [](double p, double q) { return bits_of(p) == bits_of(q); }));
        EXPECT_TRUE(std::equal(g.begin(), g.end(), g2.begin(), [](float16 p, float16 q) { return p == q; }));
    }
    EXPECT_TRUE(order_free_data<double>(0, 1).empty());
    EXPECT_TRUE(order_free_data<float16>(0, 1, s).empty());
    EXPECT_EQ(order_free_data<double>(1, 1).size(), 1u);
}

TEST(OrderFree, TheDataHasRandomSignsAndSpansManyBinades) {
    struct expectation {
        const char* structure;
        std::size_t n;
        std::size_t min_binades;
    };
    const auto check = [](const auto& x, std::size_t min_binades, const std::string& at) {
        EXPECT_GE(binades(x).size(), min_binades) << at;
        EXPECT_NEAR(negative_share(x), 0.5, 0.1) << at;
    };
    check(order_free_data<double>(100'000, 1), 25, "float64 any order");
    check(order_free_data<double>(1000, 1), 45, "float64 any order, n = 1000");
    check(order_free_data<float>(100'000, 1), 8, "float32 any order");
    check(order_free_data<float>(1000, 1), 15, "float32 any order, n = 1000");
    check(order_free_data<float16>(200, 1), 3, "float16 any order, n = 200");
    check(order_free_data<float16>(100'000, 1, parse_standard("levels:fold/4,any")), 9, "float16 fold/4,any");
    check(order_free_data<bfloat16>(100'000, 1, parse_standard("levels:fold/4,any")), 6, "bfloat16 fold/4,any");
    check(order_free_data<float>(100'000, 1, parse_standard("levels:fold%1024,tree:32,any")), 22,
          "float32 fold%1024,tree:32,any");
}

TEST(OrderFree, TheLimitWithoutAStructureIsTwoToThePPlusOneMinusTwo) {
    EXPECT_EQ(order_free_max_terms(dtype::float16), 4094u);
    EXPECT_EQ(order_free_max_terms(dtype::bfloat16), 510u);
    EXPECT_EQ(order_free_max_terms(dtype::float32), 33'554'430u);
    EXPECT_EQ(order_free_max_terms(dtype::float64), (std::uint64_t{1} << 54) - 2);
    EXPECT_NO_THROW(order_free_data<float16>(4094, 1));
    EXPECT_NO_THROW(order_free_data<float16>(4093, 1));
    EXPECT_NO_THROW(order_free_data<bfloat16>(510, 1));
    // At the limit every term is ±q, half of each sign.
    const auto x = order_free_data<bfloat16>(510, 2);
    EXPECT_EQ(binades(x).size(), 1u);
    EXPECT_DOUBLE_EQ(negative_share(x), 0.5);
}

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "(no std::invalid_argument)";
}

TEST(OrderFree, RefusesWhatCannotBeOrderFreeAndSaysWhatToDo) {
    const std::string too_many = error_of([] { order_free_data<float16>(4095, 0); });
    EXPECT_THAT(too_many, HasSubstr("n = 4095"));
    EXPECT_THAT(too_many, HasSubstr("at most 4094 terms"));
    EXPECT_THAT(too_many, HasSubstr("levels:fold/4,any"));
    EXPECT_THAT(too_many, HasSubstr("a wider dtype"));
    EXPECT_THAT(too_many, HasSubstr("a smaller n"));
    EXPECT_THAT(error_of([] { order_free_data<bfloat16>(511, 0); }), HasSubstr("at most 510 terms"));
    EXPECT_THAT(error_of([] { order_free_data<float>(40'000'000, 0); }), HasSubstr("at most 33554430 terms"));
    // Not a structure.
    EXPECT_THAT(error_of([] { order_free_data<float>(10, 0, split_k(4)); }),
                HasSubstr("is not a structured standard (its structure alone is levels:fold/4,any"));
    EXPECT_THAT(error_of([] { order_free_data<float>(10, 0, exact()); }),
                HasSubstr("'exact' is not a structured standard"));
    EXPECT_THAT(error_of([] { order_free_data<float>(10, 0, any_order()); }), HasSubstr("no structure for any order"));
    // Groups that would be empty (standard.h's own message), a mixed format that does not hold the data.
    EXPECT_THAT(error_of([] { order_free_data<float>(3, 0, parse_standard("levels:fold/4,any")); }),
                HasSubstr("empty"));
    const standard narrower = parse_standard("mixed:float16:float32:levels:fold/4,any");
    EXPECT_THAT(error_of([&] { order_free_data<float>(100, 0, narrower); }),
                HasSubstr("accumulates in float16, which does not hold every float32 value"));
    // A structure whose any level meets more single terms than the format holds.
    const standard one_each = parse_standard("levels:fold/1000,any");
    const std::string singles = error_of([&] { order_free_data<bfloat16>(1000, 0, one_each); });
    EXPECT_THAT(singles, HasSubstr("level 2 (any)"));
    EXPECT_THAT(singles, HasSubstr("groups of at least 2 terms"));
    EXPECT_THAT(error_of([] { order_free_data<float16>(100'000, 0, parse_standard("levels:any:5000,any")); }),
                HasSubstr("use smaller groups there"));
}

TEST(OrderFree, GeneratesTenMillionFloat64TermsInAboutASecond) {
    const auto t0 = std::chrono::steady_clock::now();
    const auto x = order_free_data<double>(10'000'000, 5);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(x.size(), 10'000'000u);
    EXPECT_LT(seconds, 10.0) << "10^7 terms took " << seconds << " s; 10^8 should take seconds";
}

}  // namespace
