// exactref/covers.h — covers(): does a computed result lie within an error model? Decided exactly.
//
// The comparison |r - s| <= B is made on integers (GMP): r, s and S are dyadic, u is a power of two and γ_k is the
// rational k·u/(1 - k·u), so |r - s|·den(B) <= num(B) is an integer inequality. Nothing is rounded on the way; the
// doubles in a verdict (error, bound, ratio, ulps) are for display only.
//
// Special values (docs/standards.md): a NaN term makes only NaN covered; +Inf terms only (no -Inf) make only +Inf
// covered; both make only NaN covered. With finite terms, +Inf is covered exactly when (1+(n-1)u)·P >= Ω (P = sum of
// the positive terms, Ω = (2 - 2^-p)·2^emax the round-to-nearest overflow threshold; 2u for directed), -Inf likewise
// with the negative terms; NaN only when both are (for mixed, Ω is the smaller of acc's and out's). -0.0 is covered
// only when every term is -0.0 (round-to-nearest cannot produce it otherwise), unless the standard allows it
// (any_zero_sign, directed), a negative product may underflow (dots), or mixed's final rounding into a narrower
// out may flush a negative value. Directed standards add ±max when a partial sum can exceed it (terms of one sign)
// or every finite result (terms of both signs): overflow does not stick under RZ/RD/RU. docs/standards.md has the
// details.
#pragma once

#include "exactref/config.h"  // C++20, or a clear error

#include <cstddef>
#include <cstdint>
#include <optional>  // suggest_narrower_format
#include <span>
#include <string>
#include <vector>

#include "exactref/format.h"
#include "exactref/reference.h"
#include "exactref/standard.h"

namespace exactref {

class compact_reference_array;  // scatter.h
class product_reference;        // gemm.h

/// What a check can see: the bound B relative to the sum, to S = Σ|t_i| (T for dots) and to the largest
/// term. A fault that moves the sum by less than B (a lost term, a lost block, a term counted twice) cannot be seen.
struct verdict_sensitivity {
    double of_sum = 0;      // B / |s| (inf when s = 0 < B)
    double of_abs_sum = 0;  // B / S  (>= 1: vacuous)
    double of_largest = 0;  // B / max|t_i|; NaN when the reference does not know its largest term (dots, GEMM)
};

/// The decision of covers() and the numbers behind it.
struct verdict {
    bool covered = false;
    std::string standard;          // the standard's name()
    dtype result_format = dtype::float64;
    std::string result;            // r, shortest round-trip decimal in its format ("30.604261")
    std::string exact;             // s, exact decimal
    std::string error_exact;       // r - s, exact decimal ("" when r or s is not finite)
    double error = 0;              // r - s rounded to nearest binary64
    double bound = 0;              // B rounded upward to binary64 (never below the exact bound); inf when unbounded
    double ratio = 0;              // |r - s| / B (0 when both are 0, inf when B = 0 < |r - s|)
    double ulps = 0;               // (r - s) / ulp(RN(s)) in the result's format
    std::string reason;            // why, when a special-value or signed-zero rule decided
    bool vacuous = false;          // B >= S > 0 (or B infinite): no lost or doubled subset of the terms can be seen, not
                                   // even a result of 0; exact and faithful are never vacuous
    verdict_sensitivity sensitivity;  // B against |s|, S and max|t_i| (zeros for exact and faithful)
    std::string advice;            // when vacuous: a tighter standard or a smaller n that would see something

    explicit operator bool() const noexcept { return covered; }
    /// Several lines: verdict, standard, exact value, result, error, bound, ratio, ulps (and the reason).
    std::string message() const;
};
using Verdict = verdict;

/// Decides whether `result` (raw bits of `result_format`) is covered by `model` for the reference `ref`.
/// The accumulation format is result_format unless the standard names one (mixed).
/// Throws std::invalid_argument for a standard that does not apply (mixed whose output format differs from the
/// result's, a dot-only option on a sum).
verdict covers_bits(const format_info& result_format, std::uint64_t result_bits, const reference& ref,
                    const standard& model);

/// The decision and its numbers without the verdict's strings: for many results (a tenth of covers_bits' cost).
struct decision {
    bool covered = false;
    double error = 0;  // as verdict::error
    double ratio = 0;  // as verdict::ratio
    double ulps = 0;   // as verdict::ulps
};
decision decide_bits(const format_info& result_format, std::uint64_t result_bits, const reference& ref,
                     const standard& model);

template <floating_format T>
verdict covers(T result, const reference& ref, const standard& model) {
    return covers_bits(format_traits<T>::info, format_traits<T>::to_bits(result), ref, model);
}
template <floating_format T>
verdict covers(T result, const reference& ref);  // any_order()

/// explain(): every standard of a fixed list judged on one result — exact, faithful, tree:ceil(log2 n), split_k:s
/// for s = 2, 4, ..., 256 (s < n), any_order, directed:any_order, mixed:float32:OUT for 16-bit results, and every
/// structured standard the reference was built with (reference::structures) — the ones that cover the result first,
/// tightest (smallest bound, exact and faithful before any bound) first, then the ones that reject it by ratio.
/// any_zero_sign is set on every candidate (standard::any_zero_sign: exact and faithful take either sign of an exact
/// zero; bound standards take -0.0 whenever 0 is within the bound), as covers() with that option would judge.
std::vector<verdict> explain_bits(const format_info& result_format, std::uint64_t result_bits, const reference& ref,
                                  bool any_zero_sign = false);
template <floating_format T>
std::vector<verdict> explain(T result, const reference& ref, bool any_zero_sign = false) {
    return explain_bits(format_traits<T>::info, format_traits<T>::to_bits(result), ref, any_zero_sign);
}

/// A hint, never a verdict: the narrower format a rejected result looks computed in. A float32 sum judged as float64
/// (text input reads as float64 unless told otherwise) fails by thousands of bounds; this says "try float32".
/// Returns the widest format N narrower than result_format (float32, then float16, then bfloat16) for which both
/// hold, else nothing:
///   1. the result is a finite non-zero value y of N exactly, or it is what N's shortest decimal of y = RN_N(result)
///      reads as in result_format (a float32 printed as "30.604263" and read as float64); then y is judged. (A
///      float64 computation lands on such a value with a chance of about 2^-29; a short decimal such as "3.5"
///      fits every format, so its hint is weak: it says what would cover it, not what happened);
///   2. `model` read in N covers y with the data's own rounding into N allowed for: |r - s| <= B_N + u_N·S, where
///      B_N is model's bound with results and terms in N (a non-bound model, exact or faithful, reads as any_order)
///      and u_N·S bounds how far rounding every term into N moves s (|RN_N(x) - x| <= u_N·|x|). Decided on the
///      verdict's binary64 numbers: a hint may err by a rounding, a verdict never does.
///   3. that reading could see a lost term: B_N + u_N·S < S (not vacuous). A format in which the check covers
///      everything, 0 included (any_order in float16 from n = 2049 on), is never suggested: it would trade a
///      rejection for a verdict that says nothing.
/// Nothing for a covered result, a mixed standard (its output format is given), NaN, Inf or zero.
///   covers_bits(binary64_info, bits_of_float32_sum, ref64, any_order()).covered   // false, ratio 6080
///   suggest_narrower_format(binary64_info, bits_of_float32_sum, ref64, any_order()) // -> dtype::float32
std::optional<dtype> suggest_narrower_format(const format_info& result_format, std::uint64_t result_bits,
                                             const reference& ref, const standard& model);

/// The exact bound B of `model` for `ref` with results in `result_format`, rounded upward to binary64.
/// +inf when the model gives no finite bound (k·u >= 1 in γ_k). Throws like covers_bits.
double bound(const reference& ref, const standard& model, const format_info& result_format);

/// covers() over many results: every results[i] against the same reference (several runs of one sum), or
/// results[i] against refs.elements[i] (row sums, GEMM entries; sizes must match, else std::invalid_argument).
/// Speed: a binary64 filter with proven margins decides almost every element (tens of millions per second for one
/// reference, ~10^7 per second for a reference_array, whose 2.3 KB elements make it memory-bound); only elements it
/// cannot decide (within about two binary64 ulps of s ± B, NaN, Inf, -0.0 results, references with special terms)
/// take the exact comparison, so every field is what the exact decision gives (docs/algorithms/covers-filter.md).
/// Strings are built for the worst element only. The calling thread's rounding mode and FTZ/DAZ do not matter.
struct array_verdict {
    bool covered = true;
    std::size_t size = 0;
    std::size_t violations = 0;
    std::size_t worst_index = 0;                 // largest ratio (first violation wins ties)
    verdict worst;                               // the verdict at worst_index
    std::vector<std::size_t> first_violations;   // up to 8 indices, in order
    explicit operator bool() const noexcept { return covered; }
    std::string message() const;
};

template <floating_format T>
array_verdict covers(std::span<const T> results, const reference& ref, const standard& model);
template <floating_format T>
array_verdict covers(std::span<const T> results, const reference_array& refs, const standard& model);
/// results[i] against element i of a compact reference array (scatter.h: segment sums, scatter-adds, scans): each
/// element's standard over its own n_i terms. The same filter and exact path; the first call under a bound standard
/// keeps a 24-byte summary per element with the array, and later calls stream it (~50 M elements/s for any_order).
/// Throws std::invalid_argument when the sizes differ, or like covers_bits.
template <floating_format T>
array_verdict covers(std::span<const T> results, const compact_reference_array& refs, const standard& model);

/// results[i·n + j] (row-major, rows() x cols()) against element (i, j) of an exact matrix product (gemm.h): the
/// verdict covers() over product.to_array() gives — same covered flag, violations, worst element and message — without
/// building a reference per element. Each element's s and T are summed exactly from the product's level sums, enclosed
/// in binary64 and judged by the filter (~11 M elements/s on one thread for float32 N(0, 1) data, ~6 M/s for float64:
/// docs/performance.md); elements with Inf/NaN operands, more than 64 far products, products computed per element,
/// and undecided results are judged on the element's own reference (element(i, j)), so every verdict is exact
/// (docs/algorithms/covers-filter.md, Steps P1-P3). The calling thread's rounding mode and FTZ/DAZ do not matter.
/// Throws std::invalid_argument when results.size() != rows()·cols(), or like covers_bits (a structured standard: a
/// product's elements hold no structured bound).
///   auto p = exactref::exact_matmul(exactref::row_major<float>(a, m, k), exactref::row_major<float>(b, k, n));
///   exactref::covers(std::span<const float>(c), p, exactref::any_order()).covered   // -> true for a @ b
template <floating_format T>
array_verdict covers(std::span<const T> results, const product_reference& product, const standard& model);

/// The same for a std::vector of results (no explicit std::span needed).
template <floating_format T>
array_verdict covers(const std::vector<T>& results, const reference& ref, const standard& model) {
    return covers(std::span<const T>(results), ref, model);
}
template <floating_format T>
array_verdict covers(const std::vector<T>& results, const reference_array& refs, const standard& model) {
    return covers(std::span<const T>(results), refs, model);
}

template <floating_format T>
array_verdict covers(const std::vector<T>& results, const product_reference& product, const standard& model) {
    return covers(std::span<const T>(results), product, model);
}

template <floating_format T>
verdict covers(T result, const reference& ref) {
    return covers(result, ref, any_order());
}
template <floating_format T>
verdict reference::covers(T result, const standard& model) const {
    return exactref::covers(result, *this, model);
}
template <floating_format T>
verdict reference::covers(T result) const {
    return exactref::covers(result, *this, any_order());
}

}  // namespace exactref
