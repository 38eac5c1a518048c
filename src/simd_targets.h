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
#include <stdexcept>  // std::invalid_argument: a bad EXACTREF_SIMD
#include <string>

#define EXACTREF_V3_FEATURES "avx,avx2,bmi,bmi2,f16c,fma,lzcnt,movbe,popcnt,sse4.1,sse4.2,ssse3"
#define EXACTREF_V4_FEATURES EXACTREF_V3_FEATURES ",avx512f,avx512bw,avx512cd,avx512dq,avx512vl"
#define EXACTREF_TARGET_V3 [[gnu::target(EXACTREF_V3_FEATURES)]]
#define EXACTREF_TARGET_V4 [[gnu::target(EXACTREF_V4_FEATURES)]]

namespace exactref::detail {

// EXACTREF_SIMD, read once for the whole process: unset or empty (no cap), "avx2" or "base" (cap the kernels' versions
// at AVX2 or at the portable code), or anything else, which check_simd_setting() reports.
enum class simd_cap { none, avx2, base, invalid };
struct simd_setting {
    simd_cap cap = simd_cap::none;
    std::string value;  // the variable's text
};
inline const simd_setting& simd_setting_of_environment() {
    static const simd_setting setting = [] {
        simd_setting s;
        const char* raw = std::getenv("EXACTREF_SIMD");
        if (raw == nullptr) return s;
        s.value = raw;
        if (s.value == "avx2") s.cap = simd_cap::avx2;
        else if (s.value == "base") s.cap = simd_cap::base;
        else if (!s.value.empty()) s.cap = simd_cap::invalid;
        return s;
    }();
    return setting;
}
/// Throws std::invalid_argument, naming the variable, its value and the valid spellings, when EXACTREF_SIMD holds
/// anything but "avx2", "base" or nothing. Called where the library uses the setting and may throw: every call that
/// reads the environment for its thread count (resolve_threads(0): every Python call without threads=), covers()
/// over compact arrays, structured bounds. Entries that promise not to throw (superaccumulator::add, a one-thread
/// exactref::sum) run the CPU's widest version instead, which gives the same bits as every other.
inline void check_simd_setting() {
    const simd_setting& s = simd_setting_of_environment();
    if (s.cap == simd_cap::invalid)
        throw std::invalid_argument("EXACTREF_SIMD='" + s.value + "': expected 'avx2' (cap the kernels at AVX2) or "
                                    "'base' (the portable versions only), or leave it unset or empty (the CPU's "
                                    "widest); it selects among versions that give the same bits, for tests");
}

}  // namespace exactref::detail

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
        const simd_cap cap = simd_setting_of_environment().cap;  // invalid: check_simd_setting() reports it
        if (cap == simd_cap::base) return simd_level::base;
        if (cap == simd_cap::avx2) return std::min(cpu, simd_level::avx2);
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
