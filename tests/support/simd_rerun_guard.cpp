// The SIMD-capped reruns of tests/cmake/simd.cmake set EXACTREF_SIMD_RERUN: a rerun whose cap does not lower this
// CPU's widest version (EXACTREF_SIMD=avx2 on a CPU without AVX-512, =base on one without AVX2) runs exactly the code
// of the uncapped run beside it, so it stops before main with exit code 77, which those tests declare as "skipped"
// (ctest's SKIP_RETURN_CODE), saying why. Linked into every test executable; idle unless EXACTREF_SIMD_RERUN is set.
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

// Whether the cap EXACTREF_SIMD names is at or above what this CPU runs (the dispatch of src/simd_targets.h).
bool cap_changes_nothing(const char* cap) {
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(EXACTREF_NO_MULTIVERSION)
    __builtin_cpu_init();
    if (std::strcmp(cap, "avx2") == 0) return !__builtin_cpu_supports("x86-64-v4");
    if (std::strcmp(cap, "base") == 0) return !__builtin_cpu_supports("x86-64-v3");
#else
    (void)cap;  // one portable version: the cap is never checked against several
#endif
    return false;
}

const bool rerun_checked = [] {
    const char* rerun = std::getenv("EXACTREF_SIMD_RERUN");
    const char* cap = std::getenv("EXACTREF_SIMD");
    if (rerun == nullptr || cap == nullptr || !cap_changes_nothing(cap)) return true;
    std::printf("EXACTREF_SIMD=%s is not below this CPU's widest version: the uncapped run covers this code; "
                "skipped\n", cap);
    std::fflush(stdout);
    std::_Exit(77);
}();

}  // namespace
