// covers() over arrays: the binary64 filter (src/covers_filter.h, docs/algorithms/covers-filter.md) must give the
// verdicts of the exact path element by element. Checked against covers_bits (the exact decision of one result),
// with results planted at the bound and next to it, special values, several standards (flat, structured, directed,
// mixed, exact, faithful) and all four formats, under the caller's rounding mode and FTZ/DAZ too.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "accumulator_checks.h"
#include "exactref/covers.h"
#include "exactref/detail/covers_filter.h"
#include "exactref/dot.h"
#include "oracle.h"

namespace {
using namespace exactref;
namespace orc = exactref::oracle;

template <class T>
T from_bits(std::uint64_t b) {
    return exactref_test::value_of<T>(b);
}
template <class T>
std::uint64_t bits(T x) {
    return format_traits<T>::to_bits(x);
}
// The next encoding toward +inf / -inf of a finite value (through zero), raw bits of format f.
std::uint64_t step(const format_info& f, std::uint64_t b, int k) {
    const std::uint64_t sign = std::uint64_t{1} << (f.storage_bits - 1);
    for (; k > 0; --k) b = (b & sign) ? (b == sign ? 1 : b - 1) : b + 1;
    for (; k < 0; ++k) b = (b & sign) ? b + 1 : (b == 0 ? sign | 1 : b - 1);
    return b;
}

// Terms over many binades with random signs; sometimes special values or all zeros.
template <class T>
std::vector<T> random_terms(std::mt19937_64& rng, std::size_t n, int spread) {
    std::uniform_real_distribution<double> mantissa(1, 2);
    std::uniform_int_distribution<int> exponent(-spread, spread / 2);
    std::vector<T> xs(n);
    for (T& x : xs) x = static_cast<T>((rng() & 1 ? -1 : 1) * std::ldexp(mantissa(rng), exponent(rng)));
    const unsigned kind = rng() % 16;
    if (n > 0 && kind == 0) xs[rng() % n] = static_cast<T>(std::numeric_limits<double>::infinity());
    if (n > 0 && kind == 1) xs[rng() % n] = static_cast<T>(std::numeric_limits<double>::quiet_NaN());
    if (kind == 2) for (T& x : xs) x = static_cast<T>(-0.0);
    return xs;
}

// Results around the reference: RN(s) and its neighbours, s ± B and their neighbours, random values, specials.
template <class T>
std::vector<std::uint64_t> candidate_results(std::mt19937_64& rng, const reference& ref, const standard& model) {
    const format_info& f = format_traits<T>::info;
    std::vector<std::uint64_t> out;
    const std::uint64_t rn = ref.sum.round_bits(f, rounding::to_nearest_even);
    for (int k = -3; k <= 3; ++k) out.push_back(step(f, rn, k));
    double b = 0;
    try {
        b = bound(ref, model, f);
    } catch (const std::invalid_argument&) {
    }
    if (std::isfinite(b) && b > 0) {
        const double s = ref.sum.round<double>();
        for (double edge : {s + b, s - b, s + b / 2, s - 2 * b}) {
            const std::uint64_t e = round_double_to(f, edge, rounding::to_nearest_even);
            for (int k = -2; k <= 2; ++k) out.push_back(step(f, e, k));
        }
    }
    out.push_back(bits(from_bits<T>(0)));
    out.push_back(std::uint64_t{1} << (f.storage_bits - 1));  // -0.0
    out.push_back(round_double_to(f, std::numeric_limits<double>::infinity(), rounding::to_nearest_even));
    out.push_back(round_double_to(f, -std::numeric_limits<double>::infinity(), rounding::to_nearest_even));
    out.push_back(round_double_to(f, std::numeric_limits<double>::quiet_NaN(), rounding::to_nearest_even));
    out.push_back(round_double_to(f, std::numeric_limits<double>::max(), rounding::toward_zero));  // ±max
    const std::uint64_t all = f.storage_bits == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << f.storage_bits) - 1;
    for (int i = 0; i < 4; ++i) out.push_back(rng() & all);
    return out;
}

// The array verdict as the exact path gives it element by element (the rules of covers.h's array_verdict).
struct expected_array {
    std::size_t violations = 0;
    std::vector<std::size_t> first;
    std::size_t worst = 0;
};
expected_array by_exact_path(const format_info& f, const std::vector<std::uint64_t>& rs,
                             const std::vector<const reference*>& refs, const standard& model) {
    expected_array e;
    double worst_ratio = -1;
    bool worst_violates = false;
    for (std::size_t i = 0; i < rs.size(); ++i) {
        const decision d = decide_bits(f, rs[i], *refs[i], model);
        if (!d.covered) {
            ++e.violations;
            if (e.first.size() < 8) e.first.push_back(i);
        }
        const double ratio = std::isnan(d.ratio) ? 0 : d.ratio;
        if ((!d.covered && !worst_violates) || ((!d.covered) == worst_violates && ratio > worst_ratio)) {
            worst_ratio = ratio;
            worst_violates = !d.covered;
            e.worst = i;
        }
    }
    return e;
}

template <class T>
void cross_check(const std::vector<std::string>& standards, std::uint64_t seed) {
    const format_info& f = format_traits<T>::info;
    std::mt19937_64 rng(seed);
    const std::vector<standard> structures{parse_standard("levels:fold/4,any"),
                                           parse_standard("levels:fold:8,tree:4,any")};
    std::vector<reference> refs;
    for (std::size_t n : {1, 2, 3, 17, 64, 100, 333, 1000}) {
        for (int rep = 0; rep < 6; ++rep) {
            const std::vector<T> xs = random_terms<T>(rng, n, rep % 2 ? 4 : (f.precision > 11 ? 40 : 8));
            refs.push_back(sum(std::span<const T>(xs), n >= 8 ? structures : std::vector<standard>{}));
            if (rep == 5) refs.back().sum.add(from_bits<T>(1));  // the cached enclosure goes stale: recomputed
        }
    }
    for (const std::string& name : standards) {
        const standard model = parse_standard(name);
        std::vector<std::uint64_t> rs;
        std::vector<const reference*> owners;
        for (const reference& r : refs) {
            if (model.structured && r.structures.empty()) continue;
            if (model.is_mixed() && info(r.term_format).precision > 24) continue;
            try {
                (void)bound(r, model, f);
            } catch (const std::invalid_argument&) {
                continue;  // a standard that does not apply to this reference (checked by the throw tests)
            }
            for (std::uint64_t b : candidate_results<T>(rng, r, model)) {
                rs.push_back(b);
                owners.push_back(&r);
            }
        }
        ASSERT_FALSE(rs.empty()) << name;
        std::vector<std::uint8_t> got(rs.size());
        detail::covers_flags(f, rs, owners, model, got);
        for (std::size_t i = 0; i < rs.size(); ++i) {
            const verdict v = covers_bits(f, rs[i], *owners[i], model);
            ASSERT_EQ(got[i] != 0, v.covered) << name << " " << f.name << " seed " << seed << " element " << i
                                              << "\n" << v.message();
        }
        // The array forms: counts, first violations and the worst element as the exact path gives them.
        reference_array array;
        for (const reference* r : owners) array.elements.push_back(*r);
        std::vector<T> typed;
        for (std::uint64_t b : rs) typed.push_back(from_bits<T>(b));
        const array_verdict av = covers(std::span<const T>(typed), array, model);
        const expected_array e = by_exact_path(f, rs, owners, model);
        EXPECT_EQ(av.violations, e.violations) << name;
        EXPECT_EQ(av.first_violations, e.first) << name;
        EXPECT_EQ(av.worst_index, e.worst) << name;
        EXPECT_EQ(av.worst.covered, covers_bits(f, rs[e.worst], *owners[e.worst], model).covered) << name;
    }
}

const std::vector<std::string> bound_standards{
    "any_order", "tree:12", "split_k:4", "split_k:4:pairwise", "directed:any_order", "levels:fold/4,any",
    "directed:levels:fold/4,any", "levels:fold:8,tree:4,any", "exact", "faithful"};

TEST(CoversFilter, SameVerdictsAsTheExactPathFloat64) { cross_check<double>(bound_standards, 1); }
TEST(CoversFilter, SameVerdictsAsTheExactPathFloat32) { cross_check<float>(bound_standards, 2); }
TEST(CoversFilter, SameVerdictsAsTheExactPathFloat16) {
    std::vector<std::string> s = bound_standards;
    s.push_back("mixed:float32:float16");
    s.push_back("mixed:float32:float16:levels:fold/4,any");
    cross_check<float16>(s, 3);
}
TEST(CoversFilter, SameVerdictsAsTheExactPathBfloat16) {
    std::vector<std::string> s = bound_standards;
    s.push_back("mixed:float32:bfloat16");
    cross_check<bfloat16>(s, 4);
}

// Under the caller's rounding mode and FTZ/DAZ the filter's binary64 arithmetic still rounds to nearest.
TEST(CoversFilter, SameVerdictsUnderOtherRoundingModesAndFlushToZero) {
    for (rounding mode : {rounding::upward, rounding::downward, rounding::toward_zero}) {
        orc::fp_environment_guard guard(mode, true);
        cross_check<float>({"any_order", "levels:fold/4,any", "directed:any_order"}, 5);
        cross_check<double>({"any_order"}, 6);
    }
}

// Results planted exactly at the bound and next to it: the terms {2, 1, 1} give s = S = 4 and any_order's
// B = 2u·4 = 8u = ulp(4), so next_up(4) = s + B and two steps below 4 (the spacing halves there) = s - B.
template <class T>
void planted_at_bound() {
    const format_info& f = format_traits<T>::info;
    const std::vector<T> xs{static_cast<T>(2.0f), static_cast<T>(1.0f), static_cast<T>(1.0f)};
    const reference ref = sum(std::span<const T>(xs));
    const std::uint64_t four = bits(static_cast<T>(4.0f));
    struct plant {
        int steps;
        bool covered;
        bool at_bound;
    };
    const plant plants[] = {{1, true, true}, {2, false, false}, {-2, true, true}, {-3, false, false},
                            {-1, true, false}, {0, true, false}};
    std::vector<T> rs;
    for (const plant& p : plants) rs.push_back(from_bits<T>(step(f, four, p.steps)));
    const std::uint64_t before = detail::covers_exact_path_count();
    const array_verdict v = covers(std::span<const T>(rs), ref, any_order());
    const std::uint64_t decided_exactly = detail::covers_exact_path_count() - before;
    EXPECT_GE(decided_exactly, 2u) << "the two results at the bound must reach the exact comparison";
    EXPECT_EQ(v.violations, 2u);
    for (std::size_t i = 0; i < rs.size(); ++i) {
        EXPECT_EQ(covers(rs[i], ref, any_order()).covered, plants[i].covered) << f.name << " plant " << i;
        if (plants[i].at_bound) EXPECT_EQ(covers(rs[i], ref, any_order()).ratio, 1.0);
    }
    EXPECT_EQ(v.first_violations, (std::vector<std::size_t>{1, 3}));
    EXPECT_EQ(v.worst_index, 1u);  // ratio 2 (two ulps of 4 above) beats 1.5 (three half-ulps below)
    // One reference per element (the reference_array form) decides the same.
    reference_array array;
    array.elements.assign(rs.size(), ref);
    const array_verdict w = covers(std::span<const T>(rs), array, any_order());
    EXPECT_EQ(w.violations, v.violations);
    EXPECT_EQ(w.first_violations, v.first_violations);
    EXPECT_EQ(w.worst_index, v.worst_index);
}
TEST(CoversFilter, PlantedAtTheBoundGoToTheExactPath) {
    planted_at_bound<double>();
    planted_at_bound<float>();
    planted_at_bound<float16>();
    planted_at_bound<bfloat16>();
}

// The structured bound: results within a few binary64 ulps of s ± B_data cannot be decided by the filter; the exact
// path decides them, as covers_bits does.
TEST(CoversFilter, NearTheStructuredBoundTheExactPathDecides) {
    std::mt19937_64 rng(11);
    const standard model = parse_standard("levels:fold/4,any");
    std::uint64_t near = 0;
    for (int rep = 0; rep < 20; ++rep) {
        const std::vector<float> xs = random_terms<float>(rng, 64, 4);
        const reference ref = sum(std::span<const float>(xs), {model});
        if (ref.sum.has_nan() || ref.sum.positive_inf_count() || ref.sum.negative_inf_count()) continue;
        const double b = bound(ref, model, binary64_info);
        const double flat = bound(ref, parse_standard("split_k:4"), binary64_info);
        EXPECT_LE(b, flat);
        const double s = ref.sum.round<double>();
        std::vector<double> rs;
        for (double edge : {s + b, s - b})
            for (int k = -2; k <= 2; ++k) rs.push_back(from_bits<double>(step(binary64_info, bits(edge), k)));
        const std::uint64_t before = detail::covers_exact_path_count();
        const array_verdict v = covers(std::span<const double>(rs), ref, model);
        near += detail::covers_exact_path_count() - before;
        std::size_t violations = 0;
        for (double r : rs) violations += covers(r, ref, model).covered ? 0 : 1;
        EXPECT_EQ(v.violations, violations) << "rep " << rep;
    }
    EXPECT_GT(near, 0u);
}

// The filter decides almost every element of an honest product: few reach the exact path.
TEST(CoversFilter, HonestDotProductsRarelyReachTheExactPath) {
    std::mt19937_64 rng(12);
    std::normal_distribution<float> g;
    reference_array refs;
    std::vector<float> results;
    for (int i = 0; i < 2000; ++i) {
        std::vector<float> x(64), y(64);
        for (float& v : x) v = g(rng);
        for (float& v : y) v = g(rng);
        refs.elements.push_back(dot(std::span<const float>(x), std::span<const float>(y)));
        float acc = 0;
        for (int l = 0; l < 64; ++l) acc += x[l] * y[l];
        results.push_back(acc);
    }
    const std::uint64_t before = detail::covers_exact_path_count();
    const array_verdict v = covers(std::span<const float>(results), refs, any_order());
    EXPECT_TRUE(v.covered) << v.message();
    EXPECT_EQ(detail::covers_exact_path_count() - before, 0u);
}

TEST(CoversFilter, ThrowsAsTheExactPath) {
    const std::vector<double> xs{1, 2, 3};
    reference_array refs;
    refs.elements.push_back(sum(std::span<const double>(xs)));
    const std::vector<double> rs{6};
    EXPECT_THROW(covers(std::span<const double>(rs), refs, parse_standard("levels:fold/2,any")),
                 std::invalid_argument);  // built without the structure
    EXPECT_THROW(covers(std::span<const double>(rs), refs, tree(1)), std::invalid_argument);  // 3 > 2^1 terms
}

}  // namespace
