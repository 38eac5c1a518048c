# The superaccumulator's fast path has AVX-512, AVX2 and scalar versions chosen at run time; a machine runs only the
# best one by default. EXACTREF_SIMD caps the choice (src/sum_kernels.cpp), so the random-input oracle tests and the
# fused-pass tests (and the structured bound's fold kernel) also run on the AVX2 and scalar versions here.
# They run at EXACTREF_TEST_SCALE=0.3 (tests/test_scale.h): the full counts run on the best version.
foreach(level avx2 base)
  add_test(NAME simd_${level}.accumulator_random
           COMMAND test_accumulator --gtest_filter=AccumulatorRandom.*:AccumulatorClasses.*)
  add_test(NAME simd_${level}.fused_sum COMMAND test_fused_sum)
  # The structured bound's fold kernel (src/structured.cpp) has the same three versions.
  add_test(NAME simd_${level}.structured
           COMMAND test_structured --gtest_filter=StructuredSoundness.EveryReachable*:StructuredBound.*:StructuredDetection.LostQuarter*)
  # covers()' block filter over compact arrays (src/covers_block.h) has the same three versions.
  add_test(NAME simd_${level}.covers_block
           COMMAND test_covers_compact --gtest_filter=CoversCompact.BlockFilterAtEveryWidthDefers*:CoversCompact.BlockFilterAtEveryWidthFinds*)
  set_tests_properties(simd_${level}.accumulator_random simd_${level}.fused_sum simd_${level}.structured
                       simd_${level}.covers_block
                       PROPERTIES ENVIRONMENT "EXACTREF_SIMD=${level};EXACTREF_TEST_SCALE=0.3" LABELS unit)
endforeach()
