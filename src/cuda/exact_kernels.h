// The exact device sum and dot kernels (device code: included only by src/cuda/exact.cu).
//
// The steps E1-E3 and the headroom argument are in include/exactref/cuda/exact_steps.cuh; the host block emulator
// (emulator.cuh, run_exact) runs the same steps in the same phase structure.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "exactref/cuda/exact_sources.cuh"
#include "exactref/cuda/exact_steps.cuh"

namespace exactref::cuda::detail {

inline constexpr unsigned exact_full_warp = 0xFFFFFFFFu;

/// The warp's total of its lanes' sums (a butterfly: every lane ends with the total; integer, so exact).
template <class L>
__device__ __forceinline__ lane_sums warp_total(lane_sums s) {
    for (unsigned off = tuning::warp_threads / 2; off >= 1; off /= 2) {
        s.s_lo += __shfl_xor_sync(exact_full_warp, static_cast<long long>(s.s_lo), off);
        s.a_lo += __shfl_xor_sync(exact_full_warp, static_cast<long long>(s.a_lo), off);
        if constexpr (L::split > 0) {
            s.s_hi += __shfl_xor_sync(exact_full_warp, static_cast<long long>(s.s_hi), off);
            s.a_hi += __shfl_xor_sync(exact_full_warp, static_cast<long long>(s.a_hi), off);
        }
    }
    return s;
}

/// The union of the warp's special state (every lane ends with it).
__device__ __forceinline__ lane_special warp_special(lane_special sp) {
    for (unsigned off = tuning::warp_threads / 2; off >= 1; off /= 2) {
        lane_special other;
        other.positive_inf = __shfl_xor_sync(exact_full_warp, sp.positive_inf, off);
        other.negative_inf = __shfl_xor_sync(exact_full_warp, sp.negative_inf, off);
        other.min_product_exponent = __shfl_xor_sync(exact_full_warp, sp.min_product_exponent, off);
        const unsigned flags = (sp.nan_seen ? 1u : 0u) | (sp.not_negative_zero ? 2u : 0u) |
                               (sp.not_positive_zero ? 4u : 0u) | (sp.nonzero ? 8u : 0u);
        const unsigned theirs = __shfl_xor_sync(exact_full_warp, flags, off);
        other.nan_seen = (theirs & 1u) != 0;
        other.not_negative_zero = (theirs & 2u) != 0;
        other.not_positive_zero = (theirs & 4u) != 0;
        other.nonzero = (theirs & 8u) != 0;
        sp = combine_special(sp, other);
    }
    return sp;
}

/// Writes the initial state (zero chunks, no special, no product; n, format, is_dot).
__global__ void exact_init_kernel(exact_state* st, std::uint64_t n, unsigned term_format, bool is_dot) {
    for (unsigned i = threadIdx.x; i < init_state_steps; i += blockDim.x) init_state_field(*st, i, n, term_format, is_dot);
}

/// One block takes elements [blockIdx.x·per_block, min(n, (blockIdx.x + 1)·per_block)); each warp takes slices of
/// 32·K consecutive elements, 8 warps apart (Steps E1, E2), then the block publishes its chunks (Step E3).
template <class Source>
__global__ void __launch_bounds__(tuning::block_threads)
    exact_kernel(Source src, std::uint64_t n, std::uint64_t per_block, exact_state* __restrict__ st) {
    using L = typename Source::layout;
    constexpr unsigned N = Source::terms_per_lane;
    constexpr std::uint64_t slice = std::uint64_t{tuning::warp_threads} * tuning::exact_elements_per_lane;
    __shared__ block_chunks chunks;
    for (unsigned k = threadIdx.x; k < exact_chunk_count; k += blockDim.x) chunks.sum[k] = chunks.abs[k] = 0;
    __syncthreads();

    const unsigned lane = threadIdx.x % tuning::warp_threads;
    const unsigned warp = threadIdx.x / tuning::warp_threads;
    const std::uint64_t begin = std::uint64_t{blockIdx.x} * per_block;
    const std::uint64_t end = begin >= n ? begin : (n - begin < per_block ? n : begin + per_block);
    lane_special sp;
    open_window window;
    for (std::uint64_t base = begin + warp * slice; base < end; base += tuning::warps_per_block * slice) {
        lane_terms<L, N> terms;
        src.load(terms, sp, chunks, base, end, lane);                                  // Step E1
        const unsigned top = __reduce_max_sync(exact_full_warp, lane_top(terms));     // Step E2
        if (top == 0) continue;  // nothing to add in this slice (zeros and specials only)
        if (must_reopen<N>(window, top)) {
            if (window.top != 0) {
                const lane_sums total = warp_total<L>(window.sums);
                if (lane == 0) flush_window<L>(chunks, total, window.top);
            }
            window = open_window{lane_sums{}, top, 0};
        }
        take_window(terms, window.top, window.sums);
        ++window.iterations;
        while (__any_sync(exact_full_warp, terms.pending != 0)) {  // terms below the window: extra rounds
            const unsigned round_top = __reduce_max_sync(exact_full_warp, lane_top(terms));
            lane_sums round;
            take_window(terms, round_top, round);
            const lane_sums total = warp_total<L>(round);
            if (lane == 0) flush_window<L>(chunks, total, round_top);
        }
    }
    if (window.top != 0) {
        const lane_sums total = warp_total<L>(window.sums);
        if (lane == 0) flush_window<L>(chunks, total, window.top);
    }
    __syncthreads();                                                           // Step E3
    if (threadIdx.x == 0) {
        normalize_chunks(chunks.sum);
        normalize_chunks(chunks.abs);
    }
    __syncthreads();
    for (unsigned k = threadIdx.x; k < exact_chunk_count; k += blockDim.x) {
        if (chunks.sum[k] != 0) chunk_add(&st->sum_chunks[k], chunks.sum[k]);
        if (chunks.abs[k] != 0) chunk_add(&st->abs_chunks[k], chunks.abs[k]);
    }
    sp = warp_special(sp);
    if (lane == 0) publish_special(*st, sp);
}

}  // namespace exactref::cuda::detail
