// Target attributes of the per-instruction-set kernel versions (src/sum_kernels.cpp, src/structured.cpp, src/dot.cpp).
//
// The versions ADD the instructions of x86-64-v4 (AVX-512) or x86-64-v3 (AVX2) to whatever the whole build targets,
// rather than replace it with target("arch=..."): a kernel is always_inline'd into its version, and GCC inlines only
// a callee whose instruction set is a subset of the caller's. With target("arch=x86-64-v3") and a build for
// -march=native or -march=x86-64-v4 the callee (built for the whole build's target) has instructions the caller lacks
// and the build fails ("inlining failed in call to 'always_inline' ...: target specific option mismatch"). Adding
// features keeps the caller a superset of every callee for any -march. Under -march=x86-64-v4 the "v3" version thus
// may use AVX-512 instructions too; it still works on 256-bit vectors, and such a build runs only where AVX-512 does.
#pragma once

#include <algorithm>  // std::min
#include <cstdlib>    // std::getenv: EXACTREF_SIMD
#include <cstring>    // std::strcmp

#define EXACTREF_V3_FEATURES "avx,avx2,bmi,bmi2,f16c,fma,lzcnt,movbe,popcnt,sse4.1,sse4.2,ssse3"
#define EXACTREF_V4_FEATURES EXACTREF_V3_FEATURES ",avx512f,avx512bw,avx512cd,avx512dq,avx512vl"
#define EXACTREF_TARGET_V3 [[gnu::target(EXACTREF_V3_FEATURES)]]
#define EXACTREF_TARGET_V4 [[gnu::target(EXACTREF_V4_FEATURES)]]

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(EXACTREF_NO_MULTIVERSION)
namespace exactref::detail {

// The widest vectors this CPU runs, detected once (one value for the whole process: an inline function's static).
// The environment variable EXACTREF_SIMD=avx2 or =base caps it, so that tests can run every version on one machine
// (they must give the same bits): the sum kernels, the structured bound's fold kernel and the exact dot's Step D6
// (AVX-512 only) and binary64 lane kernels dispatch on it.
enum class simd_level { base, avx2, avx512 };

inline simd_level host_simd_level() noexcept {
    static const simd_level level = [] {
        __builtin_cpu_init();
        simd_level cpu = simd_level::base;
        if (__builtin_cpu_supports("x86-64-v4")) cpu = simd_level::avx512;
        else if (__builtin_cpu_supports("x86-64-v3")) cpu = simd_level::avx2;
        const char* cap = std::getenv("EXACTREF_SIMD");
        if (cap != nullptr && std::strcmp(cap, "base") == 0) return simd_level::base;
        if (cap != nullptr && std::strcmp(cap, "avx2") == 0) return std::min(cpu, simd_level::avx2);
        return cpu;
    }();
    return level;
}
// The binary64 lanes of the widest version this CPU runs (8 AVX-512, 4 AVX2, 1 otherwise), from host_simd_level:
// covers()' block filter and the structured bound's fold kernel pick their version by it.
inline int host_simd_lanes() noexcept {
    switch (host_simd_level()) {
        case simd_level::avx512: return 8;
        case simd_level::avx2: return 4;
        case simd_level::base: break;
    }
    return 1;
}
}  // namespace exactref::detail
#endif
