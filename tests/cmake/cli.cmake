# Checks of the `exactref` CLI (apps/exactref), one ctest per case of tests/cli/run_cli_test.py, label `unit`.
# The runner computes every expected number itself with Python's exact rationals (see its docstring).
if(NOT TARGET exactref_cli)
  return()
endif()
find_package(Python3 COMPONENTS Interpreter)
if(NOT Python3_Interpreter_FOUND)
  message(STATUS "exactref: python3 not found, the CLI tests (tests/cli) are not registered")
  return()
endif()

foreach(case sum_text sum_json_and_stdin sum_float16 covers_orders covers_not_covered covers_json npy_input bad_input
             stream_input npy_header_limits npy_descr text_forms usage_errors covers_input_as_given
             covers_structured covers_vacuous covers_explain structured_errors stream_memory parse_warnings
             skip_rows_and_header too_large results_file narrower_hint sum_abs_sum_specials
             zero_sign_and_ftz)
  add_test(NAME cli.${case}
           COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/cli/run_cli_test.py
                   --cli $<TARGET_FILE:exactref_cli> --data ${EXACTREF_SHARED_DATA}
                   --work ${CMAKE_CURRENT_BINARY_DIR}/cli-test --project-version ${PROJECT_VERSION} ${case})
  set_tests_properties(cli.${case} PROPERTIES LABELS unit TIMEOUT 120)
endforeach()
