// covers(): the exact decision |r - s| <= B and the special-value rules of shared/DESIGN.md §3.
//
// Everything that decides is a GMP rational (r, s, S, u, γ_k are dyadic or rational); to_double (integer
// operations, multiprecision.h) only turns the decided numbers into doubles for display. Arrays of results go through
// a binary64 filter first (covers_filter.h, docs/algorithms/covers-filter.md): it decides an element only when the
// exact comparison must agree, and hands every other element to the exact decision below.
#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstring>  // std::memcpy: results read from raw storage
#include <limits>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <unordered_map>

#include "exactref/covers.h"
#include "exactref/detail/covers_filter.h"
#include "exactref/detail/fp_environment.h"
#include "exactref/detail/decimal.h"
#include "exactref/io.h"
#include "exactref/multiprecision.h"
#include "exactref/scatter.h"

#include "covers_block.h"
#include "covers_source_block.h"
#include "covers_filter.h"

namespace exactref {

namespace {

mpq_class pow2(long e) {
    mpq_class q(1);
    if (e >= 0) mpq_mul_2exp(q.get_mpq_t(), q.get_mpq_t(), static_cast<mp_bitcnt_t>(e));
    else mpq_div_2exp(q.get_mpq_t(), q.get_mpq_t(), static_cast<mp_bitcnt_t>(-e));
    return q;
}

// γ_k = k·u / (1 - k·u) (Higham, ASNA §3.1); nullopt when k·u >= 1 (no finite bound).
std::optional<mpq_class> gamma(std::uint64_t k, const mpq_class& u) {
    const mpq_class ku = mpq_class(mpz_class(std::to_string(k))) * u;
    if (ku >= 1) return std::nullopt;
    return mpq_class(ku / (1 - ku));
}

mpq_class from_count(std::uint64_t k) { return mpq_class(mpz_class(std::to_string(k))); }

std::uint64_t ceil_log2(std::uint64_t s) { return s <= 1 ? 0 : static_cast<std::uint64_t>(std::bit_width(s - 1)); }

// Largest finite value of f, and Ω = (2 - 2^-p)·2^emax, the round-to-nearest overflow threshold (IEEE 754 §7.4).
mpq_class largest_finite(const format_info& f) { return (2 - pow2(1 - f.precision)) * pow2(f.emax); }
mpq_class overflow_threshold(const format_info& f) { return (2 - pow2(-f.precision)) * pow2(f.emax); }

bool fits_in(const format_info& term, const format_info& acc) {
    return term.precision <= acc.precision && term.emax <= acc.emax &&
           term.subnormal_lsb_exponent() >= acc.subnormal_lsb_exponent();
}

// Exact decimal of a rational whose denominator is a power of two.
std::string dyadic_decimal(const mpq_class& q) {
    const mpz_class& den = q.get_den();
    const mp_bitcnt_t k = mpz_scan1(den.get_mpz_t(), 0);
    mpz_class num = abs(q.get_num());
    if (k > 0) {
        mpz_class five;
        mpz_ui_pow_ui(five.get_mpz_t(), 5, k);
        num *= five;  // m / 2^k = m·5^k / 10^k
    }
    return detail::place_decimal_point(num.get_str(), k, sgn(q) < 0);
}

// The bound of one model for one reference, with the relative factor used by the overflow rule:
// B = factor·W + extra, W = S (sums) or T (dots); mixed adds u_out·(|s| + B_acc).
struct prepared_bound {
    bool finite = true;
    bool products_may_underflow = false;
    mpq_class value;       // B
    mpq_class acc_value;   // B_acc: the accumulation's part of B (mixed: before the rounding into out; else B)
    mpq_class factor;      // relative growth of a sum of like-signed terms: (1 + factor)·P bounds every result
    mpq_class additive;    // what adds to that growth regardless of P: the flat bound's extra (underflow, ftz:)
};

struct prepared_reference {
    const reference* ref = nullptr;
    const format_info* result = nullptr;
    const format_info* acc = nullptr;
    standard model;
    // special state
    bool nan_only = false, pos_inf_only = false, neg_inf_only = false;
    bool pos_inf_reachable = false, neg_inf_reachable = false;
    bool products_may_underflow = false;  // dot: a negative product may round to -0.0
    bool final_rounding_may_flush = false;  // mixed: a negative accumulated value may round to -0.0 in out
    bool overflow_saturates = false;        // directed, terms of both signs: a saturated partial sum may end anywhere
    bool saturates_positive = false;        // directed, positive terms only: +max may be the result (RD, RZ)
    bool saturates_negative = false;        // directed, negative terms only: -max may be the result (RU, RZ)
    mpq_class saturation_value;             // that max: the smaller largest finite value of acc and out
    // exact values (finite terms)
    mpq_class s;
    prepared_bound bound;
    std::uint64_t rn_bits = 0, rd_bits = 0, ru_bits = 0;
    int ulp_exponent = 0;  // ulp of RN(s) in the result format
    // What the check can see (DESIGN §3, "What a check can see")
    bool vacuous = false;
    verdict_sensitivity sensitivity;
};

// The part of B that depends on n, the formats and the dot-product fields only, not on the data: B = factor·W + extra
// (without the structured data bound and mixed's final rounding).
struct flat_bound {
    std::optional<mpq_class> factor;  // nullopt: no finite flat bound (k·u >= 1)
    mpq_class extra;                  // the products' underflow term (dots), else 0
    bool products_may_underflow = false;
};

flat_bound compute_flat(const reference& ref, const standard& m, const format_info& acc) {
    const int u_shift = m.directed ? 1 : 0;  // Lange–Rump (2017): directed rounding doubles u
    const mpq_class u = pow2(acc.u_exponent() + u_shift);
    const std::uint64_t n = ref.count;
    flat_bound b;

    // Step B1: the relative factor of the accumulation (times W), per standard.
    std::optional<mpq_class> factor;
    mpq_class extra = 0;
    const bool dot = ref.is_dot;
    // A product may lose accuracy to underflow in acc when its magnitude lies below 2^emin(acc); the reference knows
    // the smallest product's binade exactly when it lies below emin of the input format (reference.h).
    const format_info& term = info(ref.term_format);
    const bool product_underflows = acc.emin <= term.emin ? ref.min_product_exponent < acc.emin
                                                          : ref.product_may_underflow || ref.min_product_exponent < acc.emin;
    const bool underflow_term = dot && (product_underflows || m.fma);
    const mpq_class eta = pow2(acc.emin - acc.precision + u_shift);  // η: the underflow unit (Higham (3.5))
    // A product's own rounding lies on its path with or without an FMA: a chain acc = fma(x, y, acc) starts with
    // fma(x_1, y_1, 0) = RN(x_1·y_1), or adds RN(x_2·y_2) computed alone, so the deepest product still sees depth + 1.
    const std::uint64_t products = n - (dot && ref.has_initial && n > 0 ? 1 : 0);  // K: the terms that are products
    const std::uint64_t product_rounding = dot && products > 0 ? 1 : 0;
    auto depth_factor = [&](std::uint64_t depth) -> std::optional<mpq_class> {
        if (depth > std::numeric_limits<std::uint64_t>::max() - product_rounding) return std::nullopt;  // k·u >= 1
        return gamma(depth + product_rounding, u);
    };

    // Step B1a: the flat bound of the structure. One level of `any` (any_order, mixed over it, levels:any): the
    // Lange–Rump / Jeannerod–Rump forms. Otherwise the depth form of Higham §4.2: γ_D with D the most roundings on a
    // leaf's path (structure_depth), the product's own rounding and, for a structure of several levels, the combine
    // rounding onto an existing output C (a one-level structure has C among its leaves, as tree(h) always had).
    const std::vector<level>& lv = m.levels;
    if (m.decides == rule::bound && lv.size() == 1 && lv[0].order == level_order::any) {
        // The (n-1)·u and n·u forms hold for round-to-nearest (their proofs use |δ| <= |x_i|, which directed
        // rounding does not give). Directed rounding takes Higham's γ with 2u: (n-1)·2u·S was seen to fail once
        // (n-1)·2u > 1 (an RU fold of bfloat16 terms, test DirectedBound.GammaNotLinearForDirectedRounding).
        if (m.directed) factor = n == 0 ? std::optional<mpq_class>(mpq_class(0)) : gamma(dot ? n : n - 1, u);
        else if (!dot) factor = n == 0 ? mpq_class(0) : from_count(n - 1) * u;     // Rump; Lange–Rump
        else if (!underflow_term) factor = from_count(n) * u;                        // Jeannerod–Rump 2013
        else factor = gamma(n, u);                                                   // Higham (3.5)
    } else if (m.decides == rule::bound) {
        // Split-K's chunks: K products (without C) in s chunks of at most k = ceil(K/s); the c = min(s, K) non-empty
        // chunk results (a balanced split of K = 5 into 4 chunks is {2, 1, 1, 1}: 4 results, depth 1 + 3).
        const bool one_level = lv.size() == 1;
        const std::uint64_t leaves = one_level ? n : products;
        std::uint64_t depth = structure_depth(m, leaves);
        if (!one_level && products > 0) depth = depth > std::numeric_limits<std::uint64_t>::max() - (n - products)
                                                    ? std::numeric_limits<std::uint64_t>::max()
                                                    : depth + (n - products);
        factor = depth_factor(depth);
    }
    b.products_may_underflow = dot && product_underflows;
    if (m.ftz && m.decides == rule::bound && !dot) {
        // Flush-to-zero (standard.h, ftz()): fl(a + b) = (a + b)(1 + δ) + η with δ·η = 0 and |η| < 2^emin_acc (a
        // flushed sum of two normal numbers is exact below 2^emin), so the Lange–Rump form does not apply; over any
        // tree of depth D: γ_D·S' + (n-1)·(1 + γ_{D-1})·2^emin_acc, S' <= S the flushed terms' sum of magnitudes,
        // and each of the n terms itself moves by less than 2^emin of the larger of its and acc's emin (DAZ).
        const bool one_level_any = lv.size() == 1 && lv[0].order == level_order::any;
        const std::uint64_t depth = one_level_any ? (n == 0 ? 0 : n - 1) : structure_depth(m, n);
        factor = gamma(depth, u);
        const std::optional<mpq_class> ancestors = gamma(depth == 0 ? 0 : depth - 1, u);
        if (factor && ancestors) {
            const int emin_in = std::max(term.emin, acc.emin);
            extra = from_count(n) * pow2(emin_in) +
                    (n == 0 ? mpq_class(0) : from_count(n - 1) * (1 + *ancestors) * pow2(acc.emin));
        }
    }
    if (underflow_term) {
        // n·(1 + (n-1)u)·η: each of n products may lose up to η to underflow (Higham (3.5)).
        extra = from_count(n) * (1 + (n == 0 ? mpq_class(0) : from_count(n - 1) * u)) * eta;
    }
    b.factor = std::move(factor);
    b.extra = std::move(extra);
    return b;
}

// The reference's data bound of the structured standard m; throws std::invalid_argument when the reference was not
// built with it or over other terms.
const structure_bound& checked_structure(const reference& ref, const standard& m) {
    const std::uint64_t n = ref.count;
    const bool dot = ref.is_dot;
    const std::uint64_t products = n - (dot && ref.has_initial && n > 0 ? 1 : 0);
    const structure_bound* sb = ref.find_structure(m);
    if (sb == nullptr)
        throw std::invalid_argument(
            "standard '" + m.name() + "' is structured: its bound comes from the data, so the reference must be "
            "built with it: exactref::sum(xs, {exactref::parse_standard(\"" + m.structure() + "\")}) or "
            "exactref::dot(x, y, {...}) (Python: er.sum(x, structure=\"" + m.structure() + "\")); exact matrix "
            "products (exact_matmul, er.matmul) keep no data bounds: judge them with a flat standard (any_order, "
            "split_k:S, tree:H, directed:..., mixed:...)");
    if (sb->leaves != products || (dot && ref.has_initial))
        throw std::invalid_argument("standard '" + m.name() + "': the reference's structured bound was computed over " +
                                    std::to_string(sb->leaves) + " terms, but the reference has " +
                                    std::to_string(n) + (ref.has_initial ? " (with an initial C, which structured "
                                    "standards do not take)" : "") + ": build the reference and its structure from "
                                    "the same data");
    return *sb;
}

prepared_bound compute_bound(const reference& ref, const standard& m, const format_info& acc,
                             const format_info& out, const mpq_class& s, const mpq_class& w) {
    const int u_shift = m.directed ? 1 : 0;
    flat_bound flat = compute_flat(ref, m, acc);
    const std::optional<mpq_class>& factor = flat.factor;
    const mpq_class& extra = flat.extra;
    prepared_bound b;
    b.products_may_underflow = flat.products_may_underflow;
    std::optional<double> structured;  // the data bound of a structured standard, when finite
    if (m.structured && !m.ftz) {  // the data bounds assume gradual underflow: ftz: takes the flat depth form
        const double e = checked_structure(ref, m).error_for(acc.id, m.directed);
        if (std::isfinite(e)) structured = e;
    }
    if (!factor && !structured) {
        b.finite = false;
        return b;
    }
    mpq_class value;
    if (factor) value = *factor * w + extra;
    // Step B1b: a structured standard's bound from the data's group sums (structured.cpp), when it is tighter.
    if (structured) {
        const mpq_class data_bound(*structured);  // a double: exact as a rational
        if (!factor || data_bound < value) value = data_bound;
    }
    b.acc_value = value;
    // The overflow rule's growth factor is the flat one; without a flat bound any partial sum may overflow.
    mpq_class total_factor = factor ? *factor : pow2(4096);
    if (m.is_mixed()) {
        // Round once from acc to out: u_out·(|s| + B_acc) more (composition, DESIGN §3), plus η_out = 2^(emin-p) of
        // out when that rounding lands among the subnormals (|RN(x) - x| <= u|x| + η, Higham (2.8)).
        const mpq_class u_out = pow2(out.u_exponent() + u_shift);
        // Under flush-to-zero that rounding may flush a value below 2^emin of out: less than 2^emin_out.
        const mpq_class eta_out = m.ftz ? pow2(out.emin) : pow2(out.emin - out.precision + u_shift);
        value += u_out * (abs(s) + value) + eta_out;
        total_factor = total_factor + u_out * (1 + total_factor);
    }
    b.value = value;
    b.factor = total_factor;
    b.additive = extra;
    return b;
}

prepared_reference prepare(const reference& ref, const standard& model, const format_info& result) {
    prepared_reference p;
    p.ref = &ref;
    p.result = &result;
    p.model = model;
    p.acc = &result;
    if (model.is_mixed()) {
        if (model.output && *model.output != result.id)
            throw std::invalid_argument("standard '" + model.name() + "' describes results in " +
                                        std::string(info(*model.output).name) + ", but the result is " +
                                        std::string(result.name) + ": pass a result of the output format");
        p.acc = &info(model.accumulate.value_or(result.id));
    }
    // A tree of height h (tree(h), or a level tree@h) holds at most 2^h items per group.
    if (model.decides == rule::bound && !model.structured && model.levels.size() == 1 &&
        model.levels[0].order == level_order::tree && model.levels[0].height) {
        const std::uint64_t h = *model.levels[0].height;
        if (h < 64 && ref.count > (std::uint64_t{1} << h))
            throw std::invalid_argument("standard '" + model.name() + "': a tree of height " + std::to_string(h) +
                                        " holds at most " + std::to_string(std::uint64_t{1} << h) +
                                        " terms, and this reference has " + std::to_string(ref.count) +
                                        ": pass the height of the tree that was used (at least ceil(log2 n) = " +
                                        std::to_string(ceil_log2(ref.count)) +
                                        "; tree_height(shape, n) gives that of halving(256) and fold(16))");
    }
    if (model.decides == rule::bound) {
        const std::vector<level_shape> shapes = level_shapes(model, ref.count);  // throws for groups that do not fit
        for (std::size_t i = 0; i < shapes.size(); ++i) {
            const level& l = model.levels[i];
            if (l.order == level_order::tree && l.height && *l.height < 64 &&
                shapes[i].largest > (std::uint64_t{1} << *l.height))
                throw std::invalid_argument("standard '" + model.name() + "': level " + std::to_string(i + 1) +
                                            " is a tree of height at most " + std::to_string(*l.height) +
                                            " over groups of up to " + std::to_string(shapes[i].largest) +
                                            " items, more than such a tree holds: give its real height");
        }
    }
    if (model.fma && !ref.is_dot)
        throw std::invalid_argument("standard '" + model.name() + "': +fma applies to dot products, not to sums");
    if (model.ftz && ref.is_dot)
        throw std::invalid_argument("standard '" + model.name() + "': ftz: applies to sums; for a dot product a "
                                    "flushed subnormal factor moves its product by up to 2^emin times the other "
                                    "factor, which the reference does not bound. Judge it without ftz: on inputs "
                                    "without subnormal values, or sum the rounded products");
    const format_info& term = info(ref.term_format);
    const bool bound_model = model.decides == rule::bound;
    if (bound_model && !fits_in(term, *p.acc)) {
        const std::string mixed_name = "mixed:" + std::string(term.name) + ":" + std::string(result.name);
        if (ref.is_dot)
            throw std::invalid_argument(
                "standard '" + model.name() + "' accumulates in " + std::string(p.acc->name) + ", which cannot hold the " +
                std::string(term.name) + " inputs exactly: if the kernel rounds its inputs to " +
                std::string(p.acc->name) + ", build the reference from the rounded inputs (they are what it multiplied); "
                "if it accumulates in " + std::string(term.name) + " and rounds the result, use " + mixed_name);
        throw std::invalid_argument("standard '" + model.name() + "' accumulates in " + std::string(p.acc->name) +
                                    ", which cannot hold the " + std::string(term.name) + " terms exactly: use " +
                                    mixed_name + " or a result of a wider format");
    }

    const superaccumulator& sum = ref.sum;
    p.rn_bits = sum.round_bits(result, rounding::to_nearest_even);
    if (model.decides == rule::faithful) {
        p.rd_bits = sum.round_bits(result, rounding::downward);
        p.ru_bits = sum.round_bits(result, rounding::upward);
    }
    {
        const decoded d = decode_bits(result, p.rn_bits);
        if (d.is_inf || d.is_nan) p.ulp_exponent = result.emax - result.precision + 1;
        else if (d.significand == 0) p.ulp_exponent = result.subnormal_lsb_exponent();
        else {
            const int leading = d.exponent + 63 - std::countl_zero(d.significand);
            p.ulp_exponent = std::max(leading, result.emin) - result.precision + 1;
        }
    }
    const bool pos_inf = sum.positive_inf_count() > 0;
    const bool neg_inf = sum.negative_inf_count() > 0;
    p.nan_only = sum.has_nan() || (pos_inf && neg_inf);
    p.pos_inf_only = !p.nan_only && pos_inf;
    p.neg_inf_only = !p.nan_only && neg_inf;
    if (p.nan_only || !bound_model) return p;

    p.s = to_mpq(sum);
    const mpq_class w = to_mpq(ref.abs_sum);
    p.bound = compute_bound(ref, model, *p.acc, result, p.s, w);
    p.products_may_underflow = p.bound.products_may_underflow;
    // B >= S: every subset of the terms could go missing (or count twice) without leaving the bound, even all of them.
    {
        const double nan = std::numeric_limits<double>::quiet_NaN();
        const double inf = std::numeric_limits<double>::infinity();
        p.vacuous = !p.bound.finite || (sgn(w) > 0 && p.bound.value >= w);  // nothing to see in S = 0
        const double b = p.bound.finite ? to_double(p.bound.value, rounding::upward) : inf;
        auto ratio = [&](const mpq_class& of) {
            if (sgn(of) == 0) return sgn(p.bound.value) == 0 && p.bound.finite ? 0.0 : inf;
            return p.bound.finite ? to_double(p.bound.value / of, rounding::to_nearest_even) : inf;
        };
        p.sensitivity.of_sum = ratio(abs(p.s));
        p.sensitivity.of_abs_sum = ratio(w);
        p.sensitivity.of_largest = std::isnan(ref.largest) ? nan : (ref.largest == 0 ? (b == 0 ? 0 : inf) : b / ref.largest);
    }
    // Overflow rule: +Inf reachable when (1 + factor)·P >= threshold, P = (S + s)/2 the sum of positive terms. For
    // mixed, the accumulation format may overflow first when its range is the smaller one (float16 acc, float32 out).
    auto threshold_of = [&](const format_info& f) {
        return model.directed ? largest_finite(f) : overflow_threshold(f);
    };
    mpq_class threshold = threshold_of(result);
    if (p.acc != &result) threshold = std::min(threshold, threshold_of(*p.acc));
    const mpq_class positive = (w + p.s) / 2;
    const mpq_class negative = (w - p.s) / 2;
    if (!p.bound.finite) {
        p.pos_inf_reachable = p.neg_inf_reachable = true;
    } else {
        p.pos_inf_reachable = (1 + p.bound.factor) * positive + p.bound.additive >= threshold;
        p.neg_inf_reachable = (1 + p.bound.factor) * negative + p.bound.additive >= threshold;
        if (model.structured) {
            // The data bound also bounds every intermediate value: each is an exact partial sum (at most P, or N)
            // plus roundings that the group bounds above it contain. Overflow needs P + B_acc >= Ω; twice B_acc
            // for margin. (The flat factor alone may be infinite for long folds, which made Inf and NaN covered.)
            p.pos_inf_reachable = p.pos_inf_reachable && positive + 2 * p.bound.acc_value >= threshold;
            p.neg_inf_reachable = p.neg_inf_reachable && negative + 2 * p.bound.acc_value >= threshold;
        }
    }
    // Directed rounding does not make overflow sticky: a partial sum beyond max rounds to ±max under RZ (and RD for a
    // positive, RU for a negative one; IEEE 754-2019 §7.4). With terms of one sign the partial sums only grow, so a
    // saturated sum stays at ±max (or becomes Inf): ±max is the one result to add. With terms of both signs later terms
    // move it again (max + max - max = 0 under RZ) and no bound holds. An exact partial sum must exceed max (strictly)
    // to overflow.
    if (model.directed && p.bound.finite) {
        const bool beyond_positive = (1 + p.bound.factor) * positive + p.bound.additive > threshold;
        const bool beyond_negative = (1 + p.bound.factor) * negative + p.bound.additive > threshold;
        const bool both_signs = sgn(positive) > 0 && sgn(negative) > 0;
        p.overflow_saturates = both_signs && (beyond_positive || beyond_negative);
        p.saturates_positive = !both_signs && beyond_positive;
        p.saturates_negative = !both_signs && beyond_negative;
        p.saturation_value = threshold;
    }
    // mixed: the rounding from acc into a narrower out turns a negative accumulated value of magnitude at most half
    // out's smallest subnormal into -0.0 (IEEE 754-2019 §6.3 covers exact zeros only); such a value is reachable
    // when the accumulation's interval [s - B_acc, s + B_acc] holds a negative number.
    p.final_rounding_may_flush = model.is_mixed() &&
                                 result.subnormal_lsb_exponent() > p.acc->subnormal_lsb_exponent() &&
                                 (!p.bound.finite || p.s - p.bound.acc_value < 0);
    return p;
}

bool is_nan_bits(const format_info& f, std::uint64_t bits) { return decode_bits(f, bits).is_nan; }

// The decision for one result; with details, the verdict's strings and display numbers too.
verdict evaluate_rules(const prepared_reference& p, std::uint64_t r_bits, bool details);

// Six significant digits, for messages.
std::string format_double(double x) {
    std::ostringstream os;
    os.precision(6);
    os << x;
    return os.str();
}

// When a check is vacuous, a tighter standard or a smaller n that would see something.
std::string vacuity_advice(const prepared_reference& p) {
    const reference& ref = *p.ref;
    const format_info& acc = *p.acc;
    std::string out = "no lost or doubled part of the terms can be seen (B >= " +
                      std::string(ref.is_dot ? "T = Σ|x_i·y_i|" : "S = Σ|x_i|") + "), not even a result of 0: ";
    const std::vector<level>& lv = p.model.levels;
    if (p.model.ftz && p.bound.finite && p.bound.additive >= to_mpq(ref.abs_sum)) {
        // The flush-to-zero term alone reaches S: the cause is the terms' size against 2^emin, not n or the order.
        return out + "under ftz: the flush-to-zero term n·2^emin + (n-1)·(1+γ)·2^emin = " +
               format_double(to_double(p.bound.additive, rounding::upward)) + " (2^emin = 2^" +
               std::to_string(acc.emin) + " in " + std::string(acc.name) + ") alone is at least S = " +
               format_double(ref.abs_sum.round<double>(rounding::upward)) +
               ": the terms are too small against 2^emin for a flush-to-zero check to see any of them; judge "
               "data whose terms lie well above 2^emin (scaled by a power of two), or judge without ftz: when the "
               "hardware keeps subnormals";
    }
    if (!p.model.structured && !p.model.directed && !p.model.ftz && lv.size() == 1 &&
        lv[0].order == level_order::any && acc.precision < 64) {
        // (n-1)·u >= 1 from n - 1 >= 2^p on.
        out += "any_order in " + std::string(acc.name) + " is vacuous from n = " +
               std::to_string((std::uint64_t{1} << acc.precision) + 1) + " on; ";
    }
    out += "describe the kernel's structure (levels:fold/T,any for T threads in static chunks, "
           "levels:fold%G,tree:256,any for a grid-stride sum with a shared-memory halving tree per block and atomics "
           "over blocks, levels:fold%G,tree:32,fold:8,any for cub::BlockReduce's warp reductions, levels:fold/s,any "
           "for split-K) and "
           "build the reference with it, use a smaller n per check, or test on order-free data with exact "
           "(docs/choosing-a-standard.md)";
    return out;
}

verdict evaluate(const prepared_reference& p, std::uint64_t r_bits, bool details) {
    verdict v = evaluate_rules(p, r_bits, details);
    if (p.model.decides == rule::bound && !p.nan_only && !p.pos_inf_only && !p.neg_inf_only) {
        v.vacuous = p.vacuous;
        v.sensitivity = p.sensitivity;
        if (details && p.vacuous) v.advice = vacuity_advice(p);
    }
    return v;
}

verdict evaluate_rules(const prepared_reference& p, std::uint64_t r_bits, bool details) {
    const format_info& f = *p.result;
    const reference& ref = *p.ref;
    verdict v;
    v.standard = p.model.name();
    v.result_format = f.id;
    const decoded r = decode_bits(f, r_bits);
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    auto finish_special = [&](bool covered, std::string reason) {
        v.covered = covered;
        v.reason = std::move(reason);
        v.error = nan;
        v.ratio = covered ? 0 : inf;
        v.ulps = nan;
        v.bound = p.bound.finite ? to_double(p.bound.value, rounding::upward) : inf;
        return v;
    };
    if (details) {
        v.result = to_shortest_string(f, r_bits) + " (" + to_hex_string(f, r_bits) + ")";
        v.exact = ref.exact();
    }

    // Step C1: special terms decide alone.
    if (p.nan_only) return finish_special(r.is_nan, "a NaN term, or both +Inf and -Inf terms: only NaN is covered");
    // With Inf terms of one sign, the finite terms may still overflow to the other infinity (e.g. -Inf + max + max,
    // or a dot product whose finite product rounds to +Inf): then NaN is reachable too (bound models only).
    const bool bound_model = p.model.decides == rule::bound;
    if (p.pos_inf_only) {
        if (r.is_nan && bound_model && p.neg_inf_reachable)
            return finish_special(true, "+Inf terms, and the finite terms can overflow to -Inf: NaN is reachable");
        return finish_special(r.is_inf && !r.negative, "+Inf terms (and no -Inf): only +Inf is covered");
    }
    if (p.neg_inf_only) {
        if (r.is_nan && bound_model && p.pos_inf_reachable)
            return finish_special(true, "-Inf terms, and the finite terms can overflow to +Inf: NaN is reachable");
        return finish_special(r.is_inf && r.negative, "-Inf terms (and no +Inf): only -Inf is covered");
    }

    // Step C2: exact and faithful compare encodings.
    if (p.model.decides != rule::bound) {
        // any_zero_sign (DESIGN's any_zero_sign): either sign of an exact zero, as RD gives for x + (-x).
        const bool zero_sign = p.model.any_zero_sign && ref.sum.sign() == 0 && !ref.sum.has_nan() &&
                               ref.sum.positive_inf_count() == 0 && ref.sum.negative_inf_count() == 0 &&
                               r.significand == 0 && !r.is_nan && !r.is_inf;
        const bool exact_hit = r_bits == p.rn_bits || (r.is_nan && is_nan_bits(f, p.rn_bits)) || zero_sign;
        const bool faithful_hit = r_bits == p.rd_bits || r_bits == p.ru_bits || zero_sign;
        v.covered = p.model.decides == rule::exact ? exact_hit : faithful_hit;
        if (!r.is_nan && !r.is_inf && !decode_bits(f, p.rn_bits).is_inf) {
            const mpq_class err = value_to_mpq(f, r_bits) - to_mpq(ref.sum);
            v.error = to_double(err, rounding::to_nearest_even);
            v.ulps = to_double(err / pow2(p.ulp_exponent), rounding::to_nearest_even);
            if (details) v.error_exact = dyadic_decimal(err);
        } else {
            v.error = v.ulps = nan;
        }
        v.bound = 0;
        v.ratio = v.covered ? 0 : inf;
        if (!v.covered && details) {
            v.reason = p.model.decides == rule::exact
                           ? "the correctly rounded result is " + to_hex_string(f, p.rn_bits)
                           : "the faithful results are " + to_hex_string(f, p.rd_bits) + " and " +
                                 to_hex_string(f, p.ru_bits);
            // +0.0 for -0.0 terms only (math.fsum, numpy, torch and jax start their sums from +0.0), or -0.0 for a
            // zero sum (RD): the sign of an exact zero is all that differs.
            if (r.significand == 0 && !r.is_nan && !r.is_inf && decode_bits(f, p.rn_bits).significand == 0 &&
                !decode_bits(f, p.rn_bits).is_inf && !decode_bits(f, p.rn_bits).is_nan && ref.sum.sign() == 0)
                v.reason += "; the result differs in the sign of zero only (a sum that starts from +0.0, as "
                            "math.fsum and numpy's do, gives +0.0 for -0.0 terms): any_zero_sign accepts either sign";
        }
        return v;
    }

    // Step C3: overflow results, by the (1 + factor)·P >= Ω rule.
    if (r.is_nan)
        return finish_special(p.pos_inf_reachable && p.neg_inf_reachable,
                              "finite terms: NaN needs both +Inf and -Inf to be reachable by overflow");
    if (r.is_inf) {
        const bool reachable = r.negative ? p.neg_inf_reachable : p.pos_inf_reachable;
        return finish_special(reachable, reachable ? "overflow is reachable: (1 + bound factor)·P >= the overflow "
                                                     "threshold"
                                                   : "finite terms whose partial sums cannot reach the overflow "
                                                     "threshold");
    }
    // Step C4: signed zero.
    if (r.significand == 0 && r.negative && !ref.sum.all_negative_zero() && !p.model.any_zero_sign &&
        !p.model.directed && !p.model.ftz && !p.products_may_underflow && !p.final_rounding_may_flush) {
        v.covered = false;
        v.reason = "-0.0: round-to-nearest produces -0.0 only when every term is -0.0 (a flush-to-zero kernel: "
                   "ftz:" + p.model.name() + "; either sign of zero: any_zero_sign)";
        const mpq_class err = -p.s;
        v.error = to_double(err, rounding::to_nearest_even);
        v.bound = p.bound.finite ? to_double(p.bound.value, rounding::upward) : inf;
        v.ratio = inf;
        v.ulps = to_double(err / pow2(p.ulp_exponent), rounding::to_nearest_even);
        if (details) v.error_exact = dyadic_decimal(err);
        return v;
    }
    // Step C5: |r - s| <= B, exactly (every finite result when a directed-rounding overflow may saturate).
    const mpq_class err = value_to_mpq(f, r_bits) - p.s;
    const mpq_class abs_err = abs(err);
    const mpq_class r_value = value_to_mpq(f, r_bits);
    const bool saturated = (p.saturates_positive && r_value == p.saturation_value) ||
                           (p.saturates_negative && r_value == -p.saturation_value);
    const bool within = !p.bound.finite || abs_err <= p.bound.value;
    v.covered = within || p.overflow_saturates || saturated;
    if (!within && p.overflow_saturates)
        v.reason = "directed rounding, terms of both signs: a partial sum may overflow and saturate at the largest "
                   "finite value (IEEE 754-2019 §7.4), and later terms move it again: no bound holds";
    else if (!within && saturated)
        v.reason = "directed rounding: the terms' partial sums may exceed the largest finite value, which RZ (and RD "
                   "or RU on that side) gives instead of Inf (IEEE 754-2019 §7.4)";
    v.error = to_double(err, rounding::to_nearest_even);
    v.bound = p.bound.finite ? to_double(p.bound.value, rounding::upward) : inf;
    if (!p.bound.finite) v.ratio = 0;
    else if (sgn(p.bound.value) == 0) v.ratio = sgn(abs_err) == 0 ? 0 : inf;
    else v.ratio = to_double(abs_err / p.bound.value, rounding::to_nearest_even);
    v.ulps = to_double(err / pow2(p.ulp_exponent), rounding::to_nearest_even);
    if (details) v.error_exact = dyadic_decimal(err);
    return v;
}

// ---- covers() over arrays: the binary64 filter first, the exact decision where it cannot decide ----------------
//
// Per reference the filter encloses s and B in binary64 (the accumulators' cached enclosures, the flat part of B
// enclosed once per n and formats from its exact rational); per result it decides |r - s| <= B in a few binary64
// operations when r is clearly inside or outside, and leaves the rest (r within a few ulps of s ± B, NaN, Inf,
// -0.0, references with special terms or values beyond binary64, directed overflow) to evaluate(), the exact path.
// covers_filter.h and docs/algorithms/covers-filter.md have the proof; the verdicts are those of the exact path.

std::atomic<std::uint64_t> exact_path_elements{0};   // elements whose verdict the exact path decided
std::atomic<std::uint64_t> exact_ratio_elements{0};  // candidates for the worst whose ratio it computed
std::atomic<int> block_lanes_cap{8};  // detail::set_covers_block_lanes (tests); 0: no block filter

// ---- Step K5: the block filter's versions (covers_block.h), one per instruction set, chosen once at run time ----
// and of Step P5's kernel over a producer's elements (covers_source_block.h), overloaded on their inputs.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(EXACTREF_NO_MULTIVERSION)
#define EXACTREF_COVERS_DISPATCH 1
template <class In, class Params, class Out>
EXACTREF_TARGET_V4 void decide_lanes_v4(const In& in, std::size_t count, const Params& p, const Out& out) {
    detail::decide_lanes<8>(in, count, p, out);
}
template <class In, class Params, class Out>
EXACTREF_TARGET_V3 void decide_lanes_v3(const In& in, std::size_t count, const Params& p, const Out& out) {
    detail::decide_lanes<4>(in, count, p, out);
}
#endif

// The lanes the block filter runs with: the CPU's widest (EXACTREF_SIMD caps it), capped by the tests' setting;
// 0 turns it off (compact_decider::decide_fast decides element by element).
int block_lanes() {
    detail::check_simd_setting();  // a bad EXACTREF_SIMD is an error, not ignored
    const int cap = block_lanes_cap.load(std::memory_order_relaxed);
#ifdef EXACTREF_COVERS_DISPATCH
    const int host = detail::host_simd_lanes();
#else
    const int host = 1;
#endif
    if (cap <= 0) return 0;
    if (cap >= 8 && host >= 8) return 8;
    if (cap >= 4 && host >= 4) return 4;
    return 1;
}

template <class In, class Params, class Out>
void decide_lanes_at(int lanes, const In& in, std::size_t count, const Params& p, const Out& out) {
#ifdef EXACTREF_COVERS_DISPATCH
    if (lanes == 8) return decide_lanes_v4(in, count, p, out);
    if (lanes == 4) return decide_lanes_v3(in, count, p, out);
#endif
    (void)lanes;
    detail::decide_lanes<1>(in, count, p, out);
}

// What the flat part of B depends on besides the standard and the result format (compute_flat).
struct filter_key {
    std::uint64_t count = 0;
    dtype term = dtype::float64;
    bool is_dot = false, has_initial = false, product_may_underflow = false;
    int min_product_exponent = 0;
    bool operator==(const filter_key&) const = default;
};
filter_key key_of(const reference& r) {
    return {r.count, r.term_format, r.is_dot, r.has_initial, r.product_may_underflow, r.min_product_exponent};
}

detail::nonnegative_interval enclose(const mpq_class& q) {
    return {to_double(q, rounding::downward), to_double(q, rounding::upward)};
}
detail::nonnegative_interval point(double x) { return {x, x}; }

// One reference's facts for the filter; usable = false sends all its results to the exact path.
struct filter_reference {
    bool usable = false;
    detail::filter_bounds bounds;                  // rule::bound
    std::uint64_t rn_bits = 0, rd_bits = 0, ru_bits = 0;  // exact, faithful
};

class array_filter {
public:
    array_filter(const standard& model, const format_info& result) : model_(model), result_(result) {
        acc_ = model.is_mixed() ? &info(model.accumulate.value_or(result.id)) : &result;
        if (model.structured) structure_ = model.structure();
        const int u_shift = model.directed ? 1 : 0;
        if (model.is_mixed()) {
            u_out_ = enclose(pow2(result.u_exponent() + u_shift));
            eta_out_ = enclose(model.ftz ? pow2(result.emin) : pow2(result.emin - result.precision + u_shift));
        }
        auto threshold_of = [&](const format_info& f) {
            return model.directed ? largest_finite(f) : overflow_threshold(f);
        };
        mpq_class threshold = threshold_of(result);
        if (acc_ != &result) threshold = std::min(threshold, threshold_of(*acc_));
        threshold_lo_ = to_double(threshold, rounding::downward);
    }

    // Throws exactly as prepare() for this reference (the first reference of each key runs prepare() itself).
    void facts(const reference& ref, filter_reference& out) {
        const filter_key key = key_of(ref);
        if (!have_key_ || !(key == key_)) set_key(ref, key);
        out.usable = false;
        const superaccumulator& sum = ref.sum;
        if (sum.has_nan() || sum.positive_inf_count() > 0 || sum.negative_inf_count() > 0) return;
        if (model_.decides != rule::bound) {
            out.rn_bits = sum.round_bits(result_, rounding::to_nearest_even);
            if (model_.decides == rule::faithful) {
                out.rd_bits = sum.round_bits(result_, rounding::downward);
                out.ru_bits = sum.round_bits(result_, rounding::upward);
            }
            out.usable = true;
            return;
        }
        const superaccumulator::binary64_enclosure s = sum.enclosure();
        const superaccumulator::binary64_enclosure w = ref.abs_sum.enclosure();
        double data = std::numeric_limits<double>::infinity();  // the structured data bound (a double, exact)
        if (model_.structured && !model_.ftz) {  // ftz: takes the flat depth form (compute_bound)
            const structure_bound* sb = nullptr;
            for (const structure_bound& b : ref.structures)
                if (b.structure == structure_) sb = &b;
            const std::uint64_t products = ref.count - (ref.is_dot && ref.has_initial && ref.count > 0 ? 1 : 0);
            if (sb == nullptr || sb->leaves != products || (ref.is_dot && ref.has_initial)) return;  // throws there
            data = sb->error_for(acc_->id, model_.directed);
        }
        fill_bounds(s.lo, s.hi, w.lo, w.hi, data, out);
    }

    // The facts of an element its producer holds in compact form (detail::element_facts: the enclosures and the
    // key fields a reference would give). key_ref carries the key fields only (prepare() reads nothing else of it
    // for its errors); a structured standard's data bound is not there, so its elements take the exact path, which
    // throws as for the element's own reference.
    void facts(const reference& key_ref, const detail::element_facts& e, filter_reference& out) {
        const filter_key key = key_of(key_ref);
        if (!have_key_ || !(key == key_)) set_key(key_ref, key);
        out.usable = false;
        if (model_.decides != rule::bound) {
            out.rn_bits = e.rn_bits;
            out.rd_bits = e.rd_bits;
            out.ru_bits = e.ru_bits;
            out.usable = true;
            return;
        }
        if (model_.structured && !model_.ftz) return;
        fill_bounds(e.s_lo, e.s_hi, e.w_lo, e.w_hi, std::numeric_limits<double>::infinity(), out);
    }

    // The flat part of B (factor·W + extra) for key_ref's key, set up as facts() would; false without a finite
    // factor.
    bool flat_of(const reference& key_ref, detail::nonnegative_interval& factor, detail::nonnegative_interval& extra) {
        const filter_key key = key_of(key_ref);
        if (!have_key_ || !(key == key_)) set_key(key_ref, key);
        factor = factor_;
        extra = extra_;
        return has_factor_;
    }

    // A lower bound of the overflow threshold the directed rule compares with (prepare()).
    double threshold_lo() const noexcept { return threshold_lo_; }

    // The flat part of B for the current key: B_acc = factor·W + extra (compute_flat), as enclosures.
    void set_flat(bool has_factor, detail::nonnegative_interval factor, detail::nonnegative_interval extra) {
        has_factor_ = has_factor;
        constexpr double inf = std::numeric_limits<double>::infinity();
        factor_ = has_factor_ ? factor : detail::nonnegative_interval{inf, inf};
        extra_ = extra;
        // prepare()'s overflow growth factor: the flat factor (2^4096 without one), mixed's rounding on top.
        total_factor_ = factor_;
        if (model_.is_mixed()) total_factor_ = total_factor_ + u_out_ * (point(1) + total_factor_);
    }

    // The filter's facts from enclosures of s and S = W and the data bound (+inf: none), under the current flat part.
    void fill_bounds(double s_lo, double s_hi, double w_lo, double w_hi, double data, filter_reference& out) const {
        out.usable = false;
        struct {
            double lo, hi;
        } s{s_lo, s_hi}, w{w_lo, w_hi};
        if (!(std::isfinite(s.lo) && std::isfinite(s.hi) && std::isfinite(w.hi) && w.lo >= 0)) return;
        const bool unbounded = !has_factor_ && !std::isfinite(data);
        detail::nonnegative_interval b{0, 0};
        if (!unbounded) {
            // Step F1: B_acc = min(factor·W + extra, data), then mixed's u_out·(|s| + B_acc) + η_out.
            if (has_factor_) {
                b = factor_ * detail::nonnegative_interval{w.lo, w.hi} + extra_;
                if (std::isfinite(data)) b = min(b, point(data));
            } else {
                b = point(data);
            }
            if (model_.is_mixed()) {
                const detail::nonnegative_interval abs_s =
                    s.lo >= 0 ? detail::nonnegative_interval{s.lo, s.hi}
                              : (s.hi <= 0 ? detail::nonnegative_interval{-s.hi, -s.lo}
                                           : detail::nonnegative_interval{0, std::max(-s.lo, s.hi)});
                b = b + u_out_ * (abs_s + b) + eta_out_;
            }
            // Directed rounding: a partial sum beyond max saturates (prepare()); only when that is impossible.
            if (model_.directed) {
                const detail::nonnegative_interval grow = point(1) + total_factor_;
                const detail::nonnegative_interval positive =
                    (detail::nonnegative_interval{w.lo, w.hi} + point(std::max(s.hi, 0.0))) * point(0.5);
                const detail::nonnegative_interval negative =
                    (detail::nonnegative_interval{w.lo, w.hi} + point(std::max(-s.lo, 0.0))) * point(0.5);
                if (!((grow * positive + extra_).hi <= threshold_lo_ && (grow * negative + extra_).hi <= threshold_lo_))
                    return;
            }
            if (!std::isfinite(b.hi)) return;
        }
        out.bounds = detail::make_filter_bounds(s.lo, s.hi, b, unbounded);
        out.usable = true;
        return;
    }

private:
    void set_key(const reference& ref, const filter_key& key) {
        (void)prepare(ref, model_, result_);  // the errors prepare() throws for this n and these formats
        key_ = key;
        have_key_ = true;
        if (model_.decides != rule::bound) return;
        const flat_bound flat = compute_flat(ref, model_, *acc_);
        set_flat(flat.factor.has_value(), flat.factor ? enclose(*flat.factor) : detail::nonnegative_interval{},
                 enclose(flat.extra));
    }

    const standard& model_;
    const format_info& result_;
    const format_info* acc_ = nullptr;
    std::string structure_;
    bool have_key_ = false;
    filter_key key_;
    bool has_factor_ = false;
    detail::nonnegative_interval factor_, extra_, total_factor_, u_out_, eta_out_;
    double threshold_lo_ = 0;
};

template <class T>
double result_value(T r) noexcept {
    if constexpr (std::is_same_v<T, double>) return r;
    else if constexpr (std::is_same_v<T, float>) return static_cast<double>(r);  // exact (no DAZ: the guard)
    else return to_double_exact(format_traits<T>::info, format_traits<T>::to_bits(r));
}

// Every element's decision, and (with ratios) enclosures of the ratio evaluate() reports.
struct array_decisions {
    // Backed by huge pages when large (first-touch faults of 10^7 ratios cost more than the filter deciding them).
    template <class T>
    using large_vector = std::vector<T, compact_reference_array::large_array_allocator<T>>;
    large_vector<std::uint8_t> covered;
    large_vector<double> ratio_lo, ratio_hi;
    std::uint64_t exact_path = 0;
};

// The filter's decision of element i from its facts (a usable filter_reference): true when decided, with covered[i]
// (and, with ratios, the ratio enclosure) set; false sends the element to the exact path. Shared by every array path.
template <class T>
bool decide_by_filter(std::span<const T> results, std::size_t i, const filter_reference& facts, const standard& model,
                      bool ratios, array_decisions& out) {
    using tr = format_traits<T>;
    using bits_t = typename tr::bits_type;
    const format_info& f = tr::info;
    const bits_t sign_bit = static_cast<bits_t>(bits_t{1} << (f.storage_bits - 1));
    const bits_t bits = tr::to_bits(results[i]);
    const bits_t magnitude = static_cast<bits_t>(bits & ~sign_bit);
    if (model.decides == rule::bound) {
        if (bits == sign_bit) return false;  // -0.0 has its own rule
        if (!ratios) {  // the decision only (covers_flags)
            const detail::filter_verdict v = detail::filter_decision(result_value(results[i]), facts.bounds);
            if (v == detail::filter_verdict::undecided) return false;
            out.covered[i] = v == detail::filter_verdict::covered;
            return true;
        }
        const detail::filter_outcome o = detail::filter_element(result_value(results[i]), facts.bounds);
        if (o.verdict == detail::filter_verdict::undecided) return false;
        out.covered[i] = o.verdict == detail::filter_verdict::covered;
        out.ratio_lo[i] = o.ratio_lo;
        out.ratio_hi[i] = o.ratio_hi;
        return true;
    }
    const bool hit = bits == facts.rn_bits ||
                     (model.decides == rule::faithful && (bits == facts.rd_bits || bits == facts.ru_bits));
    if (!hit && magnitude == 0) return false;  // a zero may be accepted for its sign (any_zero_sign)
    out.covered[i] = hit;
    if (ratios) out.ratio_lo[i] = out.ratio_hi[i] = hit ? 0 : std::numeric_limits<double>::infinity();
    return true;
}

// ref_at(i) gives the reference of element i; one_reference says it is the same object for every i.
template <class T, class RefAt>
array_decisions decide_array(std::span<const T> results, RefAt&& ref_at, bool one_reference, const standard& model,
                             bool ratios) {
    using tr = format_traits<T>;
    const format_info& f = tr::info;
    const std::size_t n = results.size();
    array_decisions out;
    out.covered.assign(n, 0);
    if (ratios) {
        out.ratio_lo.assign(n, 0);
        out.ratio_hi.assign(n, 0);
    }
    const detail::default_fp_environment environment;
    array_filter filter(model, f);
    std::optional<prepared_reference> shared;  // the exact path's preparation of the one reference
    filter_reference facts;
    const reference* facts_of = nullptr;
    using bits_t = typename tr::bits_type;
    const bits_t sign_bit = static_cast<bits_t>(bits_t{1} << (f.storage_bits - 1));
    const bits_t special = static_cast<bits_t>(static_cast<std::uint64_t>(f.special_exponent_field())
                                               << (f.precision - 1));
    constexpr std::size_t ahead = 16;  // references are ~2.3 KB apart: fetch the words facts() reads early
    for (std::size_t i = 0; i < n; ++i) {
        if (!one_reference && i + ahead < n) {
            const reference& next = ref_at(i + ahead);
            const char* abs_sum = reinterpret_cast<const char*>(&next.abs_sum);
            __builtin_prefetch(abs_sum - 64);  // the end of sum: its special state and enclosure
            __builtin_prefetch(abs_sum - 1);
            __builtin_prefetch(abs_sum + sizeof(superaccumulator) - 64);  // the end of abs_sum, then the fields
            __builtin_prefetch(abs_sum + sizeof(superaccumulator));
        }
        const reference& ref = ref_at(i);
        if (&ref != facts_of) {
            filter.facts(ref, facts);
            facts_of = &ref;
        }
        const bits_t magnitude = static_cast<bits_t>(tr::to_bits(results[i]) & ~sign_bit);
        if (facts.usable && magnitude < special && decide_by_filter(results, i, facts, model, ratios, out))
            continue;  // finite results only
        ++out.exact_path;
        std::optional<prepared_reference> own;
        if (one_reference && !shared) shared = prepare(ref, model, f);
        if (!one_reference) own = prepare(ref, model, f);
        const verdict v = evaluate(one_reference ? *shared : *own, tr::to_bits(results[i]), false);
        out.covered[i] = v.covered;
        if (ratios) out.ratio_lo[i] = out.ratio_hi[i] = std::isnan(v.ratio) ? 0 : v.ratio;
    }
    exact_path_elements.fetch_add(out.exact_path, std::memory_order_relaxed);
    return out;
}

template <class T>
array_verdict covers_many(std::span<const T> results, const reference* single, const reference_array* many,
                          const standard& model) {
    using tr = format_traits<T>;
    if (many && many->elements.size() != results.size())
        throw std::invalid_argument("covers: " + std::to_string(results.size()) + " results for " +
                                    std::to_string(many->elements.size()) +
                                    " references: pass one result per reference element (row-major)");
    auto ref_at = [&](std::size_t i) -> const reference& { return single ? *single : many->elements[i]; };
    array_verdict out;
    out.size = results.size();
    if (results.empty()) {
        if (single) (void)prepare(*single, model, tr::info);  // the errors of a standard that does not apply
        out.worst.covered = true;
        out.worst.standard = model.name();
        return out;
    }
    const array_decisions d = decide_array(results, ref_at, single != nullptr, model, true);
    for (std::size_t i = 0; i < results.size(); ++i) {
        if (d.covered[i]) continue;
        ++out.violations;
        if (out.first_violations.size() < 8) out.first_violations.push_back(i);
    }
    out.covered = out.violations == 0;
    // The worst: any violation beats any covered element; then the largest ratio (as evaluate() rounds it), the first
    // on ties. Only elements whose ratio enclosure reaches the largest lower end can be it; those not known exactly
    // are evaluated exactly (once per distinct result for one reference).
    const bool among_violations = out.violations > 0;
    auto in_class = [&](std::size_t i) { return !among_violations || !d.covered[i]; };
    double floor = -1;
    for (std::size_t i = 0; i < results.size(); ++i)
        if (in_class(i)) floor = std::max(floor, d.ratio_lo[i]);
    std::unordered_map<std::uint64_t, double> by_bits;  // one reference: the exact ratio of a result seen before
    std::optional<prepared_reference> shared;
    double worst_ratio = -1;
    std::uint64_t exact_ratios = 0;
    bool have_last = false;  // one reference: the previous undecided candidate's result and ratio
    std::uint64_t last_bits = 0;
    double last_ratio = 0;
    for (std::size_t i = 0; i < results.size(); ++i) {
        if (!in_class(i) || d.ratio_hi[i] < floor) continue;
        double ratio = d.ratio_lo[i];
        if (d.ratio_lo[i] != d.ratio_hi[i]) {
            const std::uint64_t bits = tr::to_bits(results[i]);
            const auto seen = single && !(have_last && bits == last_bits) ? by_bits.find(bits) : by_bits.end();
            if (single && have_last && bits == last_bits) {
                ratio = last_ratio;
            } else if (seen != by_bits.end()) {
                ratio = seen->second;
            } else {
                ++exact_ratios;
                std::optional<prepared_reference> own;
                if (single && !shared) shared = prepare(*single, model, tr::info);
                if (!single) own = prepare(ref_at(i), model, tr::info);
                const verdict v = evaluate(single ? *shared : *own, bits, false);
                ratio = std::isnan(v.ratio) ? 0 : v.ratio;
                if (single) by_bits.emplace(bits, ratio);
            }
            have_last = true;
            last_bits = bits;
            last_ratio = ratio;
        }
        if (ratio > worst_ratio) {
            worst_ratio = ratio;
            out.worst_index = i;
        }
    }
    exact_ratio_elements.fetch_add(exact_ratios, std::memory_order_relaxed);
    const prepared_reference p = prepare(ref_at(out.worst_index), model, tr::info);
    out.worst = evaluate(p, tr::to_bits(results[out.worst_index]), true);
    return out;
}

// Compact reference arrays (scatter.h): the filter's facts come from the cells, whose s and S are enclosed in O(1),
// and the flat part of B depends on an element's n only — through its depth unless ftz: is set — so it is computed
// once per distinct depth (n for ftz:) and, for the plain any_order bound (n-1)·u, in closed form. Elements the filter
// cannot decide are built as full references and take the exact path.
class compact_decider {
public:
    compact_decider(const compact_reference_array& refs, const standard& model, const format_info& result)
        : refs_(refs), model_(model), result_(result), filter_(model, result), reader_(refs),
          summaries_(model.decides == rule::bound ? refs.filter_summaries() : nullptr) {
        acc_ = model.is_mixed() ? &info(model.accumulate.value_or(result.id)) : &result;
        key_ref_.term_format = refs.term_format();
        // A structured standard's data bounds, when the array keeps them per element (keep_structures); ftz: takes
        // the flat depth form (compute_bound).
        if (model.decides == rule::bound && model.structured && !model.ftz)
            data_ = refs.structure_bounds(model.structure(), acc_->id, model.directed);
        const bool one_level_any = model.levels.size() == 1 && model.levels[0].order == level_order::any;
        plain_any_ = model.decides == rule::bound && one_level_any && !model.directed && !model.ftz;
        unit_roundoff_ = std::ldexp(1.0, acc_->u_exponent());
        gamma_unit_ = std::ldexp(1.0, acc_->u_exponent() + (model.directed ? 1 : 0));
        fast_ = summaries_ != nullptr && !model.is_mixed() && !model.ftz;
        if (fast_) {
            // A structure that cannot describe 0 items says so here; its empty elements take the general path.
            try {
                zero_has_factor_ = gamma_enclosure(one_level_any ? 0 : structure_depth(model, 0), zero_factor_);
                if (zero_has_factor_ && model.directed) zero_saturation_w_ = saturation_limit(zero_factor_.hi);
            } catch (const std::invalid_argument&) {
                zero_has_factor_ = false;
            }
        }
        one_level_any_ = one_level_any;
        using source = detail::compact_lane_params::factor_source;
        lane_params_.source = plain_any_ ? source::plain : one_level_any ? source::gamma : source::table;
        lane_params_.directed = model.directed;
        lane_params_.data_bound = data_ != nullptr;
        lane_params_.unit = plain_any_ ? unit_roundoff_ : gamma_unit_;
        lane_params_.threshold_lo = filter_.threshold_lo();
        // The errors prepare() throws for this standard and these formats (a tree too low for an element's n): they
        // grow with n, so the smallest and largest n of the array decide. An array that keeps other structures than
        // the standard's refuses it, as a reference built without it (checked_structure).
        if (refs.size() > 0) {
            const auto [lo, hi] = refs.count_range();
            for (const std::uint64_t c : {lo, hi}) {
                key_ref_.count = c;
                if (model.structured && (refs.structures().empty() || data_ != nullptr)) add_flat_structure(key_ref_);
                try {
                    (void)prepare(key_ref_, model, result);
                } catch (const std::invalid_argument& e) {
                    if (refs.is_scan() && splits_into_groups(model)) throw_scan_groups(model, lo);
                    if (splits_into_groups(model) && !groups_fit(model, c)) throw_short_element(refs, c, e);
                    throw;
                }
            }
        }
    }

    // A structure with "/N" or "%N" groups describes a sum of a fixed length cut into N groups; a scan's prefixes
    // have every length from 1 (0: exclusive) up, so the first prefixes cannot hold N groups. level_shapes' advice
    // (fewer groups) does not apply there: say which standards describe a scan (docs/scatter.md, "Which standard").
    static bool splits_into_groups(const standard& model) {
        return std::any_of(model.levels.begin(), model.levels.end(), [](const level& l) {
            return l.groups == level_groups::chunks || l.groups == level_groups::interleaved;
        });
    }
    [[noreturn]] static void throw_scan_groups(const standard& model, std::uint64_t shortest) {
        throw std::invalid_argument(
            "standard '" + model.name() + "' cuts each sum into a fixed number of groups (/N or %N), but the prefixes "
            "of a scan have every length from " + std::to_string(shortest) + " up, and the short prefixes cannot "
            "hold that many groups, so it describes no scan. For a scan (cumsum) judge each prefix by the scan's "
            "algorithm: 'any_order' for a "
            "sequential scan (np.cumsum, torch.cumsum on CPU) or when the depth is unknown (CUB, thrust, "
            "torch.cumsum on CUDA), 'tree' with height=H for a parallel scan whose every prefix is a tree of height "
            "at most H (Hillis-Steele: ceil(log2 length); Blelloch: twice that), or a structure of consecutive "
            "groups ('levels:fold:N,any', 'levels:fold'), which fits prefixes of every length");
    }

    // An element with too few terms for the standard's group counts (an empty segment, a short row): name the first
    // one, since the standard's own advice (fewer groups, or exact for an empty sum) is about one sum, not an array.
    static bool groups_fit(const standard& model, std::uint64_t count) {
        try {
            (void)level_shapes(model, count);
            return true;
        } catch (const std::invalid_argument&) {
            return false;
        }
    }
    [[noreturn]] static void throw_short_element(const compact_reference_array& refs, std::uint64_t count,
                                                 const std::invalid_argument& e) {
        std::size_t first = 0;
        while (first + 1 < refs.size() && refs.count(first) != count) ++first;
        throw std::invalid_argument(
            std::string(e.what()) + " — element " + std::to_string(first) + " of the array has " +
            std::to_string(count) + (count == 1 ? " term" : " terms") + " (an empty or short segment or row); a "
            "structure with /N or %N groups describes only sums of at least N terms: judge the array with a "
            "structure of consecutive groups ('levels:fold:N,any'), with 'any_order', or judge the short elements "
            "apart");
    }

    // Element i as a full reference, with what prepare() needs of a structured standard: its kept data bound, or,
    // when none is kept per element, +inf, so the flat bound of the structure decides (never tighter than the truth).
    void materialize(std::size_t i, reference& out) const { refs_.element(i, model_, out); }

    // Step K4b: narrows the ratio enclosure [lo, hi] of a candidate for the worst element (a filter decision: r is
    // finite and not -0.0) from its cell's exact s: e = |r - s| enclosed by RD and RU (integer operations), B by the
    // filter's own [b_lo, b_hi], so F3's quotients are off by a few ulps of the ratio instead of by one ulp of s
    // relative to B. False (nothing changed) without a usable cell or bound.
    bool refine_ratio(std::size_t i, double r, double& lo, double& hi) {
        if (model_.decides != rule::bound) return false;
        filter_reference f;
        if (!facts(i, f) || f.bounds.unbounded) return false;
        double e_lo = 0, e_hi = 0;
        if (!reader_.error_enclosure(i, r, e_lo, e_hi)) return false;
        if (e_hi == 0) {  // r = s exactly (RU of |r - s| is 0 only for 0): the exact path's ratio is 0
            lo = hi = 0;
            return true;
        }
        constexpr double inf = std::numeric_limits<double>::infinity();
        const double b_lo = f.bounds.b_lo, b_hi = f.bounds.b_hi;
        const double ratio_hi = b_lo > 0 ? detail::next_up(e_hi / b_lo) : inf;
        const double ratio_lo = b_hi > 0 ? detail::next_down(e_lo / b_hi) : (e_lo > 0 ? inf : 0);
        lo = std::max(lo, ratio_lo);
        hi = std::min(hi, ratio_hi);
        return true;
    }

    // The filter's facts of element i; false sends it to the exact path.
    bool facts(std::size_t i, filter_reference& out) {
        out.usable = false;
        if (model_.decides != rule::bound) return facts_by_rounding(i, out);
        // The kept summary (24 bytes, compact_reference_array::filter_summary): RD of s and S, RU the next double up
        // when inexact, so the pass streams 24 bytes per element instead of rebuilding each cell's enclosure.
        using summary = compact_reference_array::filter_summary;
        const summary& e = summaries_[i];
        if (e.word & summary::unusable) return false;
        compact_reference_array::filter_facts f;
        f.count = e.word & summary::count_mask;
        f.s_lo = e.s_lo;
        f.s_hi = summary::upper(e.s_lo, (e.word >> 61) & 1);
        f.w_lo = e.w_lo;
        f.w_hi = summary::upper(e.w_lo, (e.word >> 62) & 1);
        return facts_from(f, data_of(i), out);
    }

    // The fused filter of one element from its kept summary, for sums without mixed or ftz: B = factor·S with factor
    // (n - 1)·u or γ_depth. Steps F1-F3 as filter_element and fill_bounds compute them, on the same enclosures and
    // with the same outward rounding, without the intermediate structs. False sends the element to the general path
    // (which decides it, or the exact path): n = 0, no finite factor, non-finite enclosures, directed overflow.
    bool fast() const noexcept { return fast_; }
    bool decide_fast(std::size_t i, double r, bool ratios, std::uint8_t& covered, double& ratio_lo, double& ratio_hi) {
        using summary = compact_reference_array::filter_summary;
        const summary& e = summaries_[i];
        if (e.word & summary::unusable) return false;
        const std::uint64_t n = e.word & summary::count_mask;
        double f_lo, f_hi, saturation_w = 0;
        if (plain_any_) {
            if (n > exact_in_binary64) return false;
            f_lo = f_hi = n == 0 ? 0.0 : static_cast<double>(n - 1) * unit_roundoff_;  // exact
        } else if (n == 0) {  // no terms: the factor of depth structure_depth(model, 0), enclosed once
            if (!zero_has_factor_) return false;
            f_lo = zero_factor_.lo;
            f_hi = zero_factor_.hi;
            saturation_w = zero_saturation_w_;
        } else {
            if (n > exact_in_binary64) return false;
            const recent_count& slot = factor_of(n);
            if (!slot.has_factor) {
                if (data_of(i) < std::numeric_limits<double>::infinity()) return false;  // bounded by the data
                return unbounded(e, covered, ratio_lo, ratio_hi);
            }
            f_lo = slot.factor.lo;
            f_hi = slot.factor.hi;
            saturation_w = slot.saturation_w;
        }
        const double s_lo = e.s_lo, s_hi = summary::upper(e.s_lo, (e.word >> 61) & 1);
        const double w_lo = e.w_lo, w_hi = summary::upper(e.w_lo, (e.word >> 62) & 1);
        constexpr double inf = std::numeric_limits<double>::infinity();
        if (!(std::fabs(s_lo) < inf && std::fabs(s_hi) < inf && w_hi < inf && w_lo >= 0)) return false;
        // Step F1: B in [b_lo, b_hi] (one RN per end, widened by one ulp; exact when the factor is 0 or a point),
        // then min(B, data) with a kept structured data bound (fill_bounds).
        detail::nonnegative_interval b = detail::nonnegative_interval{f_lo, f_hi} *
                                         detail::nonnegative_interval{w_lo, w_hi};
        if (data_ != nullptr) b = min(b, point(data_[i]));
        if (!(b.hi < inf)) return false;
        // Step K3b, directed rounding: no partial sum can reach the saturation threshold. The quantity fill_bounds
        // encloses, (1 + factor)·P with P <= (S + |s|)/2 <= S <= w_hi the sum of the terms of one sign, is at most
        // w_hi·g <= threshold_lo when w_hi <= saturation_w (saturation_limit). Others take fill_bounds's own test.
        if (model_.directed && !(w_hi <= saturation_w)) return false;
        // Step F2.
        const double covered_below = detail::next_down(b.lo), violated_above = detail::next_up(b.hi);
        const double d1 = r - s_lo, d2 = s_hi - r;
        if (d1 <= covered_below && d2 <= covered_below) covered = 1;
        else if (-d1 > violated_above || -d2 > violated_above) covered = 0;
        else return false;
        if (!ratios) return true;
        // Step F3.
        const double up = std::max(d1, d2);
        if (up == 0) {
            ratio_lo = ratio_hi = 0;
            return true;
        }
        const double e_hi = detail::next_up(up), e_lo = detail::next_down(std::max({0.0, -d1, -d2}));
        // Step K4a: a covered element whose ratio enclosure stays below the worst-candidate floor needs no ratio.
        if (covered && e_hi <= detail::next_down(below_floor_ * b.lo)) {
            ratio_lo = ratio_hi = below_floor;
            return true;
        }
        ratio_hi = b.lo > 0 ? detail::next_up(e_hi / b.lo) : inf;
        if (b.hi > 0) ratio_lo = detail::next_down(e_lo / b.hi);
        else ratio_lo = e_lo > 0 ? inf : 0;
        return true;
    }

    // Step K5, the first pass: elements first .. first + block.size() - 1 (at most compact_lanes::capacity) into
    // lanes, each marked with what the block filter may decide (kind 1 or 2) or leave to decide_fast (kind 0): a
    // result that is not finite or is -0.0, an unusable summary, a count the kernel's closed forms do not take
    // (>= 2^52) or for which decide_fast would not have a factor (n = 0 without one). Table mode asks factor_of,
    // the same function decide_fast asks, so the lane's factor is decide_fast's. When every lane the kernel may
    // decide has one count (row sums; Step K5a), the sub-block takes that count's factor once (the returned
    // lane_factor) instead of a factor per lane.
    struct lane_factor {
        bool uniform = false;  // every kind-1 lane's factor is [f_lo, f_hi] with Step K3b's saturation_w
        double f_lo = 0, f_hi = 0, saturation_w = 0;
    };
    template <class T>
    lane_factor fill_lanes(std::span<const T> block, std::size_t first, detail::compact_lanes& l) {
        using tr = format_traits<T>;
        using bits_t = typename tr::bits_type;
        using summary = compact_reference_array::filter_summary;
        using source = detail::compact_lane_params::factor_source;
        const format_info& f = tr::info;
        const bits_t sign_bit = static_cast<bits_t>(bits_t{1} << (f.storage_bits - 1));
        const bits_t special = static_cast<bits_t>(static_cast<std::uint64_t>(f.special_exponent_field())
                                                   << (f.precision - 1));
        constexpr std::uint64_t closed_form_counts = std::uint64_t{1} << 52;  // lanes_from_count is exact below
        constexpr double inf = std::numeric_limits<double>::infinity();
        const bool table = lane_params_.source == source::table;
        const bool by_count = table || lane_params_.source == source::gamma;  // Step K5a may apply
        const summary* e = summaries_ + first;
        // Step K5a: the factor of the lanes' one count so far (the count of the first kind-1 lane), as factor_of
        // or zero_factor_ give it; `uniform` until a kind-1 lane of another count appears.
        bool any = false, uniform = true;
        std::uint64_t uniform_n = 0;
        recent_count u;
        auto factor_for = [&](std::uint64_t n) -> recent_count {
            if (n == 0) return {0, zero_has_factor_, zero_factor_, zero_saturation_w_};
            return factor_of(n);
        };
        auto set_table = [&](std::size_t k, const recent_count& slot) {
            l.f_lo[k] = slot.factor.lo;
            l.f_hi[k] = slot.factor.hi;
            l.saturation_w[k] = slot.saturation_w;
        };
        // Table kinds (as decide_fast's branches): no factor, kind 2 unless a finite data bound (decide_fast's
        // general path); n = 0 without a factor, kind 0.
        auto table_kind = [&](std::uint64_t n, const recent_count& slot, std::size_t k) -> std::int64_t {
            if (slot.has_factor) return 1;
            if (n == 0) return 0;
            return data_ != nullptr && data_[first + k] < inf ? 0 : 2;
        };
        for (std::size_t k = 0; k < block.size(); ++k) {
            const bits_t bits = tr::to_bits(block[k]);
            const bits_t magnitude = static_cast<bits_t>(bits & ~sign_bit);
            const std::uint64_t word = e[k].word;
            l.r[k] = result_value(block[k]);
            l.s_lo[k] = e[k].s_lo;
            l.w_lo[k] = e[k].w_lo;
            l.word[k] = word;
            if (data_ != nullptr) l.data[k] = data_[first + k];
            const std::uint64_t n = word & summary::count_mask;
            const bool eligible = magnitude < special && bits != sign_bit && !(word & summary::unusable);
            std::int64_t kind = eligible && n < closed_form_counts ? 1 : 0;
            if (by_count && kind == 1) {
                if (!any) {
                    any = true;
                    uniform_n = n;
                    u = factor_for(n);
                } else if (uniform && n != uniform_n) {
                    uniform = false;
                    if (table)  // the lanes so far had the uniform factor: give them it per lane
                        for (std::size_t j = 0; j < k; ++j) set_table(j, u);
                }
                if (table) {
                    if (uniform) {
                        kind = table_kind(n, u, k);
                    } else {
                        const recent_count slot = n == uniform_n ? u : factor_for(n);
                        kind = table_kind(n, slot, k);
                        set_table(k, slot);
                    }
                }
            }
            l.kind[k] = kind;
        }
        lane_factor out;
        if (!by_count || !any || !uniform) return out;
        if (!table)  // gamma lanes take the table's kinds under the one count's factor
            for (std::size_t k = 0; k < block.size(); ++k)
                if (l.kind[k] == 1) l.kind[k] = table_kind(uniform_n, u, k);
        out.uniform = true;
        out.f_lo = u.factor.lo;
        out.f_hi = u.factor.hi;
        out.saturation_w = u.saturation_w;
        return out;
    }
    // Step K5, the second pass: the block filter over lanes [0, count), at the given width (block_lanes()).
    void decide_lanes(int lanes, const detail::compact_lanes& in, std::size_t count, bool ratios,
                      const lane_factor& factor, const detail::compact_lane_outputs& out) {
        detail::compact_lane_params p = lane_params_;
        p.ratios = ratios;
        p.below_floor = below_floor_;
        p.skipped_ratio = below_floor;
        if (factor.uniform) {
            p.source = detail::compact_lane_params::factor_source::uniform;
            p.f_lo = factor.f_lo;
            p.f_hi = factor.f_hi;
            p.saturation_w = factor.saturation_w;
        }
        decide_lanes_at(lanes, in, count, p, out);
    }

    // Step K4a: the floor of the worst candidates among all elements (worst_candidates::side::floor) when a block
    // starts. A covered element with e_hi <= next_down(RN(f2·b_lo)), f2 = next_down(next_down(floor)), has
    // e_hi / b_lo <= f2 (L1: next_down(RN(x)) <= x for x >= 0), so its ratio_hi = next_up(RN(e_hi / b_lo)) <=
    // next_up(f2) < floor, and ratio_lo <= ratio_hi: it cannot raise the floor nor be a candidate, now or later
    // (the floor only rises). decide_fast then reports the ratio enclosure [below_floor, below_floor].
    static constexpr double below_floor = -1;
    void set_floor(double floor) noexcept {
        below_floor_ = floor > 0 ? detail::next_down(detail::next_down(floor)) : 0;  // 0: every e_hi > 0 is kept
    }

private:
    double below_floor_ = 0;  // f2 of Step K4a
    const double* data_ = nullptr;  // kept structured data bounds of the standard's structure, per element
    double data_of(std::size_t i) const noexcept {
        return data_ != nullptr ? data_[i] : std::numeric_limits<double>::infinity();
    }
    detail::compact_lane_params lane_params_;  // Step K5
    bool facts_by_rounding(std::size_t i, filter_reference& out) {
        const compact_reference_array::filter_facts f = reader_.facts(i);
        if (!f.usable) return false;
        if (model_.decides != rule::bound) {
            out.rn_bits = reader_.nearest_bits(i, result_, rounding::to_nearest_even);
            if (model_.decides == rule::faithful) {
                out.rd_bits = reader_.nearest_bits(i, result_, rounding::downward);
                out.ru_bits = reader_.nearest_bits(i, result_, rounding::upward);
            }
            out.usable = true;
            return true;
        }
        return facts_from(f, data_of(i), out);
    }

    // data: the element's structured data bound (+inf: none).
    bool facts_from(const compact_reference_array::filter_facts& f, double data, filter_reference& out) {
        set_count(f.count);
        if (plain_any_ && !model_.is_mixed() && data_ == nullptr && f.count <= exact_in_binary64) {
            // Step F1 for B = (n - 1)·u·S alone: the factor is exact, so one RN per end, widened by one ulp (L1).
            if (!(std::isfinite(f.s_lo) && std::isfinite(f.s_hi) && std::isfinite(f.w_hi))) return false;
            const double b_lo = detail::next_down(factor_ * f.w_lo), b_hi = detail::next_up(factor_ * f.w_hi);
            if (!std::isfinite(b_hi)) return false;
            // Field by field (as make_filter_bounds): a struct built on the stack and copied whole stalls store
            // forwarding on every element.
            detail::filter_bounds& fb = out.bounds;
            fb.s_lo = f.s_lo;
            fb.s_hi = f.s_hi;
            fb.b_lo = b_lo;
            fb.b_hi = b_hi;
            fb.covered_below = detail::next_down(b_lo);
            fb.violated_above = detail::next_up(b_hi);
            fb.unbounded = false;
            out.usable = true;
            return true;
        }
        filter_.fill_bounds(f.s_lo, f.s_hi, f.w_lo, f.w_hi, data, out);
        return out.usable;
    }

    void add_flat_structure(reference& r) const {
        structure_bound b;
        b.structure = model_.structure();
        b.error.fill(std::numeric_limits<double>::infinity());
        b.leaves = r.count;
        r.structures.assign(1, b);
    }

    void set_count(std::uint64_t n) {
        if (have_count_ && n == count_) return;
        have_count_ = true;
        count_ = n;
        if (plain_any_ && n <= exact_in_binary64) {  // (n - 1)·u, exact in binary64 (Rump; Lange–Rump)
            factor_ = n == 0 ? 0.0 : static_cast<double>(n - 1) * unit_roundoff_;  // both exact
            if (model_.is_mixed() || data_ != nullptr)  // else facts_from has its own path
                filter_.set_flat(true, point(factor_), point(0));
            return;
        }
        // compute_flat's factor for a sum is γ_depth (extra 0) unless ftz: adds terms in n. Without ftz: it is
        // enclosed in closed form (gamma_enclosure), remembered per n in a small direct-mapped table (segment sums
        // repeat a few counts; a scan's counts are all distinct and take the closed form each time).
        if (!model_.ftz && n > 0 && n <= exact_in_binary64) {
            const recent_count& slot = factor_of(n);
            filter_.set_flat(slot.has_factor, slot.factor, point(0));
            return;
        }
        std::uint64_t key = n;
        if (!model_.ftz && n > 0) key = depth_of(n);
        if (model_.ftz || n == 0) key = n | (std::uint64_t{1} << 63);  // keyed by n itself
        auto found = flat_.find(key);
        if (found == flat_.end()) {
            key_ref_.count = n;
            const flat_bound flat = compute_flat(key_ref_, model_, *acc_);
            flat_entry e{flat.factor.has_value(), flat.factor ? enclose(*flat.factor) : detail::nonnegative_interval{},
                         enclose(flat.extra)};
            found = flat_.emplace(key, e).first;
        }
        filter_.set_flat(found->second.has_factor, found->second.factor, found->second.extra);
    }

    // Step F1 for γ_k = k·u / (1 - k·u) (u of acc, 2u directed), k < 2^53: k·u is exact (u is a power of two and
    // k·u >= u lies far above the subnormals), 1 - k·u is exact (a multiple of u in (0, 1) has at most p <= 53
    // significant bits), so one RN, widened by one ulp each way (L1), encloses γ_k. False when k·u >= 1 (no finite
    // bound), as compute_flat. γ_0 = 0 is exact and enclosed by the point 0: widened, its upper end would be the
    // smallest subnormal, and every product and quotient with it a microcode assist of 100+ cycles on Intel CPUs
    // (segments of at most one term took 23% of Step K5's lanes through one; docs/performance.md).
    bool gamma_enclosure(std::uint64_t k, detail::nonnegative_interval& out) const {
        if (k > exact_in_binary64) return false;
        const double ku = static_cast<double>(k) * gamma_unit_;
        if (!(ku < 1)) return false;
        const double g = ku / (1 - ku);
        out = k == 0 ? detail::nonnegative_interval{0, 0}
                     : detail::nonnegative_interval{detail::next_down(g), detail::next_up(g)};
        return true;
    }
    struct recent_count {
        std::uint64_t count = 0;  // 0: empty (n = 0 never takes the table)
        bool has_factor = false;
        detail::nonnegative_interval factor;
        double saturation_w = 0;  // directed: Step K3b
    };

    // Step K2: γ_depth's enclosure for an element of 0 < n <= 2^53 terms (no ftz), remembered per n in a small
    // direct-mapped table (segment sums repeat a few counts) and per depth (a scan's counts are all distinct, but
    // runs of them share one depth).
    const recent_count& factor_of(std::uint64_t n) {
        if (have_run_ && run_lo_ <= n && n <= run_hi_ && have_depth_factor_ && run_depth_ == factor_depth_) {
            depth_slot_.count = n;  // a scan's next count, inside the current run of one depth: no table
            return depth_slot_;
        }
        recent_count& slot = recent_[n % recent_.size()];
        if (slot.count == n) return slot;
        const std::uint64_t depth = depth_of(n);
        if (!have_depth_factor_ || depth != factor_depth_) {
            have_depth_factor_ = true;
            factor_depth_ = depth;
            depth_has_factor_ = gamma_enclosure(depth, depth_factor_);
            depth_saturation_w_ = depth_has_factor_ && model_.directed ? saturation_limit(depth_factor_.hi) : 0;
            depth_slot_ = {n, depth_has_factor_, depth_factor_, depth_saturation_w_};
        }
        slot.count = n;
        slot.has_factor = depth_has_factor_;
        slot.factor = depth_factor_;
        slot.saturation_w = depth_saturation_w_;
        return slot;
    }

    // Step K3b: a W below which no partial sum of a directed standard reaches threshold_lo, for a factor whose
    // upper end is f_hi: g = next_up(RN(1 + f_hi)) >= 1 + f_hi and next_down(RN(threshold_lo / g)) <= threshold_lo / g
    // (L1), so W <= that gives (1 + factor)·W <= g·W <= threshold_lo.
    // For f_hi <= 1, g <= 2 and threshold_lo / 4 (exact: a power-of-two scaling of a normal double) is below
    // threshold_lo / g, without a division.
    double saturation_limit(double f_hi) const {
        if (f_hi <= 1) return filter_.threshold_lo() * 0.25;
        const double g = detail::next_up(1 + f_hi);
        return detail::next_down(filter_.threshold_lo() / g);
    }

    // An element without a finite factor (k·u >= 1) and no data bound: fill_bounds makes it unbounded, every
    // finite result covered with ratio 0, once its enclosures are finite.
    static bool unbounded(const compact_reference_array::filter_summary& e, std::uint8_t& covered, double& ratio_lo,
                          double& ratio_hi) noexcept {
        using summary = compact_reference_array::filter_summary;
        constexpr double inf = std::numeric_limits<double>::infinity();
        const double s_hi = summary::upper(e.s_lo, (e.word >> 61) & 1);
        const double w_hi = summary::upper(e.w_lo, (e.word >> 62) & 1);
        if (!(std::fabs(e.s_lo) < inf && std::fabs(s_hi) < inf && w_hi < inf && e.w_lo >= 0)) return false;
        covered = 1;
        ratio_lo = ratio_hi = 0;
        return true;
    }

    // structure_depth(model, n) for n > 0. The depth is non-decreasing in n (Step K2: each level's item count,
    // group count and largest group are), so counts a <= b of one depth d give every count between them depth d:
    // the counts [run_lo_, run_hi_] seen (or probed) to share run_depth_ are answered without evaluating. A scan
    // asks for n, n + 1, ...: when a run starts, the counts ahead are probed (the last run's length first, then
    // steps 1, 2, 4, ...) while the depth stays, and a probe one past the run's end, which has another depth, is
    // kept as the next run's start: a scan's run of m counts costs about two evaluations (O(log m) at worst).
    std::uint64_t depth_of(std::uint64_t n) {
        if (one_level_any_) return n - 1;
        if (have_run_ && run_lo_ <= n && n <= run_hi_) return run_depth_;
        const std::uint64_t d = have_next_ && n == next_count_ ? next_depth_ : structure_depth(model_, n);
        bool fresh = false;
        if (have_run_ && d == run_depth_) {
            run_lo_ = std::min(run_lo_, n);
            run_hi_ = std::max(run_hi_, n);
        } else {
            const std::uint64_t last_length = have_run_ ? run_hi_ - run_lo_ + 1 : 1;
            have_run_ = fresh = true;
            run_lo_ = run_hi_ = n;
            run_depth_ = d;
            if (last_length > 2) probe(last_length - 1);  // the new run as long as the last one
        }
        if (fresh || n == run_hi_)
            for (std::uint64_t step = 1; step <= max_probe_step; step *= 2)
                if (!probe(step)) break;
        return d;
    }
    // Extends the run to run_hi_ + step when that count has the run's depth; a count just past the run that has
    // another depth is remembered as the next run's start.
    bool probe(std::uint64_t step) {
        const std::uint64_t at = run_hi_ + step;
        if (at > exact_in_binary64) return false;
        const std::uint64_t d = structure_depth(model_, at);
        if (d != run_depth_) {
            if (step == 1) {
                have_next_ = true;
                next_count_ = at;
                next_depth_ = d;
            }
            return false;
        }
        run_hi_ = at;
        return true;
    }
    static constexpr std::uint64_t max_probe_step = std::uint64_t{1} << 16;
    bool have_run_ = false, have_next_ = false;
    std::uint64_t run_lo_ = 0, run_hi_ = 0, run_depth_ = 0;
    std::uint64_t next_count_ = 0, next_depth_ = 0;  // a probed count past the run: its depth, evaluated
    recent_count depth_slot_;  // the factor of run_depth_ (when factor_depth_ is it)
    bool have_depth_factor_ = false, depth_has_factor_ = false;
    std::uint64_t factor_depth_ = 0;
    detail::nonnegative_interval depth_factor_;
    double depth_saturation_w_ = 0, zero_saturation_w_ = 0;  // Step K3b
    std::array<recent_count, 1024> recent_{};
    double gamma_unit_ = 0;  // u of acc, doubled for directed rounding (compute_flat)
    bool fast_ = false;      // decide_fast applies: kept summaries, a bound standard, no mixed, no ftz
    bool zero_has_factor_ = false;
    detail::nonnegative_interval zero_factor_;  // elements without terms

    struct flat_entry {
        bool has_factor = false;
        detail::nonnegative_interval factor, extra;
    };
    const compact_reference_array& refs_;
    const standard& model_;
    const format_info& result_;
    const format_info* acc_ = nullptr;
    array_filter filter_;
    compact_reference_array::reader reader_;
    const compact_reference_array::filter_summary* summaries_ = nullptr;  // bound standards
    reference key_ref_;  // count and term format only: what compute_flat and prepare's checks read
    bool plain_any_ = false, one_level_any_ = false, have_count_ = false;
    std::uint64_t count_ = 0;
    double unit_roundoff_ = 0;
    double factor_ = 0;  // plain any_order: (n - 1)·u for n = count_
    static constexpr std::uint64_t exact_in_binary64 = std::uint64_t{1} << 53;
    std::unordered_map<std::uint64_t, flat_entry> flat_;
};

// Elements base .. base + out.covered.size() - 1 (at most): out's slot k holds element base + k's decision. The
// caller holds a detail::default_fp_environment. With the fused filter, sub-blocks of compact_lanes::capacity go
// through the block filter first (Step K5); the elements it leaves take decide_fast, then the general path, then
// the exact path, one by one.
template <class T>
void decide_compact_block(std::span<const T> block, std::size_t base, const standard& model, bool ratios,
                          compact_decider& decider, array_decisions& out, std::unique_ptr<reference>& scratch) {
    using tr = format_traits<T>;
    const format_info& f = tr::info;
    const std::size_t count = block.size();
    filter_reference facts;
    using bits_t = typename tr::bits_type;
    const bits_t sign_bit = static_cast<bits_t>(bits_t{1} << (f.storage_bits - 1));
    const bits_t special = static_cast<bits_t>(static_cast<std::uint64_t>(f.special_exponent_field())
                                               << (f.precision - 1));
    const bool fast = decider.fast();
    double unused = 0;
    auto one = [&](std::size_t k) {
        const bits_t bits = tr::to_bits(block[k]);
        const bits_t magnitude = static_cast<bits_t>(bits & ~sign_bit);
        // Finite results other than -0.0 (which has its own rule) take the fused filter first.
        if (fast && magnitude < special && bits != sign_bit &&
            decider.decide_fast(base + k, result_value(block[k]), ratios, out.covered[k],
                                ratios ? out.ratio_lo[k] : unused, ratios ? out.ratio_hi[k] : unused))
            return;
        if (magnitude < special && decider.facts(base + k, facts) &&
            decide_by_filter(block, k, facts, model, ratios, out))
            return;
        ++out.exact_path;
        if (!scratch) scratch = std::make_unique<reference>();
        decider.materialize(base + k, *scratch);
        const verdict v = evaluate(prepare(*scratch, model, f), bits, false);
        out.covered[k] = v.covered;
        if (ratios) out.ratio_lo[k] = out.ratio_hi[k] = std::isnan(v.ratio) ? 0 : v.ratio;
    };
    const int lanes = fast ? block_lanes() : 0;
    if (lanes == 0) {
        for (std::size_t k = 0; k < count; ++k) one(k);
        return;
    }
    thread_local std::unique_ptr<detail::compact_lanes> in_lanes;  // ~16 KB, reused by every call of the thread
    if (!in_lanes) in_lanes = std::make_unique<detail::compact_lanes>();
    std::array<std::uint8_t, detail::compact_lanes::capacity> decided;
    for (std::size_t sub = 0; sub < count; sub += detail::compact_lanes::capacity) {
        const std::size_t m = std::min(detail::compact_lanes::capacity, count - sub);
        const auto factor = decider.fill_lanes(block.subspan(sub, m), base + sub, *in_lanes);
        const detail::compact_lane_outputs lane_out{out.covered.data() + sub,
                                                    ratios ? out.ratio_lo.data() + sub : nullptr,
                                                    ratios ? out.ratio_hi.data() + sub : nullptr, decided.data()};
        decider.decide_lanes(lanes, *in_lanes, m, ratios, factor, lane_out);
        for (std::size_t k = 0; k < m; ++k)
            if (!decided[k]) one(sub + k);
    }
}

// Every element's decision (covers_flags), block by block: load(base, count, values) writes the results of elements
// base .. base + count - 1 into values, so no copy of all the results is made.
template <class T, class Load>
void decide_compact_flags(std::size_t n, const compact_reference_array& refs, const standard& model, Load&& load,
                          std::span<std::uint8_t> covered) {
    if (refs.size() != n || covered.size() != n)
        throw std::invalid_argument("covers_flags: " + std::to_string(n) + " results, " +
                                    std::to_string(refs.size()) + " references and " +
                                    std::to_string(covered.size()) + " flags: pass one of each per element");
    constexpr std::size_t block = 4096;  // the block's results and decisions stay in the first-level caches
    compact_decider decider(refs, model, format_traits<T>::info);
    array_decisions d;
    d.covered.assign(std::min(block, n), 0);
    std::vector<T> values(std::min(block, n));
    const detail::default_fp_environment environment;
    std::unique_ptr<reference> scratch;
    for (std::size_t base = 0; base < n; base += block) {
        const std::size_t count = std::min(block, n - base);
        load(base, count, values.data());
        decide_compact_block(std::span<const T>(values.data(), count), base, model, false, decider, d, scratch);
        std::copy_n(d.covered.begin(), count, covered.begin() + static_cast<std::ptrdiff_t>(base));
    }
    exact_path_elements.fetch_add(d.exact_path, std::memory_order_relaxed);
}

// One instantiation per result format: run(T{}) with T the format's value type.
template <class Run>
void for_format(const format_info& format, Run&& run) {
    switch (format.id) {
        case dtype::float64: return run(double{});
        case dtype::float32: return run(float{});
        case dtype::float16: return run(float16{});
        case dtype::bfloat16: return run(bfloat16{});
    }
}

// What covers_compact needs of the decisions, gathered block by block instead of kept per element (10^7 ratio
// enclosures are 160 MB of fresh pages per call): the violations, and the candidates for the worst element — those
// whose ratio enclosure reaches the largest lower end seen so far, among all elements and among the violations. The
// floors only rise, so an element below a floor when it is seen is below it at the end: the candidates left at the
// end are exactly the elements covers_many's two passes would examine, in index order.
struct worst_candidates {
    struct entry {
        std::size_t index;
        double lo, hi;
    };
    struct side {
        double floor = -1;
        std::vector<entry> entries;
        std::size_t prune_at = 1024;
        void add(std::size_t i, double lo, double hi) {
            floor = std::max(floor, lo);
            keep(i, lo, hi);
        }
        void keep(std::size_t i, double lo, double hi) {
            if (hi < floor) return;
            entries.push_back({i, lo, hi});
            if (entries.size() < prune_at) return;
            std::erase_if(entries, [&](const entry& e) { return e.hi < floor; });
            prune_at = std::max<std::size_t>(1024, 2 * entries.size());
        }
    };
    std::size_t violations = 0;
    std::vector<std::size_t> first_violations;
    side all, violated;
    std::uint64_t exact_path = 0;

    // Elements base .. base + count - 1 of a block: the block's floor first (a branch-free maximum), then the
    // few elements that reach it, so the pass has no data-dependent branch per element. The entries kept are a
    // superset of the final candidates as with element-by-element adds (the floor only rises).
    void add_block(std::size_t base, std::size_t count, const std::uint8_t* covered, const double* lo,
                   const double* hi) {
        add_each([base](std::size_t k) { return base + k; }, count, covered, lo, hi);
    }

    // The same for elements index[0 .. count - 1] in any order (a producer's order, Step P3): the candidates kept
    // are those whose upper end reaches the final floor, a set that does not depend on the order (the floors are
    // maxima and only rise), and first_violations stays the smallest indices of violations, in index order.
    void add_indexed(const std::size_t* index, std::size_t count, const std::uint8_t* covered, const double* lo,
                     const double* hi) {
        add_each([index](std::size_t k) { return index[k]; }, count, covered, lo, hi);
    }

private:
    template <class IndexOf>
    void add_each(IndexOf&& index_of, std::size_t count, const std::uint8_t* covered, const double* lo,
                  const double* hi) {
        double floor = all.floor;
        for (std::size_t k = 0; k < count; ++k) floor = floor < lo[k] ? lo[k] : floor;  // std::max
        all.floor = floor;
        std::size_t uncovered = 0;
        for (std::size_t k = 0; k < count; ++k) {
            uncovered += covered[k] == 0;
            if (!(hi[k] < floor)) all.keep(index_of(k), lo[k], hi[k]);
        }
        if (uncovered == 0) return;
        for (std::size_t k = 0; k < count; ++k) {
            if (covered[k]) continue;
            ++violations;
            note_violation(index_of(k));
            violated.add(index_of(k), lo[k], hi[k]);
        }
    }

    static constexpr std::size_t first_kept = 8;
    // first_violations: the first_kept smallest indices seen, ascending.
    void note_violation(std::size_t i) {
        if (first_violations.size() == first_kept && i > first_violations.back()) return;
        first_violations.insert(std::upper_bound(first_violations.begin(), first_violations.end(), i), i);
        if (first_violations.size() > first_kept) first_violations.pop_back();
    }
};

template <class T>
worst_candidates judge_compact(std::span<const T> results, const standard& model, compact_decider& decider) {
    constexpr std::size_t block = 4096;  // the block's decisions stay in the first-level caches
    worst_candidates w;
    array_decisions d;
    d.covered.assign(block, 0);
    d.ratio_lo.assign(block, 0);
    d.ratio_hi.assign(block, 0);
    const detail::default_fp_environment environment;
    std::unique_ptr<reference> scratch;
    for (std::size_t base = 0; base < results.size(); base += block) {
        const std::size_t count = std::min(block, results.size() - base);
        decider.set_floor(w.all.floor);  // Step K4a: covered elements below it skip their ratio
        decide_compact_block(results.subspan(base, count), base, model, true, decider, d, scratch);
        w.add_block(base, count, d.covered.data(), d.ratio_lo.data(), d.ratio_hi.data());
    }
    w.exact_path = d.exact_path;
    exact_path_elements.fetch_add(d.exact_path, std::memory_order_relaxed);
    return w;
}

void check_result_count(std::size_t results, std::size_t references) {
    if (results != references)
        throw std::invalid_argument("covers: " + std::to_string(results) + " results for " +
                                    std::to_string(references) +
                                    " references: pass one result per reference element (row-major)");
}

// The violations and the worst element of an array_verdict from the gathered candidates, as covers_many chooses it:
// violations first, then the largest exact ratio, the first on ties. materialize(i, r) builds element i's reference;
// refine(i, r, lo, hi) may narrow a candidate's ratio enclosure (Step K4b), keeping the exact ratio inside.
template <class T, class Materialize, class Refine>
void finish_worst(std::span<const T> results, const worst_candidates& w, const standard& model,
                  Materialize&& materialize, Refine&& refine, array_verdict& out) {
    using tr = format_traits<T>;
    out.violations = w.violations;
    out.first_violations = w.first_violations;
    out.covered = out.violations == 0;
    const worst_candidates::side& among = out.violations > 0 ? w.violated : w.all;
    reference scratch;
    // The candidates by the upper end of their ratio enclosure, largest first (index order among equal ends): once
    // an end lies below the best exact ratio found, no later candidate can reach it (its ratio <= its end), so their
    // exact ratios are not needed. The worst is still the largest exact ratio, the smallest index on ties. (Results
    // of the accumulation format itself, e.g. float64 sums of float64 terms, give many enclosures [0, ulp/B] that
    // reach the floor when B is a tight data bound: evaluated in index order, each cost an exact ratio.)
    // Step K4b: each candidate's enclosure narrowed first, so that near-equal upper ends no longer tie (an
    // enclosure only narrows, the exact ratio stays inside, so the order argument below holds as before).
    std::vector<worst_candidates::entry> candidates;
    const detail::default_fp_environment environment;  // refine's binary64 operations round to nearest
    for (worst_candidates::entry e : among.entries) {
        if (e.hi < among.floor) continue;
        if (e.lo != e.hi) (void)refine(e.index, result_value(results[e.index]), e.lo, e.hi);
        candidates.push_back(e);
    }
    std::sort(candidates.begin(), candidates.end(), [](const worst_candidates::entry& a, const worst_candidates::entry& b) {
        return a.hi != b.hi ? a.hi > b.hi : a.index < b.index;
    });
    double worst_ratio = -1;
    std::uint64_t exact_ratios = 0;
    for (const worst_candidates::entry& e : candidates) {
        if (e.hi < worst_ratio) break;
        double ratio = e.lo;
        if (e.lo != e.hi) {
            ++exact_ratios;
            materialize(e.index, scratch);
            const verdict v = evaluate(prepare(scratch, model, tr::info), tr::to_bits(results[e.index]), false);
            ratio = std::isnan(v.ratio) ? 0 : v.ratio;
        }
        if (ratio > worst_ratio || (ratio == worst_ratio && e.index < out.worst_index)) {
            worst_ratio = ratio;
            out.worst_index = e.index;
        }
    }
    exact_ratio_elements.fetch_add(exact_ratios, std::memory_order_relaxed);
    materialize(out.worst_index, scratch);
    out.worst = evaluate(prepare(scratch, model, tr::info), tr::to_bits(results[out.worst_index]), true);
}

template <class T>
array_verdict covers_compact(std::span<const T> results, const compact_reference_array& refs, const standard& model) {
    using tr = format_traits<T>;
    array_verdict out;
    out.size = results.size();
    check_result_count(results.size(), refs.size());
    compact_decider decider(refs, model, tr::info);
    const worst_candidates w = judge_compact(results, model, decider);
    if (results.empty()) {
        out.worst.covered = true;
        out.worst.standard = model.name();
        return out;
    }
    finish_worst(
        results, w, model, [&](std::size_t i, reference& r) { decider.materialize(i, r); },
        [&](std::size_t i, double r, double& lo, double& hi) { return decider.refine_ratio(i, r, lo, hi); }, out);
    return out;
}

// ---- Elements held in compact form by their producer (detail::element_source: exact matrix products) ----------
//
// The producer encloses each element's s and W (T) exactly as its reference would (RD and RU of the exact values) and
// gives the fields its flat bound depends on, a block at a time in its own storage order; the filter then decides the
// element as it decides that reference (array_filter, decide_by_filter). Elements the producer cannot enclose
// (a product's Inf/NaN operands, too many far products, per-element products) are built as references and take
// decide_array's way; undecided elements take the exact path. Decisions land at the elements' indices, so the order does not change any answer.
// The sign bit and the encoding of +Inf of results of format T (a magnitude below it is finite).
template <class T>
struct result_encoding {
    using bits_t = typename format_traits<T>::bits_type;
    const bits_t sign_bit = static_cast<bits_t>(bits_t{1} << (format_traits<T>::info.storage_bits - 1));
    const bits_t special = static_cast<bits_t>(
        static_cast<std::uint64_t>(format_traits<T>::info.special_exponent_field())
        << (format_traits<T>::info.precision - 1));
};

class source_decider {
public:
    static constexpr std::size_t block = 4096;  // a block's facts (64 bytes each) and decisions stay in the caches

    source_decider(const detail::element_source& source, const standard& model, const format_info& result)
        : source_(source), model_(model), result_(result), filter_(model, result), index_(block) {
        key_ref_.count = std::numeric_limits<std::uint64_t>::max();  // no key yet
        flat_only_ = model.decides == rule::bound && !model.is_mixed() && !model.directed && !model.structured &&
                     !model.ftz;
        fast_ = model.decides == rule::bound && !model.is_mixed() && !model.structured && !model.ftz &&
                source.key(fast_key_);
        if (!fast_) facts_.resize(block);  // the fast path sizes it when an element first needs facts()
        if (fast_) {
            // Padded to whole vectors of 8 lanes (decide_lanes reads the last one whole).
            fast_s_lo_.resize(block + 8);
            fast_s_hi_.resize(block + 8);
            fast_w_lo_.resize(block + 8);
            fast_w_hi_.resize(block + 8);
            fast_usable_.resize(block + 8);
            lanes_ = block_lanes();
            if (lanes_ > 0) {
                lane_r_.resize(block + 8);
                lane_kind_.resize(block + 8);
                lane_decided_.resize(block + 8);
            }
        }
    }

    void materialize(std::size_t i, reference& out) const { source_.materialize(i, out); }

    // The facts and element indices of positions position .. position + count - 1 of the producer's order.
    std::span<const std::size_t> load(std::size_t position, std::size_t count) {
        source_.facts(position, std::span<detail::element_facts>(facts_.data(), count),
                      std::span<std::size_t>(index_.data(), count),
                      model_.decides == rule::bound ? nullptr : &result_);
        return {index_.data(), count};
    }

    // The loaded elements' decisions into out's slots 0 .. values.size() - 1, values[k] the result of the k-th
    // loaded element. The caller holds a detail::default_fp_environment.
    template <class T>
    void decide_block(std::span<const T> values, bool ratios, array_decisions& out) {
        for (std::size_t k = 0; k < values.size(); ++k) decide_element(values, k, ratios, out);
    }

    // Step P4: whether the source encloses elements for the fast path under this standard (a flat bound, or
    // directed rounding on it: no mixed, structured or ftz: part).
    bool fast() const noexcept { return fast_; }

    // The fast path's enclosures and element indices of positions position .. position + count - 1.
    std::span<const std::size_t> load_fast(std::size_t position, std::size_t count) {
        source_.enclose(position, count, {fast_s_lo_.data(), fast_s_hi_.data(), fast_w_lo_.data(), fast_w_hi_.data(),
                                          fast_usable_.data(), index_.data()});
        return {index_.data(), count};
    }

    // Step P4's decisions of the elements load_fast() loaded (slot k: values[k]): Steps F1-F3 on its enclosures
    // under the key's flat part, with fill_bounds for directed rounding; an element they leave undecided, or one the
    // source did not enclose, takes facts() and decide_element (its RD/RU enclosures, then the exact path), so every
    // verdict and the exact-path count of on-the-bound elements are those of the facts path.
    template <class T>
    void decide_block_fast(std::size_t position, std::span<const T> values, bool ratios, array_decisions& out) {
        using tr = format_traits<T>;
        using bits_t = typename tr::bits_type;
        const result_encoding<T> enc;
        filter_reference judged;
        // Step P5: the two branches below over vectors of lanes (the same operations, so the same decisions); what
        // they leave undecided, and every element they do not take, goes straight to facts() as below.
        const bool vectored = lanes_ > 0 && decide_lanes_fast(values, ratios, out);
        for (std::size_t k = 0; k < values.size(); ++k) {
            if (vectored) {
                if (lane_decided_[k]) continue;
            } else if (const bits_t bits = tr::to_bits(values[k]);
                       fast_usable_[k] && static_cast<bits_t>(bits & ~enc.sign_bit) < enc.special &&
                       bits != enc.sign_bit) {
                ensure_fast_flat();
                const double s_lo = fast_s_lo_[k], s_hi = fast_s_hi_[k], w_lo = fast_w_lo_[k], w_hi = fast_w_hi_[k];
                bool bounded = false;
                detail::filter_bounds fb;
                if (model_.directed) {
                    // fill_bounds reads the filter's current key, which decide_element may have moved.
                    if (filter_moved_) {
                        detail::nonnegative_interval factor, extra;
                        (void)filter_.flat_of(key_ref_, factor, extra);
                        filter_moved_ = false;
                    }
                    filter_.fill_bounds(s_lo, s_hi, w_lo, w_hi, std::numeric_limits<double>::infinity(), judged);
                    bounded = judged.usable;
                    fb = judged.bounds;
                } else if (flat_ok_ && std::isfinite(s_lo) && std::isfinite(s_hi) && std::isfinite(w_hi) &&
                           w_lo >= 0) {
                    const detail::nonnegative_interval b =
                        flat_factor_ * detail::nonnegative_interval{w_lo, w_hi} + flat_extra_;
                    if (std::isfinite(b.hi)) {
                        fb = detail::make_filter_bounds(s_lo, s_hi, b, false);
                        bounded = true;
                    }
                }
                if (bounded && decide_bounded(result_value(values[k]), fb, k, ratios, out)) continue;
            }
            if (facts_.empty()) facts_.resize(block);  // 320 KB of fresh pages: only when an element needs them
            source_.facts(position + k, std::span<detail::element_facts>(facts_.data() + k, 1),
                          std::span<std::size_t>(index_.data() + k, 1), nullptr);
            decide_element(values, k, ratios, out);
            filter_moved_ = true;
        }
    }

private:
    // The key's flat part (and prepare()'s errors for it), as decide_element sets it: at the first enclosed element
    // of a block, and again after an element of another key took decide_element.
    void ensure_fast_flat() {
        if (have_flat_ && same_key(fast_key_)) return;
        (void)set_key(fast_key_);
        have_flat_ = true;
        fast_factor_ = filter_.flat_of(key_ref_, flat_factor_, flat_extra_);
        flat_ok_ = flat_only_ && fast_factor_;
    }

    // Step P5: the loaded block's enclosed elements with a finite result other than -0.0 decided by decide_lanes
    // (covers_source_block.h) under the flat bound (lane_decided_[k] = 1 where it decided slot k); false, deciding
    // nothing, when the block has no such element or no finite flat factor (or the standard is not flat or directed).
    template <class T>
    bool decide_lanes_fast(std::span<const T> values, bool ratios, array_decisions& out) {
        using tr = format_traits<T>;
        using bits_t = typename tr::bits_type;
        const result_encoding<T> enc;
        const std::size_t count = values.size();
        bool any = false;
        for (std::size_t k = 0; k < count; ++k) {
            const bits_t bits = tr::to_bits(values[k]);
            const bool take = fast_usable_[k] && static_cast<bits_t>(bits & ~enc.sign_bit) < enc.special &&
                              bits != enc.sign_bit;
            lane_kind_[k] = take ? 1 : 0;
            lane_r_[k] = result_value(values[k]);
            any = any || take;
        }
        if (!any) return false;
        ensure_fast_flat();
        // The flat standards, and directed rounding on the flat bound (fill_bounds with a finite factor, no data
        // bound, no mixed: B = factor·W + extra once its saturation test passes).
        if (!(flat_ok_ || (model_.directed && fast_factor_))) return false;
        detail::source_lane_params p;
        p.f_lo = flat_factor_.lo;
        p.f_hi = flat_factor_.hi;
        p.x_lo = flat_extra_.lo;
        p.x_hi = flat_extra_.hi;
        p.ratios = ratios;
        p.directed = model_.directed;
        p.grow_hi = detail::next_up(1 + flat_factor_.hi);  // (point(1) + total_factor_).hi: no mixed, so the factor
        p.threshold_lo = filter_.threshold_lo();
        const detail::source_lanes in{lane_r_.data(),     fast_s_lo_.data(), fast_s_hi_.data(),
                                      fast_w_lo_.data(), fast_w_hi_.data(), lane_kind_.data()};
        const detail::source_lane_outputs decided{out.covered.data(), ratios ? out.ratio_lo.data() : nullptr,
                                                  ratios ? out.ratio_hi.data() : nullptr, lane_decided_.data()};
        decide_lanes_at(lanes_, in, count, p, decided);
        return true;
    }

    // Steps F2 (and with ratios F3) of result r against fb into out's slot k, as decide_by_filter decides a
    // bound standard; false when undecided.
    static bool decide_bounded(double r, const detail::filter_bounds& fb, std::size_t k, bool ratios,
                               array_decisions& out) {
        if (!ratios) {
            const detail::filter_verdict v = detail::filter_decision(r, fb);
            if (v == detail::filter_verdict::undecided) return false;
            out.covered[k] = v == detail::filter_verdict::covered;
            return true;
        }
        const detail::filter_outcome o = detail::filter_element(r, fb);
        if (o.verdict == detail::filter_verdict::undecided) return false;
        out.covered[k] = o.verdict == detail::filter_verdict::covered;
        out.ratio_lo[k] = o.ratio_lo;
        out.ratio_hi[k] = o.ratio_hi;
        return true;
    }

    // One loaded element's decision (facts_[k], index_[k]) into out's slot k.
    template <class T>
    void decide_element(std::span<const T> values, std::size_t k, bool ratios, array_decisions& out) {
        using tr = format_traits<T>;
        using bits_t = typename tr::bits_type;
        const format_info& f = tr::info;
        const result_encoding<T> enc;
        const bits_t sign_bit = enc.sign_bit;
        filter_reference judged;
        {
            const bits_t bits = tr::to_bits(values[k]);
            const bool finite = static_cast<bits_t>(bits & ~sign_bit) < enc.special;
            const detail::element_facts& e = facts_[k];
            bool built = false;
            if (e.usable) {
                if (set_key(e) || !have_flat_) {
                    have_flat_ = true;
                    flat_ok_ = flat_only_ && filter_.flat_of(key_ref_, flat_factor_, flat_extra_);
                }
                // The flat bounds (no mixed, directed, structured or ftz: standard): fill_bounds' and
                // decide_by_filter's operations on the same numbers, without their general cases.
                if (flat_ok_ && finite && bits != sign_bit && std::isfinite(e.s_lo) && std::isfinite(e.s_hi) &&
                    std::isfinite(e.w_hi) && e.w_lo >= 0) {
                    const detail::nonnegative_interval b =
                        flat_factor_ * detail::nonnegative_interval{e.w_lo, e.w_hi} + flat_extra_;
                    if (std::isfinite(b.hi) &&
                        decide_bounded(result_value(values[k]), detail::make_filter_bounds(e.s_lo, e.s_hi, b, false),
                                       k, ratios, out))
                        return;
                }
                filter_.facts(key_ref_, e, judged);
            } else {
                materialize(index_[k], scratch_);
                built = true;
                filter_.facts(scratch_, judged);
            }
            if (judged.usable && finite && decide_by_filter(values, k, judged, model_, ratios, out)) return;
            ++out.exact_path;
            if (!built) materialize(index_[k], scratch_);
            const verdict v = evaluate(prepare(scratch_, model_, f), bits, false);
            out.covered[k] = v.covered;
            if (ratios) out.ratio_lo[k] = out.ratio_hi[k] = std::isnan(v.ratio) ? 0 : v.ratio;
        }
    }

    bool same_key(const detail::element_facts& e) const noexcept {
        return e.count == key_ref_.count && e.term_format == key_ref_.term_format && e.is_dot == key_ref_.is_dot &&
               e.has_initial == key_ref_.has_initial && e.product_may_underflow == key_ref_.product_may_underflow &&
               e.min_product_exponent == key_ref_.min_product_exponent;
    }
    // The key fields into key_ref_ (what compute_flat and prepare()'s checks read); true when they changed.
    bool set_key(const detail::element_facts& e) {
        if (same_key(e)) return false;
        key_ref_.count = e.count;
        key_ref_.term_format = e.term_format;
        key_ref_.is_dot = e.is_dot;
        key_ref_.has_initial = e.has_initial;
        key_ref_.product_may_underflow = e.product_may_underflow;
        key_ref_.min_product_exponent = e.min_product_exponent;
        return true;
    }

    const detail::element_source& source_;
    const standard& model_;
    const format_info& result_;
    array_filter filter_;
    reference key_ref_;
    reference scratch_;
    std::vector<detail::element_facts> facts_;
    std::vector<std::size_t> index_;
    bool flat_only_ = false;               // the standard's bound is the flat factor·W + extra alone
    bool fast_ = false;         // Step P4 (see fast())
    bool filter_moved_ = true;  // filter_'s key may differ from key_ref_'s (decide_element ran since flat_of)
    detail::element_facts fast_key_;
    std::vector<double> fast_s_lo_, fast_s_hi_, fast_w_lo_, fast_w_hi_;
    std::vector<std::uint8_t> fast_usable_;
    int lanes_ = 0;  // Step P5's lanes (block_lanes()); 0: the scalar branch (tests)
    std::vector<double> lane_r_;
    std::vector<std::int64_t> lane_kind_;
    std::vector<std::uint8_t> lane_decided_;
    bool have_flat_ = false, flat_ok_ = false;  // the flat part of key_ref_'s key is below (flat_ok_: finite)
    bool fast_factor_ = false;                  // the fast key's factor is finite (array_filter::flat_of)
    detail::nonnegative_interval flat_factor_, flat_extra_;
};

// Every element's decision, block by block in the producer's order: load(index, values) writes the results of the
// loaded elements (element index[k] into values[k]), store(index, d) takes their decisions (slot k: element index[k]).
template <class T, class Load, class Store>
void decide_source(std::size_t n, bool ratios, source_decider& decider, Load&& load, Store&& store) {
    constexpr std::size_t block = source_decider::block;
    array_decisions d;
    d.covered.assign(std::min(block, n), 0);
    if (ratios) {
        d.ratio_lo.assign(std::min(block, n), 0);
        d.ratio_hi.assign(std::min(block, n), 0);
    }
    std::vector<T> values(std::min(block, n));
    const detail::default_fp_environment environment;
    for (std::size_t position = 0; position < n; position += block) {
        const std::size_t count = std::min(block, n - position);
        const std::span<const std::size_t> index =
            decider.fast() ? decider.load_fast(position, count) : decider.load(position, count);
        load(index, values.data());
        if (decider.fast()) decider.decide_block_fast(position, std::span<const T>(values.data(), count), ratios, d);
        else decider.decide_block(std::span<const T>(values.data(), count), ratios, d);
        store(index, d);
    }
    exact_path_elements.fetch_add(d.exact_path, std::memory_order_relaxed);
}

template <class T>
array_verdict covers_source(std::span<const T> results, const detail::element_source& source, const standard& model) {
    using tr = format_traits<T>;
    array_verdict out;
    out.size = results.size();
    check_result_count(results.size(), source.size());
    if (results.empty()) {
        out.worst.covered = true;
        out.worst.standard = model.name();
        return out;
    }
    const std::size_t n = results.size();
    source_decider decider(source, model, tr::info);
    worst_candidates w;  // fed in the producer's order: add_indexed gathers what index order would
    decide_source<T>(
        n, true, decider,
        [&](std::span<const std::size_t> index, T* values) {
            for (std::size_t k = 0; k < index.size(); ++k) values[k] = results[index[k]];
        },
        [&](std::span<const std::size_t> index, const array_decisions& d) {
            w.add_indexed(index.data(), index.size(), d.covered.data(), d.ratio_lo.data(), d.ratio_hi.data());
        });
    finish_worst(
        results, w, model, [&](std::size_t i, reference& r) { decider.materialize(i, r); },
        [](std::size_t, double, double&, double&) { return false; }, out);  // no exact s at hand
    return out;
}

}  // namespace

namespace detail {

void covers_flags(const format_info& format, std::span<const std::byte> results, const element_source& source,
                  const standard& model, std::span<std::uint8_t> covered) {
    const std::size_t width = static_cast<std::size_t>(format.storage_bits / 8);
    const std::size_t n = results.size() / width;
    if (results.size() % width != 0 || n != source.size() || covered.size() != n)
        throw std::invalid_argument("covers_flags: " + std::to_string(results.size()) + " bytes of " +
                                    std::string(format.name) + " results, " + std::to_string(source.size()) +
                                    " references and " + std::to_string(covered.size()) +
                                    " flags: pass one of each per element");
    if (n == 0) return;
    for_format(format, [&](auto tag) {
        using T = decltype(tag);
        static_assert(sizeof(T) * 8 == format_traits<T>::info.storage_bits, "values are their storage");
        source_decider decider(source, model, format_traits<T>::info);
        decide_source<T>(
            n, false, decider,
            [&](std::span<const std::size_t> index, T* values) {
                for (std::size_t k = 0; k < index.size(); ++k)
                    std::memcpy(values + k, results.data() + index[k] * sizeof(T), sizeof(T));
            },
            [&](std::span<const std::size_t> index, const array_decisions& d) {
                for (std::size_t k = 0; k < index.size(); ++k) covered[index[k]] = d.covered[k];
            });
    });
}

template <floating_format T>
array_verdict covers_elements(std::span<const T> results, const element_source& source, const standard& model) {
    return covers_source<T>(results, source, model);
}

void covers_flags(const format_info& format, std::span<const std::uint64_t> bits,
                  std::span<const reference* const> refs, const standard& model, std::span<std::uint8_t> covered) {
    if (bits.size() != refs.size() || bits.size() != covered.size())
        throw std::invalid_argument("covers_flags: " + std::to_string(bits.size()) + " results, " +
                                    std::to_string(refs.size()) + " references and " +
                                    std::to_string(covered.size()) + " flags: pass one of each per element");
    for_format(format, [&](auto tag) {
        using T = decltype(tag);
        using tr = format_traits<T>;
        std::vector<T> values(bits.size());
        for (std::size_t i = 0; i < bits.size(); ++i)
            values[i] = tr::from_bits(static_cast<typename tr::bits_type>(bits[i]));
        auto ref_at = [&](std::size_t i) -> const reference& { return *refs[i]; };
        const array_decisions d = decide_array(std::span<const T>(values), ref_at, false, model, false);
        std::copy(d.covered.begin(), d.covered.end(), covered.begin());
    });
}

void covers_flags(const format_info& format, std::span<const std::uint64_t> bits, const compact_reference_array& refs,
                  const standard& model, std::span<std::uint8_t> covered) {
    for_format(format, [&](auto tag) {
        using T = decltype(tag);
        using tr = format_traits<T>;
        decide_compact_flags<T>(bits.size(), refs, model, [&](std::size_t base, std::size_t count, T* values) {
            for (std::size_t k = 0; k < count; ++k)
                values[k] = tr::from_bits(static_cast<typename tr::bits_type>(bits[base + k]));
        }, covered);
    });
}

void covers_flags(const format_info& format, std::span<const std::byte> results, const compact_reference_array& refs,
                  const standard& model, std::span<std::uint8_t> covered) {
    const std::size_t width = static_cast<std::size_t>(format.storage_bits / 8);
    if (results.size() % width != 0)
        throw std::invalid_argument("covers_flags: " + std::to_string(results.size()) + " bytes of results are not " +
                                    "whole " + std::string(format.name) + " values");
    for_format(format, [&](auto tag) {
        using T = decltype(tag);
        static_assert(sizeof(T) * 8 == format_traits<T>::info.storage_bits, "values are their storage");
        decide_compact_flags<T>(results.size() / width, refs, model,
                                [&](std::size_t base, std::size_t count, T* values) {
                                    std::memcpy(values, results.data() + base * sizeof(T), count * sizeof(T));
                                }, covered);
    });
}

std::uint64_t covers_exact_path_count() noexcept { return exact_path_elements.load(std::memory_order_relaxed); }
std::uint64_t covers_exact_ratio_count() noexcept { return exact_ratio_elements.load(std::memory_order_relaxed); }
int set_covers_block_lanes(int lanes) noexcept {
    return block_lanes_cap.exchange(lanes, std::memory_order_relaxed);
}
int covers_block_lanes() { return block_lanes(); }

}  // namespace detail

verdict covers_bits(const format_info& result_format, std::uint64_t result_bits, const reference& ref,
                    const standard& model) {
    return evaluate(prepare(ref, model, result_format), result_bits, true);
}

decision decide_bits(const format_info& result_format, std::uint64_t result_bits, const reference& ref,
                     const standard& model) {
    const verdict v = evaluate(prepare(ref, model, result_format), result_bits, false);
    return {v.covered, v.error, v.ratio, v.ulps};
}

std::vector<verdict> explain_bits(const format_info& result_format, std::uint64_t result_bits, const reference& ref,
                                  bool any_zero_sign) {
    std::vector<standard> candidates{exact(), faithful()};
    const std::uint64_t n = ref.count;
    candidates.push_back(tree(ceil_log2(n)));  // the shallowest tree
    for (std::uint64_t s = 2; s <= 256 && s < n; s *= 2) candidates.push_back(split_k(s));
    candidates.push_back(any_order());
    candidates.push_back(directed(any_order()));
    const format_info& term = info(ref.term_format);
    if (result_format.precision < binary32_info.precision && fits_in(term, binary32_info))
        candidates.push_back(mixed(dtype::float32, result_format.id));
    for (const structure_bound& b : ref.structures) {
        candidates.push_back(parse_standard(b.structure));
        candidates.push_back(directed(parse_standard(b.structure)));
    }
    std::vector<std::pair<verdict, mpq_class>> judged;
    for (standard& m : candidates) {
        m.any_zero_sign = any_zero_sign;
        prepared_reference p;
        try {
            p = prepare(ref, m, result_format);
        } catch (const std::invalid_argument&) {
            continue;  // a standard that does not apply to this reference (a format that cannot hold the terms)
        }
        verdict v = evaluate(p, result_bits, true);
        const bool bounded = m.decides == rule::bound;
        // Order: exact, faithful, then by the exact bound (an infinite one last).
        mpq_class key = !bounded ? mpq_class(m.decides == rule::exact ? -2 : -1)
                                 : (p.bound.finite ? p.bound.value : pow2(8192));
        judged.emplace_back(std::move(v), std::move(key));
    }
    std::stable_sort(judged.begin(), judged.end(), [](const auto& a, const auto& b) {
        if (a.first.covered != b.first.covered) return a.first.covered;
        if (a.first.covered) return a.second < b.second;
        return a.first.ratio < b.first.ratio;
    });
    std::vector<verdict> out;
    for (auto& [v, key] : judged) out.push_back(std::move(v));
    return out;
}

std::optional<dtype> suggest_narrower_format(const format_info& result_format, std::uint64_t result_bits,
                                             const reference& ref, const standard& model) {
    if (model.is_mixed()) return std::nullopt;
    const decoded r = decode_bits(result_format, result_bits);
    if (r.is_nan || r.is_inf || r.significand == 0) return std::nullopt;
    if (covers_bits(result_format, result_bits, ref, model).covered) return std::nullopt;
    const standard reading = model.decides == rule::bound ? model : any_order();
    for (const format_info* n : {&binary32_info, &binary16_info, &bfloat16_info}) {
        if (n->precision >= result_format.precision) continue;
        // Condition 1: r is a value of N (rounding it into N changes nothing), or r is what N's shortest decimal
        // of RN_N(r) reads as in result_format (a float32 printed with 9 digits and read back as float64).
        const std::uint64_t bits =
            detail::encode(*n, r.negative, r.significand, r.exponent, false, rounding::to_nearest_even);
        const decoded back = decode_bits(*n, bits);
        if (back.is_inf || back.is_nan || back.significand == 0) continue;
        const int shift_r = std::countr_zero(r.significand), shift_b = std::countr_zero(back.significand);
        const bool exactly = (r.significand >> shift_r) == (back.significand >> shift_b) &&
                             r.exponent + shift_r == back.exponent + shift_b;
        if (!exactly && parse_number_bits(to_shortest_string(*n, bits), result_format) != result_bits) continue;
        // Condition 2: the same standard read in N, the terms' rounding into N allowed for.
        reference in_n = ref;
        in_n.term_format = n->id;
        in_n.structures.clear();
        verdict v;
        try {
            v = covers_bits(*n, bits, in_n, reading);
        } catch (const std::invalid_argument&) {
            continue;  // a standard that does not apply in N
        }
        // Condition 3: the check in N could see a lost term (B_N + u_N·S < S): a hint towards a vacuous check
        // would trade a rejection for a verdict that covers everything, 0 included.
        const double abs_sum = in_n.abs_sum.round<double>(rounding::upward);
        const double rounding_of_terms = abs_sum * std::ldexp(1.0, -n->precision);
        if (v.vacuous || !(v.bound + rounding_of_terms < abs_sum)) continue;
        if (v.covered || std::fabs(v.error) <= v.bound + rounding_of_terms) return n->id;
    }
    return std::nullopt;
}

double bound(const reference& ref, const standard& model, const format_info& result_format) {
    const prepared_reference p = prepare(ref, model, result_format);
    if (model.decides != rule::bound) return 0;
    if (p.nan_only || p.pos_inf_only || p.neg_inf_only) return std::numeric_limits<double>::quiet_NaN();
    if (!p.bound.finite) return std::numeric_limits<double>::infinity();
    return to_double(p.bound.value, rounding::upward);
}

std::string verdict::message() const {
    std::ostringstream os;
    os << (covered ? "COVERED" : "NOT COVERED") << " by " << standard << " (" << info(result_format).name << ")\n";
    os << "  exact s     = " << exact << "\n";
    os << "  result r    = " << result << "\n";
    os << "  error r - s = " << format_double(error);
    if (!error_exact.empty() && error_exact.size() <= 80) os << "  (exactly " << error_exact << ")";
    os << "\n";
    os << "  bound B     = " << format_double(bound) << "\n";
    os << "  |error|/B   = " << format_double(ratio) << "\n";
    os << "  ulps        = " << format_double(ulps) << "\n";
    if (!reason.empty()) os << "  reason      : " << reason << "\n";
    if (bound > 0 || vacuous) {
        os << "  sees        : ";
        if (vacuous) os << "nothing (VACUOUS): " << advice << "\n";
        else {
            os << "a fault only if it moves the sum by more than B = " << format_double(bound);
            if (std::isfinite(sensitivity.of_largest))
                os << " (" << format_double(sensitivity.of_largest) << "x the largest term, ";
            else
                os << " (";
            os << format_double(sensitivity.of_abs_sum) << " of S";
            if (std::isfinite(sensitivity.of_sum)) os << ", " << format_double(sensitivity.of_sum) << "x |s|";
            os << ")";
            if (std::isfinite(sensitivity.of_largest) && sensitivity.of_largest >= 1)
                os << ": a lost term smaller than " << format_double(bound) << " cannot be seen";
            os << "\n";
        }
    }
    return os.str();
}

std::string array_verdict::message() const {
    if (size == 0) return "no results to judge: the array of results is empty";
    std::ostringstream os;
    os << (covered ? "all " + std::to_string(size) + " results covered by " + worst.standard
                   : std::to_string(violations) + " of " + std::to_string(size) + " results not covered by " +
                         worst.standard);
    if (!first_violations.empty()) {
        os << "; first violations at";
        for (std::size_t i : first_violations) os << ' ' << i;
    }
    os << "\nworst at index " << worst_index << ":\n" << worst.message();
    return os.str();
}

template <floating_format T>
array_verdict covers(std::span<const T> results, const reference& ref, const standard& model) {
    return covers_many<T>(results, &ref, nullptr, model);
}
template <floating_format T>
array_verdict covers(std::span<const T> results, const reference_array& refs, const standard& model) {
    return covers_many<T>(results, nullptr, &refs, model);
}

template <floating_format T>
array_verdict covers(std::span<const T> results, const compact_reference_array& refs, const standard& model) {
    return covers_compact<T>(results, refs, model);
}

#define EXACTREF_INSTANTIATE_COVERS(T)                                                                        \
    template array_verdict covers<T>(std::span<const T>, const compact_reference_array&, const standard&);   \
    template array_verdict covers<T>(std::span<const T>, const reference&, const standard&);                  \
    template array_verdict covers<T>(std::span<const T>, const reference_array&, const standard&);             \
    template array_verdict detail::covers_elements<T>(std::span<const T>, const detail::element_source&,      \
                                                      const standard&);
EXACTREF_INSTANTIATE_COVERS(double)
EXACTREF_INSTANTIATE_COVERS(float)
EXACTREF_INSTANTIATE_COVERS(float16)
EXACTREF_INSTANTIATE_COVERS(bfloat16)
#undef EXACTREF_INSTANTIATE_COVERS

}  // namespace exactref
