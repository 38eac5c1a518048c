# One fuzz smoke run: the seeds copied into WORK/corpus (fresh each run), then FUZZER for SECONDS seconds
# (the environment's EXACTREF_FUZZ_SECONDS wins) over that copy; crashes are written into WORK. Fails when libFuzzer
# finds anything (a crash, a property abort, a leak, a timeout of 10 s on one input).
if(DEFINED ENV{EXACTREF_FUZZ_SECONDS})
  set(SECONDS $ENV{EXACTREF_FUZZ_SECONDS})
endif()
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/corpus)
file(GLOB seeds ${SEEDS}/*)
file(COPY ${seeds} DESTINATION ${WORK}/corpus)
execute_process(COMMAND ${FUZZER} -max_total_time=${SECONDS} -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
                        -artifact_prefix=${WORK}/ ${WORK}/corpus
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${FUZZER} failed (exit ${rc}); the input is in ${WORK}/")
endif()
