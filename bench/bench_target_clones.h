// bench/bench_target_clones.h — BENCH_TARGET_CLONES: compile a baseline loop for AVX-512, AVX2 and baseline x86-64 and
// pick at run time (GCC on x86-64), so that the "obvious alternative" gets the same vector width the library's own
// dispatched kernels get. Elsewhere it expands to nothing.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define BENCH_TARGET_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define BENCH_TARGET_CLONES
#endif
