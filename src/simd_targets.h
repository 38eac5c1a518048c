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

#define EXACTREF_V3_FEATURES "avx,avx2,bmi,bmi2,f16c,fma,lzcnt,movbe,popcnt,sse4.1,sse4.2,ssse3"
#define EXACTREF_V4_FEATURES EXACTREF_V3_FEATURES ",avx512f,avx512bw,avx512cd,avx512dq,avx512vl"
#define EXACTREF_TARGET_V3 [[gnu::target(EXACTREF_V3_FEATURES)]]
#define EXACTREF_TARGET_V4 [[gnu::target(EXACTREF_V4_FEATURES)]]
