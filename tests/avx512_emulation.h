// A portable model of the AVX-512 intrinsics that src/gemm_covers.cpp's Step P6 kernels and src/gemm_int8.cpp's VNNI
// micro-kernel use, lane by lane as Intel's Intrinsics Guide defines them, for tests/avx512_emulated_covers.cpp and
// tests/avx512_emulated_gemm.cpp: they compile those files again with EXACTREF_EMULATE_AVX512, so the AVX-512 kernels
// (enclose_narrow_run_v4, enclose_wide_run_v4, micro_vnni) run on any CPU and the tests compare them with the
// element-by-element code, the oracles and the other engines where the machine has no AVX-512 (the CUDA kernels' host
// emulator plays the same part for the GPU). Only the intrinsics and immediates those kernels use are here; a kernel
// that uses another one does not compile in the emulated build, which is the reminder to add it.
//
// The floating-point lanes are single binary64 operations in the caller's environment (the test holds the default
// one); the emulated file is compiled with -ffp-contract=off, so a multiplication and an addition in two intrinsics
// are not fused into one FMA, as the hardware does not fuse them either.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

// The vector types under names of their own (a standard header may already have declared the SSE ones).
#define __mmask8 exactref_emulated_mmask8
#define __mmask16 exactref_emulated_mmask16
#define __m512i exactref_emulated_m512i
#define __m512d exactref_emulated_m512d
#define __m256i exactref_emulated_m256i
#define __m128i exactref_emulated_m128i
using __mmask8 = std::uint8_t;
using __mmask16 = std::uint16_t;
struct __m512i {
    std::uint64_t lane[8];
};
struct __m512d {
    double lane[8];
};
struct __m256i {
    std::uint32_t lane[8];
};
struct __m128i {
    std::uint8_t lane[16];
};

#ifndef _CMP_LT_OQ
#define _CMP_LT_OQ 0x11
#define _CMP_GE_OQ 0x1d
#define _CMP_GT_OQ 0x1e
#endif

namespace avx512_model {
inline bool on(unsigned mask, int i) { return ((mask >> i) & 1u) != 0; }
inline std::int64_t s(std::uint64_t x) { return static_cast<std::int64_t>(x); }
template <class F>
inline __m512i map(F f) {
    __m512i r;
    for (int i = 0; i < 8; ++i) r.lane[i] = f(i);
    return r;
}
template <class F>
inline __mmask8 mask_of(F f) {
    unsigned m = 0;
    for (int i = 0; i < 8; ++i) m |= (f(i) ? 1u : 0u) << i;
    return static_cast<__mmask8>(m);
}
}  // namespace avx512_model

// ---- set, cast, load, store --------------------------------------------------------------------------------------
inline __m512i _mm512_setzero_si512() { return __m512i{}; }
inline __m512d _mm512_setzero_pd() { return __m512d{}; }
inline __m512i _mm512_set1_epi64(std::int64_t x) {
    return avx512_model::map([&](int) { return static_cast<std::uint64_t>(x); });
}
inline __m512d _mm512_set1_pd(double x) {
    __m512d r;
    for (double& v : r.lane) v = x;
    return r;
}
inline __m512i _mm512_set_epi64(std::int64_t e7, std::int64_t e6, std::int64_t e5, std::int64_t e4, std::int64_t e3,
                                std::int64_t e2, std::int64_t e1, std::int64_t e0) {  // e0 is lane 0
    const std::int64_t e[8] = {e0, e1, e2, e3, e4, e5, e6, e7};
    return avx512_model::map([&](int i) { return static_cast<std::uint64_t>(e[i]); });
}
inline __m512i _mm512_castpd_si512(__m512d x) { return std::bit_cast<__m512i>(x); }
inline __m512d _mm512_castsi512_pd(__m512i x) { return std::bit_cast<__m512d>(x); }
// Masked loads and stores touch no lane whose mask bit is clear (the kernels' tails rely on it).
namespace avx512_model {
template <class V>
inline V masked_load(unsigned k, const void* p) {
    V r{};
    constexpr std::size_t size = sizeof(r.lane[0]), lanes = sizeof(r.lane) / size;
    for (std::size_t i = 0; i < lanes; ++i)
        if (on(k, static_cast<int>(i))) std::memcpy(&r.lane[i], static_cast<const char*>(p) + size * i, size);
    return r;
}
}  // namespace avx512_model
inline __m512i _mm512_maskz_loadu_epi64(__mmask8 k, const void* p) {
    return avx512_model::masked_load<__m512i>(k, p);
}
inline __m512d _mm512_maskz_loadu_pd(__mmask8 k, const void* p) {
    return avx512_model::masked_load<__m512d>(k, p);
}
inline __m256i _mm256_maskz_loadu_epi32(__mmask8 k, const void* p) {
    return avx512_model::masked_load<__m256i>(k, p);
}
inline __m128i _mm_maskz_loadu_epi8(__mmask16 k, const void* p) {
    return avx512_model::masked_load<__m128i>(k, p);
}
inline void _mm512_mask_storeu_epi64(void* p, __mmask8 k, __m512i a) {
    for (int i = 0; i < 8; ++i)
        if (avx512_model::on(k, i)) std::memcpy(static_cast<char*>(p) + 8 * i, &a.lane[i], 8);
}
inline void _mm512_mask_cvtepi64_storeu_epi8(void* p, __mmask8 k, __m512i a) {  // truncated to the low byte
    for (int i = 0; i < 8; ++i)
        if (avx512_model::on(k, i))
            static_cast<std::uint8_t*>(p)[i] = static_cast<std::uint8_t>(a.lane[i]);
}
inline __m512i _mm512_mask_i64gather_epi64(__m512i src, __mmask8 k, __m512i index, const void* base, int scale) {
    return avx512_model::map([&](int i) {
        if (!avx512_model::on(k, i)) return src.lane[i];
        std::uint64_t v;
        std::memcpy(&v, static_cast<const char*>(base) + avx512_model::s(index.lane[i]) * scale, 8);
        return v;
    });
}

// The 32-bit view of a vector (the int8 engine's micro-kernel: tests/avx512_emulated_gemm.cpp).
namespace avx512_model {
template <class F>
inline __m512i map32(F f) {
    std::int32_t r[16];
    for (int i = 0; i < 16; ++i) r[i] = f(i);
    return std::bit_cast<__m512i>(r);
}
inline std::int32_t lane32(__m512i a, int i) {
    std::int32_t x;
    std::memcpy(&x, reinterpret_cast<const char*>(a.lane) + 4 * i, 4);
    return x;
}
}  // namespace avx512_model
inline __m512i _mm512_loadu_si512(const void* p) { return avx512_model::masked_load<__m512i>(0xff, p); }
inline void _mm512_storeu_si512(void* p, __m512i a) { std::memcpy(p, a.lane, 64); }
inline __m512i _mm512_set1_epi32(std::int32_t x) {
    return avx512_model::map32([&](int) { return x; });
}
inline __m512i _mm512_add_epi32(__m512i a, __m512i b) {  // wrapping, as vpaddd
    using avx512_model::lane32;
    return avx512_model::map32([&](int i) {
        const std::uint32_t sum = static_cast<std::uint32_t>(lane32(a, i)) + static_cast<std::uint32_t>(lane32(b, i));
        return static_cast<std::int32_t>(sum);
    });
}
// vpdpbusd: per 32-bit lane, src + the four products of a's unsigned bytes and b's signed bytes, without saturation.
inline __m512i _mm512_dpbusd_epi32(__m512i src, __m512i a, __m512i b) {
    using avx512_model::lane32;
    return avx512_model::map32([&](int i) {
        const auto ua = static_cast<std::uint32_t>(lane32(a, i)), ub = static_cast<std::uint32_t>(lane32(b, i));
        std::uint32_t sum = static_cast<std::uint32_t>(lane32(src, i));
        for (int u = 0; u < 4; ++u) {
            const auto x = static_cast<std::int32_t>((ua >> (8 * u)) & 0xff);
            const auto y = static_cast<std::int32_t>(static_cast<std::int8_t>((ub >> (8 * u)) & 0xff));
            sum += static_cast<std::uint32_t>(x * y);
        }
        return static_cast<std::int32_t>(sum);
    });
}

// ---- conversions -------------------------------------------------------------------------------------------------
inline __m512i _mm512_cvtepi32_epi64(__m256i a) {
    return avx512_model::map(
        [&](int i) { return static_cast<std::uint64_t>(std::int64_t{static_cast<std::int32_t>(a.lane[i])}); });
}
inline __m512i _mm512_cvtepu32_epi64(__m256i a) {
    return avx512_model::map([&](int i) { return static_cast<std::uint64_t>(a.lane[i]); });
}
inline __m512i _mm512_cvtepu8_epi64(__m128i a) {  // the low 8 bytes
    return avx512_model::map([&](int i) { return static_cast<std::uint64_t>(a.lane[i]); });
}
inline __m512d _mm512_cvtepi64_pd(__m512i a) {  // rounded in the current mode, as vcvtqq2pd with MXCSR's
    __m512d r;
    for (int i = 0; i < 8; ++i) r.lane[i] = static_cast<double>(avx512_model::s(a.lane[i]));
    return r;
}
inline __m512d _mm512_cvtepu64_pd(__m512i a) {
    __m512d r;
    for (int i = 0; i < 8; ++i) r.lane[i] = static_cast<double>(a.lane[i]);
    return r;
}

// ---- integer arithmetic, logic, shifts ---------------------------------------------------------------------------
inline __m512i _mm512_add_epi64(__m512i a, __m512i b) {
    return avx512_model::map([&](int i) { return a.lane[i] + b.lane[i]; });
}
inline __m512i _mm512_sub_epi64(__m512i a, __m512i b) {
    return avx512_model::map([&](int i) { return a.lane[i] - b.lane[i]; });
}
inline __m512i _mm512_mullo_epi64(__m512i a, __m512i b) {
    return avx512_model::map([&](int i) { return a.lane[i] * b.lane[i]; });
}
inline __m512i _mm512_and_si512(__m512i a, __m512i b) {
    return avx512_model::map([&](int i) { return a.lane[i] & b.lane[i]; });
}
inline __m512i _mm512_or_si512(__m512i a, __m512i b) {
    return avx512_model::map([&](int i) { return a.lane[i] | b.lane[i]; });
}
inline __m512i _mm512_mask_mov_epi64(__m512i src, __mmask8 k, __m512i a) {
    return avx512_model::map([&](int i) { return avx512_model::on(k, i) ? a.lane[i] : src.lane[i]; });
}
inline __m512i _mm512_maskz_mov_epi64(__mmask8 k, __m512i a) { return _mm512_mask_mov_epi64(__m512i{}, k, a); }
inline __m512i _mm512_mask_blend_epi64(__mmask8 k, __m512i a, __m512i b) { return _mm512_mask_mov_epi64(a, k, b); }
inline __m512i _mm512_mask_add_epi64(__m512i src, __mmask8 k, __m512i a, __m512i b) {
    return _mm512_mask_mov_epi64(src, k, _mm512_add_epi64(a, b));
}
inline __m512i _mm512_mask_sub_epi64(__m512i src, __mmask8 k, __m512i a, __m512i b) {
    return _mm512_mask_mov_epi64(src, k, _mm512_sub_epi64(a, b));
}
inline __m512i _mm512_maskz_sub_epi64(__mmask8 k, __m512i a, __m512i b) {
    return _mm512_mask_mov_epi64(__m512i{}, k, _mm512_sub_epi64(a, b));
}
inline __m512i _mm512_mask_xor_epi64(__m512i src, __mmask8 k, __m512i a, __m512i b) {
    return _mm512_mask_mov_epi64(src, k, avx512_model::map([&](int i) { return a.lane[i] ^ b.lane[i]; }));
}
// Shifts by counts of 64 and more give 0 (logical) or the sign fill (arithmetic), as the instructions do.
inline __m512i _mm512_slli_epi64(__m512i a, unsigned count) {
    return avx512_model::map([&](int i) { return count > 63 ? 0 : a.lane[i] << count; });
}
inline __m512i _mm512_srli_epi64(__m512i a, unsigned count) {
    return avx512_model::map([&](int i) { return count > 63 ? 0 : a.lane[i] >> count; });
}
inline __m512i _mm512_srai_epi64(__m512i a, unsigned count) {
    return avx512_model::map([&](int i) {
        return static_cast<std::uint64_t>(avx512_model::s(a.lane[i]) >> (count > 63 ? 63 : count));
    });
}
inline __m512i _mm512_sllv_epi64(__m512i a, __m512i count) {
    return avx512_model::map([&](int i) { return count.lane[i] > 63 ? 0 : a.lane[i] << count.lane[i]; });
}
inline __m512i _mm512_srlv_epi64(__m512i a, __m512i count) {
    return avx512_model::map([&](int i) { return count.lane[i] > 63 ? 0 : a.lane[i] >> count.lane[i]; });
}
inline __m512i _mm512_lzcnt_epi64(__m512i a) {
    return avx512_model::map([&](int i) { return static_cast<std::uint64_t>(std::countl_zero(a.lane[i])); });
}
// Lane i of the result is lane idx[i] mod 16 of the 16 lanes a, b.
inline __m512i _mm512_permutex2var_epi64(__m512i a, __m512i idx, __m512i b) {
    return avx512_model::map([&](int i) {
        const unsigned j = static_cast<unsigned>(idx.lane[i] & 15);
        return j < 8 ? a.lane[j] : b.lane[j - 8];
    });
}

// ---- comparisons -------------------------------------------------------------------------------------------------
inline __mmask8 _mm512_cmpeq_epi64_mask(__m512i a, __m512i b) {
    return avx512_model::mask_of([&](int i) { return a.lane[i] == b.lane[i]; });
}
inline __mmask8 _mm512_cmpneq_epi64_mask(__m512i a, __m512i b) {
    return avx512_model::mask_of([&](int i) { return a.lane[i] != b.lane[i]; });
}
inline __mmask8 _mm512_cmplt_epi64_mask(__m512i a, __m512i b) {
    using avx512_model::s;
    return avx512_model::mask_of([&](int i) { return s(a.lane[i]) < s(b.lane[i]); });
}
inline __mmask8 _mm512_cmple_epi64_mask(__m512i a, __m512i b) {
    using avx512_model::s;
    return avx512_model::mask_of([&](int i) { return s(a.lane[i]) <= s(b.lane[i]); });
}
inline __mmask8 _mm512_cmpge_epi64_mask(__m512i a, __m512i b) {
    using avx512_model::s;
    return avx512_model::mask_of([&](int i) { return s(a.lane[i]) >= s(b.lane[i]); });
}
inline __mmask8 _mm512_test_epi64_mask(__m512i a, __m512i b) {
    return avx512_model::mask_of([&](int i) { return (a.lane[i] & b.lane[i]) != 0; });
}
// The ordered, quiet predicates (false where either operand is NaN).
inline __mmask8 _mm512_cmp_pd_mask(__m512d a, __m512d b, int predicate) {
    return avx512_model::mask_of([&](int i) {
        const double x = a.lane[i], y = b.lane[i];
        switch (predicate) {
            case _CMP_LT_OQ: return x < y;
            case _CMP_GE_OQ: return x >= y;
            case _CMP_GT_OQ: return x > y;
            default: std::abort();  // a predicate this model lacks
        }
    });
}

// ---- binary64 arithmetic -----------------------------------------------------------------------------------------
inline __m512d _mm512_add_pd(__m512d a, __m512d b) {
    __m512d r;
    for (int i = 0; i < 8; ++i) r.lane[i] = a.lane[i] + b.lane[i];
    return r;
}
inline __m512d _mm512_sub_pd(__m512d a, __m512d b) {
    __m512d r;
    for (int i = 0; i < 8; ++i) r.lane[i] = a.lane[i] - b.lane[i];
    return r;
}
inline __m512d _mm512_mul_pd(__m512d a, __m512d b) {
    __m512d r;
    for (int i = 0; i < 8; ++i) r.lane[i] = a.lane[i] * b.lane[i];
    return r;
}
