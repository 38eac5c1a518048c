# The demo (`make demo`, examples/atomic_sum_demo.cpp) as a test. This file has two roles:
#   - included by tests/CMakeLists.txt, it registers the test `demo.atomic_sum`;
#   - run with `cmake -P` by that test, it runs the demo and checks its output.
# What it checks:
#   1. a short run (--quick) exits 0, prints the exact reference of shared/data/gauss10k_f32.txt (every digit, verified
#      with Python's fractions module outside the code under test; shared/data/README.md gives the same values rounded),
#      both bounds (any_order and the kernel's structured standard) in parts A, B and D, one row per honest run in
#      parts A and B whose verdicts (any_order, then the structured standard) both say "covered", at least one NOT
#      COVERED lost-update run in part C, part D's count of runs that only the structured standard rejects, and the
#      self-check's OK line;
#   2. with --plant-fault (worker 0 of part A's first run skips its 2,500 terms, whose exact sum is -21.84, more than
#      twice the bound 4.72, so that run cannot be covered) the demo must notice and exit 1: the self-check can fail,
#      once for each standard;
#   3. bad flags and a missing input file exit 2 with a message that names the problem;
#   4. when the CLI is built, the `exactref covers` command lines the demo prints run as printed: the honest part B
#      result exits 0 (covered), the rejected part C result exits 1 (not covered), and part D's run exits 0 under
#      any_order and 1 under --standard levels:fold:64,any.

if(NOT CMAKE_SCRIPT_MODE_FILE)
  # ---- registration (configure time) ----------------------------------------------------------------------------
  set(_demo_cli "")
  if(TARGET exactref_cli)
    set(_demo_cli "$<TARGET_FILE:exactref_cli>")
  endif()
  add_test(NAME demo.atomic_sum
           COMMAND ${CMAKE_COMMAND} -DDEMO=$<TARGET_FILE:atomic_sum_demo> "-DCLI=${_demo_cli}"
                   -DDATA_DIR=${CMAKE_CURRENT_BINARY_DIR}/demo-data-test -P ${CMAKE_CURRENT_LIST_FILE})
  set_tests_properties(demo.atomic_sum PROPERTIES LABELS demo TIMEOUT 300)
  unset(_demo_cli)
  return()
endif()

# ---- the checks (cmake -P, at test time) ----------------------------------------------------------------------------
foreach(var DEMO DATA_DIR)
  if(NOT ${var})
    message(FATAL_ERROR "demo.cmake: run as cmake -DDEMO=... -DDATA_DIR=... [-DCLI=...] -P demo.cmake")
  endif()
endforeach()

set(runs 3)

function(run_demo out_var rc_var err_var)
  execute_process(COMMAND ${DEMO} ${ARGN} OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  set(${out_var} "${out}" PARENT_SCOPE)
  set(${rc_var} "${rc}" PARENT_SCOPE)
  set(${err_var} "${err}" PARENT_SCOPE)
endfunction()

function(fail what output)
  message(FATAL_ERROR "demo.atomic_sum: ${what}\n---- demo output ----\n${output}")
endfunction()

function(expect_match text regex what)
  if(NOT text MATCHES "${regex}")
    fail("${what} (no match for /${regex}/)" "${text}")
  endif()
endfunction()

# 1. A short honest run.
run_demo(out rc err --quick --runs ${runs} --threads 3 --data-dir ${DATA_DIR})
if(NOT rc EQUAL 0)
  fail("exit status ${rc}, expected 0; stderr: ${err}" "${out}")
endif()
# The exact values below were computed with Python's fractions module from the file, not by exactref.
expect_match("${out}" "exact sum s +30\\.6042613661775249056518077850341796875\n" "part A's exact sum")
expect_match("${out}" "RN_float32\\(s\\) +0x1\\.e9ab0ep\\+4 = 30\\.604261\n" "part A's correctly rounded float32")
expect_match("${out}" "S = sum \\|x_i\\| +7923\\.0442781735400785692036151885986328125\n" "part A's sum of |x|")
expect_match("${out}" "\\(n-1\\)\\*u\\*S = 4\\.72203014716 " "part A's any-order bound")
expect_match("${out}" "structured bound +levels:any = [0-9.]+ " "parts A-C's structured bound")
expect_match("${out}" "structured bound +levels:fold:64,any = [0-9.e-]+ " "part D's structured bound")
expect_match("${out}" "levels:fold:64,any [0-9]+: [1-9][0-9]* runs? that\n +any_order covers and the structured standard catches"
             "part D's count of runs that only the structured standard rejects")
expect_match("${out}" "n +100,000\n" "part B's size under --quick")
expect_match("${out}" "bit-identical to the generated values" "part B's file read back")
expect_match("${out}" "OK: [0-9]+ checks passed" "the self-check's OK line")

# Walk the output line by line: count verdict rows per part. A ';' would split a CMake list element, so ';' in the
# text becomes ',' first (no pattern below looks for either).
string(REPLACE ";" "," lines "${out}")
string(REPLACE "\n" ";" lines "${lines}")
set(part "")
set(covered_A 0)
set(covered_B 0)
set(rejected_C 0)
set(rows_C 0)
set(cli_covered "")
set(cli_rejected "")
set(cli_tiled_flat "")
set(cli_tiled_structured "")
set(next "")
foreach(line IN LISTS lines)
  if(next)
    string(STRIP "${line}" stripped)
    set(${next} "${stripped}")
    set(next "")
  endif()
  if(line MATCHES "^== Part ([ABCD]):")
    set(part "${CMAKE_MATCH_1}")
  elseif(line MATCHES "^== Self-check")
    set(part "")
  elseif(part MATCHES "^[AB]$" AND line MATCHES "^ +[0-9]+  -?0x[0-9a-f.]+p[-+][0-9]+ .*  (covered|NOT COVERED) .*  (covered|NOT COVERED)$")
    if(CMAKE_MATCH_1 STREQUAL "covered" AND CMAKE_MATCH_2 STREQUAL "covered")
      math(EXPR covered_${part} "${covered_${part}} + 1")
    else()
      fail("an honest run in part ${part} is not covered: ${line}" "${out}")
    endif()
  elseif(part STREQUAL "C" AND line MATCHES "^ +[0-9]+  (none|spin|yield|retry).*  (covered|NOT COVERED)$")
    math(EXPR rows_C "${rows_C} + 1")
    if(CMAKE_MATCH_2 STREQUAL "NOT COVERED")
      math(EXPR rejected_C "${rejected_C} + 1")
    endif()
  endif()
  if(line MATCHES "check a run by hand with the CLI")
    set(next cli_covered)
  elseif(line MATCHES "the CLI agrees on a rejected run")
    set(next cli_rejected)
  elseif(line MATCHES "any_order covers it \\(exit status 0\\)")
    set(next cli_tiled_flat)
  elseif(line MATCHES "structured standard does not \\(exit status 1\\)")
    set(next cli_tiled_structured)
  endif()
endforeach()
if(NOT covered_A EQUAL runs OR NOT covered_B EQUAL runs)
  fail("expected ${runs} covered honest runs in parts A and B, found ${covered_A} and ${covered_B}" "${out}")
endif()
if(rows_C LESS 6 OR rejected_C LESS 1)
  fail("part C: expected at least 6 lost-update rows with one NOT COVERED, found ${rows_C} rows, ${rejected_C} rejected"
       "${out}")
endif()
if(NOT cli_covered MATCHES " covers .*gauss100000_f32\\.txt -?0x[0-9a-f.]+p[-+][0-9]+ --dtype float32$")
  fail("part B's CLI command line is missing or malformed: '${cli_covered}'" "${out}")
endif()
if(NOT cli_rejected MATCHES " covers .*gauss10k_f32\\.txt -?0x[0-9a-f.]+p[-+][0-9]+ --dtype float32$")
  fail("part C's CLI command line is missing or malformed: '${cli_rejected}'" "${out}")
endif()
if(NOT cli_tiled_flat MATCHES " covers .*gauss10k_f32\\.txt -?0x[0-9a-f.]+p[-+][0-9]+ --dtype float32$")
  fail("part D's any_order CLI command line is missing or malformed: '${cli_tiled_flat}'" "${out}")
endif()
if(NOT cli_tiled_structured MATCHES " covers .*gauss10k_f32\\.txt -?0x[0-9a-f.]+p[-+][0-9]+ --dtype float32 --standard levels:fold:64,any$")
  fail("part D's structured CLI command line is missing or malformed: '${cli_tiled_structured}'" "${out}")
endif()
if(NOT EXISTS "${DATA_DIR}/gauss100000_f32.txt")
  fail("part B's data file ${DATA_DIR}/gauss100000_f32.txt was not written" "${out}")
endif()

# 4. The printed command lines, run as printed (with the CLI of this build in place of its name).
if(CLI AND EXISTS "${CLI}")
  foreach(pair "cli_covered;0" "cli_rejected;1" "cli_tiled_flat;0" "cli_tiled_structured;1")
    list(GET pair 0 which)
    list(GET pair 1 expected)
    separate_arguments(argv UNIX_COMMAND "${${which}}")
    list(POP_FRONT argv)
    execute_process(COMMAND ${CLI} ${argv} OUTPUT_VARIABLE cli_out ERROR_VARIABLE cli_err RESULT_VARIABLE cli_rc)
    if(NOT cli_rc EQUAL expected)
      fail("`${${which}}` exited ${cli_rc}, expected ${expected}\n${cli_out}${cli_err}" "${out}")
    endif()
  endforeach()
else()
  message(STATUS "demo.atomic_sum: the exactref CLI is not built, so the printed command lines were not run")
endif()

# 2. A planted fault must make the self-check fail.
run_demo(out rc err --quick --runs 2 --threads 4 --plant-fault --data-dir ${DATA_DIR})
if(NOT rc EQUAL 1)
  fail("with --plant-fault the demo exited ${rc}, expected 1; stderr: ${err}" "${out}")
endif()
expect_match("${out}" "FAILED: part A: honest atomic run 1 \\(0x[0-9a-f.]+p\\+[0-9]+\\) is not covered by any_order"
             "the planted fault's failure line")
expect_match("${out}" "FAILED: part A: honest atomic run 1 \\(0x[0-9a-f.]+p\\+[0-9]+\\) is not covered by levels:any"
             "the planted fault's failure line for the structured standard")
expect_match("${out}" "\n  2 of [0-9]+ checks failed" "exactly two failed checks (one per standard) under --plant-fault")

# 3. Bad input: exit 2 with a message that names the problem.
run_demo(out rc err --runs 0)
if(NOT rc EQUAL 2 OR NOT err MATCHES "--runs takes a whole number from 1 to 1000, not '0'")
  fail("--runs 0: exit ${rc}, stderr '${err}'; expected exit 2 and a message naming --runs" "${out}")
endif()
run_demo(out rc err --frobnicate)
if(NOT rc EQUAL 2 OR NOT err MATCHES "unknown argument '--frobnicate'")
  fail("--frobnicate: exit ${rc}, stderr '${err}'; expected exit 2 and 'unknown argument'" "${out}")
endif()
run_demo(out rc err --quick --input ${DATA_DIR}/no-such-file.txt --data-dir ${DATA_DIR})
if(NOT rc EQUAL 2 OR NOT err MATCHES "no-such-file\\.txt")
  fail("a missing --input: exit ${rc}, stderr '${err}'; expected exit 2 and the file's name" "${out}")
endif()
message(STATUS "demo.atomic_sum: all checks passed")
