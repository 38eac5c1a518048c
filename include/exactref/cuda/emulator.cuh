// exactref/cuda/emulator.cuh — a host block emulator that runs the device kernels' steps without a GPU.
//
// The kernels of src/cuda/ are sequences of phases separated by barriers (__syncthreads) and warp exchanges
// (__shfl_down_sync, __reduce_max_sync, __any_sync). Their arithmetic lives in __host__ __device__ step functions
// (tree_steps.cuh, exact_steps.cuh); this file runs the same steps in the same phase structure on the CPU:
//
//   block      256 emulated threads = 8 warps of 32 lanes, each with its registers (arrays indexed by lane), and one
//              shared-memory struct per block; blocks run one after the other (they only meet in global memory,
//              through atomics on integers or through separate launches).
//   barrier    the end of a loop over every thread of the block: no thread starts the next phase before all finished
//              this one, which is what __syncthreads guarantees.
//   shuffle    shfl_down(regs, lane, s) reads the registers as they were before the step (a snapshot), lane + s >= 32
//              reads its own value: the semantics of __shfl_down_sync with a full mask.
//   atomics    plain additions (chunk_add), since emulated threads never run at the same time; integer addition is
//              associative, so every real interleaving gives the same sums.
//
// tests/test_cuda_emulator.cpp checks the emulated device trees against exactref::tree_reduce bit for bit and the
// emulated exact sum and dot against exactref::sum / exactref::dot, for many n, ops, formats and launch shapes, and
// shows that planted wrong orders (plant) are caught. The GPU tests (tests/test_gpu_*.cpp) then check the real
// kernels against the same host functions.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "exactref/cuda/exact_result.cuh"
#include "exactref/cuda/exact_sources.cuh"
#include "exactref/cuda/exact_steps.cuh"
#include "exactref/cuda/tree_steps.cuh"
#include "exactref/reference.h"
#include "exactref/tree.h"

namespace exactref::cuda::emulator {

using detail::node;

/// Deliberately wrong schedules, for tests that must see a wrong order change the bits (STYLE.md, practice 7).
enum class plant {
    none,
    ascending_leaf_steps,  // halving leaves: the warp steps in the order h = 1, 2, ..., 16 instead of 16, ..., 1
    halving_levels,        // pairwise levels: a block combines node i with node i + count/2 (halving) not i + 1
};

/// Launch shape of the emulated trees (any value gives the same bits; tests run several).
struct tree_launch {
    unsigned halving_leaves_per_warp = tuning::halving_leaves_per_warp;
    /// Nodes per level block: a power of two from 2 to 256 (the device's is 256; smaller groups make more launches).
    unsigned level_group = tuning::level_nodes_per_block;
    plant fault = plant::none;
};

namespace detail_emulator {

constexpr unsigned W = tuning::warp_threads;

/// __shfl_down_sync(v, s) as lane `lane` sees it, from the registers before the step.
template <class V>
const V& shfl_down(const std::vector<V>& before, unsigned lane, unsigned s) {
    return lane + s < W ? before[lane + s] : before[lane];
}

/// Pairwise levels over the nodes of one warp's lanes (regs[lane]): strides 1, 2, ..., < width; lane 0 ends with the
/// root of the aligned group of `width` nodes.
template <class Step, class Acc>
node<Acc> warp_levels(std::vector<node<Acc>> regs, unsigned width, plant fault) {
    if (fault == plant::halving_levels) {
        for (unsigned s = width / 2; s >= 1; s /= 2) {
            const std::vector<node<Acc>> before = regs;
            for (unsigned lane = 0; lane < s; ++lane)
                regs[lane] = cuda::detail::combine_nodes<Step>(before[lane], before[lane + s]);
        }
        return regs[0];
    }
    for (unsigned s = 1; s < width; s *= 2) {
        const std::vector<node<Acc>> before = regs;  // shuffle semantics: every lane reads the old registers
        for (unsigned lane = 0; lane < W; ++lane)
            regs[lane] = cuda::detail::pair_lane_step<Step>(before[lane], shfl_down(before, lane, s), lane, s);
    }
    return regs[0];
}

/// The block reduction of 256 nodes, one per thread (tree_kernels.h, block_reduce_nodes): each warp reduces its 32
/// (5 levels), lane 0 writes shared memory, barrier, warp 0 reduces the 8 warp results (3 levels).
template <class Step, class Acc>
node<Acc> block_reduce_nodes(const std::vector<node<Acc>>& per_thread, plant fault) {
    std::vector<node<Acc>> partial(tuning::warps_per_block);  // shared memory
    for (unsigned w = 0; w < tuning::warps_per_block; ++w) {
        std::vector<node<Acc>> regs(per_thread.begin() + w * W, per_thread.begin() + (w + 1) * W);
        partial[w] = warp_levels<Step>(std::move(regs), W, fault);
    }
    // barrier
    std::vector<node<Acc>> regs(W, node<Acc>{Acc{}, false});
    for (unsigned lane = 0; lane < tuning::warps_per_block; ++lane) regs[lane] = partial[lane];
    return warp_levels<Step>(std::move(regs), tuning::warps_per_block, fault);
}

/// One halving(256) leaf by one warp (src/cuda/tree_kernels.h, the leaf loop of halving_tile_kernel).
template <class Step, class T>
typename Step::value_type warp_halving_leaf(const T* x, unsigned count, plant fault) {
    using Acc = typename Step::value_type;
    std::vector<Acc> v(W);
    unsigned c = 0;
    for (unsigned lane = 0; lane < W; ++lane) {
        const auto held = count == cuda::detail::halving_leaf
                              ? cuda::detail::halving_lane_load<Step, true>(x, count, lane)
                              : cuda::detail::halving_lane_load<Step, false>(x, count, lane);
        v[lane] = held.value;
        c = held.present_slots;
    }
    if (fault == plant::ascending_leaf_steps) {
        for (unsigned h = 1; h <= 16; h *= 2) {
            const std::vector<Acc> before = v;
            for (unsigned lane = 0; lane < W; ++lane)
                v[lane] = cuda::detail::halving_lane_step<Step>(before[lane], shfl_down(before, lane, h), lane, h, c);
        }
        return v[0];
    }
    for (unsigned h = W / 2; h >= 1; h /= 2) {
        const std::vector<Acc> before = v;
        for (unsigned lane = 0; lane < W; ++lane)
            v[lane] = cuda::detail::halving_lane_step<Step>(before[lane], shfl_down(before, lane, h), lane, h, c);
        c = cuda::detail::halving_present_after(c, h);
    }
    return v[0];
}

/// Element i of the work buffer, refusing any index outside it: the emulator checks the device's buffer layout
/// (split_work, device_work_elems) as it runs.
template <class V>
V& at(V* base, std::uint64_t i, const void* lo, const void* hi) {
    V* p = base + i;
    if (static_cast<const void*>(p) < lo || static_cast<const void*>(p + 1) > hi)
        throw std::logic_error("exactref::cuda::emulator: a kernel would access the work buffer out of bounds");
    return *p;
}

template <class Step, class T>
typename Step::value_type run_tree(const T* x, std::uint64_t n, const tree_shape& shape, const bool* mask,
                                   const tree_launch& launch) {
    using Acc = typename Step::value_type;
    using cuda::detail::tile_leaves_for;
    const std::uint64_t tile_leaves = tile_leaves_for(shape.kind, launch.halving_leaves_per_warp);
    const cuda::detail::tree_plan plan = cuda::detail::make_tree_plan(n, shape.leaf, tile_leaves, launch.level_group);
    // The caller's work buffer, exactly as large as device_work_elems says, and the device's layout inside it.
    std::vector<Acc> work(cuda::detail::work_elems<Acc>(plan));
    const void* lo = work.data();
    const void* hi = work.data() + work.size();
    const cuda::detail::tree_buffers<Acc> buf = cuda::detail::split_work(work.data(), plan);
    const node<Acc> absent{Acc{}, false};
    const auto store = [&](Acc* values, std::uint8_t* present, std::uint64_t i, const node<Acc>& v) {
        at(values, i, lo, hi) = v.value;
        at(present, i, lo, hi) = v.present ? 1 : 0;
    };

    // Kernel 1: one block per tile of aligned leaves -> buffer A.
    for (std::uint64_t b = 0; b < plan.tile_nodes; ++b) {
        node<Acc> root;
        if (shape.kind == tree_kind::halving) {
            std::vector<node<Acc>> leaf_nodes(tile_leaves, absent);  // shared memory
            for (unsigned w = 0; w < tuning::warps_per_block; ++w)
                for (unsigned j = 0; j < launch.halving_leaves_per_warp; ++j) {
                    const unsigned slot = w * launch.halving_leaves_per_warp + j;
                    const std::uint64_t leaf = b * tile_leaves + slot;
                    if (leaf >= plan.leaves) continue;
                    const std::uint64_t first = leaf * cuda::detail::halving_leaf;
                    const auto count = static_cast<unsigned>(std::min<std::uint64_t>(cuda::detail::halving_leaf, n - first));
                    leaf_nodes[slot] = {warp_halving_leaf<Step>(x + first, count, launch.fault), true};
                }
            // barrier; warp 0 reduces the tile's leaves
            std::vector<node<Acc>> regs(W, absent);
            for (unsigned lane = 0; lane < tile_leaves; ++lane) regs[lane] = leaf_nodes[lane];
            root = warp_levels<Step>(std::move(regs), static_cast<unsigned>(tile_leaves), launch.fault);
        } else {
            std::vector<node<Acc>> per_thread(tuning::block_threads, absent);
            for (unsigned t = 0; t < tuning::block_threads; ++t) {
                const std::uint64_t leaf = b * tile_leaves + t;
                if (leaf >= plan.leaves) continue;
                const std::uint64_t first = leaf * cuda::detail::fold_leaf;
                const auto count = static_cast<unsigned>(std::min<std::uint64_t>(cuda::detail::fold_leaf, n - first));
                per_thread[t] = cuda::detail::fold_leaf_node<Step>(x + first, mask ? mask + first : nullptr, count);
            }
            root = block_reduce_nodes<Step>(per_thread, launch.fault);
        }
        store(buf.a_value, buf.a_present, b, root);
    }
    // Level launches (tree_kernels.h, run_tree): A -> B -> A ..., the last one writes the result.
    Acc result{};
    for (std::uint64_t i = 0; i < plan.level_launches; ++i) {
        const cuda::detail::level_launch l = cuda::detail::level_launch_at(plan, i);
        Acc* in_value = l.reads_a ? buf.a_value : buf.b_value;
        std::uint8_t* in_present = l.reads_a ? buf.a_present : buf.b_present;
        for (std::uint64_t b = 0; b < l.blocks; ++b) {
            std::vector<node<Acc>> per_thread(tuning::block_threads, absent);
            for (unsigned t = 0; t < launch.level_group; ++t) {
                const std::uint64_t k = b * launch.level_group + t;
                if (k < l.count) per_thread[t] = {at(in_value, k, lo, hi), at(in_present, k, lo, hi) != 0};
            }
            const node<Acc> root = block_reduce_nodes<Step>(per_thread, launch.fault);
            if (l.last) result = cuda::detail::root_value<Step>(root);
            else store(l.reads_a ? buf.b_value : buf.a_value, l.reads_a ? buf.b_present : buf.a_present, b, root);
        }
    }
    return result;
}

}  // namespace detail_emulator

/// The device tree over xs (host memory), computed by emulating the kernels' blocks: the bits
/// exactref::cuda::device_tree_reduce gives on a GPU, and exactref::tree_reduce gives on the host.
///
///   xs      n elements of T; (T, Acc) as device_tree_reduce accepts (cuda.h)
///   shape   halving(256) or fold(16); mask (fold only) one flag per element, or empty
/// Throws std::invalid_argument for another shape, a mask with halving, or a mask of the wrong size.
template <class Acc, class T>
Acc tree_reduce(std::span<const T> xs, reduce_op op, const tree_shape& shape, std::span<const bool> mask = {},
                const tree_launch& launch = {}) {
    if (!(shape == halving(256) || shape == fold(16)))
        throw std::invalid_argument("exactref::cuda::emulator::tree_reduce: the device trees are halving(256) and "
                                    "fold(16), not " + shape.name());
    if (!mask.empty() && shape.kind != tree_kind::fold)
        throw std::invalid_argument("exactref::cuda::emulator::tree_reduce: a mask needs fold(16)");
    if (!mask.empty() && mask.size() != xs.size())
        throw std::invalid_argument("exactref::cuda::emulator::tree_reduce: the mask has " +
                                    std::to_string(mask.size()) + " flags for " + std::to_string(xs.size()) +
                                    " elements");
    if (launch.halving_leaves_per_warp == 0 ||
        launch.halving_leaves_per_warp * tuning::warps_per_block > tuning::warp_threads ||
        (launch.halving_leaves_per_warp & (launch.halving_leaves_per_warp - 1)) != 0)
        throw std::invalid_argument("exactref::cuda::emulator::tree_reduce: halving_leaves_per_warp must be 1, 2 or 4");
    if (launch.level_group < 2 || launch.level_group > tuning::level_nodes_per_block ||
        (launch.level_group & (launch.level_group - 1)) != 0)
        throw std::invalid_argument("exactref::cuda::emulator::tree_reduce: level_group must be a power of two from 2 "
                                    "to 256");
    const bool* m = mask.empty() ? nullptr : mask.data();
    switch (op) {
        case reduce_op::sum:
            return detail_emulator::run_tree<cuda::detail::device_step<Acc, reduce_op::sum>>(xs.data(), xs.size(), shape, m, launch);
        case reduce_op::product:
            return detail_emulator::run_tree<cuda::detail::device_step<Acc, reduce_op::product>>(xs.data(), xs.size(), shape, m, launch);
        case reduce_op::min:
            return detail_emulator::run_tree<cuda::detail::device_step<Acc, reduce_op::min>>(xs.data(), xs.size(), shape, m, launch);
        case reduce_op::max:
            return detail_emulator::run_tree<cuda::detail::device_step<Acc, reduce_op::max>>(xs.data(), xs.size(), shape, m, launch);
        case reduce_op::any:
            return detail_emulator::run_tree<cuda::detail::device_step<Acc, reduce_op::any>>(xs.data(), xs.size(), shape, m, launch);
        case reduce_op::all:
            break;
    }
    return detail_emulator::run_tree<cuda::detail::device_step<Acc, reduce_op::all>>(xs.data(), xs.size(), shape, m, launch);
}

// ---- the exact sum and dot ------------------------------------------------------------------------------------------

/// Launch shape of the emulated exact kernels: the grid size the kernel would get from the SM count (any value gives
/// the same reference; tests run several).
struct exact_launch {
    std::uint64_t blocks = 132 * tuning::exact_blocks_per_sm;
    /// Planted fault: skip Step E2's extra rounds, dropping the terms more than W binades below the open window (a
    /// kernel that forgot the loop). Tests check that this changes the reference.
    bool plant_skip_extra_rounds = false;
};

namespace detail_emulator {

/// The exact kernel (exact_kernels.h, exact_kernel) over every block of the plan, into `st`.
template <class Source>
void run_exact(const Source& src, std::uint64_t n, const exact_launch& launch, cuda::detail::exact_state& st) {
    using L = typename Source::layout;
    constexpr unsigned N = Source::terms_per_lane;
    constexpr unsigned K = tuning::exact_elements_per_lane;
    const cuda::detail::exact_plan plan = cuda::detail::make_exact_plan(n, launch.blocks, K);
    const std::uint64_t warp_slice = std::uint64_t{W} * K;
    for (std::uint64_t b = 0; b < plan.blocks; ++b) {
        cuda::detail::block_chunks shared{};  // zeroed by the kernel's first phase
        std::vector<cuda::detail::lane_special> special(tuning::block_threads);
        const std::uint64_t begin = b * plan.elements_per_block;
        const std::uint64_t end = std::min(n, begin + plan.elements_per_block);
        // barrier
        for (unsigned w = 0; w < tuning::warps_per_block; ++w) {
            cuda::detail::open_window window;  // the warp's open window (its lanes' sums as one total: integers)
            const auto flush = [&](const cuda::detail::lane_sums& total, unsigned top) {
                cuda::detail::flush_window<L>(shared, total, top);  // lane 0
            };
            for (std::uint64_t base = begin + w * warp_slice; base < end; base += tuning::warps_per_block * warp_slice) {
                std::vector<cuda::detail::lane_terms<L, N>> terms(W);
                unsigned top = 0;  // __reduce_max_sync
                for (unsigned lane = 0; lane < W; ++lane) {
                    src.load(terms[lane], special[w * W + lane], shared, base, end, lane);  // Step E1
                    top = std::max(top, cuda::detail::lane_top(terms[lane]));
                }
                if (top == 0) continue;  // Step E2
                if (cuda::detail::must_reopen<N>(window, top)) {
                    if (window.top != 0) flush(window.sums, window.top);
                    window = cuda::detail::open_window{cuda::detail::lane_sums{}, top, 0};
                }
                for (unsigned lane = 0; lane < W; ++lane) cuda::detail::take_window(terms[lane], window.top, window.sums);
                ++window.iterations;
                for (;;) {  // terms below the window: extra rounds
                    bool any = false;  // __any_sync
                    unsigned round_top = 0;
                    for (unsigned lane = 0; lane < W; ++lane) {
                        any = any || terms[lane].pending != 0;
                        round_top = std::max(round_top, cuda::detail::lane_top(terms[lane]));
                    }
                    if (!any || launch.plant_skip_extra_rounds) break;
                    cuda::detail::lane_sums round;
                    for (unsigned lane = 0; lane < W; ++lane) cuda::detail::take_window(terms[lane], round_top, round);
                    flush(round, round_top);
                }
            }
            if (window.top != 0) flush(window.sums, window.top);
        }
        // barrier; Step E3: thread 0 makes the chunks canonical; barrier; threads add them to the global chunks
        cuda::detail::normalize_chunks(shared.sum);
        cuda::detail::normalize_chunks(shared.abs);
        for (int k = 0; k < cuda::detail::exact_chunk_count; ++k) {
            cuda::detail::chunk_add(&st.sum_chunks[k], shared.sum[k]);
            cuda::detail::chunk_add(&st.abs_chunks[k], shared.abs[k]);
        }
        for (unsigned w = 0; w < tuning::warps_per_block; ++w) {
            cuda::detail::lane_special warp_special;  // the warp reduction, then lane 0 publishes
            for (unsigned lane = 0; lane < W; ++lane)
                warp_special = cuda::detail::combine_special(warp_special, special[w * W + lane]);
            cuda::detail::publish_special(st, warp_special);
        }
    }
}

inline cuda::detail::exact_state initial_state(std::uint64_t n, dtype format, bool is_dot) {
    cuda::detail::exact_state st;
    for (unsigned i = 0; i < cuda::detail::init_state_steps; ++i)
        cuda::detail::init_state_field(st, i, n, static_cast<unsigned>(format), is_dot);
    return st;
}

}  // namespace detail_emulator

/// The state the exact device sum leaves for xs (host memory), computed by emulating the kernel's blocks.
template <floating_format T>
cuda::detail::exact_state exact_sum_state(std::span<const T> xs, const exact_launch& launch = {}) {
    auto st = detail_emulator::initial_state(xs.size(), format_traits<T>::info.id, false);
    const cuda::detail::sum_source<T, tuning::exact_elements_per_lane> src{xs.data()};
    detail_emulator::run_exact(src, xs.size(), launch, st);
    return st;
}

/// The state the exact device dot product leaves for x, y (host memory, the same length).
template <floating_format T>
cuda::detail::exact_state exact_dot_state(std::span<const T> x, std::span<const T> y, const exact_launch& launch = {}) {
    if (x.size() != y.size())
        throw std::invalid_argument("exactref::cuda::emulator::exact_dot: x has " + std::to_string(x.size()) +
                                    " elements and y has " + std::to_string(y.size()));
    auto st = detail_emulator::initial_state(x.size(), format_traits<T>::info.id, true);
    const cuda::detail::dot_source<T, tuning::exact_elements_per_lane> src{x.data(), y.data()};
    detail_emulator::run_exact(src, x.size(), launch, st);
    return st;
}

/// The reference exactref::cuda::device_sum gives on a GPU (and exactref::sum on the host), by emulation.
template <floating_format T>
reference exact_sum(std::span<const T> xs, const exact_launch& launch = {}) {
    return cuda::detail::make_reference(exact_sum_state(xs, launch));
}

/// The reference exactref::cuda::device_dot gives on a GPU (and exactref::dot on the host), by emulation.
template <floating_format T>
reference exact_dot(std::span<const T> x, std::span<const T> y, const exact_launch& launch = {}) {
    return cuda::detail::make_reference(exact_dot_state(x, y, launch));
}

}  // namespace exactref::cuda::emulator
