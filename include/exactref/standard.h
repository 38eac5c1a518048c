// exactref/standard.h — named, sourced error models: which results a correct implementation may return.
//
// One model. A standard is a rule (exact, faithful, or a bound) and, for a bound, the structure of the reduction
// from the leaves up: levels, each grouping the items of the level below and combining every group by a left fold,
// a tree of minimal height, or any order (docs/algorithms/structured-bounds.md). The classic standards are
// structures whose bound is flat (a function of n and S = Σ|t_i| only):
//
//   standard          structure                      bound B (flat)                                 source
//   exact()           —                              r == RN(s) bitwise (any NaN matches NaN)       IEEE 754-2019 §4.3.1
//   faithful()        —                              r ∈ {RD(s), RU(s)}                             —
//   any_order()       any                            (n-1)·u·S                                      Rump, BIT 52 (2012);
//                                                                                                   Lange–Rump, BIT 57 (2017)
//   tree(h)           tree (height h)                γ_h·S, γ_k = k·u/(1-k·u)                       Higham, ASNA §4.2
//   split_k(s)        fold/s,any                     γ_{k+c-2}·S, k = ceil(K/s), c = min(s, K)      depth form of §4.2
//   split_k(s, pw)    fold/s,tree                    γ_{k-1+ceil(log2 c)}·S                         depth form of §4.2
//   mixed(acc, out)   prefix: accumulate in acc, round once to out: B_acc + u_out·(|s| + B_acc) + η_out
//   directed(base)    prefix: u replaced by 2u (any rounding mode, truncation)                      Lange–Rump (2017)
//
// A structured standard (levels(...), spelled "levels:fold/4,any") has the same structure record but its bound is
// computed from the data when the reference is built (exactref::sum(xs, {standard...}), reference.h): each group's
// sum s_g and S_g, composed upward (docs/algorithms/structured-bounds.md), and never looser than the flat bound of the
// same structure (its depth form: γ_D·S with D the deepest leaf's roundings). For dot products (dot.h) n·u·T replaces
// (n-1)·u·S, T = Σ|x_i·y_i| (Higham (3.5); Jeannerod–Rump SIMAX 34 (2013)), and depths count one more rounding for the
// product. docs/standards.md has the special-value rules (overflow, directed saturation, -0.0).
#pragma once

#include "exactref/config.h"  // C++20, or a clear error

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "exactref/format.h"

namespace exactref {

/// How a standard decides: by the encoding (exact, faithful) or by a bound |r - s| <= B.
enum class rule { exact, faithful, bound };

/// How a level combines each of its groups.
///   fold  a left fold: ((y_1 + y_2) + y_3) + ...   (a thread's loop, a split-K chunk)
///   tree  any binary tree of minimal height ceil(log2 c) over the group's c items (a block's shared-memory tree), or
///         of height at most `height` when that is given (tree(h); a group of more than 2^h items is refused)
///   any   any order and any tree (atomics, Lange–Rump)
enum class level_order { fold, tree, any };

/// How a level forms its groups from the items of the level below (in order 0, 1, ..., m-1).
///   rest         one group of everything that is left (the last level)            spelled ""
///   consecutive  groups of `size` consecutive items, the last one shorter        spelled ":N"
///   chunks       `size` nearly equal consecutive chunks: with m = q·N + r, the first r chunks hold q + 1 items and
///                the others q (OpenMP's static schedule; split-K)                 spelled "/N"
///   interleaved  `size` groups, item i in group i mod N (grid-stride loops)      spelled "%N"
enum class level_groups { rest, consecutive, chunks, interleaved };

/// One level of a reduction's structure.
struct level {
    level_order order = level_order::any;
    level_groups groups = level_groups::rest;
    std::uint64_t size = 0;    // N of ":N", "/N", "%N"; 0 for rest
    std::optional<std::uint64_t> height;  // tree only: none for the minimal height of each group; h: any tree of
                                          // height <= h (tree(h), spelled "tree@H")
    bool operator==(const level&) const = default;
};

/// An error model. Build one with the factories below; name() gives its CLI spelling, parse_standard() reads it.
struct standard {
    rule decides = rule::bound;
    std::vector<level> levels{level{}};  // bound only: the reduction from the leaves up; the last level is `rest`
    bool structured = false;             // the bound comes from the data's group sums (levels:), not from n and S
    std::optional<dtype> accumulate;     // mixed: accumulation format
    std::optional<dtype> output;         // mixed: output format (the result's format)
    bool directed = false;               // u -> 2u (Lange–Rump 2017)
    bool ftz = false;                    // flush-to-zero: subnormal inputs and results flushed (ftz())
    bool fma = false;                    // dot products computed with FMA (dot.h)
    bool any_zero_sign = false;          // either sign of an exact zero: exact and faithful take +0.0 and -0.0 for
                                         // s = 0 (a fold from +0.0 over -0.0 terms, RD's x + (-x)); bound standards
                                         // take -0.0 whenever 0 is within B


    /// "exact", "faithful", "any_order", "tree:H", "split_k:S", "split_k:S:pairwise", "levels:fold/4,any", with the
    /// prefixes "ftz:", "directed:" and "mixed:ACC:OUT:" in this order (alone, "mixed:ACC:OUT" is mixed over
    /// any_order) and "+fma". any_zero_sign is not part of the name.
    std::string name() const;
    /// The structure alone, in the levels spelling: "levels:fold/4,any" (also for any_order(): "levels:any").
    std::string structure() const;
    bool is_mixed() const noexcept { return accumulate.has_value(); }
    bool operator==(const standard&) const = default;
};

/// r == RN(s), bit for bit (IEEE 754 correct rounding). NaN matches any NaN.
standard exact();
/// r is RD(s) or RU(s).
standard faithful();
/// Any order of n-1 additions, rounding to nearest: |r - s| <= (n-1)·u·S. The structure "any".
standard any_order();
/// A tree of height at most h (at most h additions on any root-to-leaf path): |r - s| <= γ_h·S. h = 0 is a single
/// term (n <= 1). covers() throws std::invalid_argument when the reference has more than 2^h terms: no tree of
/// height h holds them (use tree_height(shape, n) of tree.h, or ceil(log2 n) for the shallowest tree).
standard tree(std::uint64_t height);
/// How split-K chunk results are combined: in any order (atomics) or as a pairwise tree.
enum class split_combine { any_order, pairwise };
/// Split-K: the terms in s chunks of at most k = ceil(n/s) each (exactly k, or a balanced split), each folded, the
/// min(s, n) chunk results combined by `how`. The structure "fold/s,any" (or "fold/s,tree"), with the flat bound.
/// Throws std::invalid_argument for s == 0.
standard split_k(std::uint64_t chunks, split_combine how = split_combine::any_order);
/// Accumulate in format acc (any order), round once to format out.
standard mixed(dtype accumulate, dtype output);
/// `base` (a bound standard) accumulated in acc and rounded once to out.
standard mixed(dtype accumulate, dtype output, standard base);
/// `base` under any rounding mode or truncation: u replaced by 2u. exact/faithful are refused (invalid_argument).
standard directed(standard base = any_order());
/// `base` (a bound standard) on flush-to-zero hardware: fast-math GPU code, CPUs with FTZ/DAZ set,
/// torch.set_flush_denormal(True). Subnormal inputs are read as zero (DAZ) and subnormal results flushed to zero
/// (FTZ): each flushed input moves the sum by less than 2^emin of its format, each flushed result by less than
/// 2^emin of the accumulation format (the exact sum of two normal numbers below 2^emin in magnitude). With the standard
/// model fl(a + b) = (a + b)(1 + δ) + η, |δ| <= u, |η| < 2^emin, δ·η = 0 (Higham, ASNA §2.1 with FTZ's η), unrolled
/// over any tree of depth D (the structure's deepest leaf-to-root path: n - 1 for any order):
///   B = γ_D·S + n·2^emin_in + (n - 1)·(1 + γ_{D-1})·2^emin_acc,
/// emin_in the larger emin of the terms' and the accumulation's formats. The Lange–Rump (n - 1)·u form and the
/// structured data bounds assume gradual underflow, so ftz: uses the depth form γ_D·S of the structure (a structured
/// reference is not needed); mixed's final rounding flushes too (2^emin_out instead of η_out). -0.0 is covered
/// whenever 0 is (a flushed negative value is -0.0). Sums only: std::invalid_argument for exact, faithful and, at
/// covers() time, for dot products (a flushed factor moves a product by up to 2^emin times the other factor).
standard ftz(standard base = any_order());
/// A structured standard: the reduction's levels from the leaves up, its bound computed from the data (the
/// reference must be built with it: exactref::sum(xs, {model})). Throws std::invalid_argument when the levels are
/// not a structure: empty, a last level with a group suffix, an earlier one without, a group size of 0.
standard levels(std::vector<level> structure);

/// Parses a standard's name as name() prints it ("tree:5", "split_k:4:pairwise", "mixed:float32:float16",
/// "directed:any_order", "ftz:any_order", "ftz:directed:levels:fold/4,any", "levels:fold%65536,tree:256,any", "mixed:float32:float16:levels:fold/4,any+fma").
/// Throws std::invalid_argument that shows the accepted spellings.
standard parse_standard(std::string_view text);

/// The shape of a structure over m0 leaves: per level, how many items it receives, how many groups it forms and the
/// largest group. Throws std::invalid_argument (with the accepted spelling) when a level asks for more groups ("/N",
/// "%N") than it has items: a group would be empty (use N = the item count: an idle thread adds nothing).
struct level_shape {
    std::uint64_t items = 0;
    std::uint64_t groups = 0;
    std::uint64_t largest = 0;  // items in the largest group
};
std::vector<level_shape> level_shapes(const standard& model, std::uint64_t leaves);

/// The number of roundings on the deepest leaf-to-root path of the structure over m0 leaves (fold of c: c - 1,
/// tree: its height, any: c - 1): the D of the flat depth-form bound γ_D·S.
std::uint64_t structure_depth(const standard& model, std::uint64_t leaves);

}  // namespace exactref
