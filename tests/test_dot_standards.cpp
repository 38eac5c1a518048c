// Soundness of the dot-product standards with exact references (dot.h, gemm.h): every result that an allowed
// evaluation can produce is covered, and planted faults above the bound are rejected.
//
// Exhaustive for small n (the oracle's reachable_sums: every binary tree over every order, each addition correctly
// rounded by the oracle's integer arithmetic, after each product was rounded by Boost):
//   any_order          products rounded to nearest, any tree                     -> any_order()
//   any_order + FMA    s = fma(x, y, s) chains in every order, two chains joined -> any_order() with fma
//   split_k(s)         chunks of ceil(n/s), any tree inside, any/pairwise combine -> split_k(s[, pairwise])
//   mixed(acc, out)    products rounded to acc, any tree in acc, one rounding    -> mixed(acc, out)
//   directed           products and sums rounded toward zero / up / down         -> directed(any_order())
//   beta = 1           the existing output as one more term of the tree          -> any_order() on dot(x, y, c)
// Random for large n (binary32 and binary64 hardware arithmetic): random permutations, random chunkings with chunks
// of at most ceil(n/s) terms and random combine orders. Planted faults: the largest product dropped or doubled,
// checked to lie above the exact bound first, must not be covered.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "exactref/covers.h"
#include "exactref/dot.h"
#include "exactref/gemm.h"
#include "exactref/multiprecision.h"
#include "oracle.h"
#include "test_dot_checks.h"

namespace {
using namespace exactref;
namespace orc = exactref::oracle;
using namespace exactref::testing_support;

orc::boost_rational exact_product(std::uint64_t x, std::uint64_t y, const format_info& f) {
    return orc::boost_value(x, f) * orc::boost_value(y, f);
}

bool finite_bits(std::uint64_t b, const format_info& f) {
    const orc::parts p = orc::decode(f, b);
    return !p.nan && !p.inf;
}

// x·y rounded once into `to` (both finite), or the IEEE special when an operand is special.
std::uint64_t rounded_product(std::uint64_t x, std::uint64_t y, const format_info& f, const format_info& to,
                              rounding mode) {
    return orc::boost_round_bits(exact_product(x, y, f), to, mode);
}

reference dot_bits(const format_info& f, const bits_vector& x, const bits_vector& y,
                   const std::uint64_t* initial = nullptr) {
    switch (f.id) {
        case dtype::float64: {
            const auto xv = orc::from_bits<double>(x), yv = orc::from_bits<double>(y);
            return initial ? dot(std::span<const double>(xv), std::span<const double>(yv), std::bit_cast<double>(*initial))
                           : dot(std::span<const double>(xv), std::span<const double>(yv));
        }
        case dtype::float32: {
            const auto xv = orc::from_bits<float>(x), yv = orc::from_bits<float>(y);
            return initial ? dot(std::span<const float>(xv), std::span<const float>(yv),
                                 std::bit_cast<float>(static_cast<std::uint32_t>(*initial)))
                           : dot(std::span<const float>(xv), std::span<const float>(yv));
        }
        case dtype::float16: {
            const auto xv = orc::from_bits<float16>(x), yv = orc::from_bits<float16>(y);
            return initial ? dot(std::span<const float16>(xv), std::span<const float16>(yv),
                                 float16::from_bits(static_cast<std::uint16_t>(*initial)))
                           : dot(std::span<const float16>(xv), std::span<const float16>(yv));
        }
        case dtype::bfloat16: {
            const auto xv = orc::from_bits<bfloat16>(x), yv = orc::from_bits<bfloat16>(y);
            return initial ? dot(std::span<const bfloat16>(xv), std::span<const bfloat16>(yv),
                                 bfloat16::from_bits(static_cast<std::uint16_t>(*initial)))
                           : dot(std::span<const bfloat16>(xv), std::span<const bfloat16>(yv));
        }
    }
    return {};
}

// Every result in `results` (raw bits of `out`) must be covered.
void expect_all_covered(const std::vector<std::uint64_t>& results, const reference& ref, const standard& model,
                        const format_info& out, std::size_t& checked) {
    for (std::uint64_t r : results) {
        const verdict v = covers_bits(out, r, ref, model);
        ++checked;
        EXPECT_TRUE(v.covered) << orc::describe(r, out) << " not covered:\n" << v.message();
        if (::testing::Test::HasFailure()) return;
    }
}

std::vector<std::uint64_t> union_of(std::vector<std::vector<std::uint64_t>> sets) {
    std::vector<std::uint64_t> out;
    for (auto& s : sets) out.insert(out.end(), s.begin(), s.end());
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

const format_info* const all_formats[] = {&binary64_info, &binary32_info, &binary16_info, &bfloat16_info};
const orc::term_mix small_mixes[] = {orc::term_mix::clustered, orc::term_mix::cancelling, orc::term_mix::ties,
                                     orc::term_mix::subnormal, orc::term_mix::full_range, orc::term_mix::specials};

TEST(DotStandards, AnyOrderCoversEveryTreeOverEveryOrderExhaustively) {
    std::size_t checked = 0;
    std::uint64_t seed = 5000;
    for (const format_info* f : all_formats) {
        for (orc::term_mix mix : small_mixes) {
            for (std::size_t n = 1; n <= 7; ++n) {
                for (int trial = 0; trial < 3; ++trial) {
                    ++seed;
                    SCOPED_TRACE(std::string(f->name) + " " + orc::to_string(mix) + " n=" + std::to_string(n) +
                                 " seed=" + std::to_string(seed));
                    std::mt19937_64 rng(seed);
                    const bits_vector x = orc::random_terms(*f, n, mix, rng);
                    const bits_vector y = orc::random_terms(*f, n, orc::term_mix::clustered, rng);
                    bits_vector products;
                    for (std::size_t i = 0; i < n; ++i) {
                        if (!finite_bits(x[i], *f) || !finite_bits(y[i], *f)) {
                            const orc::parts a = orc::decode(*f, x[i]), b = orc::decode(*f, y[i]);
                            const bool zero_times_inf = (a.inf && b.significand == 0 && !b.inf && !b.nan) ||
                                                        (b.inf && a.significand == 0 && !a.inf && !a.nan);
                            products.push_back(a.nan || b.nan || zero_times_inf
                                                   ? orc::nan_bits(*f)
                                                   : orc::inf_bits(*f, a.negative != b.negative));
                        } else {
                            products.push_back(rounded_product(x[i], y[i], *f, *f, rounding::to_nearest_even));
                        }
                    }
                    const reference ref = dot_bits(*f, x, y);
                    expect_all_covered(orc::reachable_sums(products, *f), ref, any_order(), *f, checked);
                    if (::testing::Test::HasFailure()) return;
                }
            }
        }
    }
    RecordProperty("results_checked", std::to_string(checked));
    EXPECT_GT(checked, 600u);  // 654 distinct reachable results with these seeds: the sets were really enumerated
}

// s = fma(x_i, y_i, s) in every order (n <= 6), and two such chains joined by one addition at every split point.
TEST(DotStandards, FmaChainsInEveryOrderAreCoveredWithTheFmaStandard) {
    std::size_t checked = 0;
    std::uint64_t seed = 6000;
    standard model = any_order();
    model.fma = true;
    for (const format_info* f : {&binary64_info, &binary32_info, &binary16_info}) {
        for (orc::term_mix mix : {orc::term_mix::clustered, orc::term_mix::cancelling, orc::term_mix::subnormal}) {
            for (std::size_t n = 1; n <= 6; ++n) {
                ++seed;
                SCOPED_TRACE(std::string(f->name) + " " + orc::to_string(mix) + " n=" + std::to_string(n) +
                             " seed=" + std::to_string(seed));
                std::mt19937_64 rng(seed);
                const bits_vector x = orc::random_terms(*f, n, mix, rng);
                const bits_vector y = orc::random_terms(*f, n, orc::term_mix::clustered, rng);
                const reference ref = dot_bits(*f, x, y);
                std::vector<std::size_t> order(n);
                std::iota(order.begin(), order.end(), 0);
                std::vector<std::uint64_t> results;
                do {
                    // chains over order[0..split) and order[split..n), joined by one rounded addition
                    for (std::size_t split = 0; split <= n; ++split) {
                        auto chain = [&](std::size_t lo, std::size_t hi) {
                            std::uint64_t s = 0;  // +0.0
                            for (std::size_t t = lo; t < hi; ++t) {
                                const std::size_t i = order[t];
                                if (!finite_bits(s, *f)) continue;  // Inf + a finite product stays Inf
                                s = orc::boost_round_bits(exact_product(x[i], y[i], *f) + orc::boost_value(s, *f), *f,
                                                          rounding::to_nearest_even);
                            }
                            return s;
                        };
                        if (split == 0 || split == n) results.push_back(chain(0, n));
                        else results.push_back(orc::add_rounded(chain(0, split), chain(split, n), *f));
                    }
                } while (std::next_permutation(order.begin(), order.end()));
                std::sort(results.begin(), results.end());
                results.erase(std::unique(results.begin(), results.end()), results.end());
                expect_all_covered(results, ref, model, *f, checked);
                if (::testing::Test::HasFailure()) return;
            }
        }
    }
    EXPECT_GT(checked, 80u);  // 91 distinct chained results with these seeds
}

// Every way to cut n products into at most s contiguous non-empty chunks of at most k = ceil(n/s) each: exactly k
// per chunk (the usual kernel), and balanced splits such as {2, 1, 1, 1} for n = 5, s = 4, whose c = s chunk results
// take one more combine rounding than the ceil(n/k) = 3 chunks of the first.
std::vector<std::vector<std::size_t>> chunkings(std::size_t n, std::size_t s) {
    const std::size_t k = (n + s - 1) / s;
    std::vector<std::vector<std::size_t>> out;
    std::vector<std::size_t> sizes;
    auto grow = [&](auto&& self, std::size_t left) -> void {
        if (left == 0) {
            out.push_back(sizes);
            return;
        }
        if (sizes.size() == s) return;
        for (std::size_t size = 1; size <= std::min(k, left); ++size) {
            sizes.push_back(size);
            self(self, left - size);
            sizes.pop_back();
        }
    };
    grow(grow, n);
    return out;
}

// An FMA chain c = fma(x_i, y_i, c) from c = 0 over the products [lo, hi) in every order: the first step rounds its
// product alone (fma(x, y, 0) = RN(x·y)), every later one rounds once.
std::vector<std::uint64_t> fma_chains(const bits_vector& x, const bits_vector& y, std::size_t lo, std::size_t hi,
                                      const format_info& f) {
    std::vector<std::size_t> order(hi - lo);
    std::iota(order.begin(), order.end(), lo);
    std::vector<std::uint64_t> out;
    do {
        std::uint64_t c = 0;  // +0.0
        for (std::size_t i : order) {
            if (!finite_bits(c, f)) break;  // Inf + a finite product stays Inf
            c = orc::boost_round_bits(exact_product(x[i], y[i], f) + orc::boost_value(c, f), f,
                                      rounding::to_nearest_even);
        }
        out.push_back(c);
    } while (std::next_permutation(order.begin(), order.end()));
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

// split_k(s): for every chunking above, every chunk by any tree over its rounded products (or, for split_k(s)+fma, by
// an FMA chain in any order), the chunk results combined by any tree (any_order) or by a tree of height ceil(log2 c)
// (pairwise); with an existing output C (beta = 1) also C as one more combined value (atomics into C) — a planted
// bound that leaves out C's combine rounding, the balanced chunkings or the product rounding of an FMA chain is caught by
// SplitKWorstCasesReachTheirBounds below (random data rarely reaches a bound); this test guards soundness broadly.
TEST(DotStandards, SplitKCoversEveryChunkedEvaluationExhaustively) {
    std::size_t checked = 0;
    std::uint64_t seed = 7000;
    for (const format_info* f : {&binary32_info, &binary16_info, &bfloat16_info}) {
        for (orc::term_mix mix : {orc::term_mix::clustered, orc::term_mix::cancelling, orc::term_mix::ties}) {
            for (std::size_t n : {4u, 5u, 7u}) {
                for (std::uint64_t s : {2u, 3u, 4u}) {
                    ++seed;
                    SCOPED_TRACE(std::string(f->name) + " " + orc::to_string(mix) + " n=" + std::to_string(n) +
                                 " s=" + std::to_string(s) + " seed=" + std::to_string(seed));
                    std::mt19937_64 rng(seed);
                    const bits_vector x = orc::random_terms(*f, n, mix, rng);
                    const bits_vector y = orc::random_terms(*f, n, orc::term_mix::clustered, rng);
                    const bits_vector c0 = orc::random_terms(*f, 1, mix, rng);
                    const reference ref = dot_bits(*f, x, y);
                    const reference ref_c = dot_bits(*f, x, y, &c0[0]);
                    standard split_fma = split_k(s);
                    split_fma.fma = true;
                    for (const std::vector<std::size_t>& sizes : chunkings(n, s)) {
                        for (const bool fma : {false, true}) {
                            std::vector<std::vector<std::uint64_t>> chunk_results;
                            std::size_t lo = 0;
                            for (std::size_t size : sizes) {
                                if (fma) {
                                    chunk_results.push_back(fma_chains(x, y, lo, lo + size, *f));
                                } else {
                                    bits_vector products;
                                    for (std::size_t i = lo; i < lo + size; ++i)
                                        products.push_back(
                                            rounded_product(x[i], y[i], *f, *f, rounding::to_nearest_even));
                                    chunk_results.push_back(orc::reachable_sums(products, *f));
                                }
                                lo += size;
                            }
                            // every combination of one result per chunk
                            std::vector<std::size_t> pick(chunk_results.size(), 0);
                            std::vector<std::uint64_t> any_combine, pairwise_combine, onto_c, onto_c_pairwise;
                            const unsigned height = static_cast<unsigned>(std::bit_width(chunk_results.size() - 1));
                            for (;;) {
                                bits_vector parts;
                                for (std::size_t i = 0; i < pick.size(); ++i) parts.push_back(chunk_results[i][pick[i]]);
                                for (auto r : orc::reachable_sums(parts, *f)) any_combine.push_back(r);
                                for (auto r : orc::reachable_sums_height(parts, *f, height))
                                    pairwise_combine.push_back(r);
                                parts.push_back(c0[0]);
                                for (auto r : orc::reachable_sums(parts, *f)) onto_c.push_back(r);
                                for (auto r : orc::reachable_sums_height(parts, *f, height + 1))
                                    onto_c_pairwise.push_back(r);
                                std::size_t i = 0;
                                while (i < pick.size() && ++pick[i] == chunk_results[i].size()) pick[i++] = 0;
                                if (i == pick.size()) break;
                            }
                            standard any = fma ? split_fma : split_k(s);
                            standard pairwise = split_k(s, split_combine::pairwise);
                            pairwise.fma = fma;
                            expect_all_covered(union_of({any_combine}), ref, any, *f, checked);
                            expect_all_covered(union_of({pairwise_combine}), ref, pairwise, *f, checked);
                            expect_all_covered(union_of({onto_c}), ref_c, any, *f, checked);
                            expect_all_covered(union_of({onto_c_pairwise}), ref_c, pairwise, *f, checked);
                            if (::testing::Test::HasFailure()) return;
                        }
                    }
                }
            }
        }
    }
    EXPECT_GT(checked, 2000u);
}

// Hand-built evaluations that reach the split-K bounds (random data rarely does), each computed here with binary32
// hardware arithmetic in round-to-nearest-even. A bound one rounding short rejects each of them.
TEST(DotStandards, SplitKWorstCasesReachTheirBounds) {
    const float u = 0x1p-24f;
    // (a) K = 5 products cut into s = 4 chunks as {2, 1, 1, 1}: the chunk sum 1 + u ties to 1, then three combines
    //     each tie back to 1; |r - s| = 4u with depth 1 + 3 (+ the exact products' rounding): not the depth 1 + 2 of
    //     ceil(5/2) = 3 chunks of 2.
    {
        const std::vector<float> x{1.0f, u, u, u, u}, y(5, 1.0f);
        float chunk0 = x[0] * y[0] + x[1] * y[1];
        float r = chunk0;
        for (int i = 2; i < 5; ++i) r = r + x[i] * y[i];
        ASSERT_EQ(r, 1.0f);
        const reference ref = dot(std::span<const float>(x), std::span<const float>(y));
        EXPECT_TRUE(covers(r, ref, split_k(4))) << covers(r, ref, split_k(4)).message();
        const std::vector<float> sx{1.0f, u, u, u, u};
        const verdict v = covers(r, sum(sx), split_k(4));
        EXPECT_TRUE(v.covered) << v.message();
        EXPECT_GT(v.ratio, 0.75) << "depth 4: a bound of depth 3 (γ_3 ≈ 0.75·γ_4) rejects this result";
        EXPECT_FALSE(covers(r, sum(sx), tree(3))) << "γ_3 rejects it";
    }
    // (b) an FMA chain c = fma(x_i, y_i, c) from 0: the first product is rounded alone (fma(x, y, 0) = RN(x·y)), so
    //     split_k(1)+fma and tree(1)+fma still count the product rounding (two ties to even here).
    {
        const std::vector<float> x{1.0f + 0x1p-12f, 0x1p-12f};
        float c = std::fma(x[0], x[0], 0.0f);
        c = std::fma(x[1], x[1], c);
        ASSERT_EQ(c, 0x1.002p+0f);
        const reference ref = dot(std::span<const float>(x), std::span<const float>(x));
        for (standard model : {split_k(1), tree(1), any_order()}) {
            model.fma = true;
            const verdict v = covers(c, ref, model);
            EXPECT_TRUE(v.covered) << v.message();
            EXPECT_GT(v.ratio, 0.5) << "depth 2: a bound of depth 1 (γ_1 ≈ 0.5·γ_2) rejects this result";
        }
    }
    // (c) beta = 1: C + 8 products in 4 chunks of 2, the chunk results added onto C one by one (atomics into an
    //     existing output): every chunk's path has 4 combine roundings, depth 2 + 4 = 6 (not 5, as if C were one
    //     more product inside the chunking: ceil(8/4) = 2 for K = 7).
    {
        const float x0 = 1.0003178119659424f, y0 = 1.0001875162124634f;  // x0·y0 rounds down by about u
        const float eps = 0x1p-24f * (1 - 0x1p-12f);
        for (std::size_t K : {7u, 8u}) {  // chunks {2, 2, 2, 1} and {2, 2, 2, 2}
        SCOPED_TRACE("K = " + std::to_string(K));
        std::vector<float> a{x0, eps, eps, 0, eps, 0, eps, 0}, b{y0, 1, 1, 0, 1, 0, 1, 0};
        a.resize(K);
        b.resize(K);
        const float c0 = eps;
        float r = c0;
        for (std::size_t j = 0; j < K; j += 2) r = r + (j + 1 < K ? a[j] * b[j] + a[j + 1] * b[j + 1] : a[j] * b[j]);
        const reference ref = dot(std::span<const float>(a), std::span<const float>(b), c0);
        EXPECT_TRUE(ref.has_initial);
        const verdict v = covers(r, ref, split_k(4));
        EXPECT_TRUE(v.covered) << v.message();
        EXPECT_GT(v.ratio, 0.8) << "the case should come close to the bound";
        const verdict w = covers(r, ref, split_k(4, split_combine::pairwise));  // C after the pairwise tree
        EXPECT_FALSE(w.covered) << "the pairwise bound (depth 2 + 2 + 1) is below this sequential evaluation's error";
        }
    }
}

// float16 / bfloat16 inputs, products rounded to float32, any tree in float32, one rounding to the output format.
TEST(DotStandards, MixedPrecisionCoversTensorCoreStyleEvaluations) {
    std::size_t checked = 0;
    std::uint64_t seed = 8000;
    for (const format_info* f : {&binary16_info, &bfloat16_info}) {
        for (const format_info* out : {f, &binary32_info}) {
            for (orc::term_mix mix : {orc::term_mix::clustered, orc::term_mix::cancelling, orc::term_mix::subnormal}) {
                for (std::size_t n = 1; n <= 7; ++n) {
                    ++seed;
                    SCOPED_TRACE(std::string(f->name) + "->" + std::string(out->name) + " " + orc::to_string(mix) +
                                 " n=" + std::to_string(n) + " seed=" + std::to_string(seed));
                    std::mt19937_64 rng(seed);
                    const bits_vector x = orc::random_terms(*f, n, mix, rng);
                    const bits_vector y = orc::random_terms(*f, n, orc::term_mix::clustered, rng);
                    const reference ref = dot_bits(*f, x, y);
                    bits_vector products;
                    for (std::size_t i = 0; i < n; ++i)
                        products.push_back(rounded_product(x[i], y[i], *f, binary32_info, rounding::to_nearest_even));
                    std::vector<std::uint64_t> results;
                    for (std::uint64_t acc : orc::reachable_sums(products, binary32_info)) {
                        const orc::parts a = orc::decode(binary32_info, acc);
                        if (a.nan) results.push_back(orc::nan_bits(*out));
                        else if (a.inf) results.push_back(orc::inf_bits(*out, a.negative));
                        else
                            results.push_back(orc::boost_round_bits(orc::boost_value(acc, binary32_info), *out,
                                                                    rounding::to_nearest_even));
                    }
                    expect_all_covered(union_of({results}), ref, mixed(dtype::float32, out->id), *out, checked);
                    if (::testing::Test::HasFailure()) return;
                }
            }
        }
    }
    EXPECT_GT(checked, 90u);  // 98 distinct results with these seeds
}

TEST(DotStandards, DirectedRoundingCoversTruncatingHardware) {
    std::size_t checked = 0;
    std::uint64_t seed = 9000;
    for (const format_info* f : all_formats) {
        for (rounding mode : {rounding::toward_zero, rounding::upward, rounding::downward}) {
            for (orc::term_mix mix : {orc::term_mix::clustered, orc::term_mix::cancelling, orc::term_mix::subnormal}) {
                for (std::size_t n = 1; n <= 6; ++n) {
                    ++seed;
                    SCOPED_TRACE(std::string(f->name) + " " + std::string(to_string(mode)) + " " +
                                 orc::to_string(mix) + " n=" + std::to_string(n) + " seed=" + std::to_string(seed));
                    std::mt19937_64 rng(seed);
                    const bits_vector x = orc::random_terms(*f, n, mix, rng);
                    const bits_vector y = orc::random_terms(*f, n, orc::term_mix::clustered, rng);
                    const reference ref = dot_bits(*f, x, y);
                    // Bounds assume no overflow (DESIGN §3): directed rounding saturates at ±max instead of giving
                    // ±Inf, so inputs whose T reaches the overflow threshold are outside every relative bound.
                    if (to_mpq(ref.abs_sum) >= mpq_class(orc::gmp_value(orc::max_bits(*f, false), *f))) continue;
                    bits_vector products;
                    for (std::size_t i = 0; i < n; ++i) products.push_back(rounded_product(x[i], y[i], *f, *f, mode));
                    expect_all_covered(orc::reachable_sums(products, *f, mode), ref, directed(any_order()), *f,
                                       checked);
                    if (::testing::Test::HasFailure()) return;
                }
            }
        }
    }
    EXPECT_GT(checked, 300u);
}

TEST(DotStandards, ExistingOutputIsOneMoreTermOfTheTree) {
    std::size_t checked = 0;
    std::uint64_t seed = 9500;
    for (const format_info* f : all_formats) {
        for (std::size_t n = 1; n <= 6; ++n) {
            ++seed;
            SCOPED_TRACE(std::string(f->name) + " n=" + std::to_string(n) + " seed=" + std::to_string(seed));
            std::mt19937_64 rng(seed);
            const bits_vector x = orc::random_terms(*f, n, orc::term_mix::cancelling, rng);
            const bits_vector y = orc::random_terms(*f, n, orc::term_mix::clustered, rng);
            const bits_vector c = orc::random_terms(*f, 1, orc::term_mix::clustered, rng);
            const reference ref = dot_bits(*f, x, y, &c[0]);
            EXPECT_EQ(ref.count, n + 1);
            bits_vector terms;
            for (std::size_t i = 0; i < n; ++i)
                terms.push_back(rounded_product(x[i], y[i], *f, *f, rounding::to_nearest_even));
            terms.push_back(c[0]);
            expect_all_covered(orc::reachable_sums(terms, *f), ref, any_order(), *f, checked);
            if (::testing::Test::HasFailure()) return;
        }
    }
}

// ---- large n: hardware arithmetic in random orders and chunkings -------------------------------------------------

template <class T>
T fold(const std::vector<T>& x, const std::vector<T>& y, const std::vector<std::size_t>& idx, std::size_t lo,
       std::size_t hi) {
    T s = 0;
    for (std::size_t t = lo; t < hi; ++t) s = s + static_cast<T>(x[idx[t]] * y[idx[t]]);  // product rounded, then sum
    return s;
}

template <class T>
void random_orders_and_chunkings(std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> normal(0.0, 1.0);
    const std::size_t n = 5000;
    std::vector<T> x(n), y(n);
    for (std::size_t i = 0; i < n; ++i) {
        x[i] = static_cast<T>(normal(rng));
        y[i] = static_cast<T>(normal(rng) * (i % 7 == 0 ? -1e3 : 1.0));
    }
    const reference ref = dot(std::span<const T>(x), std::span<const T>(y));
    std::vector<std::size_t> idx(n);
    std::iota(idx.begin(), idx.end(), 0);
    for (int trial = 0; trial < 20; ++trial) {
        SCOPED_TRACE("trial " + std::to_string(trial) + " seed " + std::to_string(seed));
        std::shuffle(idx.begin(), idx.end(), rng);
        const T whole = fold(x, y, idx, 0, n);
        EXPECT_TRUE(covers(whole, ref, any_order()).covered) << covers(whole, ref, any_order()).message();
        for (std::uint64_t s : {2u, 7u, 64u}) {
            // random split points: s chunks of at most ceil(n/s) terms each (the chunks of the standard, or smaller)
            const std::size_t k = (n + s - 1) / s;
            std::vector<std::size_t> cuts{0};
            while (cuts.back() < n) {
                const std::size_t remaining_chunks = s - (cuts.size() - 1);
                const std::size_t min_len = (n - cuts.back() + remaining_chunks - 1) / remaining_chunks;
                std::uniform_int_distribution<std::size_t> len(std::max<std::size_t>(1, min_len), k);
                cuts.push_back(std::min(n, cuts.back() + len(rng)));
            }
            std::vector<T> partial;
            for (std::size_t c = 0; c + 1 < cuts.size(); ++c) partial.push_back(fold(x, y, idx, cuts[c], cuts[c + 1]));
            ASSERT_LE(partial.size(), s);
            std::shuffle(partial.begin(), partial.end(), rng);
            T combined = 0;
            for (T v : partial) combined = combined + v;
            const verdict v = covers(combined, ref, split_k(s));
            EXPECT_TRUE(v.covered) << v.message();
        }
    }
    // Planted faults: the largest product dropped or doubled, above the exact any_order bound.
    std::size_t big = 0;
    for (std::size_t i = 0; i < n; ++i)
        if (std::abs(static_cast<double>(x[i]) * y[i]) > std::abs(static_cast<double>(x[big]) * y[big])) big = i;
    std::iota(idx.begin(), idx.end(), 0);
    const T right = fold(x, y, idx, 0, n);
    for (T wrong : {static_cast<T>(right - x[big] * y[big]), static_cast<T>(right + x[big] * y[big])}) {
        const mpq_class err = abs(mpq_class(static_cast<double>(wrong)) - to_mpq(ref.sum));
        const mpq_class b =
            mpq_class(static_cast<long>(n)) * mpq_class(1, 2) / mpq_class(mpz_class(1) << (format_traits<T>::info.precision - 1)) *
            to_mpq(ref.abs_sum);
        ASSERT_GT(err, b) << "the planted fault must exceed n·u·T";
        EXPECT_FALSE(covers(wrong, ref, any_order()).covered);
        EXPECT_FALSE(covers(wrong, ref, split_k(7)).covered);
    }
}

TEST(DotStandards, RandomOrdersAndSplitPointsForLargeN) {
    random_orders_and_chunkings<float>(424242);
    random_orders_and_chunkings<double>(434343);
}

// Planted faults in small dot products for every bound standard: the largest product dropped or doubled.
TEST(DotStandards, DroppedOrDoubledProductsAreRejected) {
    std::mt19937_64 rng(31);
    std::normal_distribution<double> normal(0.0, 1.0);
    std::size_t rejected = 0;
    for (int trial = 0; trial < 50; ++trial) {
        std::vector<float> x(64), y(64);
        for (std::size_t i = 0; i < 64; ++i) {
            x[i] = static_cast<float>(normal(rng));
            y[i] = static_cast<float>(normal(rng));
        }
        x[5] = 40.0f;  // one product dominates
        const reference ref = dot(std::span<const float>(x), std::span<const float>(y));
        const float right = ref.nearest<float>();
        for (const standard& model : {any_order(), split_k(4), split_k(4, split_combine::pairwise), tree(7),
                                      directed(any_order())}) {
            for (float wrong : {right - x[5] * y[5], right + x[5] * y[5]}) {
                const verdict v = covers(wrong, ref, model);
                EXPECT_FALSE(v.covered) << v.message();
                rejected += !v.covered;
            }
            EXPECT_TRUE(covers(right, ref, model).covered);
        }
    }
    EXPECT_EQ(rejected, 50u * 5u * 2u);
}

// A small GEMM: every element, every tree over every order of its products (K = 6), covered.
TEST(DotStandards, GemmElementsCoverEveryOrderExhaustively) {
    std::mt19937_64 rng(77);
    const std::size_t m = 3, k = 6, n = 4;
    const bits_vector a = orc::random_terms(binary32_info, m * k, orc::term_mix::cancelling, rng);
    const bits_vector b = orc::random_terms(binary32_info, k * n, orc::term_mix::clustered, rng);
    const auto av = orc::from_bits<float>(a), bv = orc::from_bits<float>(b);
    const product_reference p =
        exact_matmul(row_major<float>(av, m, k), row_major<float>(bv, k, n), matmul_options{matmul_method::sliced, 1, 0});
    std::size_t checked = 0;
    for (std::size_t i = 0; i < m; ++i)
        for (std::size_t j = 0; j < n; ++j) {
            bits_vector products;
            for (std::size_t l = 0; l < k; ++l)
                products.push_back(rounded_product(a[i * k + l], b[l * n + j], binary32_info, binary32_info,
                                                   rounding::to_nearest_even));
            expect_all_covered(orc::reachable_sums(products, binary32_info), p.element(i, j), any_order(),
                               binary32_info, checked);
        }
    EXPECT_GT(checked, 12u);
}

}  // namespace
