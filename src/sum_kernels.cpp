// The superaccumulator's fast path for long spans: blocked, windowed integer lane sums (SIMD-friendly).
//
// Algorithm (docs/algorithms/superaccumulator.md, "Fast path"):
//   Step F0  first, a block tries Step F3 in one read with a guessed top (one binade above the previous block's
//            largest) and no in-window mask, keeping max(|b| - floor): the sums count only when it shows that every
//            term lay in the window; otherwise Steps F1-F5 (after a miss F0 waits 1, 3, ... 63 blocks).
//   Step F0a binary32: F0's test (|b| - floor and its maximum) on 32-bit lanes, 16 terms a 512-bit vector; only the
//            shift and the sums on 64-bit lanes, the two halves of each word apart (one_pass_word_pairs).
//   Step F0b AVX-512 and AVX2, binary64 and binary32: the block's terms added with binary64 additions (binary32 widened;
//            binary64 split into hi + lo as Rump's ExtractVector does) under an MXCSR of its own; the sums, integers
//            times a fixed unit, converted to int64 at the end of the block. No term is tested: the block counts when
//            the processor's flags show that no addition or conversion was inexact or invalid.
//   Step F1  per block of B terms, one pass computes the largest magnitude and the smallest non-zero magnitude.
//   Step F2  a block holding Inf/NaN goes term by term (rare); a block of zeros only updates the signed-zero flags.
//   Step F3  the window of `top` (a biased exponent; the first is the block's largest, subnormals counting as 1): a
//            term with exponent field f (f' = max(f, 1)) and integer significand m is m * 2^(f' - bias - (p-1)); if
//            d = top - f' lies in [0, W] it is added to int64 lane sums as m << (W - d), i.e. in units of
//            2^(top - bias - (p-1) - W): to T, the sum over every term, and, if the term is negative, to N as well.
//            Then Σx = (T - N) - N and Σ|x| = T, so one pass can produce both. The lane sums go into the chunks
//            (add_lane_sum) and are reset.
//   Step F4  terms below the window (known from F1's smallest magnitude): a census counts them and finds the largest;
//            while enough remain to repay a pass (count * scalar_cost >= B), Step F3 again with that largest as top
//            (terms above it have d < 0 and were summed already; a window never takes field 1 without field 0, so
//            windows never overlap); otherwise, or once a window caught few, the rest go one by one (add_scaled).
//   Step F5  a block whose magnitudes span more than two windows (from F1's largest and smallest) goes instead into
//            per-exponent bins in one scalar pass, one read-modify-write per term (exponent_bins, below), emptied
//            into the chunks at the end.
// Invariant (why int64 lanes cannot overflow): a lane holds the q-bit part of m (binary64 splits m into q = 27 high
// and 26 low bits, one lane each; the narrower formats keep q = p bits in one lane), so one term adds less than
// 2^(q + W) to it, and one window pass over B = 2^11 terms keeps T, N, every partial sum of them that the SIMD lanes
// hold, and (T - N) - N inside (-2^62, 2^62): q + W + 11 <= 62 (layout::window).
// Every term is added exactly once, in a window or one by one; the windows and scalar_cost only decide the speed.
//
// The kernels use GCC/Clang vector extensions with 64-bit lanes, instantiated once per instruction set: 512-bit vectors
// compiled for x86-64-v4 (AVX-512), 256-bit for x86-64-v3 (AVX2), one lane (scalar code) for anything else; the
// widest the CPU runs is chosen once at run time (simd_level; EXACTREF_SIMD=avx2 or =base caps it). A fixed width would
// not do: GCC splits 512-bit generic vectors for AVX2 poorly (scalarized compares), and 256-bit ones leave half of
// AVX-512 unused. The result is the same whichever version runs: every version adds the same integers.
#include <algorithm>
#include <bit>  // std::bit_cast: the same bytes as 32- and 64-bit lanes
#include <cstddef>
#include <cstdint>
#include <cstring>  // std::memcpy: unaligned vector loads
#include <iterator>
#include <type_traits>
#include <utility>  // std::pair

#include "exactref/accumulator.h"
#include "exactref/detail/uint128.h"
#include "simd_targets.h"

namespace exactref {
namespace {

constexpr int block_log2 = 11;
constexpr std::size_t block_size = std::size_t{1} << block_log2;  // B: see the invariant above

// ---- Instruction sets -----------------------------------------------------------------------------------------------
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(EXACTREF_NO_MULTIVERSION)
#define EXACTREF_X86_DISPATCH 1
// GCC 12's avx512fintrin.h passes its own self-initialised _mm512_undefined_pd() as the unused merge source of the
// *_round_pd intrinsics and warns about it wherever they are inlined (GCC bug 105593, fixed in GCC 13): a false
// positive of the header, silenced for it alone.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>  // Step F0b: AVX-512 (embedded rounding) and AVX2 intrinsics
#pragma GCC diagnostic pop
#define EXACTREF_TARGET_AVX512 EXACTREF_TARGET_V4
#define EXACTREF_TARGET_AVX2 EXACTREF_TARGET_V3
#endif

#ifdef EXACTREF_X86_DISPATCH
using detail::host_simd_level;  // simd_targets.h: the CPU's widest vectors, capped by EXACTREF_SIMD
using detail::simd_level;
#endif

// The kernels are always inlined into their per-instruction-set wrappers: an out-of-line call would run code
// compiled for the baseline ISA, whatever wrapper called it.
#define EXACTREF_INLINE_KERNEL [[gnu::always_inline]] inline

// Vectors of 64-bit lanes, V bytes: one step of a kernel reads V bytes of terms as V/8 words; a word holds 1, 2 or 4
// terms, each taken out into a lane by a shift and a mask (the order of terms does not matter to a sum, so no
// shuffle is needed). Step F0 for binary32 also reads the same V bytes as V/4 lanes of 32 bits (one term each).
template <std::size_t V>
struct simd;
template <>
struct simd<64> {
    typedef std::uint64_t u64 __attribute__((vector_size(64)));
    typedef std::int64_t i64 __attribute__((vector_size(64)));
    typedef std::uint32_t u32 __attribute__((vector_size(64)));  // Step F0 for binary32: two terms a word
    typedef std::int32_t i32 __attribute__((vector_size(64)));
};
template <>
struct simd<32> {
    typedef std::uint64_t u64 __attribute__((vector_size(32)));
    typedef std::int64_t i64 __attribute__((vector_size(32)));
    typedef std::uint32_t u32 __attribute__((vector_size(32)));  // Step F0 for binary32: two terms a word
    typedef std::int32_t i32 __attribute__((vector_size(32)));
};
template <>
struct simd<8> {
    typedef std::uint64_t u64 __attribute__((vector_size(8)));
    typedef std::int64_t i64 __attribute__((vector_size(8)));
    typedef std::uint32_t u32 __attribute__((vector_size(8)));  // Step F0 for binary32: two terms a word
    typedef std::int32_t i32 __attribute__((vector_size(8)));
};

// Which sums one pass over the data produces.
enum class pass { sum, abs_sum, both };

// Bit layout of one format, and the lane split and window of Step F3.
template <class Bits, int P, int ExponentBits>
struct layout {
    using bits_type = Bits;
    static constexpr int storage_bits = 8 * sizeof(Bits);
    static constexpr int frac_bits = P - 1;
    static constexpr std::uint64_t frac_mask = (std::uint64_t{1} << frac_bits) - 1;
    static constexpr std::uint64_t hidden_bit = std::uint64_t{1} << frac_bits;
    static constexpr std::uint64_t field_mask = (std::uint64_t{1} << ExponentBits) - 1;
    static constexpr std::uint64_t sign_bit = std::uint64_t{1} << (storage_bits - 1);
    static constexpr Bits abs_mask = static_cast<Bits>(~sign_bit);
    // m = high * 2^split + low; split = 0: one lane (low) holds all of m.
    static constexpr int split = P > 32 ? 26 : 0;
    static constexpr std::uint64_t low_mask = split == 0 ? ~std::uint64_t{0} : (std::uint64_t{1} << split) - 1;
    static constexpr int lane_bits = P - split;  // q of the invariant
    static constexpr int window = 62 - block_log2 - lane_bits;
    static_assert(lane_bits + window + block_log2 <= 62, "int64 lanes cannot overflow (file comment)");
    static_assert(window >= 8 && window < 64, "a useful window, and shift counts below 64");
    static_assert(storage_bits == 1 + ExponentBits + frac_bits, "IEEE interchange layout");
};
using binary64_layout = layout<std::uint64_t, 53, 11>;
using binary32_layout = layout<std::uint32_t, 24, 8>;
using binary16_layout = layout<std::uint16_t, 11, 5>;
using bfloat16_layout = layout<std::uint16_t, 8, 8>;
static_assert(binary64_layout::window == 24 && binary32_layout::window == 27);
static_assert(block_size * 2 % 64 == 0, "blocks are whole steps of every width");
static_assert(block_size <= 0xFFFF, "a block's census count fits in 16 bits");

// The window below top (a biased exponent >= 1) holds the terms with f' in [top - W, top]. With top >= W + 2 (the
// common case) every term of exponent field 0 or 1 lies below it, so the kernel sets the hidden bit unconditionally
// and takes exactly the terms with field f in [top - W, top] (zeros add nothing either way). With top <= W + 1 (tiny
// values, or any float16 block: its window spans every binade) nothing lies below and the kernel decodes subnormals.
// A window never takes field 1 without field 0 (which share f' = 1), so the windows of Step F4 never overlap.
template <class L>
constexpr bool has_subnormal_window(int top) noexcept {
    return top <= L::window + 1;
}

// The magnitude bits below which terms lie below the window of top: terms with 0 < |bits| < window_floor(top) are
// left for a lower window or for the scalar path. 0 when nothing lies below.
template <class L>
typename L::bits_type window_floor(int top) noexcept {
    if (has_subnormal_window<L>(top)) return 0;
    return static_cast<typename L::bits_type>(static_cast<std::uint64_t>(top - L::window) << L::frac_bits);
}

// ---- Step F1 --------------------------------------------------------------------------------------------------------
struct block_scan {
    std::uint64_t max_abs;
    std::uint64_t min_nonzero_abs;  // all ones (as Bits) when every term is a zero
};

template <class L>
EXACTREF_INLINE_KERNEL block_scan scan_block(const typename L::bits_type* x, std::size_t n) noexcept {
    using Bits = typename L::bits_type;
    Bits max_abs = 0;
    Bits min_abs_less_one = static_cast<Bits>(~Bits{0});
    for (std::size_t i = 0; i < n; ++i) {
        const Bits a = static_cast<Bits>(x[i] & L::abs_mask);
        max_abs = std::max(max_abs, a);
        // a - 1 wraps a zero to all ones, so zeros never win the minimum.
        min_abs_less_one = std::min(min_abs_less_one, static_cast<Bits>(a - 1));
    }
    const auto min_nonzero = static_cast<Bits>(min_abs_less_one + 1);
    return {max_abs, min_nonzero == 0 ? static_cast<Bits>(~Bits{0}) : min_nonzero};
}

// Step F4's census of the terms below a window: how many non-zero terms have magnitude bits below `floor` (> 0),
// and the largest of them.
struct below_scan {
    std::size_t count = 0;
    std::uint64_t max_abs = 0;
};

template <class L>
EXACTREF_INLINE_KERNEL below_scan scan_below(const typename L::bits_type* x, std::size_t n,
                                             typename L::bits_type floor) noexcept {
    using Bits = typename L::bits_type;
    Bits count = 0;  // <= block_size, which fits in every Bits
    Bits max_abs = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const Bits a = static_cast<Bits>(x[i] & L::abs_mask);
        // 1 when 0 < a < floor, else 0 (written without a branch or a bool so that the loop vectorizes)
        const auto below = static_cast<Bits>(static_cast<Bits>(a - 1) < static_cast<Bits>(floor - 1));
        count = static_cast<Bits>(count + below);
        max_abs = std::max(max_abs, static_cast<Bits>(a & static_cast<Bits>(0 - below)));
    }
    return {count, max_abs};
}

// ---- Step F3 --------------------------------------------------------------------------------------------------------
struct lane_sums {
    std::int64_t total_high = 0, total_low = 0;  // T (high and low halves of m for binary64; low only otherwise)
    std::int64_t neg_high = 0, neg_low = 0;      // N
};

template <std::size_t V>
struct lane_vectors {
    typename simd<V>::u64 total_high{}, total_low{}, neg_high{}, neg_low{};
};

// Step F3 for V/8 terms b, one per 64-bit lane. offset = W - top: a term's shift is f + offset (f' + offset with
// a subnormal window).
template <class L, pass K, bool SubnormalWindow, std::size_t V>
EXACTREF_INLINE_KERNEL void window_terms(typename simd<V>::u64 b, std::int64_t offset, lane_vectors<V>& a) noexcept {
    using u64 = typename simd<V>::u64;
    using i64 = typename simd<V>::i64;
    const u64 zero{};
    const u64 field = (b >> L::frac_bits) & L::field_mask;
    u64 m, low, high;
    // A term is in the window when its shift lies in [0, W]: a shift above W belongs to a window above (already
    // summed), a negative one (read as a huge unsigned number) to the terms below. `count` is the shift made a
    // defined shift count; `in` decides.
    u64 shift;
    if constexpr (SubnormalWindow) {
        // shift = f' + offset >= 1 + W - top >= 0: nothing lies below.
        const i64 normal = field != 0;
        m = (b & L::frac_mask) | (normal ? zero + L::hidden_bit : zero);
        shift = (normal ? field : zero + 1) + static_cast<std::uint64_t>(offset);
    } else {
        // shift = f + offset: every zero and subnormal (f = 0) lies below, since top >= W + 2.
        m = (b & L::frac_mask) | L::hidden_bit;
        shift = field + static_cast<std::uint64_t>(offset);
    }
    const i64 in = shift <= L::window;
    const u64 count = shift & 63;
    low = in ? (m & L::low_mask) << count : zero;
    high = in ? (m >> L::split) << count : zero;
    a.total_low += low;
    if constexpr (L::split > 0) a.total_high += high;
    if constexpr (K != pass::abs_sum) {
        const i64 negative = (b & L::sign_bit) != 0;
        a.neg_low = negative ? a.neg_low + low : a.neg_low;
        if constexpr (L::split > 0) a.neg_high = negative ? a.neg_high + high : a.neg_high;
    }
}

// Calls terms(b) for the V bytes at p, V/8 terms b at a time, one per 64-bit lane.
template <class L, std::size_t V, class F>
EXACTREF_INLINE_KERNEL void for_each_lane_terms(const void* p, F&& terms) noexcept {
    typename simd<V>::u64 words;
    std::memcpy(&words, p, sizeof words);
    constexpr int per_word = 64 / L::storage_bits;
    if constexpr (per_word == 1) {
        terms(words);
    } else {
        constexpr std::uint64_t term_mask = (std::uint64_t{1} << L::storage_bits) - 1;
        for (int k = 0; k + 1 < per_word; ++k) terms((words >> (k * L::storage_bits)) & term_mask);
        terms(words >> ((per_word - 1) * L::storage_bits));  // the top term needs no mask
    }
}

// Step F3 for the V bytes at p.
template <class L, pass K, bool SubnormalWindow, std::size_t V>
EXACTREF_INLINE_KERNEL void window_step(const void* p, std::int64_t offset, lane_vectors<V>& a) noexcept {
    for_each_lane_terms<L, V>(p, [&](typename simd<V>::u64 b) { window_terms<L, K, SubnormalWindow, V>(b, offset, a); });
}

template <std::size_t V>
EXACTREF_INLINE_KERNEL std::int64_t horizontal_sum(typename simd<V>::u64 v) noexcept {
    std::uint64_t s = 0;
    for (std::size_t j = 0; j < V / 8; ++j) s += v[j];
    return static_cast<std::int64_t>(s);  // < 2^62 (invariant)
}

template <std::size_t V>
EXACTREF_INLINE_KERNEL std::uint64_t horizontal_max(typename simd<V>::u64 v) noexcept {
    std::uint64_t m = 0;
    for (std::size_t j = 0; j < V / 8; ++j) m = std::max<std::uint64_t>(m, v[j]);
    return m;
}

template <std::size_t V>
EXACTREF_INLINE_KERNEL std::uint32_t horizontal_max(typename simd<V>::u32 v) noexcept {
    std::uint32_t m = 0;
    for (std::size_t j = 0; j < V / 4; ++j) m = std::max<std::uint32_t>(m, v[j]);
    return m;
}

template <std::size_t V>
EXACTREF_INLINE_KERNEL lane_sums horizontal_sums(const lane_vectors<V>& a) noexcept {
    return {horizontal_sum<V>(a.total_high), horizontal_sum<V>(a.total_low), horizontal_sum<V>(a.neg_high),
            horizontal_sum<V>(a.neg_low)};
}

// window_step over one block; the next block (scanned next) is prefetched as this one is summed, so its memory
// traffic overlaps this block's arithmetic instead of stalling the next scan.
template <class L, pass K, bool SubnormalWindow, std::size_t V>
EXACTREF_INLINE_KERNEL lane_sums window_block(const typename L::bits_type* x, std::size_t n, int top,
                                              const typename L::bits_type* next) noexcept {
    using Bits = typename L::bits_type;
    constexpr std::size_t step = V / sizeof(Bits);  // terms per step
    const std::int64_t offset = L::window - top;
    lane_vectors<V> a;
    std::size_t i = 0;
    for (; i + step <= n; i += step) {
        __builtin_prefetch(next + i);
        window_step<L, K, SubnormalWindow, V>(x + i, offset, a);
    }
    if (i < n) {  // the last terms, padded with +0.0 (which adds nothing in either kernel)
        Bits padded[step] = {};
        std::memcpy(padded, x + i, (n - i) * sizeof(Bits));
        window_step<L, K, SubnormalWindow, V>(padded, offset, a);
    }
    return horizontal_sums<V>(a);
}

template <class L, pass K, std::size_t V>
EXACTREF_INLINE_KERNEL lane_sums window_sum(const typename L::bits_type* x, std::size_t n, int top,
                                            const typename L::bits_type* next) noexcept {
    if (has_subnormal_window<L>(top)) return window_block<L, K, true, V>(x, n, top, next);
    return window_block<L, K, false, V>(x, n, top, next);
}

// ---- Step F0 --------------------------------------------------------------------------------------------------------
// The one-pass window: Step F3 over a block with a guessed top (one binade above the previous block's largest term)
// and without Step F1's scan or Step F3's in-window mask, so a block is read once instead of twice and each term costs
// fewer instructions. Every term is shifted as if it were in the window, by the field part of |b| - floor (floor: the
// bits of the window's smallest value), and the pass keeps the largest |b| - floor as an unsigned number: a term below
// the window, a zero or a subnormal wraps to at least 2^63; a term above it, an Inf or a NaN has a field part above
// W. The lane sums count only when that largest field part is <= W: then every term lay in the window, Step F3's mask
// would have kept each one, the shifts are Step F3's, and so are the sums (the same invariant bounds them); the
// largest |b| - floor plus floor is max|x|. Otherwise they are dropped and the block takes Steps F1-F5.
// top >= W + 2 (no subnormal window: floor > 0) and top < the Inf/NaN field: one_pass_top.
template <class L>
constexpr int one_pass_top(int largest_field) noexcept {
    const int top = largest_field + 1;
    return !has_subnormal_window<L>(top) && top < static_cast<int>(L::field_mask) ? top : 0;  // 0: no guess
}

template <class L, pass K, std::size_t V>
EXACTREF_INLINE_KERNEL void one_pass_terms(typename simd<V>::u64 b, std::uint64_t floor, lane_vectors<V>& a,
                                           typename simd<V>::u64& max_above_floor) noexcept {
    using u64 = typename simd<V>::u64;
    using i64 = typename simd<V>::i64;
    // above = |b| - floor: for a term in the window, its offset from the window's floor, whose field part is the
    // term's shift f + W - top; a term below wraps to a huge number.
    const u64 above = (b & static_cast<std::uint64_t>(L::abs_mask)) - floor;
    max_above_floor = above > max_above_floor ? above : max_above_floor;
    const u64 m = (b & L::frac_mask) | L::hidden_bit;
    const u64 count = (above >> L::frac_bits) & 63;  // = the shift for every term that counts
    // b > |b|'s largest encoding: the sign bit is set (one unsigned compare; a test of the bit compiles to two
    // instructions for the terms unpacked from 32- and 16-bit words)
    const i64 negative = b > static_cast<std::uint64_t>(L::abs_mask);
    const u64 low = (m & L::low_mask) << count;
    a.total_low += low;
    if constexpr (K != pass::abs_sum) a.neg_low = negative ? a.neg_low + low : a.neg_low;
    if constexpr (L::split > 0) {
        const u64 high = (m >> L::split) << count;
        a.total_high += high;
        if constexpr (K != pass::abs_sum) a.neg_high = negative ? a.neg_high + high : a.neg_high;
    }
}

// Step F0a (docs/algorithms/superaccumulator.md), Step F0 for binary32: the V bytes of w hold V/4 terms, two a word.
// The per-term work that needs no more than 32 bits (|b| - floor and its maximum) runs once on V/4 lanes of 32 bits;
// only the shift and the sums are done on 64-bit lanes, the term in the low half of each word (`even`) and the one
// in its high half (`odd`) apart, each taking its shift, significand and sign from its own half. With 32-bit lanes
// |b| - floor wraps for a term below the window to at least 2^32 - floor > 2^31 (floor < 2^31: top < 255), whose
// field part (>= 256) exceeds W, so the test of add_one_pass and max|x| = max + floor are those of one_pass_terms.
template <class L, pass K, std::size_t V>
EXACTREF_INLINE_KERNEL void one_pass_word_pairs(typename simd<V>::u64 w, std::uint32_t floor, lane_vectors<V>& a,
                                                typename simd<V>::u32& max_above_floor) noexcept {
    using u64 = typename simd<V>::u64;
    using i64 = typename simd<V>::i64;
    using u32 = typename simd<V>::u32;
    static_assert(L::storage_bits == 32 && L::split == 0, "binary32: two terms a word, one lane sum");
    constexpr std::uint64_t sign_even = L::sign_bit;  // the sign of the low half's term
    const u32 above32 = (std::bit_cast<u32>(w) & static_cast<std::uint32_t>(L::abs_mask)) - floor;
    max_above_floor = above32 > max_above_floor ? above32 : max_above_floor;
    const auto above = std::bit_cast<u64>(above32);
    // the field parts (shifts) of the two halves; & 63 keeps the count defined for the terms that do not count
    const u64 count_even = (above >> L::frac_bits) & 63;
    const u64 count_odd = (above >> (32 + L::frac_bits)) & 63;
    const u64 even = ((w & L::frac_mask) | L::hidden_bit) << count_even;
    const u64 odd = (((w >> 32) & L::frac_mask) | L::hidden_bit) << count_odd;
    a.total_low += even;
    a.total_low += odd;
    if constexpr (K != pass::abs_sum) {
        const i64 negative_even = (w & sign_even) != 0;
        const i64 negative_odd = std::bit_cast<i64>(w) < 0;
        a.neg_low = negative_even ? a.neg_low + even : a.neg_low;
        a.neg_low = negative_odd ? a.neg_low + odd : a.neg_low;
    }
}

// Step F0 over the first `steps` whole steps of a block. Returns the lane sums and the largest |b| - floor (unsigned).
// One software prefetch per step, prefetch_ahead bytes ahead of the load. The block is read once, in order, but on
// Emerald Rapids the hardware prefetcher alone kept too few lines in flight while the loop computes: float64 N(0, 1)
// at 10^7 took 7.0-10.5 ms without it and 3.7-3.9 ms with it (the streaming read: 3.0; 2048, 4096 and 8192 bytes
// measured alike), binary32 2.5-2.7 -> 2.25 ms (docs/performance.md, "Emerald Rapids"); in L2 nothing changed.
// (Prefetching the whole next block at once, as Step F3 does for the scan that follows it, measured slower on Zen 4.)
constexpr std::size_t prefetch_ahead = 4096;  // bytes
template <class L, pass K, std::size_t V>
EXACTREF_INLINE_KERNEL std::pair<lane_sums, std::uint64_t> one_pass_block(const typename L::bits_type* x,
                                                                          std::size_t steps,
                                                                          std::uint64_t floor) noexcept {
    using u64 = typename simd<V>::u64;
    constexpr std::size_t step = V / sizeof(typename L::bits_type);
    lane_vectors<V> a;
    if constexpr (L::storage_bits == 32) {
        typename simd<V>::u32 max_above_floor{};
        for (std::size_t i = 0; i < steps * step; i += step) {
            __builtin_prefetch(x + i + prefetch_ahead / sizeof(typename L::bits_type));
            u64 words;
            std::memcpy(&words, x + i, sizeof words);
            one_pass_word_pairs<L, K, V>(words, static_cast<std::uint32_t>(floor), a, max_above_floor);
        }
        return {horizontal_sums<V>(a), horizontal_max<V>(max_above_floor)};
    } else {
        u64 max_above_floor{};
        for (std::size_t i = 0; i < steps * step; i += step) {
            __builtin_prefetch(x + i + prefetch_ahead / sizeof(typename L::bits_type));
            for_each_lane_terms<L, V>(x + i, [&](u64 b) { one_pass_terms<L, K, V>(b, floor, a, max_above_floor); });
        }
        return {horizontal_sums<V>(a), horizontal_max<V>(max_above_floor)};
    }
}

// ---- Steps F1-F4 ----------------------------------------------------------------------------------------------------
// Where a pass puts its results: Σx into *sum, Σ|x| into *abs_sum (null when the pass does not produce it).
// `largest`, when not null, receives max(*largest, the magnitude bits of every finite term): Step F1 finds each block's
// largest magnitude anyway, so max|x_i| costs nothing beside a block holding Inf/NaN (which goes term by term).
struct targets {
    superaccumulator* sum;
    superaccumulator* abs_sum;
    std::uint64_t* largest = nullptr;
};

// Adds one term to the targets, term by term (short spans, blocks with Inf/NaN).
template <class L>
void add_one(const format_info& f, targets t, typename L::bits_type b) noexcept {
    if (t.sum) t.sum->add_bits(f, b);
    const auto magnitude = static_cast<typename L::bits_type>(b & L::abs_mask);
    if (t.abs_sum) t.abs_sum->add_bits(f, magnitude);
    if (t.largest && (magnitude >> L::frac_bits) != L::field_mask) *t.largest = std::max<std::uint64_t>(*t.largest, magnitude);
}

// Lane sums of the window of top into the targets' chunks.
template <class L>
void add_lane_sums(const format_info& f, targets t, const lane_sums& sums, int top) noexcept {
    const int unit = top - f.emax - L::frac_bits - L::window;  // lane units: 2^unit (bias = emax)
    if (t.sum) {
        if constexpr (L::split > 0)
            t.sum->add_lane_sum((sums.total_high - sums.neg_high) - sums.neg_high, unit + L::split);
        t.sum->add_lane_sum((sums.total_low - sums.neg_low) - sums.neg_low, unit);
    }
    if (t.abs_sum) {
        if constexpr (L::split > 0) t.abs_sum->add_lane_sum(sums.total_high, unit + L::split);
        t.abs_sum->add_lane_sum(sums.total_low, unit);
    }
}

// Step F3 for the window of top: lane sums of the terms in it, into the chunks.
template <class L, pass K, std::size_t V>
EXACTREF_INLINE_KERNEL void add_window(const format_info& f, targets t, const typename L::bits_type* x, std::size_t n,
                                       int top, const typename L::bits_type* next) noexcept {
    add_lane_sums<L>(f, t, window_sum<L, K, V>(x, n, top, next), top);
}

// The rest of a block whose one-pass sums were kept (F0, F0a, F0b): the bookkeeping of its first `counted` terms
// (not all zero), their largest magnitude bits `largest`, the last terms one by one, and the next guess (from largest;
// F0b passes 0 where it does not keep max|x|, and the guess stays).
template <class L>
void finish_one_pass(const format_info& f, targets t, const typename L::bits_type* x, std::size_t n,
                     std::size_t counted, std::uint64_t largest, int& top) noexcept {
    if (t.sum) t.sum->note_terms(counted, true, true);
    if (t.abs_sum) t.abs_sum->note_terms(counted, true, true);
    if (t.largest && counted > 0) *t.largest = std::max(*t.largest, largest);
    for (std::size_t i = counted; i < n; ++i) add_one<L>(f, t, x[i]);
    if (counted > 0 && largest != 0) top = one_pass_top<L>(static_cast<int>(largest >> L::frac_bits));
}

// Step F0 for one block with the guessed top (one_pass_top): true when every term lay in its window and the block is
// summed, and then top becomes the guess for the next block; false (nothing added, top unchanged) otherwise.
template <class L, pass K, std::size_t V>
EXACTREF_INLINE_KERNEL bool add_one_pass(const format_info& f, targets t, const typename L::bits_type* x,
                                         std::size_t n, int& top) noexcept {
    constexpr std::size_t step = V / sizeof(typename L::bits_type);
    const std::size_t steps = n / step;  // the last terms of a span (fewer than a step) go one by one
    const std::uint64_t floor = window_floor<L>(top);
    const auto [sums, max_above_floor] = one_pass_block<L, K, V>(x, steps, floor);
    // Every term lay in the window: floor <= |b| < the next binade above top.
    if (max_above_floor >> L::frac_bits > static_cast<std::uint64_t>(L::window)) return false;
    add_lane_sums<L>(f, t, sums, top);
    finish_one_pass<L>(f, t, x, n, steps * step, max_above_floor + floor, top);
    return true;
}

// ---- Step F0b -------------------------------------------------------------------------------------------------------
// Step F0 on the floating-point units (AVX-512 and AVX2; docs/algorithms/superaccumulator.md, "F0b"). With the same guessed
// top g, a block's terms are added with binary64 additions into vector lanes, and the lane sums, integer multiples of a
// fixed unit, are converted to int64 at the end of the block and added with add_lane_sum. No term is tested: the block
// is kept when none of its additions and conversions was inexact or invalid, as the processor reports in MXCSR's
// flags (IEEE 754-2019 7.6: inexact is signalled whenever the delivered result differs from the exact one; 7.2:
// invalid for converting a NaN, an infinity or a value outside int64's range to an integer, and for Inf - Inf). Each
// block loads an MXCSR of its own (round to nearest, every exception masked, FTZ and DAZ off, no flag); the thread's
// is read once a span and put back at the span's end (f0b_environment): the caller's rounding mode, exception masks,
// FTZ/DAZ and flags neither matter nor change, and nothing traps.
//   Why a kept block is exact: every checked operation was exact, so each lane's binary64 sum is the exact sum of what
//   it took, its conversion to an integer of units was exact (so it is a multiple of the unit), and the integers are
//   within ±2^53 (checked too), which bounds the totals (f0b_lane_total).
//   binary32: each term widened to binary64 (exact) and added. The unit is U = 2^(g - W_b - bias - 23), the ulp of the
//     window's lowest binade: a term of the window [g - W_b, g] is a multiple of U below 2^(W_b + 24)·U, and a lane
//     takes at most c = 2^lane_log2 terms a block, so the partial sums of such terms are multiples of U below
//     c·2^(W_b + 24)·U <= 2^53·U, every addition is exact and a block of them is always kept (W_b = 29 - lane_log2).
//     A term outside the window is kept where the sums happen to be exact anyway.
//   binary64: Rump's split (ExtractVector, Rump, Ogita and Oishi, SIAM J. Sci. Comput. 31(1), 2008): hi = RN(RN(σ + x)
//     - σ), σ = 1.5·2^M, M = E + lane_log2 (E = g - bias), with embedded RN and exceptions suppressed (its rounding is
//     the point: no flag), and lo = x - hi, checked, so that hi + lo = x in a kept block. For a term of the window
//     (|x| < 2^(E+1) <= 2^(M-lane_log2), at least 2^(E-W_b)) σ + x lies in [2^M, 2^(M+1)), so hi is x rounded to the
//     grid u1 = 2^(M-52) and lo is exact (|lo| <= u1/2, a multiple of x's ulp); hi sums are multiples of u1 below
//     c·2^(E+1) = 2^53·u1, lo sums multiples of 2^(E - W_b - 52) below c·2^(M-53), exact when W_b <= 54 -
//     2·lane_log2: a block of window terms is always kept. Its range of g keeps σ finite and both units normal.
// A kept block also needs a lane sum that is not zero: a block of zeros leaves the signed-zero bookkeeping to Step F2
// (so does a block whose every lane cancels to zero, rarer still). The next guess comes from max|x| where the pass
// keeps it (t.largest: one vrange a vector, no test), else g stays: a block that no longer fits misses.
// The negative terms' sums N (pass::both) give Σ|x| = Σx - 2N. Two sets of accumulators take alternate steps, so that
// one addition chain does not bound a step; c counts the terms one lane of one set takes.
#ifdef EXACTREF_X86_DISPATCH
// The layouts per vector width V (bytes): AVX-512 (V = 64) takes 64-byte steps, AVX2 (V = 32) 32-byte steps; both keep
// two sets of accumulators, so a lane of one set takes c = 2^lane_log2 terms of a block of 2^block_log2.
template <class L, std::size_t V>
struct f0b_layout;
template <std::size_t V>
struct f0b_layout<binary64_layout, V> {
    static constexpr int lanes = V / 8;                                       // terms a step, one a lane
    static constexpr int lane_log2 = block_log2 - static_cast<int>(std::bit_width(V / 8));  // log2(B / lanes / 2): 7, 8
    static constexpr int window = 54 - 2 * lane_log2;                         // W_b = 40, 38
    static constexpr int bias = 1023;
    // g's range: the floor normal and above zero, σ and c·2^(E+1) = 2^(M+1) finite, the lo unit normal.
    static constexpr int lowest_top = std::max(window + 2, -1022 + window + 52 + bias);  // 93, 91
    static constexpr int highest_top = 1020 - lane_log2 + bias;
};
template <std::size_t V>
struct f0b_layout<binary32_layout, V> {
    static constexpr int lanes = V / 4;  // terms a step, in two vectors of V/8 binary64 lanes (the low, the high half)
    static constexpr int lane_log2 = block_log2 - static_cast<int>(std::bit_width(V / 4));  // log2(B / lanes / 2): 6, 7
    static constexpr int window = 29 - lane_log2;                               // W_b = 23, 22
    static constexpr int bias = 127;
    static constexpr int lowest_top = window + 2;  // every binary32 unit here is a normal binary64
    static constexpr int highest_top = 254;
};
static_assert(f0b_layout<binary64_layout, 64>::window == 40 && f0b_layout<binary32_layout, 64>::window == 23);
static_assert(f0b_layout<binary64_layout, 32>::window == 38 && f0b_layout<binary32_layout, 32>::window == 22);
static_assert(f0b_layout<binary64_layout, 32>::window > binary64_layout::window, "F0b's window contains F0's");

template <class L, std::size_t V>
constexpr bool has_f0b = (V == 64 || V == 32) &&
                         (std::is_same_v<L, binary64_layout> || std::is_same_v<L, binary32_layout>);

template <class L, std::size_t V>
constexpr bool f0b_top(int top) noexcept {
    return top >= f0b_layout<L, V>::lowest_top && top <= f0b_layout<L, V>::highest_top;
}

// The bits of the smallest value of F0b's window below top (f0b_top(top): > 0).
template <class L, std::size_t V>
std::uint64_t f0b_floor(int top) noexcept {
    return static_cast<std::uint64_t>(top - f0b_layout<L, V>::window) << L::frac_bits;
}

// MXCSR for a block: every exception masked (bits 7-12), round to nearest, FTZ and DAZ off, no flag set; and its flags
// that end a block: precision (inexact), underflow, overflow, divide-by-zero, invalid (not denormal: exact).
constexpr unsigned f0b_control = 0x1F80;
constexpr unsigned f0b_lost = 0x3D;

// One block's F0b sums: Σx and Σ|x| in units of 2^unit_high (binary64's hi parts) and 2^unit_low, max|b| (0 when the
// pass does not keep it), and whether the block is kept.
struct f0b_sums {
    std::int64_t sum_high = 0, sum_low = 0, abs_high = 0, abs_low = 0;
    std::uint64_t largest = 0;
    bool kept = false;
};

constexpr int f0b_split_round = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;  // the split's RN, no flag
constexpr int f0b_max_abs = 0x0B;  // vrange: the larger magnitude (bits 1:0 = 11), its sign cleared (bits 3:2 = 10)

// v·2^-unit as int64 lanes, by the MXCSR's round to nearest: exact or flagged (inexact, or invalid out of range).
EXACTREF_TARGET_AVX512 inline __m512i f0b_integers(__m512d v, int unit) noexcept {
    return _mm512_cvtpd_epi64(_mm512_scalef_pd(v, _mm512_set1_pd(-unit)));
}

// The lanes of v above 2^53 in magnitude (INT64_MIN, the conversion of a NaN, counts as 2^63).
EXACTREF_TARGET_AVX512 inline __mmask8 f0b_over(__m512i v) noexcept {
    return _mm512_cmpgt_epu64_mask(_mm512_abs_epi64(v), _mm512_set1_epi64(std::int64_t{1} << 53));
}

// The sum of v's 8 int64 lanes, modulo 2^64: in a kept block the exact value (each lane's |S|, |N| <= 2^53 units, two
// sets: a total below 2^57); a block that misses may hold anything, so the arithmetic is unsigned, without overflow,
// and its result is dropped.
EXACTREF_TARGET_AVX512 inline std::uint64_t f0b_lane_total(__m512i v) noexcept {
    alignas(64) std::uint64_t lanes[8];
    _mm512_store_si512(lanes, v);
    std::uint64_t total = 0;
    for (const std::uint64_t lane : lanes) total += lane;
    return total;
}

template <pass K>
EXACTREF_TARGET_AVX512 f0b_sums f0b_totals(__m512i s_high, __m512i s_low, __m512i n_high, __m512i n_low) noexcept {
    const std::uint64_t sum_high = f0b_lane_total(s_high), sum_low = f0b_lane_total(s_low);
    f0b_sums r;  // two's complement of the modular totals (C++20): the exact values in a kept block
    if constexpr (K == pass::abs_sum) {
        r.abs_high = static_cast<std::int64_t>(sum_high);
        r.abs_low = static_cast<std::int64_t>(sum_low);
        return r;
    }
    r.sum_high = static_cast<std::int64_t>(sum_high);
    r.sum_low = static_cast<std::int64_t>(sum_low);
    if constexpr (K == pass::both) {  // Σ|x| = Σx - 2N
        r.abs_high = static_cast<std::int64_t>(sum_high - 2 * f0b_lane_total(n_high));
        r.abs_low = static_cast<std::int64_t>(sum_low - 2 * f0b_lane_total(n_low));
    }
    return r;
}

// Two sets of accumulators take alternate steps; each has the sums s and the negative terms' sums n (pass::both), in
// two vectors: binary64's hi and lo parts, binary32's low and high 8 terms of a step.
struct f0b_set {
    __m512d s[2], n[2];
};

// The thread's MXCSR, kept while a span is summed and put back at its end (the F0b blocks load f0b_control; the other
// steps do not depend on it). Reading MXCSR waits for the instructions before it, so it is read once a span.
struct f0b_environment {
    unsigned user;
    EXACTREF_TARGET_AVX2 f0b_environment() noexcept { asm volatile("vstmxcsr %0" : "=m"(user) : : "memory"); }
    EXACTREF_TARGET_AVX2 ~f0b_environment() { asm volatile("vldmxcsr %0" : : "m"(user) : "memory"); }
    f0b_environment(const f0b_environment&) = delete;
    f0b_environment& operator=(const f0b_environment&) = delete;
};

// The start of a block: loads f0b_control (no flag set) into MXCSR. The accumulators (zeroed by the caller) pass
// through the load, so no addition of the block can be scheduled before it ("memory": nor a read).
template <class Set>
[[gnu::always_inline]] inline void f0b_enter(Set (&sets)[2]) noexcept {
    const unsigned control = f0b_control;
    asm volatile("vldmxcsr %8"
                 : "+x"(sets[0].s[0]), "+x"(sets[0].s[1]), "+x"(sets[0].n[0]), "+x"(sets[0].n[1]),
                   "+x"(sets[1].s[0]), "+x"(sets[1].s[1]), "+x"(sets[1].n[0]), "+x"(sets[1].n[1])
                 : "m"(control)
                 : "memory");
}

// The end of a block: reads the flags after the conversions (the integers are its inputs, so every checked operation
// comes first). True when no operation was inexact or invalid.
[[gnu::always_inline]] EXACTREF_TARGET_AVX512 inline bool f0b_leave(__m512i a, __m512i b, __m512i c,
                                                                  __m512i d) noexcept {
    unsigned flags;
    asm volatile("vstmxcsr %0" : "=m"(flags) : "v"(a), "v"(b), "v"(c), "v"(d) : "memory");
    return (flags & f0b_lost) == 0;
}

// The first `steps` whole steps (64 bytes each) of a block, each by step(p, set, largest), alternately into the sets.
template <class Step>
[[gnu::always_inline]] EXACTREF_TARGET_AVX512 inline void f0b_steps(const typename Step::bits_type* x,
                                                                   std::size_t steps, const Step& step,
                                                                   f0b_set (&sets)[2], __m512i& largest) noexcept {
    constexpr std::size_t terms = 64 / sizeof(typename Step::bits_type);
    std::size_t i = 0;
    for (; i + 2 <= steps; i += 2) {
        __builtin_prefetch(x + terms * i + prefetch_ahead / sizeof(typename Step::bits_type));
        __builtin_prefetch(x + terms * (i + 1) + prefetch_ahead / sizeof(typename Step::bits_type));
        step(x + terms * i, sets[0], largest);
        step(x + terms * (i + 1), sets[1], largest);
    }
    if (i < steps) step(x + terms * i, sets[0], largest);
}

// Both sets' vector v of sums (or of negative sums) as int64 lanes of unit 2^unit; the lanes above 2^53 into over.
[[gnu::always_inline]] EXACTREF_TARGET_AVX512 inline __m512i f0b_lanes(const f0b_set (&sets)[2], bool negatives,
                                                                     int v, int unit, __mmask8& over) noexcept {
    const __m512i a = f0b_integers(negatives ? sets[0].n[v] : sets[0].s[v], unit);
    const __m512i b = f0b_integers(negatives ? sets[1].n[v] : sets[1].s[v], unit);
    over |= f0b_over(a) | f0b_over(b);
    return _mm512_add_epi64(a, b);
}

// The end of a block's kernel: the flags, the totals, and whether the block is kept (no flag, no lane above 2^53
// units, a lane sum not zero).
template <pass K>
[[gnu::always_inline]] EXACTREF_TARGET_AVX512 inline f0b_sums f0b_finish(__m512i s_high, __m512i s_low,
                                                                       __m512i n_high, __m512i n_low,
                                                                       __mmask8 over) noexcept {
    const bool exact = f0b_leave(s_high, s_low, n_high, n_low);
    f0b_sums r = f0b_totals<K>(s_high, s_low, n_high, n_low);
    const __m512i any = _mm512_or_si512(s_high, s_low);
    r.kept = exact && over == 0 && _mm512_test_epi64_mask(any, any) != 0;
    return r;
}

// The sums (or negative sums) of a block as {high, low} int64 lanes: binary64's hi and lo parts in their units
// (Split), or binary32's two halves added, in unit_low, and zero.
struct f0b_high_low_lanes {
    __m512i high, low;
};
template <bool Split>
[[gnu::always_inline]] EXACTREF_TARGET_AVX512 inline f0b_high_low_lanes f0b_high_low(
    const f0b_set (&sets)[2], bool negatives, int unit_high, int unit_low, __mmask8& over) noexcept {
    if constexpr (Split)
        return {f0b_lanes(sets, negatives, 0, unit_high, over), f0b_lanes(sets, negatives, 1, unit_low, over)};
    else
        return {_mm512_setzero_si512(), _mm512_add_epi64(f0b_lanes(sets, negatives, 0, unit_low, over),
                                                         f0b_lanes(sets, negatives, 1, unit_low, over))};
}

// A block on AVX-512: its steps by step, then the integers (Split: binary64's hi and lo sums in their two units; else
// binary32's two halves in one), the flags and max|x| (the largest lane of `largest`, magnitudes of the format's
// width).
template <pass K, bool Split, class Step>
[[gnu::always_inline]] EXACTREF_TARGET_AVX512 inline f0b_sums f0b_block(const typename Step::bits_type* x,
                                                                      std::size_t steps, const Step& step,
                                                                      int unit_high, int unit_low) noexcept {
    f0b_set sets[2]{};  // zeroes
    __m512i largest = _mm512_setzero_si512();
    f0b_enter(sets);
    f0b_steps(x, steps, step, sets, largest);
    __mmask8 over = 0;
    const __m512i zero = _mm512_setzero_si512();
    const auto [s_high, s_low] = f0b_high_low<Split>(sets, false, unit_high, unit_low, over);
    const auto [n_high, n_low] =
        K == pass::both ? f0b_high_low<Split>(sets, true, unit_high, unit_low, over) : f0b_high_low_lanes{zero, zero};
    f0b_sums r = f0b_finish<K>(s_high, s_low, n_high, n_low, over);
    if constexpr (sizeof(typename Step::bits_type) == 8) r.largest = _mm512_reduce_max_epu64(largest);
    else r.largest = _mm512_reduce_max_epu32(largest);
    return r;
}

// One step of F0b for binary64: 8 terms, split into hi (s[0]) and lo (s[1]) parts.
template <pass K, bool Largest>
struct f0b_step_binary64 {
    using bits_type = std::uint64_t;
    __m512d sigma;  // 1.5·2^M
    __m512i abs_mask;
    [[gnu::always_inline]] EXACTREF_TARGET_AVX512 void operator()(const std::uint64_t* p, f0b_set& set,
                                                                 __m512i& largest) const noexcept {
        const __m512i b = _mm512_loadu_si512(p);
        const __m512d v = _mm512_castsi512_pd(K == pass::abs_sum ? _mm512_and_si512(b, abs_mask) : b);
        if constexpr (Largest)
            largest = _mm512_castpd_si512(
                _mm512_range_round_pd(_mm512_castsi512_pd(largest), v, f0b_max_abs, _MM_FROUND_NO_EXC));
        const __m512d high =
            _mm512_sub_round_pd(_mm512_add_round_pd(v, sigma, f0b_split_round), sigma, f0b_split_round);
        const __m512d low = _mm512_sub_pd(v, high);
        set.s[0] = _mm512_add_pd(set.s[0], high);
        set.s[1] = _mm512_add_pd(set.s[1], low);
        if constexpr (K == pass::both) {
            const __mmask8 negative = _mm512_movepi64_mask(b);
            set.n[0] = _mm512_mask_add_pd(set.n[0], negative, set.n[0], high);
            set.n[1] = _mm512_mask_add_pd(set.n[1], negative, set.n[1], low);
        }
    }
};

// binary64: the first `steps` whole steps of a block (8 terms a step); the units are add_one_pass_f0b's.
template <pass K, bool Largest>
[[gnu::noinline]] EXACTREF_TARGET_AVX512 f0b_sums f0b_block_binary64(const std::uint64_t* x, std::size_t steps,
                                                                     int unit_high, int unit_low) noexcept {
    using F = f0b_layout<binary64_layout, 64>;
    const int m = unit_high + 52;  // σ's binade: the grid of the high parts is 2^(M - 52)
    const auto sigma_bits = static_cast<std::uint64_t>(m + F::bias) << 52 | std::uint64_t{1} << 51;  // 1.5·2^M
    const f0b_step_binary64<K, Largest> step{_mm512_set1_pd(std::bit_cast<double>(sigma_bits)),
                                             _mm512_set1_epi64(static_cast<long long>(binary64_layout::abs_mask))};
    return f0b_block<K, true>(x, steps, step, unit_high, unit_low);
}

// One step of F0b for binary32: 16 terms, the low 8 (s[0]) and the high 8 (s[1]) widened apart.
template <pass K, bool Largest>
struct f0b_step_binary32 {
    using bits_type = std::uint32_t;
    [[gnu::always_inline]] EXACTREF_TARGET_AVX512 void operator()(const std::uint32_t* p, f0b_set& set,
                                                                 __m512i& largest) const noexcept {
        const __m512i w = _mm512_loadu_si512(p);
        if constexpr (Largest)
            largest = _mm512_castps_si512(_mm512_range_round_ps(_mm512_castsi512_ps(largest),
                                                                _mm512_castsi512_ps(w), f0b_max_abs,
                                                                _MM_FROUND_NO_EXC));
        const auto* terms = reinterpret_cast<const float*>(p);  // the same bytes (loadu_ps reads through may_alias)
        __m512d low = _mm512_cvtps_pd(_mm256_loadu_ps(terms));
        __m512d high = _mm512_cvtps_pd(_mm256_loadu_ps(terms + 8));
        if constexpr (K == pass::abs_sum) {
            low = _mm512_abs_pd(low);
            high = _mm512_abs_pd(high);
        }
        set.s[0] = _mm512_add_pd(set.s[0], low);
        set.s[1] = _mm512_add_pd(set.s[1], high);
        if constexpr (K == pass::both) {
            const __mmask16 negative = _mm512_movepi32_mask(w);
            set.n[0] = _mm512_mask_add_pd(set.n[0], static_cast<__mmask8>(negative), set.n[0], low);
            set.n[1] = _mm512_mask_add_pd(set.n[1], static_cast<__mmask8>(negative >> 8), set.n[1], high);
        }
    }
};

// binary32: the first `steps` whole steps of a block (16 terms a step), in units of 2^unit.
template <pass K, bool Largest>
[[gnu::noinline]] EXACTREF_TARGET_AVX512 f0b_sums f0b_block_binary32(const std::uint32_t* x, std::size_t steps,
                                                                     int unit) noexcept {
    return f0b_block<K, false>(x, steps, f0b_step_binary32<K, Largest>{}, unit, unit);
}

// ---- Step F0b on AVX2 (V = 32): the same sums on 4 binary64 lanes, with what AVX2 has. Without embedded rounding
// the binary64 split is hi = round(x·2^(52-M))·2^(M-52) (vroundpd to nearest with its precision exception
// suppressed, imm8 bit 3; the two scalings by powers of two are exact and checked), the same hi as σ's split; the
// negative terms' sums take min(x, 0) (binary32) or x's sign as a blend mask (binary64); max|x| by integer (binary32)
// or floating-point (binary64) maxima of the magnitudes; and with no vcvtpd2qq the lanes are converted one by one
// (cvtsd2si: MXCSR's round to nearest, flagged like the vector conversion) at the end of the block.
struct f0b_set2 {
    __m256d s[2], n[2];
};

// 2^e in every lane, e in [-1022, 1023] (every unit of a g that F0b takes).
[[gnu::always_inline]] EXACTREF_TARGET_AVX2 inline __m256d f0b_power2(int e) noexcept {
    return _mm256_castsi256_pd(_mm256_set1_epi64x(static_cast<long long>(static_cast<std::uint64_t>(1023 + e) << 52)));
}

// The integers of a block on AVX2: the lanes of both sets' vector v (sums or negative sums), scaled by 2^-unit and
// converted one by one, summed modulo 2^64; over and nonzero collect the lanes above 2^53 and the non-zero ones, and
// order the XOR of every integer (an input of the flags' read).
struct f0b_integers2 {
    std::uint64_t order = 0;
    bool over = false, nonzero = false;
    [[gnu::always_inline]] EXACTREF_TARGET_AVX2 std::uint64_t total(const f0b_set2 (&sets)[2], bool negatives, int v,
                                                                    int unit) noexcept {
        const __m256d scale = f0b_power2(-unit);
        alignas(32) double lanes[8];
        _mm256_store_pd(lanes, _mm256_mul_pd(negatives ? sets[0].n[v] : sets[0].s[v], scale));
        _mm256_store_pd(lanes + 4, _mm256_mul_pd(negatives ? sets[1].n[v] : sets[1].s[v], scale));
        std::uint64_t sum = 0;
        for (const double lane : lanes) {
            const std::int64_t i = _mm_cvtsd_si64(_mm_set_sd(lane));  // INT64_MIN for NaN or out of range: flagged
            const auto u = static_cast<std::uint64_t>(i);
            sum += u;
            order ^= u;
            over |= u + (std::uint64_t{1} << 53) > (std::uint64_t{1} << 54);  // |i| > 2^53
            nonzero |= !negatives && i != 0;
        }
        return sum;
    }
};

// As f0b_steps with 32-byte steps: a pair of them (64 bytes, one prefetch) a turn, the first into sets[0].
template <class Step, class Largest>
[[gnu::always_inline]] EXACTREF_TARGET_AVX2 inline void f0b_steps2(const typename Step::bits_type* x,
                                                                  std::size_t steps, const Step& step,
                                                                  f0b_set2 (&sets)[2], Largest& largest) noexcept {
    constexpr std::size_t terms = 32 / sizeof(typename Step::bits_type);
    for (std::size_t i = 0; i < steps; i += 2) {
        const typename Step::bits_type* p = x + terms * i;
        __builtin_prefetch(p + prefetch_ahead / sizeof(typename Step::bits_type));
        step(p, sets[0], largest);
        if (i + 1 < steps) step(p + terms, sets[1], largest);
    }
}

[[gnu::always_inline]] EXACTREF_TARGET_AVX2 inline bool f0b_leave2(std::uint64_t order) noexcept {
    unsigned flags;
    asm volatile("vstmxcsr %0" : "=m"(flags) : "r"(order) : "memory");
    return (flags & f0b_lost) == 0;
}

template <pass K>
[[gnu::always_inline]] EXACTREF_TARGET_AVX2 inline f0b_sums f0b_finish2(const f0b_set2 (&sets)[2], int unit_high,
                                                                       int unit_low, bool split) noexcept {
    f0b_integers2 c;
    const std::uint64_t s_high = split ? c.total(sets, false, 0, unit_high) : 0;
    std::uint64_t s_low = c.total(sets, false, 1, unit_low);
    if (!split) s_low += c.total(sets, false, 0, unit_low);
    std::uint64_t n_high = 0, n_low = 0;
    if constexpr (K == pass::both) {
        if (split) n_high = c.total(sets, true, 0, unit_high);
        n_low = c.total(sets, true, 1, unit_low);
        if (!split) n_low += c.total(sets, true, 0, unit_low);
    }
    const bool exact = f0b_leave2(c.order);
    f0b_sums r;  // as f0b_totals
    if constexpr (K == pass::abs_sum) {
        r.abs_high = static_cast<std::int64_t>(s_high);
        r.abs_low = static_cast<std::int64_t>(s_low);
    } else {
        r.sum_high = static_cast<std::int64_t>(s_high);
        r.sum_low = static_cast<std::int64_t>(s_low);
        if constexpr (K == pass::both) {
            r.abs_high = static_cast<std::int64_t>(s_high - 2 * n_high);
            r.abs_low = static_cast<std::int64_t>(s_low - 2 * n_low);
        }
    }
    r.kept = exact && !c.over && c.nonzero;
    return r;
}

// One step of F0b for binary64 on AVX2: 4 terms, split into hi (s[0]) and lo (s[1]) parts.
template <pass K, bool Largest>
struct f0b_step2_binary64 {
    using bits_type = std::uint64_t;
    __m256d down, up, magnitude;  // 2^(52-M), 2^(M-52), the magnitude bits
    [[gnu::always_inline]] EXACTREF_TARGET_AVX2 void operator()(const std::uint64_t* p, f0b_set2& set,
                                                               __m256d& largest) const noexcept {
        const __m256d b = _mm256_loadu_pd(reinterpret_cast<const double*>(p));
        const __m256d a = _mm256_and_pd(b, magnitude);
        const __m256d v = K == pass::abs_sum ? a : b;
        if constexpr (Largest) largest = _mm256_max_pd(largest, a);
        const __m256d high = _mm256_mul_pd(
            _mm256_round_pd(_mm256_mul_pd(v, down), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), up);
        const __m256d low = _mm256_sub_pd(v, high);
        set.s[0] = _mm256_add_pd(set.s[0], high);
        set.s[1] = _mm256_add_pd(set.s[1], low);
        if constexpr (K == pass::both) {
            const __m256d zero = _mm256_setzero_pd();
            set.n[0] = _mm256_add_pd(set.n[0], _mm256_blendv_pd(zero, high, b));  // where b's sign bit is set
            set.n[1] = _mm256_add_pd(set.n[1], _mm256_blendv_pd(zero, low, b));
        }
    }
};

// A block on AVX2: its steps by step, then the integers, the flags and max|x| (the largest lane of `largest`, a vector
// of magnitudes of the format's width).
template <pass K, class Step, class Largest>
[[gnu::always_inline]] EXACTREF_TARGET_AVX2 inline f0b_sums f0b_block2(const typename Step::bits_type* x,
                                                                     std::size_t steps, const Step& step,
                                                                     int unit_high, int unit_low, bool split) noexcept {
    f0b_set2 sets[2]{};
    Largest largest{};
    f0b_enter(sets);
    f0b_steps2(x, steps, step, sets, largest);
    f0b_sums r = f0b_finish2<K>(sets, unit_high, unit_low, split);
    typename Step::bits_type lanes[sizeof(Largest) / sizeof(typename Step::bits_type)];
    std::memcpy(lanes, &largest, sizeof lanes);
    r.largest = *std::max_element(std::begin(lanes), std::end(lanes));
    return r;
}

template <pass K, bool Largest>
[[gnu::noinline]] EXACTREF_TARGET_AVX2 f0b_sums f0b_block2_binary64(const std::uint64_t* x, std::size_t steps,
                                                                    int unit_high, int unit_low) noexcept {
    const f0b_step2_binary64<K, Largest> step{
        f0b_power2(-unit_high), f0b_power2(unit_high),
        _mm256_castsi256_pd(_mm256_set1_epi64x(static_cast<long long>(binary64_layout::abs_mask)))};
    return f0b_block2<K, f0b_step2_binary64<K, Largest>, __m256d>(x, steps, step, unit_high, unit_low, true);
}

// One step of F0b for binary32 on AVX2: 8 terms, the low 4 (s[0]) and the high 4 (s[1]) widened apart.
template <pass K, bool Largest>
struct f0b_step2_binary32 {
    using bits_type = std::uint32_t;
    __m256i magnitude;
    [[gnu::always_inline]] EXACTREF_TARGET_AVX2 void operator()(const std::uint32_t* p, f0b_set2& set,
                                                               __m256i& largest) const noexcept {
        if constexpr (Largest)
            largest = _mm256_max_epu32(largest,
                                       _mm256_and_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)),
                                                        magnitude));
        const auto* terms = reinterpret_cast<const float*>(p);
        __m256d low = _mm256_cvtps_pd(_mm_loadu_ps(terms));
        __m256d high = _mm256_cvtps_pd(_mm_loadu_ps(terms + 4));
        const __m256d zero = _mm256_setzero_pd();
        if constexpr (K == pass::abs_sum) {
            const __m256d sign = _mm256_set1_pd(-0.0);
            low = _mm256_andnot_pd(sign, low);
            high = _mm256_andnot_pd(sign, high);
        }
        set.s[0] = _mm256_add_pd(set.s[0], low);
        set.s[1] = _mm256_add_pd(set.s[1], high);
        if constexpr (K == pass::both) {
            set.n[0] = _mm256_add_pd(set.n[0], _mm256_min_pd(low, zero));
            set.n[1] = _mm256_add_pd(set.n[1], _mm256_min_pd(high, zero));
        }
    }
};

template <pass K, bool Largest>
[[gnu::noinline]] EXACTREF_TARGET_AVX2 f0b_sums f0b_block2_binary32(const std::uint32_t* x, std::size_t steps,
                                                                    int unit) noexcept {
    const f0b_step2_binary32<K, Largest> step{_mm256_set1_epi32(static_cast<int>(binary32_layout::abs_mask))};
    return f0b_block2<K, f0b_step2_binary32<K, Largest>, __m256i>(x, steps, step, unit, unit, false);
}

// Step F0b for one block with the guessed top (f0b_top(top)): as add_one_pass, with F0b's sums.
template <class L, pass K, std::size_t V>
bool add_one_pass_f0b(const format_info& f, targets t, const typename L::bits_type* x, std::size_t n,
                      int& top) noexcept {
    using F = f0b_layout<L, V>;
    const std::size_t steps = n / F::lanes;
    f0b_sums s;
    int unit_high, unit_low;
    if constexpr (std::is_same_v<L, binary64_layout>) {
        unit_high = top - F::bias + F::lane_log2 - 52;  // u1 = 2^(M - 52), M = E + lane_log2
        unit_low = top - F::bias - F::window - 52;      // the ulp of the window's lowest binade
        if constexpr (V == 64)
            s = t.largest ? f0b_block_binary64<K, true>(x, steps, unit_high, unit_low)
                          : f0b_block_binary64<K, false>(x, steps, unit_high, unit_low);
        else
            s = t.largest ? f0b_block2_binary64<K, true>(x, steps, unit_high, unit_low)
                          : f0b_block2_binary64<K, false>(x, steps, unit_high, unit_low);
    } else {
        unit_high = unit_low = top - F::window - F::bias - L::frac_bits;
        if constexpr (V == 64)
            s = t.largest ? f0b_block_binary32<K, true>(x, steps, unit_low)
                          : f0b_block_binary32<K, false>(x, steps, unit_low);
        else
            s = t.largest ? f0b_block2_binary32<K, true>(x, steps, unit_low)
                          : f0b_block2_binary32<K, false>(x, steps, unit_low);
    }
    if (!s.kept) return false;
    if (t.sum) {
        t.sum->add_lane_sum(s.sum_high, unit_high);
        t.sum->add_lane_sum(s.sum_low, unit_low);
    }
    if (t.abs_sum) {
        t.abs_sum->add_lane_sum(s.abs_high, unit_high);
        t.abs_sum->add_lane_sum(s.abs_low, unit_low);
    }
    finish_one_pass<L>(f, t, x, n, steps * F::lanes, s.largest, top);
    return true;
}
#endif

// The floor of the widest one-pass window a block with guess top can take (F0b's for binary64, F0's otherwise): a
// block whose smallest non-zero term lies below it sets no guess.
template <class L, std::size_t V>
typename L::bits_type one_pass_floor(int top) noexcept {
#ifdef EXACTREF_X86_DISPATCH
    if constexpr (has_f0b<L, V>) {
        if (f0b_layout<L, V>::window > L::window && f0b_top<L, V>(top))
            return static_cast<typename L::bits_type>(f0b_floor<L, V>(top));
    }
#endif
    return window_floor<L>(top);
}

// Step F0 for one block, on the floating-point units where it can (Step F0b) or on the integer lanes (F0, F0a). For
// binary64 F0b's window contains F0's, so a miss of F0b is a miss; for binary32 it is narrower (W_b = 23 < 27), so
// F0a tries the block after a miss, and F0b waits 1, 3, ... 63 blocks of its own before it is tried again.
struct one_pass_waits {
    std::size_t f0b_wait = 0, f0b_backoff = 0;
};
template <class L, pass K, std::size_t V>
EXACTREF_INLINE_KERNEL bool add_one_pass_any(const format_info& f, targets t, const typename L::bits_type* x,
                                             std::size_t n, int& top, [[maybe_unused]] one_pass_waits& w) noexcept {
#ifdef EXACTREF_X86_DISPATCH
    if constexpr (has_f0b<L, V>) {
        if (f0b_top<L, V>(top)) {
            if constexpr (f0b_layout<L, V>::window >= L::window) {
                return add_one_pass_f0b<L, K, V>(f, t, x, n, top);
            } else if (w.f0b_wait == 0) {
                if (add_one_pass_f0b<L, K, V>(f, t, x, n, top)) {
                    w.f0b_backoff = 0;
                    return true;
                }
                w.f0b_backoff = std::min<std::size_t>(2 * w.f0b_backoff + 1, 63);
                w.f0b_wait = w.f0b_backoff;
            } else {
                --w.f0b_wait;
            }
        }
    }
#endif
    return add_one_pass<L, K, V>(f, t, x, n, top);
}

// Step F4, scalar: adds one by one every non-zero term with magnitude bits below `floor`.
template <class L>
void add_below_one_by_one(const format_info& f, targets t, const typename L::bits_type* x, std::size_t n,
                          typename L::bits_type floor) noexcept {
    using Bits = typename L::bits_type;
    for (std::size_t i = 0; i < n; ++i) {
        const auto a = static_cast<Bits>(x[i] & L::abs_mask);
        if (a == 0 || a >= floor) continue;
        const decoded d = decode_bits(f, x[i]);
        if (t.sum) t.sum->add_scaled(d.negative, d.significand, d.exponent);
        if (t.abs_sum) t.abs_sum->add_scaled(false, d.significand, d.exponent);
    }
}

// A term added one by one (add_scaled) costs about as much as scalar_cost terms passing through a window and a
// census (docs/performance.md); Step F4 takes another window only while enough terms remain to repay it.
constexpr std::size_t scalar_cost = 16;

// Step F5: per-exponent bins (as the "large accumulator" of Neal, arXiv:1505.05571), for blocks whose magnitudes span
// more than two windows, where Steps F3-F4 would need three or more passes. A term with bits b adds its whole integer
// significand m (below 2^p: the hidden bit when its exponent field f is not 0) to the unsigned 64-bit bin b >> (p-1),
// which is its sign and exponent field at once: one read-modify-write per term. The bin of field f counts in units of
// 2^(f' - bias - (p-1)), f' = max(f, 1) (so the field-0 bins hold subnormal significands, in the unit of field 1, and
// zeros add 0). Consecutive terms go to two copies of the bins in turn, so that a run of terms with one exponent does
// not chain every addition to the previous one through memory (measured: 1.5-2x faster). Invariant: a copy takes at
// most 2^(64-p) terms between spills, so no bin wraps ((2^p - 1)·2^(64-p) < 2^64); before a block would pass that
// (every second block of binary64, never in practice for the narrower formats) the copies are spilled into one
// unsigned 128-bit total per bin (below 2^(p+64) for any count of terms a size_t can hold) and cleared. flush() turns
// the totals into Σx = P - N and Σ|x| = P + N per field (P the positive bin, N the negative one) and adds them to the
// chunks with add_scaled, 64 bits at a time, at the end of the span. Bins are cleared lazily, for the fields blocks
// actually reach (a wide span of 10^3 terms must not pay for clearing 2 x 2 x 2048 bins).
template <class L, pass K>
struct exponent_bins {
    static constexpr std::size_t fields = static_cast<std::size_t>(L::field_mask);  // f = 0 .. field_mask - 1
    static constexpr std::size_t negative = std::size_t{1} << (L::storage_bits - 1 - L::frac_bits);  // the sign bit
    static constexpr int precision = L::frac_bits + 1;
    static constexpr std::uint64_t per_copy = std::uint64_t{1} << (64 - precision);
    static_assert(precision <= 53 && ((std::uint64_t{1} << precision) - 1) <= ~std::uint64_t{0} / per_copy,
                  "per_copy terms of at most 2^p - 1 each fit in a bin");
    std::uint64_t bins[2][2 * negative];   // [copy][sign·negative + f]
    detail::uint128 totals[2 * negative];
    // Fields cleared (and possibly used) since the last flush: field 0 (zeros land there whatever the block's
    // smallest non-zero term is, adding 0) whenever any is, and the fields >= 1 in [lowest, highest].
    bool started = false;
    int lowest = static_cast<int>(fields), highest = 0;
    std::uint64_t in_copy[2] = {0, 0};  // terms per copy since the last spill

    // Clears fields 0 and [lo, hi] (lo >= 1) of every bin and total that are not cleared yet.
    void reach(int lo, int hi) noexcept {
        if (!started) {
            clear(0, 0);
            clear(lo, hi);
            started = true;
            lowest = lo;
            highest = hi;
            return;
        }
        if (lo < lowest) {
            clear(lo, lowest - 1);
            lowest = lo;
        }
        if (hi > highest) {
            clear(highest + 1, hi);
            highest = hi;
        }
    }
    void clear(int lo, int hi) noexcept {
        const auto count = static_cast<std::size_t>(hi - lo + 1);
        for (std::size_t sign : {std::size_t{0}, negative}) {
            for (auto& copy : bins) std::memset(&copy[sign + lo], 0, count * sizeof copy[0]);
            std::memset(&totals[sign + lo], 0, count * sizeof totals[0]);
        }
    }
    template <class F>
    void for_each_field(F&& f) noexcept {
        f(0);
        for (int field = lowest; field <= highest; ++field) f(field);
    }
    void spill() noexcept {
        for_each_field([&](int field) {
            for (std::size_t sign : {std::size_t{0}, negative}) {
                const std::size_t at = sign + static_cast<std::size_t>(field);
                totals[at] += bins[0][at];
                totals[at] += bins[1][at];
                bins[0][at] = 0;
                bins[1][at] = 0;
            }
        });
        in_copy[0] = in_copy[1] = 0;
    }

    [[gnu::always_inline]] static void add_term(std::uint64_t (&bin)[2 * negative], std::uint64_t b) noexcept {
        const std::uint64_t hidden = (b & (L::field_mask << L::frac_bits)) != 0 ? L::hidden_bit : 0;
        bin[b >> L::frac_bits] += (b & L::frac_mask) | hidden;
    }

    // `next` (the block Step F1 scans next) is prefetched a line per line of x: the bins' read-modify-writes are
    // scalar and slow, so the next block's memory latency hides behind them instead of stalling the scan.
    void add(const typename L::bits_type* x, std::size_t n, int low_field, int top_field,
             const typename L::bits_type* next) noexcept {
        constexpr std::size_t line = 64 / sizeof(typename L::bits_type);  // terms a cache line
        static_assert(line % 2 == 0, "a line holds whole pairs");
        reach(std::max(low_field, 1), std::max(top_field, 1));
        if (in_copy[0] + (n + 1) / 2 > per_copy) spill();
        in_copy[0] += (n + 1) / 2;
        in_copy[1] += n / 2;
        std::size_t i = 0;
        for (; i + line <= n; i += line) {
            __builtin_prefetch(next + i);
            for (std::size_t j = i; j < i + line; j += 2) {
                add_term(bins[0], x[j]);
                add_term(bins[1], x[j + 1]);
            }
        }
        for (; i + 2 <= n; i += 2) {
            add_term(bins[0], x[i]);
            add_term(bins[1], x[i + 1]);
        }
        if (i < n) add_term(bins[0], x[i]);
    }

    // Adds the 128-bit magnitude v·2^e to acc (negative: -v·2^e), 64 bits at a time.
    static void add_wide(superaccumulator& acc, bool negative_value, detail::uint128 v, int e) noexcept {
        if (const auto low = static_cast<std::uint64_t>(v)) acc.add_scaled(negative_value, low, e);
        if (const auto high = static_cast<std::uint64_t>(v >> 64)) acc.add_scaled(negative_value, high, e + 64);
    }

    void flush(const format_info& f, superaccumulator* sum, superaccumulator* abs_sum) noexcept {
        if (!started) return;
        spill();
        for_each_field([&](int field) {
            const detail::uint128 p = totals[field], q = totals[negative + static_cast<std::size_t>(field)];
            const int e = std::max(field, 1) - f.emax - L::frac_bits;  // the unit of f' = max(f, 1)
            if (sum && p != q) add_wide(*sum, p < q, p < q ? q - p : p - q, e);
            if (abs_sum && (p | q) != 0) add_wide(*abs_sum, false, p + q, e);  // both below 2^117: no wrap
        });
        started = false;
        lowest = static_cast<int>(fields);
        highest = 0;
    }
};

template <class L, pass K, std::size_t V>
EXACTREF_INLINE_KERNEL void add_blocked(const format_info& f, targets t, const typename L::bits_type* xs,
                                        std::size_t n) noexcept {
    using Bits = typename L::bits_type;
#ifdef EXACTREF_X86_DISPATCH
    struct no_environment {};
    [[maybe_unused]] const std::conditional_t<has_f0b<L, V>, f0b_environment, no_environment> environment;
#endif
    exponent_bins<L, K> bins;  // Step F5, zeroed when a block first needs it
    int guess = 0;             // Step F0's top for the next block (0: none)
    std::size_t wait = 0, backoff = 0;
    one_pass_waits f0b_waits;
    for (std::size_t start = 0; start < n; start += block_size) {
        const std::size_t len = std::min(block_size, n - start);
        const Bits* x = xs + start;
        const Bits* next = n - start > len ? xs + start + len : x;  // prefetched (this block again at the end)
        // Step F0: the one-pass window while its guesses hold; after a miss, wait 1, 3, 7, ... 63 blocks before
        // guessing again, so that data it does not fit pay at most a few percent for the misses.
        if (guess != 0 && wait == 0) {
            if (add_one_pass_any<L, K, V>(f, t, x, len, guess, f0b_waits)) {
                backoff = 0;
                continue;
            }
            backoff = std::min<std::size_t>(2 * backoff + 1, 63);
            wait = backoff;
        } else if (wait > 0) {
            --wait;
        }
        // Step F1
        const block_scan s = scan_block<L>(x, len);
        const auto top_field = static_cast<int>(s.max_abs >> L::frac_bits);
        // The next guess, if this block would have fitted it (wide blocks set none: they would only miss); 0 for a
        // block of zeros or with Inf/NaN.
        guess = one_pass_top<L>(top_field);
        if (guess != 0 && s.min_nonzero_abs < one_pass_floor<L, V>(guess)) guess = 0;
        // Step F2
        if (top_field == static_cast<int>(L::field_mask)) {
            for (std::size_t i = 0; i < len; ++i) add_one<L>(f, t, x[i]);
            continue;
        }
        if (t.largest) *t.largest = std::max(*t.largest, s.max_abs);  // finite: no Inf/NaN in this block
        if (s.max_abs == 0) {  // zeros only: which signs of zero were seen
            bool some_positive = false, some_negative = false;
            for (std::size_t i = 0; i < len; ++i) (x[i] != 0 ? some_negative : some_positive) = true;
            if (t.sum) t.sum->note_terms(len, some_positive, some_negative);
            if (t.abs_sum) t.abs_sum->note_terms(len, true, false);
            continue;
        }
        if (t.sum) t.sum->note_terms(len, true, true);
        if (t.abs_sum) t.abs_sum->note_terms(len, true, true);
        // Step F5: a block spanning more than two windows goes into the exponent bins in one pass.
        const auto low_field = static_cast<int>(s.min_nonzero_abs >> L::frac_bits);
        if (std::max(top_field, 1) - std::max(low_field, 1) > 2 * L::window + 1) {
            bins.add(x, len, low_field, top_field, next);
            continue;
        }
        // Step F3: the window below the largest term (prefetching the next block, or this one again at the end).
        int top = std::max(top_field, 1);
        add_window<L, K, V>(f, t, x, len, top, next);
        // Step F4: windows further down while each repays its pass, then the rest one by one.
        Bits floor = window_floor<L>(top);
        if (s.min_nonzero_abs >= floor) continue;  // nothing below the window
        below_scan below = scan_below<L>(x, len, floor);
        while (below.count > 0) {
            if (below.count * scalar_cost < len) {
                add_below_one_by_one<L>(f, t, x, len, floor);
                break;
            }
            top = std::max(static_cast<int>(below.max_abs >> L::frac_bits), 1);
            add_window<L, K, V>(f, t, x, len, top, x);
            const Bits lower = window_floor<L>(top);
            const below_scan rest = lower == 0 ? below_scan{} : scan_below<L>(x, len, lower);
            if (rest.count > 0 && (below.count - rest.count) * scalar_cost < len) {  // that window caught few
                add_below_one_by_one<L>(f, t, x, len, lower);
                break;
            }
            below = rest;
            floor = lower;
        }
    }
    bins.flush(f, t.sum, t.abs_sum);
}

// ---- One version per instruction set, and the run-time choice -------------------------------------------------------
#ifdef EXACTREF_X86_DISPATCH
template <class L, pass K>
EXACTREF_TARGET_AVX512 void add_blocked_avx512(const format_info& f, targets t, const typename L::bits_type* xs,
                                               std::size_t n) noexcept {
    add_blocked<L, K, 64>(f, t, xs, n);
}
template <class L, pass K>
EXACTREF_TARGET_AVX2 void add_blocked_avx2(const format_info& f, targets t, const typename L::bits_type* xs,
                                           std::size_t n) noexcept {
    add_blocked<L, K, 32>(f, t, xs, n);
}
#endif
template <class L, pass K>
void add_blocked_base(const format_info& f, targets t, const typename L::bits_type* xs, std::size_t n) noexcept {
    add_blocked<L, K, 8>(f, t, xs, n);
}

template <class L, pass K>
void add_blocked_dispatch(const format_info& f, targets t, const typename L::bits_type* xs, std::size_t n) noexcept {
#ifdef EXACTREF_X86_DISPATCH
    switch (host_simd_level()) {
        case simd_level::avx512: return add_blocked_avx512<L, K>(f, t, xs, n);
        case simd_level::avx2: return add_blocked_avx2<L, K>(f, t, xs, n);
        case simd_level::base: break;
    }
#endif
    add_blocked_base<L, K>(f, t, xs, n);
}

// Short spans: the term-by-term path is cheaper than a block scan.
constexpr std::size_t fast_path_threshold = 64;

template <class T>
struct layout_of;
template <> struct layout_of<double> { using type = binary64_layout; };
template <> struct layout_of<float> { using type = binary32_layout; };
template <> struct layout_of<float16> { using type = binary16_layout; };
template <> struct layout_of<bfloat16> { using type = bfloat16_layout; };

template <class T, pass K>
void add_span(targets t, std::span<const T> xs) noexcept {
    using tr = format_traits<T>;
    using L = typename layout_of<T>::type;
    using Bits = typename L::bits_type;
    static_assert(sizeof(T) == sizeof(Bits) && std::is_same_v<Bits, typename tr::bits_type>);
    static_assert(L::frac_bits == tr::info.precision - 1 && L::field_mask == tr::info.special_exponent_field());
    const Bits* bits = reinterpret_cast<const Bits*>(xs.data());  // T is a trivially copyable IEEE storage type
    if (xs.size() < fast_path_threshold) {
        for (std::size_t i = 0; i < xs.size(); ++i) add_one<L>(tr::info, t, bits[i]);
        return;
    }
    add_blocked_dispatch<L, K>(tr::info, t, bits, xs.size());
}

}  // namespace

void superaccumulator::add(std::span<const double> xs) noexcept { add_span<double, pass::sum>({this, nullptr}, xs); }
void superaccumulator::add(std::span<const float> xs) noexcept { add_span<float, pass::sum>({this, nullptr}, xs); }
void superaccumulator::add(std::span<const float16> xs) noexcept { add_span<float16, pass::sum>({this, nullptr}, xs); }
void superaccumulator::add(std::span<const bfloat16> xs) noexcept {
    add_span<bfloat16, pass::sum>({this, nullptr}, xs);
}
void superaccumulator::add_abs(std::span<const double> xs) noexcept {
    add_span<double, pass::abs_sum>({nullptr, this}, xs);
}
void superaccumulator::add_abs(std::span<const float> xs) noexcept {
    add_span<float, pass::abs_sum>({nullptr, this}, xs);
}
void superaccumulator::add_abs(std::span<const float16> xs) noexcept {
    add_span<float16, pass::abs_sum>({nullptr, this}, xs);
}
void superaccumulator::add_abs(std::span<const bfloat16> xs) noexcept {
    add_span<bfloat16, pass::abs_sum>({nullptr, this}, xs);
}

void add_sum_and_abs(std::span<const double> xs, superaccumulator& sum, superaccumulator& abs_sum) noexcept {
    add_span<double, pass::both>({&sum, &abs_sum}, xs);
}
void add_sum_and_abs(std::span<const float> xs, superaccumulator& sum, superaccumulator& abs_sum) noexcept {
    add_span<float, pass::both>({&sum, &abs_sum}, xs);
}
void add_sum_and_abs(std::span<const float16> xs, superaccumulator& sum, superaccumulator& abs_sum) noexcept {
    add_span<float16, pass::both>({&sum, &abs_sum}, xs);
}
void add_sum_and_abs(std::span<const bfloat16> xs, superaccumulator& sum, superaccumulator& abs_sum) noexcept {
    add_span<bfloat16, pass::both>({&sum, &abs_sum}, xs);
}

namespace detail {
void add_sum_abs_largest(std::span<const double> xs, superaccumulator& sum, superaccumulator& abs_sum,
                         std::uint64_t& largest_bits) noexcept {
    add_span<double, pass::both>({&sum, &abs_sum, &largest_bits}, xs);
}
void add_sum_abs_largest(std::span<const float> xs, superaccumulator& sum, superaccumulator& abs_sum,
                         std::uint64_t& largest_bits) noexcept {
    add_span<float, pass::both>({&sum, &abs_sum, &largest_bits}, xs);
}
void add_sum_abs_largest(std::span<const float16> xs, superaccumulator& sum, superaccumulator& abs_sum,
                         std::uint64_t& largest_bits) noexcept {
    add_span<float16, pass::both>({&sum, &abs_sum, &largest_bits}, xs);
}
void add_sum_abs_largest(std::span<const bfloat16> xs, superaccumulator& sum, superaccumulator& abs_sum,
                         std::uint64_t& largest_bits) noexcept {
    add_span<bfloat16, pass::both>({&sum, &abs_sum, &largest_bits}, xs);
}
}  // namespace detail

}  // namespace exactref
