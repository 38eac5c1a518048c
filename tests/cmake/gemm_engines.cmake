# The exact GEMM's slice GEMMs run on OpenBLAS, whose DYNAMIC_ARCH build picks a kernel for the CPU at start-up.
# OPENBLAS_CORETYPE forces one: the GEMM tests (exactness against the oracles, paired slices at their largest
# magnitudes, far entries, specials) rerun here on the AVX2 (Haswell), AVX (Sandybridge) and SSE3 (Prescott) kernels,
# which every x86-64-v3 machine runs. The AVX-512 kernel (SkylakeX) runs where the CPU has it: the default run there.
# Only the binary64 instances of the engine-parameterised tests (and the Gemm.* ones) rerun: the int8 engines do not
# call OpenBLAS, and the default run covers them. The sanitized build leaves them out: OpenBLAS is not instrumented,
# and the slice products are exact on every kernel, so the library's code runs the same paths on the same values
# (test_gemm's own sanitized run checks them); what a kernel could break, that exactness, the Release run checks.
# (Sanitized, the three took 121 s of the run, 2026-12-07.)
if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64" AND NOT EXACTREF_SANITIZE)
  foreach(core Haswell Sandybridge Prescott)
    string(TOLOWER "${core}" core_lower)
    add_test(NAME gemm_engine_${core_lower} COMMAND test_gemm --gtest_filter=Gemm.*:*/binary64)
    set_tests_properties(gemm_engine_${core_lower} PROPERTIES
      ENVIRONMENT "OPENBLAS_CORETYPE=${core};EXACTREF_EXPECT_BLAS_KERNEL=${core_lower}" LABELS unit)
  endforeach()
endif()

# Karatsuba pairing of slices: the planner pairs where its price says so, rarely at the tests' small sizes (the paired
# operands and level feeds cost more than the GEMMs they save there). These reruns make every binary64 product that
# can pair do so (EXACTREF_GEMM_PAIRING=always): the oracles, far entries, specials, Step S6 and covers() over the
# product on paired slices. They also cut Steps S3-S4 and S6 into tiles of 5 rows by 7 columns (real products take
# panels of 1024 rows or more and blocks of 128 columns or more), where the tests do not set their own.
add_test(NAME gemm_pairing_always COMMAND test_gemm --gtest_filter=Gemm.*:*/binary64)
add_test(NAME gemm_covers_pairing_always COMMAND test_gemm_covers --gtest_filter=GemmCovers.*:*/binary64)
set_tests_properties(gemm_pairing_always gemm_covers_pairing_always PROPERTIES
  ENVIRONMENT "EXACTREF_GEMM_PAIRING=always;EXACTREF_GEMM_PANEL=5;EXACTREF_GEMM_BLOCK=7" LABELS unit)

# The repair of OpenBLAS's Prescott fallback (src/blas_kernel.h): under OPENBLAS_CORETYPE=Prescott the library loads
# on Prescott's kernel as it does on a CPU OpenBLAS does not know; the test switches kernels and checks the products.
# A bad EXACTREF_BLAS_KERNEL is an error that names it.
add_test(NAME blas_kernel_repair COMMAND test_gemm --gtest_filter=BlasKernel.*)
set_tests_properties(blas_kernel_repair PROPERTIES ENVIRONMENT "OPENBLAS_CORETYPE=Prescott" LABELS unit)
add_test(NAME blas_kernel_bad_value COMMAND test_gemm --gtest_filter=BlasKernel.*)
set_tests_properties(blas_kernel_bad_value PROPERTIES ENVIRONMENT "EXACTREF_BLAS_KERNEL=prescott" LABELS unit)
