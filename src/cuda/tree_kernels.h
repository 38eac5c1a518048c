// The device tree kernels and their launcher (device code: included only by src/cuda/tree_*.cu).
//
// Kernel 1 (tile): one block per aligned tile of leaves. halving(256): one warp per leaf (halving_lane_load, then
// five shuffle steps), the block's 16 leaf results reduced by warp 0; fold(16): one thread per leaf, the block's 256
// leaf results reduced by block_reduce_nodes. Kernel 2 (levels), launched until one launch has at most 256 nodes:
// one block per aligned group of 256 nodes. The steps are those of include/exactref/cuda/tree_steps.cuh, which the
// host block emulator (emulator.cuh) runs in the same phase structure; tree_steps.cuh explains why the bits are the
// host's.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "cuda_check.h"
#include "exactref/cuda/tree_steps.cuh"

namespace exactref::cuda::detail {

inline constexpr unsigned full_warp = 0xFFFFFFFFu;

// ---- shared-memory storage and shuffles for every accumulation type -------------------------------------------------

/// What an Acc is stored as in shared memory (float16 and bfloat16 have a default member initializer, which
/// __shared__ variables may not have: they are kept as their 16 bits).
template <class Acc>
struct raw_storage {
    using type = Acc;
    __device__ static Acc load(type r) { return r; }
    __device__ static type store(Acc v) { return v; }
};
template <class Acc>
    requires(std::is_same_v<Acc, float16> || std::is_same_v<Acc, bfloat16>)
struct raw_storage<Acc> {
    using type = std::uint16_t;
    __device__ static Acc load(type r) {
        Acc v;
        v.bits = r;
        return v;
    }
    __device__ static type store(Acc v) { return v.bits; }
};

/// __shfl_down_sync for every accumulation type (64-bit integers and doubles as the runtime's overloads take them).
template <class Acc>
__device__ __forceinline__ Acc shfl_down(Acc v, unsigned s) {
    if constexpr (std::is_same_v<Acc, float16> || std::is_same_v<Acc, bfloat16>) {
        Acc r;
        r.bits = static_cast<std::uint16_t>(__shfl_down_sync(full_warp, static_cast<unsigned>(v.bits), s));
        return r;
    } else if constexpr (std::is_same_v<Acc, double> || std::is_same_v<Acc, float> || std::is_same_v<Acc, int> ||
                         std::is_same_v<Acc, unsigned> || std::is_same_v<Acc, long long> ||
                         std::is_same_v<Acc, unsigned long long>) {
        return __shfl_down_sync(full_warp, v, s);
    } else if constexpr (std::is_same_v<Acc, long>) {
        return static_cast<long>(__shfl_down_sync(full_warp, static_cast<long long>(v), s));
    } else {
        static_assert(std::is_same_v<Acc, unsigned long>);
        return static_cast<unsigned long>(__shfl_down_sync(full_warp, static_cast<unsigned long long>(v), s));
    }
}

template <class Acc>
__device__ __forceinline__ node<Acc> shfl_down(const node<Acc>& n, unsigned s) {
    return {shfl_down(n.value, s), __shfl_down_sync(full_warp, n.present ? 1 : 0, s) != 0};
}

/// Pairwise levels among the lanes of one warp (strides 1, 2, ... < width); lane 0 ends with the root of the aligned
/// group of `width` nodes the lanes held. Every lane of the warp must call it.
template <class Step, class Acc>
__device__ __forceinline__ node<Acc> warp_levels(node<Acc> own, unsigned width, unsigned lane) {
    for (unsigned s = 1; s < width; s *= 2) own = pair_lane_step<Step>(own, shfl_down(own, s), lane, s);
    return own;
}

/// The root of the aligned group of 256 nodes held one per thread (valid in thread 0): 5 levels per warp, the 8 warp
/// results through shared memory, 3 levels in warp 0.
template <class Step, class Acc>
__device__ __forceinline__ node<Acc> block_reduce_nodes(node<Acc> own) {
    using raw = raw_storage<Acc>;
    __shared__ typename raw::type partial_value[tuning::warps_per_block];
    __shared__ bool partial_present[tuning::warps_per_block];
    const unsigned lane = threadIdx.x % tuning::warp_threads;
    const unsigned warp = threadIdx.x / tuning::warp_threads;
    own = warp_levels<Step>(own, tuning::warp_threads, lane);
    if (lane == 0) {
        partial_value[warp] = raw::store(own.value);
        partial_present[warp] = own.present;
    }
    __syncthreads();
    node<Acc> root{Acc{}, false};
    if (warp == 0) {
        node<Acc> v{Acc{}, false};
        if (lane < tuning::warps_per_block) v = {raw::load(partial_value[lane]), partial_present[lane]};
        root = warp_levels<Step>(v, tuning::warps_per_block, lane);
    }
    return root;
}

// ---- kernel 1: tiles of leaves --------------------------------------------------------------------------------------

template <class Step, class T>
__global__ void __launch_bounds__(tuning::block_threads)
    halving_tile_kernel(const T* __restrict__ x, std::uint64_t n, std::uint64_t leaves,
                        typename Step::value_type* __restrict__ out_value, std::uint8_t* __restrict__ out_present) {
    using Acc = typename Step::value_type;
    using raw = raw_storage<Acc>;
    constexpr unsigned lpw = tuning::halving_leaves_per_warp;
    constexpr unsigned tile_leaves = tuning::warps_per_block * lpw;
    __shared__ typename raw::type leaf_value[tile_leaves];
    __shared__ bool leaf_present[tile_leaves];
    const unsigned lane = threadIdx.x % tuning::warp_threads;
    const unsigned warp = threadIdx.x / tuning::warp_threads;
    EXACTREF_UNROLL  // lets the loads of a warp's next leaf start before this leaf's shuffles
    for (unsigned j = 0; j < lpw; ++j) {
        const unsigned slot = warp * lpw + j;
        const std::uint64_t leaf = std::uint64_t{blockIdx.x} * tile_leaves + slot;
        if (leaf >= leaves) {  // warp-uniform
            if (lane == 0) leaf_present[slot] = false;
            continue;
        }
        const std::uint64_t first = leaf * halving_leaf;
        const unsigned count = n - first >= halving_leaf ? halving_leaf : static_cast<unsigned>(n - first);
        const halving_lane<Acc> held = count == halving_leaf ? halving_lane_load<Step, true>(x + first, count, lane)
                                                             : halving_lane_load<Step, false>(x + first, count, lane);
        Acc v = held.value;
        unsigned c = held.present_slots;
        for (unsigned h = tuning::warp_threads / 2; h >= 1; h /= 2) {
            v = halving_lane_step<Step>(v, shfl_down(v, h), lane, h, c);
            c = halving_present_after(c, h);
        }
        if (lane == 0) {
            leaf_value[slot] = raw::store(v);
            leaf_present[slot] = true;
        }
    }
    __syncthreads();
    if (warp == 0) {
        node<Acc> own{Acc{}, false};
        if (lane < tile_leaves) own = {raw::load(leaf_value[lane]), leaf_present[lane]};
        own = warp_levels<Step>(own, tile_leaves, lane);
        if (lane == 0) {
            out_value[blockIdx.x] = own.value;
            out_present[blockIdx.x] = own.present ? 1 : 0;
        }
    }
}

template <class Step, class T>
__global__ void __launch_bounds__(tuning::block_threads)
    fold_tile_kernel(const T* __restrict__ x, std::uint64_t n, std::uint64_t leaves, const bool* __restrict__ mask,
                     typename Step::value_type* __restrict__ out_value, std::uint8_t* __restrict__ out_present) {
    using Acc = typename Step::value_type;
    const std::uint64_t leaf = std::uint64_t{blockIdx.x} * tuning::fold_leaves_per_block + threadIdx.x;
    node<Acc> own{Acc{}, false};
    if (leaf < leaves) {
        const std::uint64_t first = leaf * fold_leaf;
        const unsigned count = n - first >= fold_leaf ? fold_leaf : static_cast<unsigned>(n - first);
        own = fold_leaf_node<Step>(x + first, mask != nullptr ? mask + first : nullptr, count);
    }
    own = block_reduce_nodes<Step>(own);
    if (threadIdx.x == 0) {
        out_value[blockIdx.x] = own.value;
        out_present[blockIdx.x] = own.present ? 1 : 0;
    }
}

// ---- kernel 2: pairwise levels ----------------------------------------------------------------------------------------

/// Reduces aligned groups of 256 nodes; the launch with at most 256 nodes writes root_value to *result instead.
template <class Step>
__global__ void __launch_bounds__(tuning::block_threads)
    levels_kernel(const typename Step::value_type* __restrict__ in_value, const std::uint8_t* __restrict__ in_present,
                  std::uint64_t count, typename Step::value_type* __restrict__ out_value,
                  std::uint8_t* __restrict__ out_present, typename Step::value_type* __restrict__ result) {
    using Acc = typename Step::value_type;
    const std::uint64_t i = std::uint64_t{blockIdx.x} * tuning::level_nodes_per_block + threadIdx.x;
    node<Acc> own{Acc{}, false};
    if (i < count) own = {in_value[i], in_present[i] != 0};
    own = block_reduce_nodes<Step>(own);
    if (threadIdx.x == 0) {
        if (result != nullptr) {
            *result = root_value<Step>(own);
        } else {
            out_value[blockIdx.x] = own.value;
            out_present[blockIdx.x] = own.present ? 1 : 0;
        }
    }
}

// ---- the launcher -------------------------------------------------------------------------------------------------------

/// Enqueues the launches of make_tree_plan on `stream` (arguments already checked by launch_tree).
template <class Step, class T>
void run_tree(const T* x, std::uint64_t n, typename Step::value_type* result, typename Step::value_type* work,
              const tree_shape& shape, const bool* mask, cudaStream_t stream) {
    using Acc = typename Step::value_type;
    const tree_plan plan = make_tree_plan(n, shape.leaf, tile_leaves_for(shape.kind, tuning::halving_leaves_per_warp));
    const tree_buffers<Acc> buf = split_work(work, plan);
    const dim3 threads(tuning::block_threads);
    if (plan.tile_nodes > 0) {
        const dim3 blocks(static_cast<unsigned>(plan.tile_nodes));
        if (shape.kind == tree_kind::halving)
            halving_tile_kernel<Step, T><<<blocks, threads, 0, stream>>>(x, n, plan.leaves, buf.a_value, buf.a_present);
        else
            fold_tile_kernel<Step, T><<<blocks, threads, 0, stream>>>(x, n, plan.leaves, mask, buf.a_value, buf.a_present);
        check_launch(shape.kind == tree_kind::halving ? "the halving(256) tile kernel" : "the fold(16) tile kernel");
    }
    for (std::uint64_t i = 0; i < plan.level_launches; ++i) {
        const level_launch l = level_launch_at(plan, i);
        levels_kernel<Step><<<dim3(static_cast<unsigned>(l.blocks)), threads, 0, stream>>>(
            l.reads_a ? buf.a_value : buf.b_value, l.reads_a ? buf.a_present : buf.b_present, l.count,
            l.reads_a ? buf.b_value : buf.a_value, l.reads_a ? buf.b_present : buf.a_present, l.last ? result : nullptr);
        check_launch("the pairwise-levels kernel");
    }
}

/// Dispatches the op to its step type.
template <class T, class Acc>
void run_tree_op(const T* x, std::uint64_t n, Acc* result, Acc* work, reduce_op op, const tree_shape& shape,
                 const bool* mask, cudaStream_t stream) {
    switch (op) {
        case reduce_op::sum: return run_tree<device_step<Acc, reduce_op::sum>>(x, n, result, work, shape, mask, stream);
        case reduce_op::product: return run_tree<device_step<Acc, reduce_op::product>>(x, n, result, work, shape, mask, stream);
        case reduce_op::min: return run_tree<device_step<Acc, reduce_op::min>>(x, n, result, work, shape, mask, stream);
        case reduce_op::max: return run_tree<device_step<Acc, reduce_op::max>>(x, n, result, work, shape, mask, stream);
        case reduce_op::any: return run_tree<device_step<Acc, reduce_op::any>>(x, n, result, work, shape, mask, stream);
        case reduce_op::all: return run_tree<device_step<Acc, reduce_op::all>>(x, n, result, work, shape, mask, stream);
    }
}

}  // namespace exactref::cuda::detail

namespace exactref::cuda::detail {

/// Refuses what the device trees cannot do (src/cuda/api.cpp): std::invalid_argument naming the problem.
void check_tree_call(const tree_shape& shape, std::uint64_t n, bool has_data, bool has_result, bool has_work,
                     std::uint64_t work_elems, std::size_t acc_size, bool has_mask);

template <class T, class Acc>
void launch_tree(const T* d_xs, std::size_t n, Acc* d_result, Acc* d_work, std::size_t work_elems, reduce_op op,
                 const tree_shape& shape, cudaStream_t stream, const bool* d_mask) {
    check_tree_call(shape, n, d_xs != nullptr, d_result != nullptr, d_work != nullptr, work_elems, sizeof(Acc),
                    d_mask != nullptr);
    run_tree_op<T, Acc>(d_xs, n, d_result, d_work, op, shape, d_mask, stream);
}

}  // namespace exactref::cuda::detail

/// Explicit instantiation of the launcher for one (element, accumulation) pair (src/cuda/tree_*.cu).
#define EXACTREF_CUDA_INSTANTIATE_TREE(T, ACC)                                                                       \
    template void exactref::cuda::detail::launch_tree<T, ACC>(const T*, std::size_t, ACC*, ACC*, std::size_t,      \
                                                               exactref::reduce_op, const exactref::tree_shape&,     \
                                                               cudaStream_t, const bool*);
