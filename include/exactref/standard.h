// exactref/standard.h — named, sourced error models: which results a correct implementation may return.
//
// With u = 2^-p the unit roundoff of the accumulation format, n the number of terms, s the exact sum and
// S = Σ|t_i|, a result r is covered when |r - s| <= B (decided exactly, covers.h) and the special-value rules hold:
//
//   standard          bound B                                             source
//   exact()           r == RN(s) bitwise (any NaN matches NaN)            IEEE 754-2019 §4.3.1
//   faithful()        r ∈ {RD(s), RU(s)}                                  —
//   any_order()       (n-1)·u·S                                           Rump, BIT 52 (2012); Jeannerod–Rump (2013);
//                                                                         Lange–Rump, BIT 57 (2017)
//   tree(h)           γ_h·S, γ_k = k·u/(1-k·u)                            Higham, ASNA 2nd ed., §4.2
//   split_k(s)        K terms in s chunks of at most k = ceil(K/s),       per-leaf depth form of Higham §4.2
//                     c = min(s, K) chunk results: γ_{k+c-2}·S (any-order combine), γ_{k-1+ceil(log2 c)}·S
//                     (pairwise); dot products with an existing output C (has_initial) one more, for C's combine
//   mixed(acc, out)   (n-1)·u_acc·S + u_out·(|s| + (n-1)·u_acc·S) + η_out composition of the rows above;
//                     η_out = 2^(emin-p) of out (a final rounding into the subnormals, Higham (2.8))
//   directed(base)    base with u replaced by 2u (any rounding mode, truncation)   Lange–Rump (2017)
//
// For dot products (dot.h) n·u·T replaces (n-1)·u·S, T = Σ|x_i·y_i| (Higham (3.5); Jeannerod–Rump SIMAX 34 (2013)),
// and tree/split_k depths count one more rounding for the product, with or without FMA (a chain starts with
// fma(x, y, 0) = RN(x·y)). docs/standards.md has the special-value rules (overflow, directed saturation, -0.0).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "exactref/format.h"

namespace exactref {

enum class standard_kind { exact, faithful, any_order, tree, split_k, mixed };

/// How split-K chunk results are combined: in any order (atomics) or as a pairwise tree.
enum class split_combine { any_order, pairwise };

/// An error model. Build one with the factories below; name() gives its CLI spelling.
struct standard {
    standard_kind kind = standard_kind::any_order;
    std::uint64_t height = 0;                              // tree(h)
    std::uint64_t chunks = 0;                              // split_k(s)
    split_combine combine = split_combine::any_order;      // split_k(s)
    std::optional<dtype> accumulate;                       // mixed: accumulation format
    std::optional<dtype> output;                           // mixed: output format (the result's format)
    bool directed = false;                                 // u -> 2u (Lange–Rump 2017)
    bool fma = false;                                      // dot products computed with FMA (dot.h)
    bool allow_negative_zero = false;                      // accept -0.0 for an exact zero (FTZ hardware, RD)

    /// "exact", "faithful", "any_order", "tree:H", "split_k:S", "split_k:S:pairwise", "mixed:ACC:OUT", with
    /// a "directed:" prefix when directed.
    std::string name() const;
};

/// r == RN(s), bit for bit (IEEE 754 correct rounding). NaN matches any NaN.
standard exact();
/// r is RD(s) or RU(s).
standard faithful();
/// Any order of n-1 additions, rounding to nearest: |r - s| <= (n-1)·u·S.
standard any_order();
/// A tree of height at most h (at most h additions on any root-to-leaf path): |r - s| <= γ_h·S. h = 0 is a single
/// term (n <= 1). covers() throws std::invalid_argument when the reference has more than 2^h terms: no tree of
/// height h holds them (use tree_height(shape, n) of tree.h, or ceil(log2 n) for the shallowest tree).
standard tree(std::uint64_t height);
/// Split-K: the terms in s chunks of at most k = ceil(n/s) each (exactly k, or a balanced split), each summed in any
/// order, the min(s, n) chunk results combined by `how`. Throws std::invalid_argument for s == 0.
standard split_k(std::uint64_t chunks, split_combine how = split_combine::any_order);
/// Accumulate in format acc (any order), round once to format out.
standard mixed(dtype accumulate, dtype output);
/// `base` under any rounding mode or truncation: u replaced by 2u. exact/faithful are refused (invalid_argument).
standard directed(standard base = any_order());

/// Parses a standard's name as name() prints it ("tree:5", "split_k:4:pairwise", "mixed:float32:float16",
/// "directed:any_order"). Throws std::invalid_argument that lists the accepted spellings.
standard parse_standard(std::string_view text);

}  // namespace exactref
