// exactref/testing.h — order-free test data: random-looking terms whose sum every allowed evaluation gets exactly.
//
// A test of a reduction kernel that compares its result with the exact sum needs a bound, because a correct kernel
// rounds (standard.h). Order-free data removes the bound: every partial sum that any allowed evaluation can form is
// representable in the format, so every allowed evaluation is exact and returns RN(s) = s bit for bit, and the
// `exact` standard (covers.h) then rejects every result that is off by even one quantum: a lost term, a term counted
// twice, a lost group result. "Allowed" is any order and any binary tree without a structure; with a structure
// (standard.h, "levels:fold/4,any") it is every evaluation consistent with it, which lets n grow without limit.
// docs/order-free.md has the construction, the proof and thelimits.
#pragma once

#include "exactref/config.h"  // C++20, or a clear error

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "exactref/format.h"
#include "exactref/standard.h"

namespace exactref::testing {

/// Fills `out` with order-free terms of format T (double, float, float16, bfloat16), deterministic from `seed`.
///
///   out        n = out.size() terms; n = 0 is allowed (the empty sum, +0.0)
///   seed       any value; the same (n, seed, structure) gives the same bits on every platform and compiler
///              (xoshiro256** seeded by splitmix64, integer arithmetic only: independent of the FP environment)
///   structure  nullptr: every order and every binary tree is allowed (atomics, any parallel schedule).
///              A structured standard (parse_standard("levels:fold/4,any"), standard.h): the evaluations
///              consistent with its levels; a `fold` level's groups are folded in index order, a `tree` or `any`
///              level may combine any subset of a group's items first. Prefixes: `directed:` is accepted (exact data
///              is exact in every rounding mode), `mixed:ACC:OUT:` when ACC holds every value of T (the data is
///              order-free in T, hence in ACC).
///
/// Promise (docs/order-free.md, Theorem 1): every term is a non-zero multiple of one quantum q = 2^e (a normal
/// number), |term| <= M·q, and every partial sum an allowed evaluation forms is a multiple of q with magnitude at
/// most W·q, W + M = 2^p: representable, so every allowed evaluation is exact. Margin (Theorem 2): an evaluation
/// that is allowed except that it loses one term x_j, or adds it twice, is exact too and returns s - x_j or
/// s + x_j, which differs from RN(s) = s; covers(r, ref, exact()) rejects it. Signs are random, magnitudes spread
/// over up to p - 1 binades (fewer when n nears the limit), s is a random small multiple of q (it may be 0).
///
/// Throws std::invalid_argument when no such data of n terms exists for the format and structure (without a
/// structure: n > order_free_max_terms(T's dtype), 2^(p+1) - 2), with what to do (pass a structure, a wider dtype
/// or a smaller n); when `structure` is not a structured standard (levels:), names one whose groups would be empty
/// (level_shapes), or accumulates (mixed) in a format that does not hold T.
///   std::vector<float> x(1000);
///   exactref::testing::fill_order_free(std::span<float>(x), 7);   // every order of x sums to exactref::sum(x)
template <floating_format T>
void fill_order_free(std::span<T> out, std::uint64_t seed, const standard* structure = nullptr);

/// n order-free terms (see fill_order_free), for any order and any tree.
///   auto x = exactref::testing::order_free_data<exactref::float16>(4000, 1);
///   // x.size() == 4000; every tree over every order of x gives exactref::sum(x).nearest<float16>()
template <floating_format T>
std::vector<T> order_free_data(std::size_t n, std::uint64_t seed = 0) {
    std::vector<T> out(n);
    fill_order_free(std::span<T>(out), seed, nullptr);
    return out;
}

/// n order-free terms for the evaluations consistent with `structure` (a structured standard).
///   auto x = exactref::testing::order_free_data<exactref::float16>(
///       1'000'000, 1, exactref::parse_standard("levels:fold/4,any"));  // 4 static chunks folded, then atomics
template <floating_format T>
std::vector<T> order_free_data(std::size_t n, std::uint64_t seed, const standard& structure) {
    std::vector<T> out(n);
    fill_order_free(std::span<T>(out), seed, &structure);
    return out;
}

/// The largest n for which order-free data for any order exists in this construction: 2^(p+1) - 2 (every term
/// ±q, half of each sign). float16 4094, bfloat16 510, float32 33554430, float64 2^54 - 2. No data of non-zero
/// terms, with or without the margin, exceeds 2^(p+1) for p = 2, 3 (exhaustive search, docs/order-free.md).
std::uint64_t order_free_max_terms(dtype format) noexcept;

}  // namespace exactref::testing
