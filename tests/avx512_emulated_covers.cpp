// src/gemm_covers.cpp again, with Step P6's AVX-512 kernels on the portable model of their intrinsics in
// tests/avx512_emulation.h (tests/cmake/avx512_emulation.cmake builds it into test_gemm_covers_emulated, in place of
// the library's own gemm_covers.cpp.o): the lane tests then run those kernels on every CPU, AVX-512 or not.
#define EXACTREF_EMULATE_AVX512 1
#include "../src/gemm_covers.cpp"
