# The AVX-512 kernels of the GEMM (src/gemm_covers.cpp: Step P6's enclose_narrow_run_v4 and enclose_wide_run_v4;
# src/gemm_int8.cpp: the int8-vnni engine's micro_vnni) run only where the CPU has AVX-512 (VNNI), and CI machines
# may not. test_gemm_emulated and test_gemm_covers_emulated are test_gemm and test_gemm_covers linked with their own
# copies of those two files compiled on a portable model of the intrinsics (tests/avx512_emulation.h,
# EXACTREF_EMULATE_AVX512; -ffp-contract=off, as separate vector instructions are never fused): the archive's
# gemm_covers.cpp.o and gemm_int8.cpp.o are then not linked in. Their int8-vnni engine tests and lane tests compare the
# kernels with the element-by-element code, the oracles and the other engines on any CPU. The kernels are built by GCC
# on x86-64 only (EXACTREF_NARROW_RUN_LANES, EXACTREF_INT8_VNNI), so the emulated tests are too.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  set(emulated_sources ${CMAKE_CURRENT_SOURCE_DIR}/avx512_emulated_covers.cpp
                       ${CMAKE_CURRENT_SOURCE_DIR}/avx512_emulated_gemm.cpp)
  set_source_files_properties(${emulated_sources} PROPERTIES
                              COMPILE_OPTIONS "-ffp-contract=off;-Wall;-Wextra;-Wpedantic;-Wno-psabi")
  # The emulated kernels (compiled once, for both executables) and each test's own object file (tests/CMakeLists.txt).
  add_library(exactref_avx512_emulated OBJECT ${emulated_sources})
  target_link_libraries(exactref_avx512_emulated PUBLIC exactref)
  target_include_directories(exactref_avx512_emulated PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  if(TARGET OpenMP::OpenMP_CXX)
    target_link_libraries(exactref_avx512_emulated PUBLIC OpenMP::OpenMP_CXX)
  endif()
  foreach(name test_gemm test_gemm_covers)
    add_executable(${name}_emulated)
    # The emulated objects come first, so the archive's gemm_covers.cpp.o and gemm_int8.cpp.o are never linked.
    target_link_libraries(${name}_emulated PRIVATE exactref_avx512_emulated ${name}_objects exactref_test_support)
  endforeach()
  add_test(NAME gemm_int8_vnni_emulated
           COMMAND test_gemm_emulated --gtest_filter=*/int8_vnni:GemmInt8.*)
  add_test(NAME gemm_covers_lanes_emulated
           COMMAND test_gemm_covers_emulated --gtest_filter=GemmCoversLanes.*:*/int8_vnni)
  # Among the longest tests (80-110 s under the sanitizers, 2026-12-07): a high COST starts them first in a run
  # without cost data (a clean clone), not last behind hundreds of short ones.
  set_tests_properties(gemm_int8_vnni_emulated gemm_covers_lanes_emulated PROPERTIES LABELS unit COST 1000)
endif()
