// exactref/detail/tree_engine.h — how the trees of tree.h are evaluated: leaf kernels, aligned subtrees, OpenMP blocks,
// and the slow level-order pass that names an overflowing node. Internal to src/tree_*.cpp (compiled with
// -ffp-contract=off; see the note in tree_arith.h).
//
// Invariant behind everything here (tree.h): the node at level k, index i, is the reduction of the aligned leaves
// [i·2^k, (i+1)·2^k) ∩ [0, m) with the carry-up rule, so
//   subtree(first, k) = combine(subtree(first, k-1), subtree(first + 2^(k-1), k-1))   when the right half has a leaf,
//                     = subtree(first, k-1)                                            otherwise (carried up),
// and any partition of the leaves into aligned blocks of 2^b, reduced block by block and then pairwise, gives the same
// node. That is why the block size chosen for the threads can never change the bits: it only chooses which aligned
// subtrees are computed on which thread. Every kernel below computes exactly the operations of the shape, in the
// shape's order, one IEEE operation per step; vector lanes hold different slots or different leaves, never a
// re-associated partial result.
//
// Every float step runs in the default floating-point environment (round to nearest even, no FTZ/DAZ), whatever the
// caller's: tree_reduce and reduce_chunked compute under a detail/fp_environment.h guard on the calling thread
// (in_tree_fp_environment), and each thread of the OpenMP team in span_tree::evaluate holds its own for its share (the
// environment is per thread, and pool threads keep whatever they last had; its results go to memory, which the
// guard's barriers keep in order). Integer trees do no floating-point arithmetic and hold none.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>  // _mm_add_pd, _mm_unpacklo_pd: fold leaves across vector lanes
#include <xmmintrin.h>  // _MM_TRANSPOSE4_PS
#endif

#include "exactref/detail/fp_environment.h"
#include "exactref/detail/tree_arith.h"
#include "exactref/tree.h"

#if defined(__FAST_MATH__)
#error "exactref's trees promise bits: compile src/tree*.cpp and src/orders.cpp without -ffast-math"
#endif

namespace exactref::detail {

// ---- small integer helpers ------------------------------------------------------------------------------------------

/// ceil(log2 m) for m >= 1 (0 for m = 1).
constexpr unsigned ceil_log2(std::uint64_t m) noexcept {
    return m <= 1 ? 0u : static_cast<unsigned>(64 - std::countl_zero(m - 1));
}
constexpr unsigned floor_log2(std::uint64_t m) noexcept { return static_cast<unsigned>(63 - std::countl_zero(m)); }

/// Leaves reduced together by one tile kernel (an aligned subtree of 2^tile_level leaves).
inline constexpr unsigned tile_level = 6;
inline constexpr std::size_t tile_leaves = std::size_t{1} << tile_level;

/// Element-type names for messages ("int64", "float16").
template <class T>
constexpr const char* type_name() noexcept {
    if constexpr (std::is_same_v<T, double>) return "float64";
    else if constexpr (std::is_same_v<T, float>) return "float32";
    else if constexpr (std::is_same_v<T, float16>) return "float16";
    else if constexpr (std::is_same_v<T, bfloat16>) return "bfloat16";
    else if constexpr (std::is_signed_v<T>) {
        if constexpr (sizeof(T) == 1) return "int8";
        else if constexpr (sizeof(T) == 2) return "int16";
        else if constexpr (sizeof(T) == 4) return "int32";
        else return "int64";
    } else {
        if constexpr (sizeof(T) == 1) return "uint8";
        else if constexpr (sizeof(T) == 2) return "uint16";
        else if constexpr (sizeof(T) == 4) return "uint32";
        else return "uint64";
    }
}

/// The guard a reduction in Acc holds on each thread that computes (file comment): the default environment for the
/// float formats (float16/bfloat16 steps are binary64 operations, and their float accumulation is float arithmetic),
/// nothing for integers.
template <class Acc>
using tree_fp_environment = std::conditional_t<tree_integer<Acc>, no_fp_environment, default_fp_environment>;

/// f() on the calling thread under tree_fp_environment<Acc>, its result complete before the guard ends.
template <class Acc, class F>
Acc in_tree_fp_environment(F&& f) {
    if constexpr (tree_integer<Acc>) return f();
    else return in_default_fp_environment(f);
}

// ---- nodes ------------------------------------------------------------------------------------------------------------

/// A node of the tree: its value, whether it has any element under it (absent nodes are carried over), and whether
/// every checked operation under it stayed in range (ok = false poisons the node and its ancestors).
template <class Acc>
struct tree_node {
    Acc value{};
    bool present = false;
    bool ok = true;
};

template <class Step, class Acc>
tree_node<Acc> combine_nodes(const tree_node<Acc>& a, const tree_node<Acc>& b) noexcept {
    if (!b.present) return a;
    if (!a.present) return b;
    tree_node<Acc> r;
    r.present = true;
    r.ok = Step::apply(a.value, b.value, r.value) && a.ok && b.ok;
    return r;
}

/// Reduces nodes[0..count) pairwise, level by level, in place: (0,1), (2,3), ..., odd last carried up. The nodes must
/// be the aligned children of one subtree (their first index a multiple of 2^ceil(log2 count)).
template <class Step, class Acc>
tree_node<Acc> reduce_levels(tree_node<Acc>* nodes, std::size_t count) noexcept {
    if (count == 0) return {};
    while (count > 1) {
        const std::size_t half = count / 2;
        for (std::size_t i = 0; i < half; ++i) nodes[i] = combine_nodes<Step>(nodes[2 * i], nodes[2 * i + 1]);
        if (count & 1) nodes[half] = nodes[count - 1];
        count = half + (count & 1);
    }
    return nodes[0];
}

/// The same for values that are all present (full, unmasked leaves): a plain in-place loop per level, no node
/// bookkeeping. Returns false when a checked operation overflowed.
template <class Step, class Acc>
bool reduce_value_levels(Acc* values, std::size_t count) noexcept {
    bool ok = true;
    while (count > 1) {
        const std::size_t half = count / 2;
        for (std::size_t i = 0; i < half; ++i) ok &= Step::apply(values[2 * i], values[2 * i + 1], values[i]);
        if (count & 1) values[half] = values[count - 1];
        count = half + (count & 1);
    }
    return ok;
}

/// Asks for the `bytes` bytes that lie `distance` bytes past p to be brought into cache (one hint per 64-byte line).
/// The leaf kernels read two (halving) or sixteen (fold) nearby streams at once, which the hardware prefetchers follow
/// less eagerly than one sequential stream; hinting the data a few leaves ahead keeps the loads fed (bench_tree:
/// without it the trees ran at about 0.85x the OpenMP reduction, with it faster). Prefetches never fault, and the
/// address is computed on integers, so hinting past the end of the data is harmless and forms no invalid pointer.
inline void prefetch_ahead(const void* p, std::size_t distance, std::size_t bytes) noexcept {
    const std::uintptr_t start = reinterpret_cast<std::uintptr_t>(p) + distance;
    for (std::size_t offset = 0; offset < bytes; offset += 64)
        __builtin_prefetch(reinterpret_cast<const void*>(start + offset));
}
inline constexpr std::size_t prefetch_distance = 8192;  // bytes ahead: 4 float64 / 8 float32 halving256 leaves

// ---- leaf kernels -------------------------------------------------------------------------------------------------------

/// A halving leaf of `count` (1..L) elements: slot t combined with t + L/2, t + L/4, ..., t + 1; slots at or past
/// `count` are absent. The present slots always form a prefix [0, c): at step h, slot t < min(h, c) takes slot t + h
/// when t + h < c, and c becomes min(c, h). `scratch` holds L/2 accumulators.
template <class T, class Acc, class Step>
tree_node<Acc> halving_leaf(const T* x, std::size_t count, std::size_t leaf, Acc* scratch) noexcept {
    bool ok = true;
    std::size_t h = leaf / 2;
    if (count == leaf) {
        // Full leaf: fixed trip counts, which the vectorizer turns into lane-wise steps (lanes = neighbouring slots).
        for (std::size_t t = 0; t < h; ++t) ok &= Step::apply(widen<Acc>(x[t]), widen<Acc>(x[t + h]), scratch[t]);
        for (h /= 2; h >= 1; h /= 2) {
            Acc* lo = scratch;
            const Acc* hi = scratch + h;
            for (std::size_t t = 0; t < h; ++t) ok &= Step::apply(lo[t], hi[t], lo[t]);
        }
        return {scratch[0], true, ok};
    }
    if (count == 1) return {widen<Acc>(x[0]), true, true};
    std::size_t c = count;
    // Step h = L/2 reads the elements; slots with no partner are copied.
    {
        const std::size_t live = std::min(c, h);
        for (std::size_t t = 0; t < live; ++t) {
            if (t + h < c) ok &= Step::apply(widen<Acc>(x[t]), widen<Acc>(x[t + h]), scratch[t]);
            else scratch[t] = widen<Acc>(x[t]);
        }
        c = live;
    }
    for (h /= 2; h >= 1; h /= 2) {
        const std::size_t live = std::min(c, h);
        for (std::size_t t = 0; t + h < c && t < live; ++t) ok &= Step::apply(scratch[t], scratch[t + h], scratch[t]);
        c = live;
    }
    return {scratch[0], true, ok};
}

/// A full halving leaf of fixed L in a plain float format: every step a fixed-length lane-wise addition.
template <class A, std::size_t H>
inline void halving_steps(A* v) noexcept {
    if constexpr (H >= 1) {
        for (std::size_t t = 0; t < H; ++t) v[t] = v[t] + v[t + H];
        halving_steps<A, H / 2>(v);
    }
}
template <class A, std::size_t L>
inline A halving_sum_leaf(const A* x) noexcept {
    alignas(64) A v[L / 2];
    for (std::size_t t = 0; t < L / 2; ++t) v[t] = x[t] + x[t + L / 2];
    halving_steps<A, L / 4>(v);
    return v[0];
}

/// A fold leaf of `count` (1..L) elements from the identity; masked-out elements skipped; absent when none is kept.
template <class T, class Acc, class Step>
tree_node<Acc> fold_leaf(const T* x, const bool* mask, std::size_t count) noexcept {
    Acc acc = Step::identity();
    bool ok = true;
    bool any = mask == nullptr;
    for (std::size_t i = 0; i < count; ++i) {
        if (mask != nullptr && !mask[i]) continue;
        ok &= Step::apply(acc, widen<Acc>(x[i]), acc);
        any = true;
    }
    return {acc, any, ok};
}

#if defined(__SSE2__)
/// Fold sums of `count` consecutive full leaves of L doubles (L even), 16 leaves at a time: lane 0 of acc[p] is leaf
/// 2p, lane 1 leaf 2p + 1, and each lane adds its leaf's elements in order, from +0.0 (a 2x2 transpose per step).
/// Leaves left over (count not a multiple of 16) are folded one by one. The same additions as fold_leaf.
/// FixedLeaf != 0: the leaf size as a constant, so that the element loop unrolls (fold(16), the default).
template <std::size_t FixedLeaf>
inline void fold_sum_leaves_of(const double* x, std::size_t count, std::size_t runtime_leaf, double* out) noexcept {
    const std::size_t leaf = FixedLeaf != 0 ? FixedLeaf : runtime_leaf;
    std::size_t j = 0;
    for (; j + 16 <= count; j += 16) {
        const double* base = x + j * leaf;
        prefetch_ahead(base, prefetch_distance, 16 * leaf * sizeof(double));
        __m128d acc[8];
        for (auto& a : acc) a = _mm_setzero_pd();
        for (std::size_t e = 0; e < leaf; e += 2) {
            for (std::size_t p = 0; p < 8; ++p) {
                const __m128d r0 = _mm_loadu_pd(base + (2 * p) * leaf + e);
                const __m128d r1 = _mm_loadu_pd(base + (2 * p + 1) * leaf + e);
                acc[p] = _mm_add_pd(acc[p], _mm_unpacklo_pd(r0, r1));
                acc[p] = _mm_add_pd(acc[p], _mm_unpackhi_pd(r0, r1));
            }
        }
        for (std::size_t p = 0; p < 8; ++p) _mm_storeu_pd(out + j + 2 * p, acc[p]);
    }
    for (; j < count; ++j) {
        double acc = 0.0;
        for (std::size_t i = 0; i < leaf; ++i) acc = acc + x[j * leaf + i];
        out[j] = acc;
    }
}

inline void fold_sum_leaves(const double* x, std::size_t count, std::size_t leaf, double* out) noexcept {
    if (leaf == 16) fold_sum_leaves_of<16>(x, count, leaf, out);
    else fold_sum_leaves_of<0>(x, count, leaf, out);
}

/// The same for floats (L a multiple of 4): lane i of acc[q] is leaf 4q + i; a 4x4 transpose per step of 4.
template <std::size_t FixedLeaf>
inline void fold_sum_leaves_of(const float* x, std::size_t count, std::size_t runtime_leaf, float* out) noexcept {
    const std::size_t leaf = FixedLeaf != 0 ? FixedLeaf : runtime_leaf;
    std::size_t j = 0;
    if (leaf % 4 == 0) {
        for (; j + 16 <= count; j += 16) {
            const float* base = x + j * leaf;
            prefetch_ahead(base, prefetch_distance, 16 * leaf * sizeof(float));
            __m128 acc[4];
            for (auto& a : acc) a = _mm_setzero_ps();
            for (std::size_t e = 0; e < leaf; e += 4) {
                for (std::size_t q = 0; q < 4; ++q) {
                    __m128 r0 = _mm_loadu_ps(base + (4 * q + 0) * leaf + e);
                    __m128 r1 = _mm_loadu_ps(base + (4 * q + 1) * leaf + e);
                    __m128 r2 = _mm_loadu_ps(base + (4 * q + 2) * leaf + e);
                    __m128 r3 = _mm_loadu_ps(base + (4 * q + 3) * leaf + e);
                    _MM_TRANSPOSE4_PS(r0, r1, r2, r3);  // r_k lane i = element e + k of leaf 4q + i
                    acc[q] = _mm_add_ps(acc[q], r0);
                    acc[q] = _mm_add_ps(acc[q], r1);
                    acc[q] = _mm_add_ps(acc[q], r2);
                    acc[q] = _mm_add_ps(acc[q], r3);
                }
            }
            for (std::size_t q = 0; q < 4; ++q) _mm_storeu_ps(out + j + 4 * q, acc[q]);
        }
    }
    for (; j < count; ++j) {
        float acc = 0.0f;
        for (std::size_t i = 0; i < leaf; ++i) acc = acc + x[j * leaf + i];
        out[j] = acc;
    }
}
inline void fold_sum_leaves(const float* x, std::size_t count, std::size_t leaf, float* out) noexcept {
    if (leaf == 16) fold_sum_leaves_of<16>(x, count, leaf, out);
    else fold_sum_leaves_of<0>(x, count, leaf, out);
}
#endif

// ---- one contiguous run of leaves ------------------------------------------------------------------------------------

/// The tree over one contiguous span of n elements (a whole input, or one chunk of reduce_chunked).
template <class T, class Acc, class Step>
class span_tree {
public:
    span_tree(const T* data, std::size_t n, const bool* mask, const tree_shape& shape) noexcept
        : data_(data), n_(n), mask_(mask), kind_(shape.kind), leaf_(shape.leaf),
          leaves_(static_cast<std::size_t>(leaf_count(shape, n))) {}

    std::size_t leaves() const noexcept { return leaves_; }
    std::size_t scratch_size() const noexcept { return kind_ == tree_kind::halving ? leaf_ / 2 : 0; }

    /// The root node, computed with up to omp_get_max_threads() threads (one thread inside a parallel region).
    tree_node<Acc> evaluate() const {
        if (leaves_ == 0) return {};
        const unsigned root_level = ceil_log2(leaves_);
        const std::size_t threads =
            omp_in_parallel() ? 1 : static_cast<std::size_t>(std::max(1, omp_get_max_threads()));
        // Blocks: aligned subtrees of 2^b leaves, at least one tile, 32 to 64 per thread, so that a thread's share is
        // within a block (under 3%) of an even split; any b gives the same bits (file comment).
        unsigned block_level = tile_level;
        if (threads > 1) {
            const std::uint64_t target = (leaves_ + 32 * threads - 1) / (32 * threads);
            block_level = std::max(tile_level, ceil_log2(target));
        }
        std::vector<Acc> scratch(std::max<std::size_t>(scratch_size(), 1) * threads);
        if (threads == 1 || block_level >= root_level) return subtree(0, root_level, scratch.data());

        const std::size_t blocks = (leaves_ + (std::size_t{1} << block_level) - 1) >> block_level;
        std::vector<tree_node<Acc>> results(blocks);
        const std::size_t stride = std::max<std::size_t>(scratch_size(), 1);
#pragma omp parallel num_threads(static_cast<int>(threads))
        {
            // Per thread: a pool thread computes in whatever environment it last had unless it sets the default one.
            [[maybe_unused]] const tree_fp_environment<Acc> environment;
            Acc* my_scratch = scratch.data() + static_cast<std::size_t>(omp_get_thread_num()) * stride;
#pragma omp for schedule(static)
            for (std::size_t b = 0; b < blocks; ++b) results[b] = subtree(b << block_level, block_level, my_scratch);
        }
        return reduce_levels<Step>(results.data(), blocks);
    }

private:
    /// The node at `level` whose first leaf is `first` (a multiple of 2^level), over the leaves that exist.
    tree_node<Acc> subtree(std::size_t first, unsigned level, Acc* scratch) const noexcept {
        if (level <= tile_level) {
            const std::size_t span = std::size_t{1} << level;
            return tile(first, std::min(span, leaves_ - first), scratch);
        }
        const std::size_t half = std::size_t{1} << (level - 1);
        const tree_node<Acc> left = subtree(first, level - 1, scratch);
        if (first + half >= leaves_) return left;  // no leaf on the right: carried up
        return combine_nodes<Step>(left, subtree(first + half, level - 1, scratch));
    }

    /// Leaves [first, first + count), count <= tile_leaves, reduced to their subtree's root.
    tree_node<Acc> tile(std::size_t first, std::size_t count, Acc* scratch) const noexcept {
        const bool all_full = mask_ == nullptr && (first + count) * leaf_ <= n_;
        if (all_full) {
            Acc values[tile_leaves]{};  // count >= 1 always; the zeros only quiet -Wmaybe-uninitialized
            bool ok = full_leaves(data_ + first * leaf_, count, values, scratch);
            ok &= reduce_value_levels<Step>(values, count);
            return {values[0], true, ok};
        }
        tree_node<Acc> nodes[tile_leaves];
        for (std::size_t j = 0; j < count; ++j) nodes[j] = leaf_node(first + j, scratch);
        return reduce_levels<Step>(nodes, count);
    }

    /// Any leaf: partial, masked, any op.
    tree_node<Acc> leaf_node(std::size_t j, Acc* scratch) const noexcept {
        const std::size_t begin = j * leaf_;
        const std::size_t count = std::min(leaf_, n_ - begin);
        if (kind_ == tree_kind::fold) return fold_leaf<T, Acc, Step>(data_ + begin, mask_ ? mask_ + begin : nullptr, count);
        return halving_leaf<T, Acc, Step>(data_ + begin, count, leaf_, scratch);
    }

    /// `count` full, unmasked leaves starting at x; false when a checked operation overflowed.
    bool full_leaves(const T* x, std::size_t count, Acc* out, Acc* scratch) const noexcept {
        constexpr bool plain_sum = std::is_same_v<T, Acc> && (std::is_same_v<Acc, double> || std::is_same_v<Acc, float>) &&
                                   std::is_same_v<Step, tree_step<Acc, reduce_op::sum, false>>;
        if constexpr (plain_sum) {
            if (kind_ == tree_kind::halving && leaf_ == 256) {
                for (std::size_t j = 0; j < count; ++j) {
                    prefetch_ahead(x + j * 256, prefetch_distance, 256 * sizeof(Acc));
                    out[j] = halving_sum_leaf<Acc, 256>(x + j * 256);
                }
                return true;
            }
#if defined(__SSE2__)
            if (kind_ == tree_kind::fold) {
                fold_sum_leaves(x, count, leaf_, out);
                return true;
            }
#endif
        }
        bool ok = true;
        const std::size_t leaf_bytes = leaf_ * sizeof(T);
        for (std::size_t j = 0; j < count; ++j) {
            if (leaf_bytes <= 4096) prefetch_ahead(x + j * leaf_, std::max(prefetch_distance, 4 * leaf_bytes), leaf_bytes);
            const tree_node<Acc> node = kind_ == tree_kind::fold
                                            ? fold_leaf<T, Acc, Step>(x + j * leaf_, nullptr, leaf_)
                                            : halving_leaf<T, Acc, Step>(x + j * leaf_, leaf_, leaf_, scratch);
            out[j] = node.value;
            ok &= node.ok;
        }
        return ok;
    }

    const T* data_;
    std::size_t n_;
    const bool* mask_;
    tree_kind kind_;
    std::size_t leaf_;
    std::size_t leaves_;
};

// ---- naming an overflow: the tree evaluated in level order ------------------------------------------------------------

/// Where the elements of leaf j live (reduce_chunked's leaves sit in different chunks).
template <class T>
struct leaf_view {
    const T* data = nullptr;
    const bool* mask = nullptr;  // null: every element kept
    std::size_t count = 0;
    std::uint64_t first_element = 0;  // index of data[0] in the whole input
};

template <class T>
std::string value_text(T v) {
    if constexpr (std::is_signed_v<T>) return std::to_string(static_cast<long long>(v));
    else return std::to_string(static_cast<unsigned long long>(v));
}

/// Re-evaluates a checked integer tree leaf by leaf, then level by level, and throws tree_overflow_error for the
/// first operation that overflows in that order (lowest level, then lowest index; inside a leaf, the leaf's own
/// order of steps). Called only after the fast evaluation saw an overflow; O(m) memory for the m leaf results.
template <class T, class Step, class LeafAt>
[[noreturn]] void throw_first_overflow(std::size_t leaves, const LeafAt& leaf_at, const tree_shape& shape,
                                       reduce_op op) {
    static_assert(std::is_integral_v<T>);
    const std::string what_tree =
        std::string(to_string(op)) + " of " + type_name<T>() + " over " + shape.name() + " in tree order";
    const char* symbol = op == reduce_op::sum ? " + " : " * ";
    const auto fail = [&](const std::string& where, std::uint64_t level, std::uint64_t index, T a, T b) {
        throw tree_overflow_error("integer overflow in the " + what_tree + ": " + where + ": " + value_text(a) +
                                      symbol + value_text(b) + " does not fit in " + type_name<T>() +
                                      " (use a wider type, or reduce without check_overflow for the result modulo "
                                      "2^bits)",
                                  level, index);
    };
    std::vector<tree_node<T>> nodes(leaves);
    for (std::size_t j = 0; j < leaves; ++j) {
        const leaf_view<T> v = leaf_at(j);
        const std::string leaf_name = "leaf " + std::to_string(j) + " (level 0, node " + std::to_string(j) +
                                      ", elements " + std::to_string(v.first_element) + ".." +
                                      std::to_string(v.first_element + v.count - 1) + ")";
        if (shape.kind == tree_kind::fold) {
            T acc = Step::identity();
            bool any = false;
            for (std::size_t i = 0; i < v.count; ++i) {
                if (v.mask != nullptr && !v.mask[i]) continue;
                T next{};
                if (!Step::apply(acc, v.data[i], next))
                    fail(leaf_name + ", folding in element " + std::to_string(v.first_element + i), 0, j, acc, v.data[i]);
                acc = next;
                any = true;
            }
            nodes[j] = {acc, any, true};
            continue;
        }
        // halving: the present slots are the prefix [0, c), as in halving_leaf
        std::size_t c = v.count;
        std::vector<T> s(v.data, v.data + v.count);
        for (std::size_t h = shape.leaf / 2; h >= 1; h /= 2) {
            const std::size_t live = std::min(c, h);
            for (std::size_t t = 0; t < live && t + h < c; ++t) {
                T next{};
                if (!Step::apply(s[t], s[t + h], next))
                    fail(leaf_name + ", halving step " + std::to_string(h) + ": slot " + std::to_string(t) + " + slot " +
                             std::to_string(t + h),
                         0, j, s[t], s[t + h]);
                s[t] = next;
            }
            c = live;
        }
        nodes[j] = {s[0], true, true};
    }
    std::size_t count = leaves;
    for (std::uint64_t level = 1; count > 1; ++level) {
        const std::size_t half = count / 2;
        for (std::size_t i = 0; i < half; ++i) {
            const tree_node<T>& a = nodes[2 * i];
            const tree_node<T>& b = nodes[2 * i + 1];
            if (a.present && b.present) {
                T next{};
                if (!Step::apply(a.value, b.value, next)) {
                    const std::uint64_t first = i << level;
                    const std::uint64_t last = std::min<std::uint64_t>(((i + 1) << level), leaves) - 1;
                    fail("pairwise level " + std::to_string(level) + ", node " + std::to_string(i) + " (leaves " +
                             std::to_string(first) + ".." + std::to_string(last) + ")",
                         level, i, a.value, b.value);
                }
                nodes[i] = {next, true, true};
            } else {
                nodes[i] = a.present ? a : b;
            }
        }
        if (count & 1) nodes[half] = nodes[count - 1];
        count = half + (count & 1);
    }
    throw std::logic_error("exactref: the fast tree saw an integer overflow that the level-order pass did not find");
}

// ---- the entry points (tree.h) --------------------------------------------------------------------------------------

/// Refuses a mask with a halving shape and check_overflow where it does not apply (std::invalid_argument).
void check_tree_arguments(const tree_shape& shape, bool has_mask, bool check_overflow, bool integer_type, reduce_op op,
                          const char* function);
/// Refuses a mask whose size differs from the data's (std::invalid_argument).
void check_mask_size(std::size_t mask_size, std::size_t n, const char* function);

/// Validates a chunking for reduce_chunked; returns log2 of the leaves per chunk (0 for a single chunk).
unsigned check_chunking(const tree_shape& shape, std::span<const std::size_t> sizes,
                        std::span<const std::size_t> mask_sizes, bool has_masks);

template <class T, class Acc, class Step>
Acc run_tree(std::span<const T> xs, const tree_shape& shape, const tree_options& options, reduce_op op) {
    const bool* mask = options.mask.empty() ? nullptr : options.mask.data();
    const span_tree<T, Acc, Step> tree(xs.data(), xs.size(), mask, shape);
    const tree_node<Acc> root = tree.evaluate();
    if constexpr (Step::can_fail) {
        if (!root.ok) {
            const auto leaf_at = [&](std::size_t j) {
                const std::size_t begin = j * shape.leaf;
                return leaf_view<T>{xs.data() + begin, mask ? mask + begin : nullptr,
                                    std::min(shape.leaf, xs.size() - begin), begin};
            };
            throw_first_overflow<T, Step>(tree.leaves(), leaf_at, shape, op);
        }
    }
    return root.present ? Step::finish(root.value) : Step::identity();
}

template <class T, class Acc, class Step>
Acc run_chunked(std::span<const std::span<const T>> chunks, const tree_shape& shape, const chunk_options& options,
                unsigned chunk_level, reduce_op op) {
    std::vector<tree_node<Acc>> nodes(chunks.size());
    for (std::size_t c = 0; c < chunks.size(); ++c) {
        const bool* mask = options.masks.empty() ? nullptr : options.masks[c].data();
        nodes[c] = span_tree<T, Acc, Step>(chunks[c].data(), chunks[c].size(), mask, shape).evaluate();
    }
    const tree_node<Acc> root = reduce_levels<Step>(nodes.data(), nodes.size());
    if constexpr (Step::can_fail) {
        if (!root.ok) {
            std::uint64_t total_leaves = 0;
            for (const auto& chunk : chunks) total_leaves += leaf_count(shape, chunk.size());
            const std::size_t per_chunk = std::size_t{1} << chunk_level;
            const std::size_t chunk_elements = per_chunk * shape.leaf;
            const auto leaf_at = [&](std::size_t j) {
                const std::size_t c = chunks.size() == 1 ? 0 : j / per_chunk;
                const std::size_t local = chunks.size() == 1 ? j : j % per_chunk;
                const std::size_t begin = local * shape.leaf;
                const bool* mask = options.masks.empty() ? nullptr : options.masks[c].data() + begin;
                return leaf_view<T>{chunks[c].data() + begin, mask, std::min(shape.leaf, chunks[c].size() - begin),
                                    c * chunk_elements + begin};
            };
            throw_first_overflow<T, Step>(static_cast<std::size_t>(total_leaves), leaf_at, shape, op);
        }
    }
    return root.present ? Step::finish(root.value) : Step::identity();
}

/// Calls f.template operator()<Step>() with the tree_step of `op` (checked or not).
template <class Acc, class F>
decltype(auto) with_step(reduce_op op, bool checked, F&& f) {
    if constexpr (tree_integer<Acc>) {
        if (checked) {
            if (op == reduce_op::product) return f.template operator()<tree_step<Acc, reduce_op::product, true>>();
            return f.template operator()<tree_step<Acc, reduce_op::sum, true>>();
        }
    }
    switch (op) {
        case reduce_op::sum: return f.template operator()<tree_step<Acc, reduce_op::sum, false>>();
        case reduce_op::product: return f.template operator()<tree_step<Acc, reduce_op::product, false>>();
        case reduce_op::min: return f.template operator()<tree_step<Acc, reduce_op::min, false>>();
        case reduce_op::max: return f.template operator()<tree_step<Acc, reduce_op::max, false>>();
        case reduce_op::any: return f.template operator()<tree_step<Acc, reduce_op::any, false>>();
        case reduce_op::all: break;
    }
    return f.template operator()<tree_step<Acc, reduce_op::all, false>>();
}

template <class T, class Acc>
Acc tree_reduce(std::span<const T> xs, reduce_op op, const tree_shape& shape, const tree_options& options) {
    check_tree_arguments(shape, !options.mask.empty(), options.check_overflow, tree_integer<T>, op, "tree_reduce");
    if (!options.mask.empty()) check_mask_size(options.mask.size(), xs.size(), "tree_reduce");
    // The calling thread's environment (each team thread sets its own in span_tree::evaluate).
    return in_tree_fp_environment<Acc>([&] {
        return with_step<Acc>(op, options.check_overflow,
                              [&]<class Step>() { return run_tree<T, Acc, Step>(xs, shape, options, op); });
    });
}

template <class T, class Acc>
Acc reduce_chunked(std::span<const std::span<const T>> chunks, reduce_op op, const tree_shape& shape,
                   const chunk_options& options) {
    std::vector<std::size_t> sizes(chunks.size());
    for (std::size_t c = 0; c < chunks.size(); ++c) sizes[c] = chunks[c].size();
    std::vector<std::size_t> mask_sizes(options.masks.size());
    for (std::size_t c = 0; c < options.masks.size(); ++c) mask_sizes[c] = options.masks[c].size();
    check_tree_arguments(shape, !options.masks.empty(), options.check_overflow, tree_integer<T>, op, "reduce_chunked");
    const unsigned chunk_level = check_chunking(shape, sizes, mask_sizes, !options.masks.empty());
    // The calling thread's environment (each team thread sets its own in span_tree::evaluate).
    return in_tree_fp_environment<Acc>([&] {
        return with_step<Acc>(op, options.check_overflow, [&]<class Step>() {
            return run_chunked<T, Acc, Step>(chunks, shape, options, chunk_level, op);
        });
    });
}

}  // namespace exactref::detail
