// exactref/cuda/tree_steps.cuh — the per-thread and per-lane steps of the device trees, shared by the kernels
// (src/cuda/tree_kernels.h) and the host block emulator (emulator.cuh), and the launch plan both follow.
//
// The shapes are those of tree.h (a contract; docs/same-bits.md). How the device computes them:
//
//   halving(256) leaf, one warp per leaf. Lane l holds slots l + 32 j (j = 0..7). Steps h = 128, 64, 32 pair slots of
//     the same lane (t + h = l + 32 (j + h/32)), so they are register operations (halving_lane_load); steps
//     h = 16 .. 1 pair lane l with lane l + h (a shuffle, halving_lane_step). The present slots are always a prefix
//     [0, c) of the leaf (tree_engine.h, halving_leaf): at step h slot t < h takes slot t + h when t + h < c, then
//     c = min(c, h). So every operation is the host's, on the same operands, in the same order.
//   fold(16) leaf, one thread per leaf: the host's left fold from the identity (fold_leaf_node).
//   pairwise levels, 256 nodes per block: 5 levels inside each warp (lane i, i % 2s == 0, takes lane i + s), then the
//     8 warp results in one warp for 3 more levels (pair_lane_step). An absent node (past the end, or a fold leaf with
//     every element masked out) is carried over: combine_nodes.
//
// Why blocks can never change the bits (tree_engine.h, the invariant): the node at level k, index i, is the reduction
// of the aligned leaves [i·2^k, (i+1)·2^k). A block reduces an aligned group of 2^g leaves or nodes, which is such a
// node; padding the group with absent nodes carries the real ones up unchanged. Which block computes which aligned
// group, and how many launches the levels take, are speed choices only (tuning in config.cuh).
#pragma once

#include <cstddef>
#include <cstdint>

#include "exactref/cuda/arith.cuh"
#include "exactref/cuda/config.cuh"
#include "exactref/tree.h"

namespace exactref::cuda::detail {

/// A node of the tree: its value and whether any element lies under it. (The host's tree_node without the overflow
/// flag: the device has no checked integer ops.)
template <class Acc>
struct node {
    Acc value;
    bool present;
};

template <class Step, class Acc>
EXACTREF_HD_INLINE node<Acc> combine_nodes(const node<Acc>& a, const node<Acc>& b) noexcept {
    if (!b.present) return a;
    if (!a.present) return b;
    return {Step::combine(a.value, b.value), true};
}

// ---- halving(256) leaves ------------------------------------------------------------------------------------------

inline constexpr unsigned halving_leaf = 256;
inline constexpr unsigned halving_slots_per_lane = halving_leaf / tuning::warp_threads;  // 8

/// What a lane holds after the register steps: its slot (lane) value, and c, the number of present slots of the
/// 32-slot stage (the same in every lane).
template <class Acc>
struct halving_lane {
    Acc value;
    unsigned present_slots;
};

/// Lane `lane`'s part of a halving(256) leaf of `count` elements (1..256) at x: loads slots lane + 32 j that are
/// present, then makes the steps h = 128, 64, 32, which pair slots of this lane. Full = (count == 256) lets the
/// compiler issue the eight loads unconditionally.
template <class Step, bool Full, class T>
EXACTREF_HD_INLINE halving_lane<typename Step::value_type> halving_lane_load(const T* x, unsigned count,
                                                                            unsigned lane) noexcept {
    using Acc = typename Step::value_type;
    constexpr unsigned w = tuning::warp_threads;
    Acc v[halving_slots_per_lane];
    EXACTREF_UNROLL
    for (unsigned j = 0; j < halving_slots_per_lane; ++j) {
        const unsigned t = lane + w * j;
        v[j] = (Full || t < count) ? widen<Acc>(x[t]) : Acc{};  // an absent slot is never read (below)
    }
    unsigned c = Full ? halving_leaf : count;
    // h = 128: slot t = lane + 32 j (j < 4) takes slot t + 128 = lane + 32 (j + 4)
    EXACTREF_UNROLL
    for (unsigned j = 0; j < 4; ++j)
        if (Full || lane + w * j + 128 < c) v[j] = Step::combine(v[j], v[j + 4]);
    c = c < 128 ? c : 128;
    // h = 64: j < 2 takes j + 2
    EXACTREF_UNROLL
    for (unsigned j = 0; j < 2; ++j)
        if (Full || lane + w * j + 64 < c) v[j] = Step::combine(v[j], v[j + 2]);
    c = c < 64 ? c : 64;
    // h = 32: j = 0 takes j = 1
    if (Full || lane + 32 < c) v[0] = Step::combine(v[0], v[1]);
    c = c < 32 ? c : 32;
    return {v[0], c};
}

/// Step h (16, 8, 4, 2, 1) of the warp part of a halving leaf: lane `lane` holds slot `lane`, `partner` is slot
/// lane + h (what __shfl_down_sync(v, h) returns); c is the present prefix before the step. Afterwards the present
/// prefix is min(c, h) (halving_present_after).
template <class Step, class Acc>
EXACTREF_HD_INLINE Acc halving_lane_step(Acc own, Acc partner, unsigned lane, unsigned h, unsigned c) noexcept {
    return lane + h < c ? Step::combine(own, partner) : own;
}
EXACTREF_HD_INLINE unsigned halving_present_after(unsigned c, unsigned h) noexcept { return c < h ? c : h; }

// ---- fold leaves ------------------------------------------------------------------------------------------------------

inline constexpr unsigned fold_leaf = 16;

/// A fold(16) leaf of `count` elements (1..16) at x, folded left to right from the identity; masked-out elements
/// (mask[i] false) skipped; absent when a mask keeps none. mask may be null (every element kept).
template <class Step, class T>
EXACTREF_HD_INLINE node<typename Step::value_type> fold_leaf_node(const T* x, const bool* mask,
                                                                  unsigned count) noexcept {
    using Acc = typename Step::value_type;
    Acc acc = Step::identity();
    bool any = mask == nullptr;
    for (unsigned i = 0; i < count; ++i) {
        if (mask != nullptr && !mask[i]) continue;
        acc = Step::combine(acc, widen<Acc>(x[i]));
        any = true;
    }
    return {acc, any};
}

// ---- pairwise levels ------------------------------------------------------------------------------------------------

/// One pairwise level inside a warp, stride s (1, 2, 4, 8, ...): before the step, lane i (i % s == 0) holds node i/s
/// of the level below; lane i with i % 2s == 0 combines it with its right sibling at lane i + s (`partner`, what
/// __shfl_down_sync(v, s) returns) into node i/2s of this level. Other lanes keep what they hold (unused after).
template <class Step, class Acc>
EXACTREF_HD_INLINE node<Acc> pair_lane_step(const node<Acc>& own, const node<Acc>& partner, unsigned lane,
                                            unsigned s) noexcept {
    return (lane & (2 * s - 1)) == 0 ? combine_nodes<Step>(own, partner) : own;
}

/// The value a tree returns: the root's value through finish(), or the identity when no element was reduced.
template <class Step, class Acc>
EXACTREF_HD_INLINE Acc root_value(const node<Acc>& root) noexcept {
    return root.present ? Step::finish(root.value) : Step::identity();
}

// ---- the launch plan ----------------------------------------------------------------------------------------------------

/// The launches of one device tree over n elements, and where each level's nodes live in the caller's work buffer.
/// Kernel 1 (tile) reduces aligned groups of tile_leaves leaves to tile_nodes nodes (buffer A); each following launch
/// reduces aligned groups of level_group nodes (A -> B -> A ...) until one launch has at most level_group nodes, which
/// writes the result. Work buffer layout, in units of Acc: A values [0, a), B values [a, a + b), then the presence
/// flags of A and B as bytes (a + b of them) packed into the Acc units that follow. B only ever holds the output of
/// a launch over A, and A the output of a launch over B, so b = ceil(a / level_group) suffices and A is never read
/// and written by the same launch.
struct tree_plan {
    std::uint64_t n = 0;
    std::uint64_t leaves = 0;
    std::uint64_t tile_leaves = 0;
    std::uint64_t level_group = 0;
    std::uint64_t tile_nodes = 0;    // a: nodes after the tile kernel
    std::uint64_t second_nodes = 0;  // b: nodes after the first level launch (0 when that launch is the last)
    std::uint64_t level_launches = 0;

    std::uint64_t flag_bytes() const noexcept { return tile_nodes + second_nodes; }
};

/// The plan for n elements with leaves of `leaf` elements, tile_leaves leaves per tile block and level_group nodes
/// per level block (the device uses tuning::level_nodes_per_block; the emulator tests try smaller groups to run the
/// A/B alternation many times).
inline constexpr tree_plan make_tree_plan(std::uint64_t n, std::uint64_t leaf, std::uint64_t tile_leaves,
                                          std::uint64_t level_group = tuning::level_nodes_per_block) noexcept {
    tree_plan p;
    p.n = n;
    p.leaves = n / leaf + (n % leaf != 0);
    p.tile_leaves = tile_leaves;
    p.level_group = level_group;
    p.tile_nodes = p.leaves / tile_leaves + (p.leaves % tile_leaves != 0);
    std::uint64_t c = p.tile_nodes;
    p.level_launches = 1;
    p.second_nodes = c > level_group ? c / level_group + (c % level_group != 0) : 0;
    while (c > level_group) {
        c = c / level_group + (c % level_group != 0);
        ++p.level_launches;
    }
    return p;
}

/// Work buffer size in Acc units for a plan (0 when n = 0: the single level launch then only writes the identity).
template <class Acc>
constexpr std::uint64_t work_elems(const tree_plan& p) noexcept {
    const std::uint64_t values = p.tile_nodes + p.second_nodes;
    const std::uint64_t flag_units = (p.flag_bytes() + sizeof(Acc) - 1) / sizeof(Acc);
    return values + flag_units;
}

/// The two node buffers A and B inside a work buffer (layout of tree_plan).
template <class Acc>
struct tree_buffers {
    Acc* a_value;
    Acc* b_value;
    std::uint8_t* a_present;
    std::uint8_t* b_present;
};
template <class Acc>
EXACTREF_HD_INLINE tree_buffers<Acc> split_work(Acc* work, const tree_plan& p) noexcept {
    auto* flags = reinterpret_cast<std::uint8_t*>(work + p.tile_nodes + p.second_nodes);
    return {work, work + p.tile_nodes, flags, flags + p.tile_nodes};
}

/// Launch `index` (0-based) of the level launches: how many nodes it reads, how many blocks it runs, whether it reads
/// A (else B), and whether it is the last (it writes the result).
struct level_launch {
    std::uint64_t count;
    std::uint64_t blocks;
    bool reads_a;
    bool last;
};
inline constexpr level_launch level_launch_at(const tree_plan& p, std::uint64_t index) noexcept {
    std::uint64_t count = p.tile_nodes;
    for (std::uint64_t i = 0; i < index; ++i) count = count / p.level_group + (count % p.level_group != 0);
    const std::uint64_t blocks = count == 0 ? 1 : count / p.level_group + (count % p.level_group != 0);
    return {count, blocks, index % 2 == 0, index + 1 == p.level_launches};
}

/// Leaves per tile block for a shape (halving: warps * leaves per warp; fold: one per thread).
inline constexpr std::uint64_t tile_leaves_for(tree_kind kind, unsigned halving_leaves_per_warp) noexcept {
    return kind == tree_kind::halving ? std::uint64_t{tuning::warps_per_block} * halving_leaves_per_warp
                                      : std::uint64_t{tuning::fold_leaves_per_block};
}

}  // namespace exactref::cuda::detail
