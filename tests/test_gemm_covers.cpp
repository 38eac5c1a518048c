// covers() over an exact matrix product (src/gemm_covers.cpp, docs/algorithms/covers-filter.md "Exact matrix
// products"): every verdict — covered, violations, first violations, worst element and its message — must be the one
// covers() gives over the same product as a reference_array (to_array(), the reference path), and every flag of
// detail::covers_flags must be covers_bits of the element's own reference (the exact decision). Results are planted
// at RN(s) and its neighbours, at s ± B and one ulp either side, far off, and at the special values; products are
// random of every kind (wide exponents, cancellation to 0, ties, subnormals, Inf/NaN, far entries), with C0, K = 1,
// every engine, batches; real float32/float64 GEMM results (Eigen) are covered and planted faults are caught.
#include <gtest/gtest.h>

#include <Eigen/Dense>

#include <bit>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "exactref/covers.h"
#include "exactref/detail/covers_filter.h"
#include "exactref/gemm.h"
#include "gemm_engines.h"
#include "oracle.h"

namespace {
using namespace exactref;
namespace orc = exactref::oracle;

// The next encoding toward +inf (k > 0) or -inf (k < 0) of a finite value, through zero (raw bits of format f).
std::uint64_t step(const format_info& f, std::uint64_t b, int k) {
    const std::uint64_t sign = std::uint64_t{1} << (f.storage_bits - 1);
    for (; k > 0; --k) b = (b & sign) ? (b == sign ? 0 : b - 1) : b + 1;
    for (; k < 0; ++k) b = (b & sign) ? b + 1 : (b == 0 ? sign : b - 1);
    return b;
}

std::uint64_t bits_of(const format_info& f, double x) {  // RN of a double into f (the tests' own value, exact path)
    superaccumulator acc;
    acc.add(x);
    return acc.round_bits(f, rounding::to_nearest_even);
}

// Per element one result of each kind, picked at random: RN(s) and neighbours, RN(s ± B) and neighbours, far off,
// and the special values.
template <floating_format T>
std::vector<T> planted_results(const product_reference& p, const standard& model, std::mt19937_64& rng) {
    const format_info& f = format_traits<T>::info;
    const std::uint64_t sign = std::uint64_t{1} << (f.storage_bits - 1);
    const std::uint64_t inf = std::uint64_t{f.special_exponent_field()} << (f.precision - 1);
    std::vector<T> out;
    out.reserve(p.rows() * p.cols());
    for (std::size_t i = 0; i < p.rows(); ++i)
        for (std::size_t j = 0; j < p.cols(); ++j) {
            const reference ref = p.element(i, j);
            std::uint64_t b = ref.sum.round_bits(f, rounding::to_nearest_even);
            const bool finite = (b & ~sign) < inf;
            const unsigned kind = static_cast<unsigned>(rng() % 16);
            double bound = 0;
            if (finite && kind >= 6 && kind < 12 && model.decides == rule::bound) {
                try {
                    bound = exactref::bound(ref, model, f);
                } catch (const std::invalid_argument&) {
                    bound = 0;
                }
            }
            if (!finite) {
                // keep RN(s): NaN or Inf
            } else if (kind < 6) {
                b = step(f, b, static_cast<int>(kind) - 3);
            } else if (kind < 12 && std::isfinite(bound)) {
                const double s = ref.sum.enclosure().lo;
                const double edge = (kind & 1) ? s + bound : s - bound;
                b = std::isfinite(edge) ? step(f, bits_of(f, edge), static_cast<int>(kind % 3) - 1) : b;
                if ((b & ~sign) >= inf) b = ref.sum.round_bits(f, rounding::to_nearest_even);
            } else if (kind == 12) {
                b = static_cast<std::uint64_t>(rng()) & ((sign << 1) - 1);  // anything, NaN included
            } else if (kind == 13) {
                b = (rng() & 1) ? sign : 0;  // ±0.0
            } else if (kind == 14) {
                b = inf | ((rng() & 1) ? sign : 0);
            } else {
                b = step(f, b, (rng() & 1) ? 1000 : -1000);
            }
            out.push_back(format_traits<T>::from_bits(static_cast<typename format_traits<T>::bits_type>(b)));
        }
    return out;
}

// The product path against the reference path and the exact decision, for one result set and standard.
template <floating_format T>
void expect_same_verdicts(const std::vector<T>& results, const product_reference& p, const reference_array& refs,
                          const standard& model) {
    const format_info& f = format_traits<T>::info;
    SCOPED_TRACE("standard " + model.name() + ", results " + std::string(f.name));
    array_verdict fast, slow;
    std::string fast_error, slow_error;
    try {
        fast = covers(std::span<const T>(results), p, model);
    } catch (const std::invalid_argument& e) {
        fast_error = e.what();
    }
    try {
        slow = covers(std::span<const T>(results), refs, model);
    } catch (const std::invalid_argument& e) {
        slow_error = e.what();
    }
    ASSERT_EQ(fast_error, slow_error);
    if (!slow_error.empty()) return;
    EXPECT_EQ(fast.covered, slow.covered);
    EXPECT_EQ(fast.size, slow.size);
    EXPECT_EQ(fast.violations, slow.violations);
    EXPECT_EQ(fast.first_violations, slow.first_violations);
    EXPECT_EQ(fast.worst_index, slow.worst_index);
    EXPECT_EQ(fast.message(), slow.message());
    // The flags path, over the results' raw bytes, element by element against the exact decision.
    std::vector<std::uint8_t> flags(results.size(), 2);
    detail::covers_flags(f, std::as_bytes(std::span<const T>(results)), p, model, flags);
    for (std::size_t e = 0; e < results.size(); ++e) {
        const bool exact = covers_bits(f, format_traits<T>::to_bits(results[e]), refs.elements[e], model).covered;
        ASSERT_EQ(flags[e], exact ? 1 : 0) << "element " << e;
    }
}

// Steps P1-P2: every element the product encloses has exactly its reference's facts — RD and RU of s and T in
// binary64 (superaccumulator::enclosure), s rounded to the result format in three modes, n, the dot fields; with
// Step S6 T's enclosure holds RD(T) and RU(T) and is at most (2K + 8)·2^-52·T wide.
// Returns how many elements were enclosed (the rest are built as references).
std::size_t expect_facts_of_references(const product_reference& p, const format_info& result) {
    const std::size_t size = p.rows() * p.cols();
    std::vector<detail::element_facts> bounds(size), rounded(size);
    detail::product_element_facts(p, bounds, nullptr);
    detail::product_element_facts(p, rounded, &result);
    std::size_t enclosed = 0;
    for (std::size_t e = 0; e < size; ++e) {
        SCOPED_TRACE("element " + std::to_string(e));
        const reference ref = p.element(e / p.cols(), e % p.cols());
        const detail::element_facts& x = bounds[e];
        if (x.usable) {
            ++enclosed;
            const superaccumulator::binary64_enclosure s = ref.sum.enclosure(), t = ref.abs_sum.enclosure();
            EXPECT_EQ(std::bit_cast<std::uint64_t>(x.s_lo), std::bit_cast<std::uint64_t>(s.lo));
            EXPECT_EQ(std::bit_cast<std::uint64_t>(x.s_hi), std::bit_cast<std::uint64_t>(s.hi));
            if (p.plan().t_enclosed) {
                // Step S6: an enclosure of the exact T (+ |C0|), RD(T) and RU(T) inside it, as tight as
                // γ_{K-1} (unit 2^-52; binary64 terms γ_K and one step more) allows: width <= (2K + 8)·2^-52·T.
                EXPECT_LE(x.w_lo, t.lo);
                EXPECT_GE(x.w_hi, t.hi);
                EXPECT_GE(x.w_lo, 0.0);
                EXPECT_LE(x.w_hi - x.w_lo, std::ldexp(2.0 * static_cast<double>(p.inner()) + 8, -52) * t.hi);
            } else {
                EXPECT_EQ(std::bit_cast<std::uint64_t>(x.w_lo), std::bit_cast<std::uint64_t>(t.lo));
                EXPECT_EQ(std::bit_cast<std::uint64_t>(x.w_hi), std::bit_cast<std::uint64_t>(t.hi));
            }
            EXPECT_EQ(x.count, ref.count);
            EXPECT_EQ(x.is_dot, ref.is_dot);
            EXPECT_EQ(x.has_initial, ref.has_initial);
            EXPECT_EQ(x.term_format, ref.term_format);
            EXPECT_EQ(x.min_product_exponent, ref.min_product_exponent);
            EXPECT_EQ(x.product_may_underflow, ref.product_may_underflow);
        }
        const detail::element_facts& y = rounded[e];
        if (y.usable) {
            EXPECT_EQ(y.rn_bits, ref.sum.round_bits(result, rounding::to_nearest_even));
            EXPECT_EQ(y.rd_bits, ref.sum.round_bits(result, rounding::downward));
            EXPECT_EQ(y.ru_bits, ref.sum.round_bits(result, rounding::upward));
        }
        if (::testing::Test::HasFailure()) return enclosed;
    }
    return enclosed;
}

const char* const standards_for_products[] = {
    "any_order", "exact", "faithful", "split_k:4", "split_k:3:pairwise", "tree:12", "directed:any_order",
    "any_order+fma", "directed:split_k:2", "levels:fold/4,any"};

template <floating_format T>
std::vector<T> from_bits_vector(const std::vector<std::uint64_t>& v) {
    return orc::from_bits<T>(v);
}

// Elements the product path enclosed itself (not built as references) in check_random_product, to show that its
// own path ran: wide random data has far entries in most rows and columns, specials Inf/NaN.
std::size_t enclosed_elements = 0;

template <floating_format T, floating_format R>
void check_product(const std::vector<T>& a, const std::vector<T>& b, const std::vector<T>* c, std::size_t m,
                   std::size_t k, std::size_t n, const matmul_options& options, std::mt19937_64& rng);

// A random product of format T with results of format R judged under every standard above (and mixed for narrow T).
template <floating_format T, floating_format R>
void check_random_product(std::size_t m, std::size_t k, std::size_t n, orc::term_mix mix, bool with_c,
                          const matmul_options& options, std::uint64_t seed) {
    SCOPED_TRACE("seed " + std::to_string(seed) + ", " + std::to_string(m) + " x " + std::to_string(k) + " x " +
                 std::to_string(n) + ", " + orc::to_string(mix) + (with_c ? ", with C0" : "") + ", " +
                 std::string(format_traits<T>::info.name));
    std::mt19937_64 rng(seed);
    const format_info& f = format_traits<T>::info;
    const std::vector<T> a = from_bits_vector<T>(orc::random_terms(f, m * k, mix, rng));
    const std::vector<T> b = from_bits_vector<T>(orc::random_terms(f, k * n, mix, rng));
    const std::vector<T> c = from_bits_vector<T>(orc::random_terms(f, m * n, mix, rng));
    check_product<T, R>(a, b, with_c ? &c : nullptr, m, k, n, options, rng);
}

// The same checks for given operands (c: C0, or nullptr).
template <floating_format T, floating_format R>
void check_product(const std::vector<T>& a, const std::vector<T>& b, const std::vector<T>* c, std::size_t m,
                   std::size_t k, std::size_t n, const matmul_options& options, std::mt19937_64& rng) {
    const product_reference p =
        c != nullptr ? exact_matmul<T>(row_major<T>(a, m, k), row_major<T>(b, k, n), row_major<T>(*c, m, n), options)
                     : exact_matmul<T>(row_major<T>(a, m, k), row_major<T>(b, k, n), options);
    const reference_array refs = p.to_array(1);
    enclosed_elements += expect_facts_of_references(p, format_traits<R>::info);
    std::vector<std::string> names(std::begin(standards_for_products), std::end(standards_for_products));
    if (!std::is_same_v<R, double>) names.push_back(std::string("mixed:float64:") + std::string(format_traits<R>::info.name));
    for (const std::string& name : names) {
        const standard model = parse_standard(name);
        const std::vector<R> results = planted_results<R>(p, model, rng);
        expect_same_verdicts(results, p, refs, model);
        if (::testing::Test::HasFailure()) return;
    }
}

matmul_options sliced_options(int max_slices = 0) {
    return {matmul_method::sliced, 2, max_slices, true, exactref_test::current_engine()};
}

using GemmCoversEngine = exactref_test::gemm_engine_test;
INSTANTIATE_TEST_SUITE_P(Engines, GemmCoversEngine, exactref_test::all_engines(), exactref_test::engine_test_name);

TEST_P(GemmCoversEngine, RandomProductsGiveTheReferencePathsVerdicts) {
    std::uint64_t seed = 1000;
    enclosed_elements = 0;
    for (const orc::term_mix mix : orc::all_term_mixes) {
        check_random_product<float, float>(9, 33, 7, mix, false, sliced_options(), ++seed);
        check_random_product<double, double>(8, 17, 6, mix, true, sliced_options(), ++seed);
        check_random_product<float16, float16>(5, 40, 6, mix, mix == orc::term_mix::cancelling, sliced_options(), ++seed);
        check_random_product<bfloat16, float>(6, 12, 5, mix, true, sliced_options(), ++seed);
        if (::testing::Test::HasFailure()) return;
    }
    EXPECT_GT(enclosed_elements, 100u);
}

TEST_P(GemmCoversEngine, OneTermFarEntriesAndBlockBoundaries) {
    std::uint64_t seed = 2000;
    // K = 1; few slices (far entries: bits below the last slice, judged on the element's reference); a product
    // whose element count crosses the decision blocks (4096) with a partial last row in a block.
    check_random_product<double, double>(7, 1, 9, orc::term_mix::full_range, false, sliced_options(), ++seed);
    check_random_product<float, float>(6, 1, 5, orc::term_mix::clustered, true, sliced_options(), ++seed);
    check_random_product<double, double>(6, 20, 7, orc::term_mix::full_range, false, sliced_options(1), ++seed);
    check_random_product<float, float>(6, 20, 7, orc::term_mix::clustered, true, sliced_options(2), ++seed);
    check_random_product<float, float>(70, 3, 61, orc::term_mix::cancelling, false, sliced_options(), ++seed);
}

// Steps S3-S4 and S6 by tiles: row panels (EXACTREF_GEMM_PANEL) by column blocks (EXACTREF_GEMM_BLOCK), T enclosed
// (Step S6 by the same kind of tiles) or in levels: every element's facts hold its reference's exact values and every
// standard's verdicts are the reference path's. Real products take panels of 1024 rows or more, so these small shapes
// force them: a level or a t_hat written at another panel's rows fails here (and not in test_gemm, whose values come
// from the per-element path where T is enclosed).
TEST_P(GemmCoversEngine, TilesOfRowsAndColumnsGiveTheReferencePathsVerdicts) {
    std::uint64_t seed = 2100;
    enclosed_elements = 0;
    for (const auto& [panel, block] : {std::pair{"1", "1"}, std::pair{"3", "2"}, std::pair{"5", "7"}}) {
        const exactref_test::environment_guard rows("EXACTREF_GEMM_PANEL", panel);
        const exactref_test::environment_guard cols("EXACTREF_GEMM_BLOCK", block);
        for (const char* t : {"enclosed", "levels"}) {
            const exactref_test::t_source_guard source(t);
            SCOPED_TRACE(std::string("panels of ") + panel + " rows, blocks of " + block + " columns, T " + t);
            check_random_product<float, float>(11, 21, 9, orc::term_mix::cancelling, true, sliced_options(), ++seed);
            check_random_product<double, double>(10, 17, 8, orc::term_mix::full_range, false, sliced_options(),
                                                 ++seed);
            check_random_product<float16, float16>(7, 30, 6, orc::term_mix::clustered, true, sliced_options(), ++seed);
            if (::testing::Test::HasFailure()) return;
        }
    }
    EXPECT_GT(enclosed_elements, 100u);
}

// Step P5: the producer's band order (bands of 64 rows, the last shorter, decision blocks of 4096 that cross
// bands) gives the reference path's verdicts, violations, first violations and worst element, and the lane kernel
// gives the same at every width (8, 4, 1 lanes; 0: the scalar branch), with the same flags and the same number of
// exact-path elements (it decides what the scalar branch decides, no more and no less).
TEST_P(GemmCoversEngine, BandsAndLaneWidthsGiveTheReferencePathsVerdicts) {
    std::uint64_t seed = 7100;
    const std::size_t m = 139, k = 5, n = 31;  // 4309 elements: bands of 64, 64 and 11 rows, two blocks
    for (const orc::term_mix mix : {orc::term_mix::clustered, orc::term_mix::cancelling}) {
        SCOPED_TRACE("seed " + std::to_string(seed + 1) + ", " + orc::to_string(mix));
        std::mt19937_64 rng(++seed);
        const auto a = orc::from_bits<float>(orc::random_terms(binary32_info, m * k, mix, rng));
        const auto b = orc::from_bits<float>(orc::random_terms(binary32_info, k * n, mix, rng));
        const product_reference p =
            exact_matmul<float>(row_major<float>(a, m, k), row_major<float>(b, k, n), sliced_options());
        const reference_array refs = p.to_array(1);
        for (const char* name : {"any_order", "split_k:4", "tree:12", "any_order+fma", "directed:any_order"}) {
            const standard model = parse_standard(name);
            const std::vector<float> results = planted_results<float>(p, model, rng);
            expect_same_verdicts(results, p, refs, model);  // at the default width
            std::vector<std::uint64_t> exact_path;
            array_verdict first;
            std::vector<std::uint8_t> first_flags;
            for (const int lanes : {8, 4, 1, 0}) {
                SCOPED_TRACE("lanes " + std::to_string(lanes));
                const int previous = detail::set_covers_block_lanes(lanes);
                const std::uint64_t before = detail::covers_exact_path_count();
                const array_verdict v = covers(std::span<const float>(results), p, model);
                exact_path.push_back(detail::covers_exact_path_count() - before);
                std::vector<std::uint8_t> flags(results.size(), 2);
                detail::covers_flags(binary32_info, std::as_bytes(std::span<const float>(results)), p, model, flags);
                detail::set_covers_block_lanes(previous);
                if (lanes == 8) {
                    first = v;
                    first_flags = flags;
                }
                EXPECT_EQ(v.violations, first.violations);
                EXPECT_EQ(v.first_violations, first.first_violations);
                EXPECT_EQ(v.worst_index, first.worst_index);
                EXPECT_EQ(v.message(), first.message());
                EXPECT_EQ(flags, first_flags);
                if (::testing::Test::HasFailure()) return;
            }
            for (const std::uint64_t count : exact_path) EXPECT_EQ(count, exact_path[0]) << name;
        }
    }
}

// Step S6 (ozaki.md): T is only enclosed, [T_lo, T_hi] about 2K·2^-52 relative wide. Results
// planted on the bound B = n·u·T and 1, 2 ulps either side, in binary64, for large K: verdicts must be those of the
// reference path and of each element's exact decision, and both sides of the bound must occur. Data without
// cancellation (s = T: B is as large relative to s as it gets, yet a binary64 ulp of s ± B is far coarser than B's
// enclosure) and data cancelling to s = 2^-48 (pairs a·b - a·b, one tiny pair off by a quarter: r ≈ ±B, whose ulps
// are finer than B's enclosure, so the filter cannot decide the planted results and the exact path must, with the
// exact T).
template <floating_format T>
void check_enclosed_t_on_the_bound(std::size_t m, std::size_t k, std::size_t n, bool cancelling, std::uint64_t seed) {
    SCOPED_TRACE("seed " + std::to_string(seed) + ", K = " + std::to_string(k) + ", " +
                 std::string(format_traits<T>::info.name) + (cancelling ? ", cancelling" : ""));
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> magnitude(0.25, 2.0);
    // Magnitudes over 20 binades, so that the planner needs two slices per side (one, with the rest far, would cost
    // more) and Step S6 pays on every engine.
    std::vector<T> a(m * k), b(k * n);
    for (T& x : a) x = static_cast<T>(std::ldexp(magnitude(rng), -static_cast<int>(rng() % 20)));
    for (T& x : b) x = static_cast<T>(std::ldexp(magnitude(rng), -static_cast<int>(rng() % 20)));
    // The first pair tiny: a(i, 0) = 2^-24 (a float16 subnormal), b(0, j) = 2^-22.
    for (std::size_t i = 0; i < m; ++i) a[i * k] = static_cast<T>(0x1p-24f);
    for (std::size_t j = 0; j < n; ++j) b[j] = static_cast<T>(0x1p-22f);
    if (cancelling) {
        // K even: a(i, 2q + 1) = a(i, 2q), b(2q + 1, j) = -b(2q, j), except b(1, j) = -3·2^-24: s = 2^-48, far below
        // B ≈ K²·2^-53.
        for (std::size_t i = 0; i < m; ++i)
            for (std::size_t l = 0; l + 1 < k; l += 2) a[i * k + l + 1] = a[i * k + l];
        using wide = std::conditional_t<std::is_same_v<T, double>, double, float>;  // holds every T exactly
        for (std::size_t l = 0; l + 1 < k; l += 2)
            for (std::size_t j = 0; j < n; ++j)
                b[(l + 1) * n + j] = static_cast<T>(-static_cast<wide>(b[l * n + j]) * (l == 0 ? wide{0.75} : wide{1}));
    }
    const product_reference p = exact_matmul<T>(row_major<T>(a, m, k), row_major<T>(b, k, n), sliced_options());
    ASSERT_TRUE(p.plan().t_enclosed) << p.plan().describe();
    const reference_array refs = p.to_array(1);
    // Every element enclosed (no Inf/NaN; few far entries), except on int8-plain and on the emulated int8-vnni
    // (tests/avx512_emulated_gemm.cpp), whose slow slice products can make the planner leave many far entries (more
    // than an element's window takes: those are built as references).
    // (Not checked under AddressSanitizer, where the measured prices that decide the slices are distorted.)
    const std::size_t enclosed = expect_facts_of_references(p, binary64_info);
    if (!exactref_test::running_under_address_sanitizer) {
        // The int8 engines' slices depend on their prices measured at run time (under load, or emulated, they may
        // keep every entry far); with at most 64 far entries in all, no element exceeds its window, so every one is
        // enclosed.
        const matmul_plan& plan = p.plan();
        if (exactref_test::current_engine() == gemm_engine::binary64 || plan.far_a + plan.far_b <= 64)
            EXPECT_EQ(enclosed, m * n) << plan.describe();
    }
    for (const char* name : {"any_order", "any_order+fma", "directed:any_order", "split_k:3"}) {
        const standard model = parse_standard(name);
        std::size_t covered = 0, violated = 0;
        const std::uint64_t before = detail::covers_exact_path_count();
        for (const int side : {1, -1})
            for (int offset = -2; offset <= 2; ++offset) {
                std::vector<double> results(m * n);
                for (std::size_t e = 0; e < m * n; ++e) {
                    // exact for narrow T (K exact binary64 products); binary64 terms: RD(s), as near the bound
                    const double s = refs.elements[e].sum.enclosure().lo;
                    const double bound = exactref::bound(refs.elements[e], model, binary64_info);
                    const std::uint64_t edge = bits_of(binary64_info, side > 0 ? s + bound : s - bound);
                    results[e] = std::bit_cast<double>(step(binary64_info, edge, offset));
                }
                expect_same_verdicts(results, p, refs, model);
                const array_verdict v = covers(std::span<const double>(results), p, model);
                covered += v.size - v.violations;
                violated += v.violations;
                if (::testing::Test::HasFailure()) return;
            }
        EXPECT_GT(covered, 0u) << name;
        EXPECT_GT(violated, 0u) << name;
        // Cancelling: the planted results within the enclosure's width of the bound (offsets -1 .. 1 at least).
        if (cancelling) EXPECT_GE(detail::covers_exact_path_count() - before, 2 * 3 * m * n) << name;
    }
}

TEST_P(GemmCoversEngine, EnclosedTOnTheBoundEdges) {
    const exactref_test::t_source_guard enclosed("enclosed");  // Step S6 also where the planner would keep T's levels
    for (const bool cancelling : {false, true}) {
        check_enclosed_t_on_the_bound<float>(3, 5000, 4, cancelling, 4001);
        check_enclosed_t_on_the_bound<float16>(4, 3000, 3, cancelling, 4002);
        check_enclosed_t_on_the_bound<bfloat16>(3, 4098, 2, cancelling, 4003);
        check_enclosed_t_on_the_bound<double>(3, 5000, 4, cancelling, 4004);
    }
}

// Step S6 at the ends of the narrow formats: rows of subnormals (products down to 2^-298), rows near the largest
// finite value (|A|·|B| up to 2^254: s overflows the format, T does not overflow binary64), zero rows, rows and columns
// with Inf/NaN, signed zeros, with and without C0; every standard, results of the term format and of binary64.
template <floating_format T>
std::vector<T> extreme_rows(std::size_t rows, std::size_t k, std::mt19937_64& rng) {
    const format_info& f = format_traits<T>::info;
    const std::uint64_t sign = std::uint64_t{1} << (f.storage_bits - 1);
    const std::uint64_t inf = std::uint64_t{f.special_exponent_field()} << (f.precision - 1);
    const std::uint64_t max_finite = inf - 1, smallest_normal = std::uint64_t{1} << (f.precision - 1);
    std::vector<std::uint64_t> bits(rows * k);
    for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t l = 0; l < k; ++l) {
            std::uint64_t x = 0;
            switch (r % 6) {
                case 0: x = rng() % smallest_normal; break;                   // subnormal or zero
                case 1: x = max_finite - rng() % (smallest_normal / 2); break;  // near the largest finite
                case 2: x = 0; break;                                          // a zero row
                case 3: x = rng() % 8 == 0 ? inf | (rng() % 3 == 0 ? 1 : 0) : rng() % max_finite; break;  // Inf/NaN
                case 4: x = l % 2 == 0 ? max_finite - rng() % 16 : rng() % smallest_normal; break;  // both ends
                default: x = smallest_normal * (1 + rng() % 64) + rng() % smallest_normal; break;  // small normals
            }
            bits[r * k + l] = x | (rng() % 2 == 0 ? sign : 0);
        }
    return orc::from_bits<T>(bits);
}

template <floating_format T>
void check_enclosed_t_extremes(std::size_t m, std::size_t k, std::size_t n, std::uint64_t seed) {
    SCOPED_TRACE("seed " + std::to_string(seed) + ", " + std::string(format_traits<T>::info.name));
    std::mt19937_64 rng(seed);
    const std::vector<T> a = extreme_rows<T>(m, k, rng);
    const std::vector<T> bt = extreme_rows<T>(n, k, rng);
    std::vector<T> b(k * n);
    for (std::size_t j = 0; j < n; ++j)
        for (std::size_t l = 0; l < k; ++l) b[l * n + j] = bt[j * k + l];
    const std::vector<T> c = extreme_rows<T>(m, n, rng);
    check_product<T, T>(a, b, nullptr, m, k, n, sliced_options(), rng);
    check_product<T, double>(a, b, &c, m, k, n, sliced_options(), rng);
    check_product<T, T>(a, b, &c, m, k, n, sliced_options(2), rng);
}

TEST_P(GemmCoversEngine, EnclosedTAtTheFormatsEnds) {
    const exactref_test::t_source_guard enclosed("enclosed");
    check_enclosed_t_extremes<float>(12, 30, 13, 5001);
    check_enclosed_t_extremes<float16>(13, 17, 12, 5002);
    check_enclosed_t_extremes<bfloat16>(12, 40, 12, 5003);
    check_enclosed_t_extremes<double>(12, 21, 12, 5004);  // binary64 terms: scaled by row and column
}

// Step S6 for binary64 terms (ozaki.md): |A| and |B| scaled by 2^-E_i and 2^-F_j, entries below 2^-511 of their top
// dropped (their products bounded by the slack), t_hat scaled back per element; NaN, so that the element leaves the
// filter for the exact path, where the scaled t_hat is 0 with a dropped entry (T > 0 all the same), below 2^-400, or
// where T leaves [2^-1000, 2^1000]. Built in every rounding mode with FTZ/DAZ on and off (OpenBLAS's sums round in
// the caller's mode): every enclosure holds RD(T) and RU(T), the verdicts are the reference path's, and the cases
// that must leave the filter do.
TEST_P(GemmCoversEngine, EnclosedTOfBinary64TermsScaledByRowAndColumn) {
    const exactref_test::t_source_guard enclosed("enclosed");
    const std::size_t m = 7, k = 9, n = 6;
    SCOPED_TRACE("seed 6001");
    std::mt19937_64 rng(6001);
    std::normal_distribution<double> normal;
    std::vector<double> a(m * k), b(k * n);
    for (double& x : a) x = normal(rng);
    for (double& x : b) x = normal(rng);
    for (std::size_t l = 0; l < k; ++l) {
        a[0 * k + l] = l == 0 ? 1.0 : l == 1 ? 0x1p-600 : 0.0;  // (0, 0): t_hat 0, T = 2^-600 (a dropped entry)
        a[1 * k + l] = l == 0 ? 1.0 : l == 1 ? 0x1p-450 : 0.0;  // (1, 1): t_hat 2^-452 < 2^-400, T = 2^-450
        b[l * n + 0] = l == 1 ? 1.0 : 0.0;
        b[l * n + 1] = l == 1 ? 1.0 : 0.0;
        // Row 2 near the largest double (T beyond 2^1000), row 3 subnormal (T below 2^-1000), column 3 too.
        a[2 * k + l] = std::numeric_limits<double>::max() * (0.5 + 0.5 * std::abs(normal(rng)) / 4) * (l % 2 ? -1 : 1);
        a[3 * k + l] = std::ldexp(normal(rng), -1040);
        b[l * n + 3] = std::ldexp(normal(rng), -1060);
        // Row 4: entries 2^-520 below the top among N(0, 1) ones (dropped, bounded: enclosed); column 5 zeros (T = 0).
        if (l % 3 == 1) a[4 * k + l] = std::ldexp(1.0 + 0.5 * static_cast<double>(l), -520);
        b[l * n + 5] = l % 2 == 0 ? 0.0 : -0.0;
        a[6 * k + l] = l == 2 ? 1.0 : 0.0;  // (6, 4): t_hat 0, T = 2^-700 (a dropped entry of column 4)
    }
    b[2 * n + 4] = 0x1p-700;
    std::size_t cases = 0;
    for (const rounding mode : {rounding::to_nearest_even, rounding::upward, rounding::downward, rounding::toward_zero})
        for (const bool ftz : {false, true}) {
            if (ftz && !orc::ftz_daz_supported()) continue;
            SCOPED_TRACE(std::string(to_string(mode)) + (ftz ? " FTZ/DAZ" : ""));
            std::optional<product_reference> built;
            {
                const orc::fp_environment_guard guard(mode, ftz);
                built.emplace(exact_matmul<double>(row_major<double>(a, m, k), row_major<double>(b, k, n),
                                                   sliced_options()));
            }
            const product_reference& p = *built;
            ASSERT_TRUE(p.plan().t_enclosed) << p.plan().describe();
            expect_facts_of_references(p, binary64_info);
            std::vector<detail::element_facts> facts(m * n);
            detail::product_element_facts(p, facts, nullptr);
            for (const std::size_t j : {0u, 1u, 2u, 4u}) {
                EXPECT_FALSE(facts[2 * n + j].usable) << j;  // T > 2^1000
                EXPECT_FALSE(facts[3 * n + j].usable) << j;  // T < 2^-1000
            }
            EXPECT_TRUE(facts[2 * n + 3].usable);   // 2^1023 times 2^-1060: in range
            EXPECT_FALSE(facts[3 * n + 3].usable);  // 2^-1040 times 2^-1060
            EXPECT_FALSE(facts[0 * n + 0].usable);  // t_hat 0 with a dropped entry
            EXPECT_FALSE(facts[1 * n + 1].usable);  // t_hat below 2^-400
            EXPECT_FALSE(facts[6 * n + 4].usable);  // t_hat 0 with a dropped entry in the column
            EXPECT_TRUE(facts[6 * n + 2].usable);
            // Column 0 and 1 meet row 4 only in its dropped 2^-520 entry: t_hat 0 with a dropped entry; the other
            // columns its N(0, 1) entries, with the dropped ones as slack.
            for (std::size_t j = 0; j < n; ++j)
                if (j != 3 && j != 5) EXPECT_EQ(facts[4 * n + j].usable, j >= 2) << j;
            // Column 5 is zero: T = 0, enclosed as [0, 0] where neither row nor column dropped an entry; rows 0 and
            // 4 dropped one, so their t_hat 0 is refused (NaN) although T is 0 there too.
            for (const std::size_t i : {1u, 2u, 3u, 5u, 6u}) {
                EXPECT_TRUE(facts[i * n + 5].usable) << i;
                EXPECT_EQ(facts[i * n + 5].w_hi, 0.0) << i;
            }
            EXPECT_FALSE(facts[0 * n + 5].usable);
            EXPECT_FALSE(facts[4 * n + 5].usable);
            const reference_array refs = p.to_array(1);
            for (const char* name : standards_for_products) {
                const standard model = parse_standard(name);
                expect_same_verdicts(planted_results<double>(p, model, rng), p, refs, model);
            }
            ++cases;
            if (::testing::Test::HasFailure()) return;
        }
    EXPECT_GE(cases, 4u);
}

TEST(GemmCovers, PerElementProductsAndSharedBatches) {
    std::uint64_t seed = 3000;
    const matmul_options per_element{matmul_method::per_element, 2, 0};
    check_random_product<float, float>(5, 9, 4, orc::term_mix::clustered, true, per_element, ++seed);
    check_random_product<double, double>(5, 9, 4, orc::term_mix::specials, false, per_element, ++seed);
    // A batch of small products sharing one per-element reference (rows stacked), and one of sliced products.
    std::mt19937_64 rng(++seed);
    const std::size_t batch = 3, m = 4, k = 5, n = 3;
    std::vector<std::vector<float>> as, bs;
    std::vector<matrix_view<float>> va, vb;
    for (std::size_t p = 0; p < batch; ++p) {
        as.push_back(orc::from_bits<float>(orc::random_terms(binary32_info, m * k, orc::term_mix::clustered, rng)));
        bs.push_back(orc::from_bits<float>(orc::random_terms(binary32_info, k * n, orc::term_mix::clustered, rng)));
    }
    for (std::size_t p = 0; p < batch; ++p) {
        va.push_back(row_major<float>(as[p], m, k));
        vb.push_back(row_major<float>(bs[p], k, n));
    }
    for (const matmul_method method : {matmul_method::automatic, matmul_method::sliced}) {
        const std::vector<product_reference> ps =
            exact_matmul_batched<float>(va, vb, {}, matmul_options{method, 2, 0});
        ASSERT_EQ(ps.size(), method == matmul_method::automatic ? 1u : batch);
        for (const product_reference& p : ps) {
            const reference_array refs = p.to_array(1);
            for (const char* name : {"any_order", "exact", "split_k:2"}) {
                const standard model = parse_standard(name);
                expect_same_verdicts(planted_results<float>(p, model, rng), p, refs, model);
            }
        }
    }
}

// Step P4, the fast path's enclosures: each element it encloses has s in [s_lo, s_hi] and W in [w_lo, w_hi] around
// RD and RU of its reference's exact values (the far products bounded, not summed), on random products of every
// kind, few slices (many far entries), C0, and float64 N(0, 1) data (nearly every element has far entries). Returns
// how many elements the fast path enclosed and, in widened, how many of those have an enclosure of s wider than
// [RD(s), RU(s)] (the far bound at work).
std::size_t expect_fast_enclosures_contain(const product_reference& p, std::size_t& widened) {
    const std::vector<detail::element_enclosure> fast = detail::product_element_enclosures(p);
    // Step P6: the scalar enclosures (one lane) are the lanes' bit for bit, usable or not.
    const int previous = detail::set_covers_block_lanes(1);
    const std::vector<detail::element_enclosure> scalar = detail::product_element_enclosures(p);
    detail::set_covers_block_lanes(previous);
    const auto bits = [](double x) { return std::bit_cast<std::uint64_t>(x); };
    for (std::size_t e = 0; e < fast.size(); ++e) {
        EXPECT_EQ(fast[e].usable, scalar[e].usable) << "element " << e;
        if (!fast[e].usable) continue;
        EXPECT_EQ(bits(fast[e].s_lo), bits(scalar[e].s_lo)) << "element " << e;
        EXPECT_EQ(bits(fast[e].s_hi), bits(scalar[e].s_hi)) << "element " << e;
        EXPECT_EQ(bits(fast[e].w_lo), bits(scalar[e].w_lo)) << "element " << e;
        EXPECT_EQ(bits(fast[e].w_hi), bits(scalar[e].w_hi)) << "element " << e;
    }
    std::size_t enclosed = 0;
    for (std::size_t e = 0; e < fast.size(); ++e) {
        if (!fast[e].usable) continue;
        ++enclosed;
        SCOPED_TRACE("element " + std::to_string(e));
        const reference ref = p.element(e / p.cols(), e % p.cols());
        const superaccumulator::binary64_enclosure s = ref.sum.enclosure(), t = ref.abs_sum.enclosure();
        EXPECT_LE(fast[e].s_lo, s.lo);
        EXPECT_GE(fast[e].s_hi, s.hi);
        EXPECT_LE(fast[e].w_lo, t.lo);
        EXPECT_GE(fast[e].w_hi, t.hi);
        EXPECT_GE(fast[e].w_lo, 0.0);
        if (fast[e].s_lo < s.lo || fast[e].s_hi > s.hi) ++widened;
        if (::testing::Test::HasFailure()) return enclosed;
    }
    return enclosed;
}

TEST_P(GemmCoversEngine, FastEnclosuresContainTheExactValues) {
    std::uint64_t seed = 6000;
    std::size_t enclosed = 0, widened = 0;
    for (const orc::term_mix mix : orc::all_term_mixes)
        for (const int slices : {0, 1, 2}) {
            SCOPED_TRACE("seed " + std::to_string(seed + 1) + ", " + orc::to_string(mix) + ", slices " +
                         std::to_string(slices));
            std::mt19937_64 rng(++seed);
            for (const bool with_c : {false, true}) {
                const std::size_t m = 7, k = 19, n = 6;
                const auto a = orc::from_bits<double>(orc::random_terms(binary64_info, m * k, mix, rng));
                const auto b = orc::from_bits<double>(orc::random_terms(binary64_info, k * n, mix, rng));
                const auto c = orc::from_bits<double>(orc::random_terms(binary64_info, m * n, mix, rng));
                const auto af = orc::from_bits<float>(orc::random_terms(binary32_info, m * k, mix, rng));
                const auto bf = orc::from_bits<float>(orc::random_terms(binary32_info, k * n, mix, rng));
                const product_reference p =
                    with_c ? exact_matmul<double>(row_major<double>(a, m, k), row_major<double>(b, k, n),
                                                  row_major<double>(c, m, n), sliced_options(slices))
                           : exact_matmul<double>(row_major<double>(a, m, k), row_major<double>(b, k, n),
                                                  sliced_options(slices));
                enclosed += expect_fast_enclosures_contain(p, widened);
                const product_reference pf =
                    exact_matmul<float>(row_major<float>(af, m, k), row_major<float>(bf, k, n), sliced_options(slices));
                enclosed += expect_fast_enclosures_contain(pf, widened);
                if (::testing::Test::HasFailure()) return;
            }
        }
    // float64 N(0, 1), 64 x 96 x 64: the planner's slices leave far bits in most rows; the fast path encloses
    // every element, and a good share with the far bound.
    std::mt19937_64 rng(++seed);
    std::normal_distribution<double> normal(0, 1);
    std::vector<double> a(64 * 96), b(96 * 64);
    for (double& x : a) x = normal(rng);
    for (double& x : b) x = normal(rng);
    const product_reference p = exact_matmul<double>(row_major<double>(a, 64, 96), row_major<double>(b, 96, 64),
                                                     sliced_options());
    std::size_t gauss_widened = 0;
    EXPECT_EQ(expect_fast_enclosures_contain(p, gauss_widened), 64u * 64u);
    enclosed += 64 * 64;
    widened += gauss_widened;
    EXPECT_GT(enclosed, 5000u);
    EXPECT_GT(widened, 100u);
}

// Step P4 on elements with far products: pairs a·b - a·b (s = 0 exactly) with 40-bit a and 13-bit b (a·b exact in
// binary64, so B = n·u·T is a double) and one slice per side, so every a has far bits: results ±B are on the bound
// and must be decided by the exact path (the fast path's far bound cannot decide them, nor can Step F2 on the exact
// enclosure), one ulp beyond violate; every standard's verdicts equal the reference path's.
TEST_P(GemmCoversEngine, FarProductsOnTheBoundTheExactPathDecides) {
    const std::size_t m = 5, n = 4;
    std::mt19937_64 rng(6100);
    std::vector<double> a(m * 2), b(2 * n);
    for (std::size_t i = 0; i < m; ++i) {
        a[i * 2] = std::ldexp(static_cast<double>((std::uint64_t{1} << 39) | (rng() & ((std::uint64_t{1} << 39) - 1))),
                              -39 + static_cast<int>(i));
        a[i * 2 + 1] = -a[i * 2];
    }
    for (std::size_t j = 0; j < n; ++j)
        b[j] = b[n + j] = std::ldexp(static_cast<double>(4096 + (rng() & 4095)), -12 - static_cast<int>(j));
    const product_reference p = exact_matmul<double>(row_major<double>(a, m, 2), row_major<double>(b, 2, n),
                                                     sliced_options(1));
    ASSERT_EQ(p.plan().method, matmul_method::sliced);
    std::size_t widened = 0;
    EXPECT_EQ(expect_fast_enclosures_contain(p, widened), m * n);
    EXPECT_EQ(widened, m * n);  // every element has far products
    const reference_array refs = p.to_array(1);
    for (const int side : {1, -1})
        for (const int beyond : {-1, 0, 1}) {
            std::vector<double> results(m * n);
            for (std::size_t e = 0; e < m * n; ++e) {
                const double t = 2 * std::fabs(a[(e / n) * 2] * b[e % n]);  // exact: 53 bits
                const double bound = 2 * 0x1p-53 * t;                      // exact
                ASSERT_EQ(exactref::bound(refs.elements[e], any_order(), binary64_info), bound);
                const double r = beyond > 0 ? std::nextafter(bound, 2 * bound)
                                            : (beyond < 0 ? std::nextafter(bound, 0.0) : bound);
                results[e] = side * r;
            }
            const std::uint64_t before = detail::covers_exact_path_count();
            const array_verdict v = covers(std::span<const double>(results), p, any_order());
            if (beyond == 0) EXPECT_GE(detail::covers_exact_path_count() - before, m * n);
            EXPECT_EQ(v.covered, beyond <= 0);
            EXPECT_EQ(v.violations, beyond > 0 ? m * n : 0u);
            for (const char* name : {"any_order", "split_k:8", "directed:any_order", "any_order+fma"})
                expect_same_verdicts(results, p, refs, parse_standard(name));
        }
}

// Elements whose sum is exactly 0 (a cancelling pair per element, different magnitudes per element): B = n·u·T is a
// double (n = 2, u = 2^-53, T = 2·c·2^e), so results ±B are on the bound — covered — and one ulp beyond is not. The
// filter cannot decide them (Step F2's margins), so the exact path must have decided at least every planted one.
TEST(GemmCovers, PlantedOnTheBoundTheExactPathDecides) {
    const std::size_t m = 6, n = 5;
    std::vector<double> a(m * 2), b(2 * n);
    for (std::size_t i = 0; i < m; ++i) {
        a[i * 2] = std::ldexp(1.0 + static_cast<double>(i) / 8, static_cast<int>(i) * 3);
        a[i * 2 + 1] = -a[i * 2];
    }
    for (std::size_t j = 0; j < n; ++j) b[j] = b[n + j] = std::ldexp(3.0 + static_cast<double>(j), -static_cast<int>(j));
    const product_reference p = exact_matmul<double>(row_major<double>(a, m, 2), row_major<double>(b, 2, n),
                                                     matmul_options{matmul_method::sliced, 1, 0});
    ASSERT_EQ(p.plan().method, matmul_method::sliced);
    const reference_array refs = p.to_array(1);
    for (const int side : {1, -1})
        for (const int beyond : {0, 1}) {
            std::vector<double> results(m * n);
            for (std::size_t e = 0; e < m * n; ++e) {
                const double t = 2 * std::fabs(a[(e / n) * 2] * b[e % n]);  // exact: powers of two times small ints
                const double bound = 2 * 0x1p-53 * t;                      // exact
                ASSERT_EQ(exactref::bound(refs.elements[e], any_order(), binary64_info), bound);
                results[e] = side * (beyond ? std::nextafter(bound, 2 * bound) : bound);
            }
            const std::uint64_t before = detail::covers_exact_path_count();
            const array_verdict v = covers(std::span<const double>(results), p, any_order());
            EXPECT_GE(detail::covers_exact_path_count() - before, m * n);
            EXPECT_EQ(v.covered, beyond == 0);
            EXPECT_EQ(v.violations, beyond ? m * n : 0u);
            for (const char* name : {"any_order", "split_k:8", "directed:any_order"})
                expect_same_verdicts(results, p, refs, parse_standard(name));
        }
}

// Real GEMM results: Eigen's float32 and float64 products (blocked, vectorized, FMA where the build has it) are
// covered by any_order with fma; a planted wrong element (many ulps off) and a dropped k-term are caught, and only
// they are.
template <class T>
void check_real_gemm(std::size_t m, std::size_t k, std::size_t n, std::uint64_t seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    using matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    std::mt19937_64 rng(seed);
    std::normal_distribution<T> normal(0, 1);
    matrix a(m, k), b(k, n);
    for (std::size_t x = 0; x < m * k; ++x) a.data()[x] = normal(rng);
    for (std::size_t x = 0; x < k * n; ++x) b.data()[x] = normal(rng);
    const matrix c = a * b;
    const product_reference p =
        exact_matmul<T>(row_major<T>(std::span<const T>(a.data(), m * k), m, k),
                        row_major<T>(std::span<const T>(b.data(), k * n), k, n));
    // N(0, 1): almost every element enclosed (float64 rows with a tiny entry have far bits: built as references)
    EXPECT_GT(expect_facts_of_references(p, format_traits<T>::info), m * n / 2);
    std::vector<T> results(c.data(), c.data() + m * n);
    const standard model = parse_standard("any_order+fma");
    const std::uint64_t before = detail::covers_exact_path_count();
    const array_verdict ok = covers(std::span<const T>(results), p, model);
    EXPECT_TRUE(ok.covered) << ok.message();
    EXPECT_LE(detail::covers_exact_path_count() - before, 1u);  // the worst element's message at most
    // Planted faults: element 5 many ulps off; element (3, 7) without its largest k-term.
    std::vector<T> wrong = results;
    const double b5 = exactref::bound(p.element(0, 5), model, format_traits<T>::info);
    wrong[5] = static_cast<T>(static_cast<double>(wrong[5]) + 8 * b5);
    std::size_t largest = 0;
    for (std::size_t l = 1; l < k; ++l)
        if (std::fabs(a(3, l) * b(l, 7)) > std::fabs(a(3, largest) * b(largest, 7))) largest = l;
    T dropped = 0;
    for (std::size_t l = 0; l < k; ++l)
        if (l != largest) dropped += a(3, l) * b(l, 7);
    wrong[3 * n + 7] = dropped;
    const array_verdict bad = covers(std::span<const T>(wrong), p, model);
    EXPECT_FALSE(bad.covered);
    EXPECT_EQ(bad.violations, 2u);
    ASSERT_EQ(bad.first_violations.size(), 2u);
    EXPECT_EQ(bad.first_violations[0], 5u);
    EXPECT_EQ(bad.first_violations[1], 3 * n + 7);
    expect_same_verdicts(wrong, p, p.to_array(1), model);
}

TEST(GemmCovers, RealGemmResultsAreCoveredAndPlantedFaultsCaught) {
    check_real_gemm<float>(40, 300, 33, 41);
    check_real_gemm<double>(37, 129, 40, 42);
}

// The caller's rounding mode and FTZ/DAZ change nothing (the sums are integers, the filter runs in the default
// environment it installs itself).
TEST(GemmCovers, IndependentOfTheFloatingPointEnvironment) {
    std::mt19937_64 rng(77);
    const std::size_t m = 20, k = 40, n = 16;
    const std::vector<float> a = orc::from_bits<float>(orc::random_terms(binary32_info, m * k, orc::term_mix::cancelling, rng));
    const std::vector<float> b = orc::from_bits<float>(orc::random_terms(binary32_info, k * n, orc::term_mix::subnormal, rng));
    const product_reference p = exact_matmul<float>(row_major<float>(a, m, k), row_major<float>(b, k, n));
    const reference_array refs = p.to_array(1);
    for (const char* name : {"any_order", "directed:any_order", "exact"}) {
        const standard model = parse_standard(name);
        const std::vector<float> results = planted_results<float>(p, model, rng);
        const array_verdict quiet = covers(std::span<const float>(results), p, model);
        for (const rounding mode : {rounding::upward, rounding::toward_zero}) {
            const orc::fp_environment_guard guard(mode, orc::ftz_daz_supported());
            const array_verdict v = covers(std::span<const float>(results), p, model);
            EXPECT_EQ(v.violations, quiet.violations) << name;
            EXPECT_EQ(v.message(), quiet.message()) << name;
        }
        expect_same_verdicts(results, p, refs, model);
    }
}

// ---- Step P6: the usual element's enclosures in lanes (detail::enclose_narrow_run) --------------------------------

// One run's inputs and both widths' outputs.
struct narrow_run_case {
    int levels = 1, w = 1;
    std::vector<std::int64_t> level_sums;
    std::vector<std::uint64_t> limbs;  // level_sums packed (detail::pack_levels), `words` limbs an element
    std::vector<int> row_top, row_min_exponent;
    std::vector<std::uint8_t> row_simple;
    std::vector<double> t_hat;
    detail::narrow_run_input in;

    struct outputs {
        std::vector<double> s_lo, s_hi, w_lo, w_hi;
        std::vector<std::uint8_t> usable, done;
        explicit outputs(std::size_t n) : s_lo(n, -7.0), s_hi(n, -7.0), w_lo(n, -7.0), w_hi(n, -7.0), usable(n, 9), done(n, 9) {}
        detail::narrow_run_output view() {
            return {s_lo.data(), s_hi.data(), w_lo.data(), w_hi.data(), usable.data(), done.data()};
        }
        // Element k's outputs equal other's bit for bit.
        testing::AssertionResult same_at(const outputs& other, std::size_t k) const {
            const auto bits = [](double x) { return std::bit_cast<std::uint64_t>(x); };
            if (bits(s_lo[k]) == bits(other.s_lo[k]) && bits(s_hi[k]) == bits(other.s_hi[k]) &&
                bits(w_lo[k]) == bits(other.w_lo[k]) && bits(w_hi[k]) == bits(other.w_hi[k]) &&
                usable[k] == other.usable[k] && done[k] == other.done[k])
                return testing::AssertionSuccess();
            return testing::AssertionFailure()
                   << "s [" << s_lo[k] << ", " << s_hi[k] << "] vs [" << other.s_lo[k] << ", " << other.s_hi[k]
                   << "], w [" << w_lo[k] << ", " << w_hi[k] << "] vs [" << other.w_lo[k] << ", " << other.w_hi[k]
                   << "], usable " << int(usable[k]) << " vs " << int(other.usable[k]) << ", done " << int(done[k])
                   << " vs " << int(other.done[k]);
        }
    };
    // Packs each element's levels into `words` limbs (the fewest that hold every element's sum when words is 0).
    int pack(int words) {
        const std::size_t count = level_sums.size() / static_cast<std::size_t>(levels);
        if (words == 0) {
            words = 1;
            for (std::size_t k = 0; k < count; ++k) {
                mpz_class sum = 0;
                for (int t = 0; t < levels; ++t)
                    sum += mpz_class(static_cast<long>(level_sums[k * levels + t])) << ((levels - 1 - t) * w);
                while (abs(sum) >= (mpz_class(1) << (64 * words - 1))) ++words;
            }
        }
        limbs.assign(count * static_cast<std::size_t>(words), 0);
        for (std::size_t k = 0; k < count; ++k)
            detail::pack_levels(level_sums.data() + k * levels, 1, levels, w, words, limbs.data() + k * words);
        return words;
    }
    outputs run(int lanes) const {
        outputs out(row_top.size());
        detail::enclose_narrow_run(in, row_top.size(), out.view(), lanes);
        return out;
    }
};

// The exact s of element k of a case: Σ_t level·2^((levels - 1 - t)·w + low).
mpq_class narrow_exact(const narrow_run_case& c, std::size_t k) {
    mpz_class sum = 0;
    for (int t = 0; t < c.levels; ++t) {
        const mpz_class level(static_cast<long>(c.level_sums[k * c.levels + t]));
        sum += level << ((c.levels - 1 - t) * c.w);
    }
    const int low = c.row_top[k] + c.in.low_offset;
    mpq_class q(sum);
    if (low >= 0) q *= mpq_class(mpz_class(1) << low);
    else q /= mpq_class(mpz_class(1) << -low);
    return q;
}

// A level sum of every kind: one of `extremes`, any 64-bit value, one of any width, or a small one.
std::int64_t random_level(std::mt19937_64& rng, std::span<const std::int64_t> extremes) {
    switch (rng() % 5) {
        case 0: return extremes[rng() % extremes.size()];
        case 1: return static_cast<std::int64_t>(rng());
        case 2: return static_cast<std::int64_t>(rng()) >> (rng() % 64);
        default: return static_cast<std::int64_t>(rng() % 2001) - 1000;
    }
}

TEST(GemmCoversLanes, PackedLevelsAreTheLevelsExactSumInTwosComplementLimbs) {
    // detail::pack_levels against GMP: 1 to 31 levels of 1 to 26 bits (and the int8 engine's 7), levels of every
    // magnitude the bound of s_value_words allows (|level| <= K·2^(2w) for K = 1 .. 2^30, random signs), levels that
    // cancel, at the number of limbs s_value_words gives and in one limb more (the sign extension).
    constexpr std::uint64_t seed = 20261208;
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    std::size_t checked = 0, negative = 0, words_seen[detail::s_max_words + 2] = {};
    for (int trial = 0; trial < 20000; ++trial) {
        const int levels = 1 + static_cast<int>(rng() % 31);
        const int log2k = static_cast<int>(rng() % 31);
        const std::size_t below = log2k > 0 && rng() % 2 == 0 ? rng() % (std::size_t{1} << (log2k - 1)) : 0;
        const std::size_t k = (std::size_t{1} << log2k) - below;
        const int w_max = std::max(1, (53 - log2k) / 2);
        const int w = rng() % 4 == 0 ? std::min(7, w_max) : 1 + static_cast<int>(rng() % static_cast<unsigned>(w_max));
        // Levels of a near part: the value Σ_t v_t·2^((levels - 1 - t)·w) of magnitude below K·2^((levels + 1)·w)
        // needs each |v_t| <= K·2^(2w) when the levels come from slices (|slice| < 2^w, K products each).
        const std::int64_t cap = static_cast<std::int64_t>(k) << (2 * w);
        std::vector<std::int64_t> v(static_cast<std::size_t>(levels));
        for (auto& x : v) {
            const std::uint64_t r = rng();
            x = rng() % 5 == 0 ? (rng() % 2 == 0 ? cap : -cap)
                               : static_cast<std::int64_t>(r % static_cast<std::uint64_t>(cap + 1));
            if (rng() % 2 == 0) x = -x;
        }
        if (levels >= 2 && rng() % 4 == 0) {  // the top level cancels the next: a value in the low levels only
            const std::int64_t small = static_cast<std::int64_t>(rng() % 1000) - 500;
            v[0] = small;
            v[1] = -(small << w) + static_cast<std::int64_t>(rng() % 3) - 1;
        }
        mpz_class exact = 0;
        for (int t = 0; t < levels; ++t)
            exact += mpz_class(static_cast<long>(v[static_cast<std::size_t>(t)])) << ((levels - 1 - t) * w);
        if (abs(exact) >= mpz_class(static_cast<unsigned long>(k)) << ((levels + 1) * w)) continue;  // beyond the bound
        const int words = detail::s_value_words(k, levels, w);
        ASSERT_LE(words, detail::s_max_words);
        for (const int wds : {words, words + 1}) {
            std::uint64_t limbs[detail::s_max_words + 1];
            detail::pack_levels(v.data(), 1, levels, w, wds, limbs);
            mpz_class got = 0;  // the limbs as a two's-complement integer
            for (int q = wds - 1; q >= 0; --q) got = (got << 64) + mpz_class(static_cast<unsigned long>(limbs[q]));
            if (limbs[wds - 1] >> 63) got -= mpz_class(1) << (64 * wds);
            ASSERT_EQ(got, exact) << "levels " << levels << " w " << w << " K " << k << " words " << wds;
        }
        ++words_seen[words];
        negative += exact < 0 ? 1 : 0;
        ++checked;
    }
    EXPECT_GT(checked, 15000u);
    EXPECT_GT(negative, 5000u);
    for (int q = 1; q <= 8; ++q) EXPECT_GT(words_seen[q], 100u) << q << " limbs";
}

TEST(GemmCoversLanes, NarrowRunsGiveTheSameBitsAtEveryWidthAndTheirSumsRdAndRu) {
    // Random and adversarial runs: levels of every magnitude up to ±2^63 (INT64_MIN included), sums that cancel to
    // zero or to a few low bits (leading zeros 64 and beyond), carries between the two words, scales at the ends of
    // the normal range (encode's subnormal and overflow cases, recomputed element by element), rows left to the
    // other path, and t_hat of every class (0, -0.0, negative, NaN, inf, subnormal, near the largest double).
    constexpr std::uint64_t seed = 20261206;
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    const std::int64_t extremes[] = {0, 1, -1, 2, std::numeric_limits<std::int64_t>::max(),
                                     std::numeric_limits<std::int64_t>::min(), std::int64_t{1} << 62,
                                     -(std::int64_t{1} << 62), (std::int64_t{1} << 53) + 1, -(std::int64_t{1} << 11)};
    const double t_specials[] = {0.0, -0.0, -1.0, std::numeric_limits<double>::quiet_NaN(),
                                 std::numeric_limits<double>::infinity(), std::numeric_limits<double>::denorm_min(),
                                 std::numeric_limits<double>::max(), std::numeric_limits<double>::min(), 1.0, 0x1p-298};
    std::size_t checked = 0, zero_sums = 0, beyond_normal = 0, high_word_zero = 0, one_limb_runs = 0;
    for (int trial = 0; trial < 600; ++trial) {
        narrow_run_case c;
        c.levels = 1 + static_cast<int>(rng() % 4);
        c.w = c.levels == 1 ? 1 + static_cast<int>(rng() % 58) : 1 + static_cast<int>(rng() % (58 / (c.levels - 1)));
        const std::size_t count = 1 + rng() % 70;  // whole vectors and tails
        c.level_sums.resize(count * c.levels);
        c.row_top.resize(count);
        c.row_min_exponent.resize(count);
        c.row_simple.resize(count);
        c.t_hat.resize(count);
        const int scale_kind = static_cast<int>(rng() % 4);  // 0, 1: ordinary; 2: near emin; 3: near emax
        for (std::size_t k = 0; k < count; ++k) {
            for (int t = 0; t < c.levels; ++t) {
                c.level_sums[k * c.levels + t] = random_level(rng, extremes);
            }
            if (c.levels >= 2 && rng() % 4 == 0) {  // cancel the top level against the next: a zero or a tiny sum
                const std::int64_t a = static_cast<std::int64_t>(rng() % (std::uint64_t{1} << (62 - c.w))) - (std::int64_t{1} << (61 - c.w));
                c.level_sums[k * c.levels] = a;
                c.level_sums[k * c.levels + 1] = -(a << c.w);
                for (int t = 2; t < c.levels; ++t) c.level_sums[k * c.levels + t] = rng() % 3 == 0 ? 0 : static_cast<std::int64_t>(rng() % 7) - 3;
            }
            const int jitter = static_cast<int>(rng() % 400);
            c.row_top[k] = scale_kind == 2 ? -1100 + jitter - 200 : scale_kind == 3 ? 900 + jitter - 200 - c.levels * c.w
                                                                                     : static_cast<int>(rng() % 200) - 100;
            c.row_simple[k] = rng() % 8 != 0;
            c.row_min_exponent[k] = rng() % 3 == 0 ? INT_MAX : static_cast<int>(rng() % 400) - 200;
            c.t_hat[k] = rng() % 3 == 0 ? t_specials[rng() % std::size(t_specials)]
                                        : std::ldexp(static_cast<double>(rng() >> 11), static_cast<int>(rng() % 200) - 150);
        }
        // Two limbs hold any sum here ((levels - 1)·w <= 58, |level| <= 2^63, at most 4 levels); one when it fits.
        c.in.words = c.pack(rng() % 2 == 0 ? 2 : 0);
        ASSERT_LE(c.in.words, 2);
        if (c.in.words == 1) ++one_limb_runs;
        c.in.limbs = c.limbs.data();
        c.in.row_top = c.row_top.data();
        c.in.low_offset = -(c.levels + 1) * c.w + static_cast<int>(rng() % 21) - 10;
        c.in.row_simple = c.row_simple.data();
        c.in.row_min_exponent = c.row_min_exponent.data();
        c.in.col_min_exponent = rng() % 3 == 0 ? INT_MAX : static_cast<int>(rng() % 400) - 200;
        c.in.emin = rng() % 2 == 0 ? -126 : -1022;
        c.in.t_hat = c.t_hat.data();
        const double g = static_cast<double>(1 + rng() % 4096) * 0x1p-52;
        c.in.t_below = 1 - g;
        c.in.t_above = (1 - g) / (1 - 2 * g) * (1 + 0x1p-52);

        const auto scalar = c.run(1), lanes = c.run(8);
        for (std::size_t k = 0; k < count; ++k) {
            SCOPED_TRACE("trial " + std::to_string(trial) + " element " + std::to_string(k));
            ASSERT_TRUE(lanes.same_at(scalar, k));
            const int ra = c.row_min_exponent[k], cb = c.in.col_min_exponent;
            const bool takes = c.row_simple[k] != 0 && (ra == INT_MAX || cb == INT_MAX || ra + cb >= c.in.emin);
            ASSERT_EQ(scalar.done[k], takes ? 1 : 0);
            if (!takes) {
                EXPECT_EQ(std::bit_cast<std::uint64_t>(scalar.s_lo[k]) | std::bit_cast<std::uint64_t>(scalar.w_hi[k]), 0u);
                continue;
            }
            // s: RD and RU of the exact sum (both +0.0 for a zero sum).
            const mpq_class exact = narrow_exact(c, k);
            if (exact == 0) {
                ++zero_sums;
                EXPECT_EQ(std::bit_cast<std::uint64_t>(scalar.s_lo[k]) | std::bit_cast<std::uint64_t>(scalar.s_hi[k]), 0u);
            } else {
                EXPECT_EQ(std::bit_cast<std::uint64_t>(scalar.s_lo[k]),
                          orc::mpfr_round_rational_bits(exact, binary64_info, rounding::downward));
                EXPECT_EQ(std::bit_cast<std::uint64_t>(scalar.s_hi[k]),
                          orc::mpfr_round_rational_bits(exact, binary64_info, rounding::upward));
                const double magnitude = std::fabs(scalar.s_lo[k]) > std::fabs(scalar.s_hi[k]) ? std::fabs(scalar.s_lo[k]) : std::fabs(scalar.s_hi[k]);
                if (!(magnitude >= std::numeric_limits<double>::min() && magnitude < std::numeric_limits<double>::max())) ++beyond_normal;
                mpz_class sum = 0;
                for (int t = 0; t < c.levels; ++t)
                    sum += mpz_class(static_cast<long>(c.level_sums[k * c.levels + t])) << ((c.levels - 1 - t) * c.w);
                if (abs(sum) < (mpz_class(1) << 64)) ++high_word_zero;
            }
            // T: t_enclosure_of, which holds t_hat·t_below .. t_hat·t_above.
            const double t = c.t_hat[k];
            const bool t_ok = t >= 0 && t < std::numeric_limits<double>::infinity();
            ASSERT_EQ(scalar.usable[k], t_ok ? 1 : 0);
            if (t_ok) {
                EXPECT_LE(scalar.w_lo[k], t * c.in.t_below);
                EXPECT_GE(scalar.w_hi[k], t * c.in.t_above);
            }
            ++checked;
        }
    }
    // The adversarial classes were reached (else the generator above needs widening).
    EXPECT_GT(checked, 5000u);
    EXPECT_GT(zero_sums, 50u);
    EXPECT_GT(beyond_normal, 50u);
    EXPECT_GT(high_word_zero, 500u);
    EXPECT_GT(one_limb_runs, 20u);
}

TEST(GemmCoversLanes, WideRunsGiveTheSameBitsAtEveryWidthAndEncloseTheExactValues) {
    // Binary64-term runs (3 to 7 levels, windows of 59 to 122 bits): levels of every magnitude and sign, cancelling
    // pairs across the 64-bit limbs, scales at the ends of the ranges, far entries in rows and columns (F's powers of
    // two in and out of range), rows left to the other path; T's levels of every size, or in every second trial
    // Step S6's t_hat (binary64 terms: finite, zero, NaN for "not enclosed", Inf, negative). (Every usable element's
    // s with T's levels is a normal double or 0: T's range test keeps 2^low normal, so encode's cases do not arise.)
    constexpr std::uint64_t seed = 20261207;
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    const std::int64_t extremes[] = {0, 1, -1, std::numeric_limits<std::int64_t>::max(),
                                     std::numeric_limits<std::int64_t>::min(), std::int64_t{1} << 62,
                                     -(std::int64_t{1} << 62), (std::int64_t{1} << 53) + 1, -(std::int64_t{1} << 40)};
    std::size_t checked = 0, zero_sums = 0, widened = 0, refused_t = 0, low_limb = 0, from_t_hat = 0;
    std::size_t words_used[4] = {};
    for (int trial = 0; trial < 600; ++trial) {
        const bool with_t_hat = trial % 2 == 1;
        narrow_run_case c;  // its row_top, row_min_exponent and row_simple (as row_plain) fields
        c.levels = 3 + static_cast<int>(rng() % 5);
        const int w_min = 58 / (c.levels - 1) + 1, w_max = 122 / (c.levels - 1);
        c.w = w_min + static_cast<int>(rng() % static_cast<std::uint64_t>(w_max - w_min + 1));
        const std::size_t count = 1 + rng() % 70;
        c.level_sums.resize(count * c.levels);
        std::vector<std::int64_t> t_levels(count * c.levels);
        std::vector<double> t_hat(count);
        std::vector<std::uint32_t> row_far(count);
        c.row_top.resize(count);
        c.row_min_exponent.resize(count);
        c.row_simple.resize(count);
        const int scale_kind = static_cast<int>(rng() % 4);
        for (std::size_t k = 0; k < count; ++k) {
            for (int t = 0; t < c.levels; ++t) {
                c.level_sums[k * c.levels + t] = random_level(rng, extremes);
                const std::uint64_t tr = rng();
                t_levels[k * c.levels + t] = static_cast<std::int64_t>(tr % 3 == 0 ? tr >> 1 : tr >> (1 + rng() % 63));
            }
            if (rng() % 4 == 0) {  // the top levels cancel: a zero, or a sum in the low limbs only
                const std::int64_t a = static_cast<std::int64_t>(rng() % (std::uint64_t{1} << (62 - c.w))) - (std::int64_t{1} << (61 - c.w));
                c.level_sums[k * c.levels] = a;
                c.level_sums[k * c.levels + 1] = -(a << c.w);
                for (int t = 2; t < c.levels; ++t)
                    c.level_sums[k * c.levels + t] = rng() % 2 == 0 ? 0 : static_cast<std::int64_t>(rng() % 7) - 3;
            }
            const int jitter = static_cast<int>(rng() % 300);
            c.row_top[k] = scale_kind == 2 ? -1040 + jitter - 150 : scale_kind == 3 ? 880 + jitter - 150 - c.levels * c.w
                                                                                     : static_cast<int>(rng() % 200) - 100;
            c.row_simple[k] = rng() % 8 != 0;
            c.row_min_exponent[k] = rng() % 3 == 0 ? INT_MAX : static_cast<int>(rng() % 400) - 200;
            row_far[k] = rng() % 3 == 0 ? static_cast<std::uint32_t>(rng() % (rng() % 2 == 0 ? 5 : (1u << 31))) : 0;
            const double odd[] = {0.0, std::numeric_limits<double>::quiet_NaN(),
                                  std::numeric_limits<double>::infinity(), -1.0, 0x1p-1000, 0x1p1000};
            t_hat[k] = rng() % 5 == 0 ? odd[rng() % 6] : std::ldexp(1.0 + static_cast<double>(rng() >> 12) * 0x1p-52,
                                                                     static_cast<int>(rng() % 2001) - 1000);
        }
        detail::wide_run_input in;
        in.s_words = c.pack(rng() % 2 == 0 ? 3 : 0);  // three limbs hold any sum here (below 2^(122 + 63 + 3))
        ASSERT_LE(in.s_words, 3);
        ++words_used[in.s_words];
        in.s_limbs = c.limbs.data();
        in.t_levels = t_levels.data();
        in.count_levels = c.levels;
        in.w = c.w;
        in.row_top = c.row_top.data();
        in.low_offset = -(c.levels + 1) * c.w + static_cast<int>(rng() % 21) - 10;
        in.row_plain = c.row_simple.data();
        in.row_far = row_far.data();
        in.col_far = rng() % 3 == 0 ? static_cast<std::uint32_t>(rng() % 9) : 0;
        in.slices_a = 1 + static_cast<int>(rng() % 4);
        in.slices_b = 1 + static_cast<int>(rng() % 4);
        in.row_min_exponent = c.row_min_exponent.data();
        in.col_min_exponent = rng() % 3 == 0 ? INT_MAX : static_cast<int>(rng() % 400) - 200;
        in.emin = -1022;
        if (with_t_hat) {  // Step S6's factors for K = 1 .. 2^20 (binary64 terms: g = K·2^-52, one more step up)
            in.t_levels = nullptr;
            in.t_hat = t_hat.data();
            const double g = std::ldexp(static_cast<double>(1 + rng() % (1u << 20)), -52);
            in.t_below = 1 - g;
            in.t_above = std::nextafter(std::nextafter((1 - g) / (1 - 2 * g), 2.0), 2.0);
        }

        narrow_run_case::outputs scalar(count), lanes(count);
        detail::enclose_wide_run(in, count, scalar.view(), 1);
        detail::enclose_wide_run(in, count, lanes.view(), 8);
        for (std::size_t k = 0; k < count; ++k) {
            SCOPED_TRACE("trial " + std::to_string(trial) + " element " + std::to_string(k));
            ASSERT_TRUE(lanes.same_at(scalar, k));
            if (scalar.done[k] == 0) continue;
            if (scalar.usable[k] == 0) {
                ++refused_t;
                continue;
            }
            // The exact near s and T, and F.
            const int low = c.row_top[k] + in.low_offset;
            const auto scaled = [&](const mpz_class& v, int e) {
                mpq_class q(v);
                if (e >= 0) q *= mpq_class(mpz_class(1) << e);
                else q /= mpq_class(mpz_class(1) << -e);
                return q;
            };
            mpz_class s_int = 0, t_int = 0;
            for (int t = 0; t < c.levels; ++t) {
                s_int += mpz_class(static_cast<long>(c.level_sums[k * c.levels + t])) << ((c.levels - 1 - t) * c.w);
                t_int += mpz_class(static_cast<long>(t_levels[k * c.levels + t])) << ((c.levels - 1 - t) * c.w);
            }
            const mpq_class s = scaled(s_int, low), t = scaled(t_int, low);
            const int top = low + (c.levels + 1) * c.w;
            const mpq_class far = scaled(mpz_class(static_cast<unsigned long>(row_far[k])), top - in.slices_a * c.w) +
                                  scaled(mpz_class(static_cast<unsigned long>(in.col_far)), top - in.slices_b * c.w);
            if (far == 0) {
                if (s == 0) {
                    ++zero_sums;
                    EXPECT_EQ(std::bit_cast<std::uint64_t>(scalar.s_lo[k]) | std::bit_cast<std::uint64_t>(scalar.s_hi[k]), 0u);
                } else {
                    EXPECT_EQ(std::bit_cast<std::uint64_t>(scalar.s_lo[k]),
                              orc::mpfr_round_rational_bits(s, binary64_info, rounding::downward));
                    EXPECT_EQ(std::bit_cast<std::uint64_t>(scalar.s_hi[k]),
                              orc::mpfr_round_rational_bits(s, binary64_info, rounding::upward));
                    if (abs(s_int) < (mpz_class(1) << 64)) ++low_limb;  // exact_sum192 leaves these unnormalized
                }
            } else {
                ++widened;
                EXPECT_LE(mpq_class(scalar.s_lo[k]), s - far);
                EXPECT_GE(mpq_class(scalar.s_hi[k]), s + far);
            }
            if (with_t_hat) {  // [t_hat·t_below, t_hat·t_above] (the far products are inside t_hat)
                ++from_t_hat;
                EXPECT_LE(mpq_class(scalar.w_lo[k]), mpq_class(t_hat[k]) * mpq_class(in.t_below));
                EXPECT_GE(mpq_class(scalar.w_hi[k]), mpq_class(t_hat[k]) * mpq_class(in.t_above));
                EXPECT_GE(scalar.w_lo[k], 0.0);
            } else {
                EXPECT_LE(mpq_class(scalar.w_lo[k]), t);
                EXPECT_GE(mpq_class(scalar.w_hi[k]), t + far);
            }
            ++checked;
        }
    }
    EXPECT_GT(from_t_hat, 2000u);
    EXPECT_GT(checked, 4000u);
    EXPECT_GT(zero_sums, 20u);
    EXPECT_GT(widened, 1000u);
    EXPECT_GT(refused_t, 100u);
    EXPECT_GT(low_limb, 100u);
    EXPECT_GT(words_used[2], 10u);  // runs of two and three limbs (one-limb runs are rare: every level would be tiny)
    EXPECT_GT(words_used[3], 200u);
}

TEST(GemmCovers, SizeMismatchAndStructuredStandardsAreTheReferencePathsErrors) {
    const std::vector<float> a{1, 2, 3, 4}, b{5, 6, 7, 8};
    const product_reference p = exact_matmul(row_major<float>(a, 2, 2), row_major<float>(b, 2, 2));
    const std::vector<float> three{1, 2, 3};
    EXPECT_THROW((void)covers(std::span<const float>(three), p, any_order()), std::invalid_argument);
    std::vector<std::uint8_t> flags(3);
    EXPECT_THROW(detail::covers_flags(binary32_info, std::as_bytes(std::span<const float>(three)), p, any_order(), flags),
                 std::invalid_argument);
    const std::vector<float> results{19, 22, 43, 50};
    expect_same_verdicts(results, p, p.to_array(1), parse_standard("levels:fold/2,any"));
    const array_verdict v = covers(results, p, exact());
    EXPECT_TRUE(v.covered) << v.message();
    // An empty product.
    const product_reference empty = exact_matmul(row_major<float>({}, 0, 2), row_major<float>(b, 2, 2));
    EXPECT_TRUE(covers(std::span<const float>(), empty, any_order()).covered);
}

}  // namespace
