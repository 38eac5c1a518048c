# The superaccumulator's fast path has AVX-512, AVX2 and scalar versions chosen at run time; a machine runs only the
# best one by default. EXACTREF_SIMD caps the choice (src/simd_targets.h), so the random-input oracle tests and the
# fused-pass tests (and the structured bound's fold kernel, and the exact dot) also run on the AVX2 and scalar versions here.
# They run at EXACTREF_TEST_SCALE=0.3 (tests/test_scale.h): the full counts run on the best version. Under ASan and
# UBSan (EXACTREF_SANITIZE: `make sanitize`, whose preset runs everything else at 0.2) at 0.06, the product of
# the two: the sanitizers need each version's code paths, which the Release runs have checked at 0.3 and 1.
if(EXACTREF_SANITIZE)
  set(simd_rerun_scale 0.06)
else()
  set(simd_rerun_scale 0.3)
endif()
foreach(level avx2 base)
  add_test(NAME simd_${level}.accumulator_random
           COMMAND test_accumulator --gtest_filter=AccumulatorRandom.*:AccumulatorClasses.*)
  add_test(NAME simd_${level}.fused_sum COMMAND test_fused_sum)
  # The structured bound's fold kernel (src/structured.cpp) has the same three versions.
  add_test(NAME simd_${level}.structured
           COMMAND test_structured --gtest_filter=StructuredSoundness.EveryReachable*:StructuredBound.*:StructuredDetection.LostQuarter*)
  # The exact dot: the cap turns Step D6 (AVX-512 only) off, and base also the binary64 FMA lane kernels (every
  # binary64 pair then takes Step D1); the narrow formats' Steps D1-D5 dispatch on the CPU alone (target_clones).
  add_test(NAME simd_${level}.dot COMMAND test_dot --gtest_filter=Dot.*:DotExtraction.*)
  # Step F0b's AVX2 version (src/sum_kernels.cpp) in every rounding mode, FTZ/DAZ, flags and traps (base: F0-F5 only).
  add_test(NAME simd_${level}.fp_environment COMMAND test_fp_environment --gtest_filter=FpEnvironment.OnePass*)
  set_tests_properties(simd_${level}.accumulator_random simd_${level}.fused_sum simd_${level}.structured
                       simd_${level}.dot simd_${level}.fp_environment
                       PROPERTIES
                       ENVIRONMENT "EXACTREF_SIMD=${level};EXACTREF_TEST_SCALE=${simd_rerun_scale};EXACTREF_SIMD_RERUN=1"
                       LABELS unit SKIP_RETURN_CODE 77 COST 500)  # long: started early in a clean clone's run
  # covers()' block filter over compact arrays (src/covers_block.h) and Step P5's lanes over a product's elements
  # (src/covers_source_block.h) have the same three versions, but their tests choose the version themselves: the
  # *AtEveryWidth* / *LaneWidths* tests run 8, 4 and 1 lanes (AVX-512, AVX2, scalar) wherever the CPU has them, so
  # these reruns check that EXACTREF_SIMD caps the lanes and add no version the uncapped run lacks on this CPU. They
  # are left out of the sanitized build, where they took 140 s each (2026-12-06) for code its own run covers.
  if(NOT EXACTREF_SANITIZE)
    add_test(NAME simd_${level}.covers_block
             COMMAND test_covers_compact --gtest_filter=CoversCompact.BlockFilterAtEveryWidthDefers*:CoversCompact.BlockFilterAtEveryWidthFinds*:CoversRows.KeptStructuredBoundsAtEveryWidth*)
    add_test(NAME simd_${level}.gemm_covers
             COMMAND test_gemm_covers --gtest_filter=*BandsAndLaneWidthsGiveTheReferencePathsVerdicts*)
    set_tests_properties(simd_${level}.covers_block simd_${level}.gemm_covers
                         PROPERTIES ENVIRONMENT "EXACTREF_SIMD=${level};EXACTREF_TEST_SCALE=0.3;EXACTREF_SIMD_RERUN=1"
                         LABELS unit SKIP_RETURN_CODE 77 COST 500)  # long: started early in a clean clone's run
  endif()
endforeach()
# A rerun whose cap is not below this CPU's widest version (avx2 without AVX-512, base without AVX2) would run the
# uncapped run's code again: EXACTREF_SIMD_RERUN makes it skip itself (tests/support/simd_rerun_guard.cpp, exit 77).
# A value of EXACTREF_SIMD other than avx2, base or empty is an error naming it (read once per process, so its own run).
add_test(NAME simd_bad_value COMMAND test_covers_compact --gtest_filter=SimdSetting.*)
set_tests_properties(simd_bad_value PROPERTIES ENVIRONMENT "EXACTREF_SIMD=avx3" LABELS unit)
