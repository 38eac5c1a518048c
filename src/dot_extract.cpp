// Step D6 of the exact dot (docs/algorithms/ozaki.md, "Step D6"): binary64 blocks by error-free extraction onto three
// fixed grids, in AVX-512 binary64 arithmetic. The proof, the constants' derivation and the conditions under which a
// block's result is kept are in ozaki.md; dot.cpp decides when to call this kernel and what to do with a refused block.
//
// Invariants restated by the code (ozaki.md, D6 lemmas 1-4):
//   every running sum of level l stays in [2^k_l, 2^(k_l + 1)), so its fraction field minus 2^51 is the exact
//   number of grid units 2^(k_l - 52) it holds (checked at every flush: a sum outside its binade refuses the block);
//   a kept block has no Inf/NaN product, every |p| < 2^M, and every product with both operands non-zero has
//   |p| >= 2^(M - spread).
// GCC 12's _mm512_*_round_pd pass _mm512_undefined_pd() (a self-initialised __Y) as the unused merge source and warn
// about it (-Wmaybe-uninitialized, -Wuninitialized) wherever they are inlined: a false positive of its headers, silenced here only.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>

#include "dot_kernels.h"
#include "simd_targets.h"

namespace exactref::detail {

#ifdef EXACTREF_DOT_EXTRACTION

namespace {

using extraction = f64_extraction_params;

std::atomic<std::uint64_t> kept_blocks{0};

// 2^e and 1.5·2^e as binary64, by their encodings (normal e only).
constexpr std::uint64_t power_bits(int e) noexcept { return static_cast<std::uint64_t>(e + 1023) << 52; }
constexpr std::uint64_t sigma_bits(int e) noexcept { return power_bits(e) | (std::uint64_t{1} << 51); }

}  // namespace

namespace {

#define EXACTREF_EXTRACT_INLINE EXACTREF_TARGET_V4 [[gnu::always_inline]] inline

constexpr int rn = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;  // embedded RN: MXCSR.RC cannot matter

// Lemma 1 (ozaki.md): a sum in [2^k, 2^(k+1)) holds (fraction field - 2^51) grid units above sigma; two vectors of
// running sums into `units`, and a sum outside its binade (exponent field other than `field`) into `refused`.
EXACTREF_EXTRACT_INLINE void flush_sums(const __m512d* sums, __m512i field, __m512i& units, __mmask8& refused) {
    const __m512i frac = _mm512_set1_epi64(static_cast<long long>((std::uint64_t{1} << 52) - 1));
    const __m512i half = _mm512_set1_epi64(static_cast<long long>(std::uint64_t{1} << 51));
    for (int u = 0; u < 2; ++u) {
        const __m512i bits = _mm512_castpd_si512(sums[u]);
        refused |= _mm512_cmpneq_epi64_mask(_mm512_srli_epi64(bits, 52), field);
        units = _mm512_add_epi64(units, _mm512_sub_epi64(_mm512_and_si512(bits, frac), half));
    }
}

// sigma_l = 1.5·2^k and the exponent field k + 1023 that every running sum of the level must keep.
EXACTREF_EXTRACT_INLINE void level_constants(int k, __m512d& sigma, __m512i& field) {
    sigma = _mm512_castsi512_pd(_mm512_set1_epi64(static_cast<long long>(sigma_bits(k))));
    field = _mm512_set1_epi64(k + 1023);
}

// The running state of one block: per level, two vectors of 8 lanes for s and for T, and the flushed grid units.
struct extraction_state {
    __m512d sign, zero, small;
    __m512d sigma[3];
    __m512i field[3];
    __m512d s1[2], s2[2], s3[2], t1[2], t2[2], t3[2];
    __m512i units[6];  // s1, s2, s3, t1, t2, t3: flushed grid units, summed over chunks
    __m512d largest;
    __mmask8 refused = 0;  // a product below 2^(M - spread) with non-zero operands, or a sum out of its binade

    EXACTREF_EXTRACT_INLINE extraction_state(int top, int spread) {
        sign = _mm512_castsi512_pd(_mm512_set1_epi64(static_cast<long long>(std::uint64_t{1} << 63)));
        zero = _mm512_setzero_pd();
        small = _mm512_castsi512_pd(_mm512_set1_epi64(static_cast<long long>(power_bits(top - spread))));
        for (int l = 0; l < 3; ++l) level_constants(top + extraction::level_offset[l], sigma[l], field[l]);
        for (auto& u : units) u = _mm512_setzero_si512();
        largest = zero;
    }
    EXACTREF_EXTRACT_INLINE void reset() {
        for (int u = 0; u < 2; ++u) {
            s1[u] = t1[u] = sigma[0];
            s2[u] = t2[u] = sigma[1];
            s3[u] = t3[u] = sigma[2];
        }
    }
    EXACTREF_EXTRACT_INLINE void flush(const __m512d* sums, int level, int slot) {
        flush_sums(sums, field[level], units[slot], refused);
    }
    EXACTREF_EXTRACT_INLINE void flush_all() {
        flush(s1, 0, 0);
        flush(s2, 1, 1);
        flush(s3, 2, 2);
        flush(t1, 0, 3);
        flush(t2, 1, 4);
        flush(t3, 2, 5);
    }
    // The block test of one vector of products p = a·b (largest |p|; a product below 2^(M - spread) with non-zero
    // operands refuses the block), then level 1 (Lemma 2): p onto grid 1, its remainder returned.
    EXACTREF_EXTRACT_INLINE __m512d level_1(int u, __m512d a, __m512d b, __m512d p, __m512d p_sign) {
        const __m512d p_abs = _mm512_andnot_pd(sign, p);
        largest = _mm512_max_pd(largest, p_abs);
        __mmask8 tiny = _mm512_cmp_pd_mask(p_abs, small, _CMP_LT_OQ);
        tiny = _mm512_mask_cmp_pd_mask(tiny, a, zero, _CMP_NEQ_OQ);
        refused |= _mm512_mask_cmp_pd_mask(tiny, b, zero, _CMP_NEQ_OQ);
        const __m512d sum = _mm512_add_round_pd(s1[u], p, rn);
        const __m512d q = _mm512_sub_round_pd(sum, s1[u], rn);
        s1[u] = sum;
        t1[u] = _mm512_add_round_pd(t1[u], _mm512_xor_pd(q, p_sign), rn);
        return _mm512_sub_round_pd(p, q, rn);
    }
    // Lemmas 2-4 (ozaki.md): p + e = a·b; level 1 extracts p, level 2 adds its remainder and extracts e, level 3 adds
    // e's remainder; the T sums add the same grid values with the sign of p.
    EXACTREF_EXTRACT_INLINE void step(int u, __m512d a, __m512d b) {
        const __m512d p = _mm512_mul_round_pd(a, b, rn);
        const __m512d e = _mm512_fmsub_round_pd(a, b, p, rn);
        const __m512d p_sign = _mm512_and_pd(p, sign);
        const __m512d r = level_1(u, a, b, p, p_sign);

        const __m512d with_r = _mm512_add_round_pd(s2[u], r, rn);
        const __m512d sum = _mm512_add_round_pd(with_r, e, rn);
        const __m512d qe = _mm512_sub_round_pd(sum, with_r, rn);
        const __m512d re = _mm512_sub_round_pd(e, qe, rn);
        s2[u] = sum;
        t2[u] = _mm512_add_round_pd(t2[u], _mm512_xor_pd(_mm512_add_round_pd(r, qe, rn), p_sign), rn);

        s3[u] = _mm512_add_round_pd(s3[u], re, rn);
        t3[u] = _mm512_add_round_pd(t3[u], _mm512_xor_pd(re, p_sign), rn);
    }
    EXACTREF_EXTRACT_INLINE f64_extraction result(int top) {
        f64_extraction out;
        for (int l = 0; l < 3; ++l) {
            out.s[l] = _mm512_reduce_add_epi64(units[l]);
            out.t[l] = _mm512_reduce_add_epi64(units[3 + l]);
        }
        out.largest = _mm512_reduce_max_pd(largest);
        out.kept = refused == 0 && out.largest < std::bit_cast<double>(power_bits(top));  // NaN compares false
        if (out.kept) kept_blocks.fetch_add(1, std::memory_order_relaxed);
        return out;
    }
};

// The running state of one binary32 block (Lemma 5): per level, two vectors of 8 lanes for s and for T, the flushed
// grid units, and the block test as integer reductions of |p|'s encoding: the largest, and the smallest minus one
// (a zero product wraps to all ones, so only non-zero products can be the smallest: a product of non-zero binary32
// operands is never zero in binary64).
struct binary32_extraction_state {
    using params = f32_extraction_params;
    __m512d sign;
    __m512d sigma[2];
    __m512i field[2];
    __m512i one;
    __m512d s1[2], s2[2], t1[2], t2[2];
    __m512i units[4];  // s1, s2, t1, t2
    __m512i largest, smallest_less_one;
    __mmask8 refused = 0;  // a running sum out of its binade

    EXACTREF_EXTRACT_INLINE explicit binary32_extraction_state(int top) {
        sign = _mm512_castsi512_pd(_mm512_set1_epi64(static_cast<long long>(std::uint64_t{1} << 63)));
        for (int l = 0; l < 2; ++l) level_constants(top + params::level_offset[l], sigma[l], field[l]);
        one = _mm512_set1_epi64(1);
        for (auto& u : units) u = _mm512_setzero_si512();
        largest = _mm512_setzero_si512();
        smallest_less_one = _mm512_set1_epi64(-1);
    }
    EXACTREF_EXTRACT_INLINE void reset() {
        for (int u = 0; u < 2; ++u) {
            s1[u] = t1[u] = sigma[0];
            s2[u] = t2[u] = sigma[1];
        }
    }
    EXACTREF_EXTRACT_INLINE void flush_all() {
        flush_sums(s1, field[0], units[0], refused);
        flush_sums(s2, field[1], units[1], refused);
        flush_sums(t1, field[0], units[2], refused);
        flush_sums(t2, field[1], units[3], refused);
    }
    // One vector of exact products p = a·b (Lemma 5). s: level 1 rounds p onto grid 1 (q, Lemma 2), level 2 adds the
    // remainder r = p - q exactly. T: the same grid values of |p|, |q| and |p| - |q| = sign(p)·r (q has the sign of p
    // or is zero: rounding is monotone, so RN(s1 + p) - s1 has the sign of p), both exact.
    EXACTREF_EXTRACT_INLINE void step(int u, __m512d a, __m512d b) {
        const __m512d p = _mm512_mul_round_pd(a, b, rn);
        const __m512d p_abs = _mm512_andnot_pd(sign, p);
        const __m512i p_abs_bits = _mm512_castpd_si512(p_abs);
        largest = _mm512_max_epu64(largest, p_abs_bits);
        smallest_less_one = _mm512_min_epu64(smallest_less_one, _mm512_sub_epi64(p_abs_bits, one));
        const __m512d sum = _mm512_add_round_pd(s1[u], p, rn);
        const __m512d q = _mm512_sub_round_pd(sum, s1[u], rn);
        s1[u] = sum;
        s2[u] = _mm512_add_round_pd(s2[u], _mm512_sub_round_pd(p, q, rn), rn);
        const __m512d q_abs = _mm512_andnot_pd(sign, q);
        t1[u] = _mm512_add_round_pd(t1[u], q_abs, rn);
        t2[u] = _mm512_add_round_pd(t2[u], _mm512_sub_round_pd(p_abs, q_abs, rn), rn);
    }
    // Up to 8 pairs of raw binary32 bits at x, y (fewer than 8: masked-out lanes load 0·0), widened exactly.
    EXACTREF_EXTRACT_INLINE void step_loaded(int u, const std::uint32_t* x, const std::uint32_t* y, std::size_t count) {
        if (count >= 8) {
            step(u, _mm512_cvtps_pd(_mm256_loadu_ps(reinterpret_cast<const float*>(x))),
                 _mm512_cvtps_pd(_mm256_loadu_ps(reinterpret_cast<const float*>(y))));
        } else {
            const auto mask = static_cast<__mmask8>((1u << count) - 1);
            step(u, _mm512_cvtps_pd(_mm256_castsi256_ps(_mm256_maskz_loadu_epi32(mask, x))),
                 _mm512_cvtps_pd(_mm256_castsi256_ps(_mm256_maskz_loadu_epi32(mask, y))));
        }
    }
    // Up to 8 pairs of raw bfloat16 bits: a bfloat16 is the binary32 whose high 16 bits it is (an exact widening).
    EXACTREF_EXTRACT_INLINE void step_loaded(int u, const std::uint16_t* x, const std::uint16_t* y, std::size_t count) {
        const auto mask = static_cast<__mmask8>(count >= 8 ? 0xFF : (1u << count) - 1);
        step(u, widen_bfloat16(_mm_maskz_loadu_epi16(mask, x)), widen_bfloat16(_mm_maskz_loadu_epi16(mask, y)));
    }
    EXACTREF_EXTRACT_INLINE static __m512d widen_bfloat16(__m128i v) {
        return _mm512_cvtps_pd(_mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(v), 16)));
    }
    // Kept: no sum left its binade, every |p| < 2^M (an Inf/NaN product's encoding is above 2^M's), and no non-zero
    // |p| below 2^(M - spread).
    EXACTREF_EXTRACT_INLINE f64_extraction result(int top) {
        f64_extraction out;
        for (int l = 0; l < 2; ++l) {
            out.s[l] = _mm512_reduce_add_epi64(units[l]);
            out.t[l] = _mm512_reduce_add_epi64(units[2 + l]);
        }
        const auto largest_bits = static_cast<std::uint64_t>(_mm512_reduce_max_epu64(largest));
        const auto smallest_bits = static_cast<std::uint64_t>(_mm512_reduce_min_epu64(smallest_less_one));
        out.largest = std::bit_cast<double>(largest_bits);
        out.kept = refused == 0 && largest_bits < power_bits(top) &&
                   smallest_bits >= power_bits(top - params::spread) - 1;
        if (out.kept) kept_blocks.fetch_add(1, std::memory_order_relaxed);
        return out;
    }
};

#undef EXACTREF_EXTRACT_INLINE

}  // namespace

// One block: any n, flushed every extraction::chunk_pairs pairs (2^g per lane) into int64 lanes.
EXACTREF_TARGET_V4 f64_extraction f64_extract_block(const double* x, const double* y, std::size_t n, int top) {
    extraction_state st(top, extraction::spread);
    for (std::size_t c = 0; c < n; c += extraction::chunk_pairs) {
        const std::size_t len = n - c < extraction::chunk_pairs ? n - c : extraction::chunk_pairs;
        const double* xc = x + c;
        const double* yc = y + c;
        st.reset();
        std::size_t i = 0;
        for (; i + 16 <= len; i += 16) {
            // 8 KB ahead, the two lines of each operand this step reads (as src/sum_kernels.cpp, prefetch_ahead: on
            // Emerald Rapids the hardware prefetcher alone leaves the loop waiting on memory; 8 KB beat 4 KB here)
            __builtin_prefetch(xc + i + 1024);
            __builtin_prefetch(xc + i + 1032);
            __builtin_prefetch(yc + i + 1024);
            __builtin_prefetch(yc + i + 1032);
            st.step(0, _mm512_loadu_pd(xc + i), _mm512_loadu_pd(yc + i));
            st.step(1, _mm512_loadu_pd(xc + i + 8), _mm512_loadu_pd(yc + i + 8));
        }
        for (int u = 0; i < len; ++u, i += 8) {  // at most two partial vectors; masked-out lanes load 0·0
            const std::size_t rest = len - i;
            const auto mask = static_cast<__mmask8>(rest >= 8 ? 0xFF : (1u << rest) - 1);
            st.step(u, _mm512_maskz_loadu_pd(mask, xc + i), _mm512_maskz_loadu_pd(mask, yc + i));
        }
        st.flush_all();
    }
    return st.result(top);
}

// The same for binary32 operands (raw bits), widened exactly to binary64 (DAZ is off, so subnormals convert exactly;
// Inf/NaN stay Inf/NaN and refuse the block through the largest |p|). 256-bit loads feed the conversions directly.
// bfloat16 operands take the same kernel: each is the binary32 of its bits shifted up by 16.
template <class Bits>
EXACTREF_TARGET_V4 [[gnu::always_inline]] inline f64_extraction binary32_extract(const Bits* x, const Bits* y,
                                                                                std::size_t n, int top) {
    using params = f32_extraction_params;
    binary32_extraction_state st(top);
    for (std::size_t c = 0; c < n; c += params::chunk_pairs) {
        const std::size_t len = n - c < params::chunk_pairs ? n - c : params::chunk_pairs;
        const Bits* xc = x + c;
        const Bits* yc = y + c;
        st.reset();
        std::size_t i = 0;
        for (; i + 16 <= len; i += 16) {
            __builtin_prefetch(xc + i + 4096 / sizeof(Bits));  // 4 KB ahead: the same time ahead as f64_extract_block
            __builtin_prefetch(yc + i + 4096 / sizeof(Bits));
            st.step_loaded(0, xc + i, yc + i, 8);
            st.step_loaded(1, xc + i + 8, yc + i + 8, 8);
        }
        if (i < len) st.step_loaded(0, xc + i, yc + i, len - i);
        if (i + 8 < len) st.step_loaded(1, xc + i + 8, yc + i + 8, len - i - 8);
        st.flush_all();
    }
    return st.result(top);
}

EXACTREF_TARGET_V4 f64_extraction f32_extract_block(const std::uint32_t* x, const std::uint32_t* y, std::size_t n,
                                                    int top) {
    return binary32_extract(x, y, n, top);
}

EXACTREF_TARGET_V4 f64_extraction bf16_extract_block(const std::uint16_t* x, const std::uint16_t* y, std::size_t n,
                                                     int top) {
    return binary32_extract(x, y, n, top);
}

bool f64_extraction_supported() noexcept { return host_simd_level() == simd_level::avx512; }

bool f64_extraction_environment() noexcept {
    constexpr unsigned ftz = 1u << 15, daz = 1u << 6;
    return (_mm_getcsr() & (ftz | daz)) == 0;
}

std::uint64_t f64_extraction_kept_blocks() noexcept { return kept_blocks.load(std::memory_order_relaxed); }

#else

std::uint64_t f64_extraction_kept_blocks() noexcept { return 0; }

#endif

}  // namespace exactref::detail
