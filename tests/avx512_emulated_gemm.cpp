// src/gemm_int8.cpp again, with the int8-vnni engine's micro-kernel on the portable model of its intrinsics in
// tests/avx512_emulation.h (tests/cmake/avx512_emulation.cmake links it into test_gemm_emulated and
// test_gemm_covers_emulated, in place of the library's own gemm_int8.cpp.o): the engine tests then run int8-vnni on
// every CPU, AVX-512 VNNI or not.
#define EXACTREF_EMULATE_AVX512 1
#include "../src/gemm_int8.cpp"
