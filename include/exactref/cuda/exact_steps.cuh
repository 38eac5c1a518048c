// exactref/cuda/exact_steps.cuh — the exact device sum and dot product: per-lane steps shared by the kernel
// (src/cuda/exact_kernels.h) and the host block emulator (emulator.cuh), and the state they leave in the caller's
// work buffer, which exact_result.cuh turns into an exactref::reference. Step E1 (loading terms) is in
// exact_sources.cuh.
//
// Algorithm (docs/cuda.md, "Exact device sum"): the superaccumulator of accumulator.h — value = Σ_k chunk[k]·2^(-2176
// + 32k), k = 0..135 — held once per block in shared memory and once in global memory, with integer atomics.
// Integer addition is associative and commutative, so the order in which threads, warps and blocks add does not
// matter: the result is exact and the same on every run and every launch shape.
//
//   Step E1  each lane loads exact_elements_per_lane elements of a warp's slice (lane + 32 j: coalesced) and turns
//            them into terms: the element itself (sum), or the exact product split into binary64 terms (dot:
//            narrow formats p = x·y exactly in binary64; binary64 p = fl(x·y) and e = fma(x, y, -p), exact for both
//            operands normal with -918 <= E_x + E_y <= 1021; any other finite product is added directly as a
//            128-bit integer: add_wide). NaN, ±Inf and zeros only update the lane's special state.
//   Step E2  windows. A warp keeps one window open across its iterations: a top exponent field T and, per lane,
//            int64 lane sums that take every pending term within W binades below T as m·2^(W - (T - f)) (binary64
//            significands split 27 + 26 bits, one lane sum each, as in src/sum_kernels.cpp), for s (signed) and S
//            (absolute). Each iteration: top = the warp's largest pending field (__reduce_max_sync); if the window
//            has no top, lies below top, or is full (2^11 terms), the warp flushes it — adds its lanes' sums
//            (shuffles) and lane 0 adds the total to the block's chunks, three 32-bit pieces per sum, shared-memory
//            atomics — and opens a new one at top. The iteration's terms inside the window go into it; terms
//            further below are added in extra rounds, each with its own top and an immediate flush, until none is
//            pending. So every term is added exactly, and data whose binades stay within W of the warp's largest
//            value costs a flush per 2^11 terms only.
//   Step E3  block end: the warp flushes its window; one thread makes the block's chunks canonical (carry pass:
//            chunks 0..134 in [0, 2^32)); the block adds them to the global chunks (global atomics), and its special
//            state (atomicAdd / Or / Min).
//
// Headroom (why no int64 ever overflows):
//   lanes   a term adds < 2^(q + W) to a lane sum (q = bits per lane: 27 for binary64, else p), a window or a round
//           holds at most 2^11 terms of the warp, and W = 62 - 11 - q (24 for binary64, 27 for binary32, 40 for
//           float16 — its whole range —, 43 for bfloat16) keeps every lane sum and the warp's total in (-2^62, 2^62).
//   shared  every atomic adds a piece of magnitude < 2^32, a flush adds at most 2 pieces to a chunk of each array,
//           and every flush consumes at least one term, so a block of E elements (<= 2 terms each) adds fewer than
//           4·E·2^32 < 2^62 to a chunk for E <= tuning::exact_max_elements_per_block = 2^28.
//   global  each block adds canonical chunks (< 2^32, the top one a small signed carry), and grids have < 2^31 blocks.
#pragma once

#include <climits>
#include <cstdint>
#include <type_traits>

#include "exactref/cuda/config.cuh"


namespace exactref::cuda::detail {

// ---- the chunk layout (the superaccumulator's: accumulator.h; exact_result.cuh checks the constants agree) ----------

inline constexpr int exact_chunk_bits = 32;
inline constexpr int exact_chunk_count = 136;
inline constexpr int exact_lsb_exponent = -2176;

/// The state an exact sum or dot leaves in the caller's work buffer (device memory, zeroed by the init kernel).
/// Chunks hold two's complement int64 values in unsigned 64-bit words (what atomicAdd takes).
struct exact_state {
    unsigned long long sum_chunks[exact_chunk_count];  // s = Σ t_i
    unsigned long long abs_chunks[exact_chunk_count];  // S = Σ |t_i|
    unsigned long long positive_inf;                   // +Inf terms
    unsigned long long negative_inf;                   // -Inf terms
    unsigned int nan_seen;                             // a NaN term (also Inf·0 in a dot product)
    unsigned int not_negative_zero;                    // a term that is not -0.0
    unsigned int not_positive_zero;                    // a term that is not +0.0
    unsigned int nonzero;                              // a term that is not ±0.0 (specials included)
    int min_product_exponent;                          // dot: floor(log2 |x·y|) of the smallest non-zero finite product
    unsigned int term_format;                          // exactref::dtype of the elements
    unsigned long long count;                          // n: terms (sum) or products (dot)
    unsigned int is_dot;
    unsigned int reserved;
};
static_assert(sizeof(exact_state) % 8 == 0);

/// The state before any term: zero chunks, no special, no product (written by the init kernel).
EXACTREF_HD_INLINE void init_state_field(exact_state& st, unsigned i, std::uint64_t n, unsigned term_format,
                                         bool is_dot) noexcept {
    // i indexes the 2 * exact_chunk_count chunks, then one more step for the scalars
    if (i < exact_chunk_count) st.sum_chunks[i] = 0;
    else if (i < 2 * exact_chunk_count) st.abs_chunks[i - exact_chunk_count] = 0;
    else if (i == 2 * exact_chunk_count) {
        st.positive_inf = st.negative_inf = 0;
        st.nan_seen = st.not_negative_zero = st.not_positive_zero = st.nonzero = 0;
        st.min_product_exponent = INT_MAX;
        st.term_format = term_format;
        st.count = n;
        st.is_dot = is_dot ? 1u : 0u;
        st.reserved = 0;
    }
}
inline constexpr unsigned init_state_steps = 2 * exact_chunk_count + 1;

/// A block's chunks, in shared memory.
struct block_chunks {
    unsigned long long sum[exact_chunk_count];
    unsigned long long abs[exact_chunk_count];
};

/// One lane's special-value bookkeeping, carried across a block's warp iterations.
struct lane_special {
    unsigned long long positive_inf = 0;
    unsigned long long negative_inf = 0;
    bool nan_seen = false;
    bool not_negative_zero = false;
    bool not_positive_zero = false;
    bool nonzero = false;
    int min_product_exponent = INT_MAX;
};

/// The union of two lanes' special state (warp and block reductions; every field is a sum, an or, or a min).
EXACTREF_HD_INLINE lane_special combine_special(const lane_special& a, const lane_special& b) noexcept {
    lane_special r;
    r.positive_inf = a.positive_inf + b.positive_inf;
    r.negative_inf = a.negative_inf + b.negative_inf;
    r.nan_seen = a.nan_seen || b.nan_seen;
    r.not_negative_zero = a.not_negative_zero || b.not_negative_zero;
    r.not_positive_zero = a.not_positive_zero || b.not_positive_zero;
    r.nonzero = a.nonzero || b.nonzero;
    r.min_product_exponent = a.min_product_exponent < b.min_product_exponent ? a.min_product_exponent
                                                                             : b.min_product_exponent;
    return r;
}

/// Adds a warp's (or block's) special state to the global state (Step E3): atomics on the device.
EXACTREF_HD_INLINE void publish_special(exact_state& st, const lane_special& sp) noexcept {
#if defined(__CUDA_ARCH__)
    if (sp.positive_inf != 0) atomicAdd(&st.positive_inf, sp.positive_inf);
    if (sp.negative_inf != 0) atomicAdd(&st.negative_inf, sp.negative_inf);
    if (sp.nan_seen) atomicOr(&st.nan_seen, 1u);
    if (sp.not_negative_zero) atomicOr(&st.not_negative_zero, 1u);
    if (sp.not_positive_zero) atomicOr(&st.not_positive_zero, 1u);
    if (sp.nonzero) atomicOr(&st.nonzero, 1u);
    if (sp.min_product_exponent != INT_MAX) atomicMin(&st.min_product_exponent, sp.min_product_exponent);
#else
    st.positive_inf += sp.positive_inf;
    st.negative_inf += sp.negative_inf;
    st.nan_seen |= sp.nan_seen ? 1u : 0u;
    st.not_negative_zero |= sp.not_negative_zero ? 1u : 0u;
    st.not_positive_zero |= sp.not_positive_zero ? 1u : 0u;
    st.nonzero |= sp.nonzero ? 1u : 0u;
    if (sp.min_product_exponent < st.min_product_exponent) st.min_product_exponent = sp.min_product_exponent;
#endif
}

// ---- integer helpers on both sides -----------------------------------------------------------------------------------

/// Adds delta (two's complement) to a chunk: an atomic on the device, a plain addition in the emulator, which runs one
/// thread at a time.
EXACTREF_HD_INLINE void chunk_add(unsigned long long* chunk, std::uint64_t delta) noexcept {
#if defined(__CUDA_ARCH__)
    atomicAdd(chunk, static_cast<unsigned long long>(delta));
#else
    *chunk += delta;
#endif
}

/// The high 64 bits of the 128-bit product a·b.
EXACTREF_HD_INLINE std::uint64_t mul_high(std::uint64_t a, std::uint64_t b) noexcept {
#if defined(__CUDA_ARCH__)
    return __umul64hi(a, b);
#else
    __extension__ typedef unsigned __int128 u128;
    return static_cast<std::uint64_t>((static_cast<u128>(a) * b) >> 64);
#endif
}

/// Adds (negative ? -1 : 1)·(hi·2^64 + lo)·2^e to chunks: the 128-bit magnitude is shifted to its chunk boundary and
/// added as five 32-bit pieces (each < 2^32). Precondition: e >= exact_lsb_exponent, the value below 2^2144.
EXACTREF_HD_INLINE void add_wide(unsigned long long* chunks, bool negative, std::uint64_t lo, std::uint64_t hi,
                                 int e) noexcept {
    const int pos = e - exact_lsb_exponent;
    const int k = pos >> 5;
    const int sh = pos & 31;
    // the 160-bit value (hi:lo) << sh as 32-bit words w0..w4
    const std::uint64_t s_lo = lo << sh;
    const std::uint64_t s_mid = sh == 0 ? hi : (hi << sh) | (lo >> (64 - sh));
    const std::uint64_t s_top = sh == 0 ? 0 : hi >> (64 - sh);
    const std::uint64_t words[5] = {s_lo & 0xFFFFFFFFu, s_lo >> 32, s_mid & 0xFFFFFFFFu, s_mid >> 32, s_top};
    for (int i = 0; i < 5; ++i) {
        if (words[i] == 0) continue;
        chunk_add(chunks + k + i, negative ? (~words[i] + 1) : words[i]);
    }
}

/// Adds a signed lane sum v·2^e (|v| < 2^63) to chunks: three pieces, as superaccumulator::add_lane_sum does.
EXACTREF_HD_INLINE void add_lane_sum(unsigned long long* chunks, std::int64_t v, int e) noexcept {
    if (v == 0) return;
    const bool negative = v < 0;
    const std::uint64_t m = negative ? (~static_cast<std::uint64_t>(v) + 1) : static_cast<std::uint64_t>(v);
    add_wide(chunks, negative, m, 0, e);
}

/// Carry pass (Step E3, the superaccumulator's Step N1): chunks 0..134 into [0, 2^32), the sign in the top chunk.
/// Never changes the value.
EXACTREF_HD_INLINE void normalize_chunks(unsigned long long* chunks) noexcept {
    for (int k = 0; k + 1 < exact_chunk_count; ++k) {
        const auto v = static_cast<std::int64_t>(chunks[k]);
        const std::int64_t carry = v >> 32;  // arithmetic shift: floor(v / 2^32)
        chunks[k] = static_cast<std::uint64_t>(v) & 0xFFFFFFFFu;
        chunks[k + 1] += static_cast<std::uint64_t>(carry);
    }
}

/// ceil(log2 x) for x >= 1, at compile time.
constexpr int ceil_log2_int(unsigned long long x) noexcept {
    int r = 0;
    while ((1ull << r) < x) ++r;
    return r;
}

// ---- term formats and the window lanes (Step E2) --------------------------------------------------------------------

/// Bit layout of the terms a lane holds, and the lane split of Step E2.
template <class Bits, int P, int ExponentBits>
struct term_layout {
    using bits_type = Bits;
    static constexpr int precision = P;
    static constexpr int exponent_bits = ExponentBits;
    static constexpr int frac_bits = P - 1;
    static constexpr int storage_bits = 8 * sizeof(Bits);
    static constexpr int bias = (1 << (ExponentBits - 1)) - 1;
    static constexpr std::uint64_t frac_mask = (std::uint64_t{1} << frac_bits) - 1;
    static constexpr std::uint64_t field_mask = (std::uint64_t{1} << ExponentBits) - 1;
    static constexpr std::uint64_t sign_bit = std::uint64_t{1} << (storage_bits - 1);
    // m = high·2^split + low; split = 0: the low lane holds all of m
    static constexpr int split = P > 32 ? 26 : 0;
    static constexpr std::uint64_t low_mask = split == 0 ? ~std::uint64_t{0} : (std::uint64_t{1} << split) - 1;
    static constexpr int lane_bits = P - split;
    static_assert(storage_bits == 1 + ExponentBits + frac_bits, "IEEE interchange layout");
};
using binary64_terms = term_layout<std::uint64_t, 53, 11>;
using binary32_terms = term_layout<std::uint32_t, 24, 8>;
using binary16_terms = term_layout<std::uint16_t, 11, 5>;
using bfloat16_terms = term_layout<std::uint16_t, 8, 8>;

/// Terms a warp adds to one window before its lane sums must be flushed (headroom in the file comment).
inline constexpr unsigned window_capacity_log2 = 11;

/// W of Step E2: the binades below the window's top that a lane sum takes (headroom in the file comment).
template <class L>
inline constexpr int window_binades = 62 - static_cast<int>(window_capacity_log2) - L::lane_bits;

/// Warp iterations (of N terms per lane) that fit in one window before a flush.
template <unsigned N>
inline constexpr unsigned window_iterations = (1u << window_capacity_log2) / (32u * N);

/// The terms one lane holds during a warp iteration: raw bits, which are still to be added (pending), and which go
/// into S with a negative sign (abs_negative: the e of a binary64 product whose sign differs from p's, since
/// |x·y| = |p| + e·sign(p)).
template <class L, unsigned N>
struct lane_terms {
    static_assert(N <= 32, "pending flags are one 32-bit word");
    typename L::bits_type bits[N];
    std::uint32_t pending = 0;
    std::uint32_t abs_negative = 0;
};

struct lane_sums {
    std::int64_t s_hi = 0, s_lo = 0;  // Σ t (signed)
    std::int64_t a_hi = 0, a_lo = 0;  // Σ |t|
};

/// The exponent field of a term, subnormals counted as 1 (they share the smallest normal exponent).
template <class L>
EXACTREF_HD_INLINE unsigned term_field(std::uint64_t b) noexcept {
    const auto f = static_cast<unsigned>((b >> L::frac_bits) & L::field_mask);
    return f == 0 ? 1u : f;
}

/// The largest field among this lane's pending terms (0 when none): the lane's bid for the round's top.
template <class L, unsigned N>
EXACTREF_HD_INLINE unsigned lane_top(const lane_terms<L, N>& t) noexcept {
    unsigned top = 0;
    EXACTREF_UNROLL
    for (unsigned j = 0; j < N; ++j)
        if ((t.pending >> j) & 1u) {
            const unsigned f = term_field<L>(t.bits[j]);
            top = f > top ? f : top;
        }
    return top;
}

/// Step E2 for one lane: adds every pending term within W binades of `top` (and not above it) to the lane sums r, in
/// units of 2^(top - bias - (p-1) - W), and clears it.
template <class L, unsigned N>
EXACTREF_HD_INLINE void take_window(lane_terms<L, N>& t, unsigned top, lane_sums& r) noexcept {
    constexpr int W = window_binades<L>;
    EXACTREF_UNROLL
    for (unsigned j = 0; j < N; ++j) {
        if (((t.pending >> j) & 1u) == 0) continue;
        const std::uint64_t b = t.bits[j];
        const unsigned f = term_field<L>(b);
        const int d = static_cast<int>(top) - static_cast<int>(f);
        if (d > W) continue;  // a later round
        const unsigned shift = static_cast<unsigned>(W - d);
        const bool normal = ((b >> L::frac_bits) & L::field_mask) != 0;
        const std::uint64_t m = (b & L::frac_mask) | (normal ? (std::uint64_t{1} << L::frac_bits) : 0);
        const auto lo = static_cast<std::int64_t>((m & L::low_mask) << shift);
        const bool negative = (b & L::sign_bit) != 0;
        const bool abs_negative = ((t.abs_negative >> j) & 1u) != 0;
        r.s_lo += negative ? -lo : lo;
        r.a_lo += abs_negative ? -lo : lo;
        if constexpr (L::split > 0) {
            const auto hi = static_cast<std::int64_t>((m >> L::split) << shift);
            r.s_hi += negative ? -hi : hi;
            r.a_hi += abs_negative ? -hi : hi;
        }
        t.pending &= ~(1u << j);
    }
}

EXACTREF_HD_INLINE lane_sums operator+(const lane_sums& a, const lane_sums& b) noexcept {
    return {a.s_hi + b.s_hi, a.s_lo + b.s_lo, a.a_hi + b.a_hi, a.a_lo + b.a_lo};
}

/// A flush (lane 0): the warp's lane sums of a window with top `top` into the block's chunks.
template <class L>
EXACTREF_HD_INLINE void flush_window(block_chunks& c, const lane_sums& r, unsigned top) noexcept {
    constexpr int W = window_binades<L>;
    const int unit = static_cast<int>(top) - L::bias - L::frac_bits - W;
    add_lane_sum(c.sum, r.s_lo, unit);
    add_lane_sum(c.abs, r.a_lo, unit);
    if constexpr (L::split > 0) {
        add_lane_sum(c.sum, r.s_hi, unit + L::split);
        add_lane_sum(c.abs, r.a_hi, unit + L::split);
    }
}

/// The window a warp keeps open across its iterations (Step E2): its top (0: none yet), how many iterations it holds,
/// and each lane's sums. Every lane holds the same top and count.
struct open_window {
    lane_sums sums;
    unsigned top = 0;
    unsigned iterations = 0;
};

/// Whether an iteration whose largest pending field is `top` must first flush the open window (and then open a new
/// one at `top`): when the window has no top yet, when `top` lies above it, or when it is full.
template <unsigned N>
EXACTREF_HD_INLINE bool must_reopen(const open_window& w, unsigned top) noexcept {
    return w.top == 0 || top > w.top || w.iterations == window_iterations<N>;
}

/// The grid of an exact sum over n elements: blocks, and the elements each takes (a multiple of a block's slice).
struct exact_plan {
    std::uint64_t n = 0;
    std::uint64_t blocks = 0;
    std::uint64_t elements_per_block = 0;
};

/// blocks_wanted: the persistent grid size (SMs · blocks per SM); raised when a block would take more than
/// tuning::exact_max_elements_per_block elements, lowered so that every block starts before n (n > 0).
inline constexpr exact_plan make_exact_plan(std::uint64_t n, std::uint64_t blocks_wanted,
                                            unsigned elements_per_lane) noexcept {
    exact_plan p;
    p.n = n;
    const std::uint64_t slice = std::uint64_t{tuning::block_threads} * elements_per_lane;
    const std::uint64_t slices = n / slice + (n % slice != 0);
    const std::uint64_t max_slices = tuning::exact_max_elements_per_block / slice;
    std::uint64_t blocks = blocks_wanted < 1 ? 1 : blocks_wanted;
    if (blocks > slices) blocks = slices < 1 ? 1 : slices;
    std::uint64_t per_block = slices / blocks + (slices % blocks != 0);
    if (per_block > max_slices) per_block = max_slices;
    // every block gets at least one slice: no block starts at or past n
    blocks = per_block == 0 ? 1 : slices / per_block + (slices % per_block != 0);
    p.blocks = blocks < 1 ? 1 : blocks;
    p.elements_per_block = per_block * slice;
    return p;
}

}  // namespace exactref::cuda::detail
