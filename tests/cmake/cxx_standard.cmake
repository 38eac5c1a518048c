# A consumer compiling with C++17 gets one clear error from the first line of every public header
# (include/exactref/config.h), not an error deep inside format.h. This file has two roles:
#   - included by tests/CMakeLists.txt, it registers the test `cxx_standard.cxx17_error`;
#   - run with `cmake -P` by that test, it compiles, with -std=c++17 -Wfatal-errors, a one-line file that includes
#     exactref/exactref.h, then one for each public header, and checks that each fails and that its first (and only)
#     error is "exactref needs C++20 (-std=c++20)"; as a control, exactref/format.h (which needs nothing beside the
#     standard library) compiles with -std=c++20.

if(NOT CMAKE_SCRIPT_MODE_FILE)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    return()  # -std=, -fsyntax-only and -Wfatal-errors as GCC and Clang spell them
  endif()
  add_test(NAME cxx_standard.cxx17_error
           COMMAND ${CMAKE_COMMAND} -DCXX=${CMAKE_CXX_COMPILER} -DINCLUDE_DIR=${PROJECT_SOURCE_DIR}/include
                   -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/cxx-standard-test -P ${CMAKE_CURRENT_LIST_FILE})
  set_tests_properties(cxx_standard.cxx17_error PROPERTIES LABELS unit TIMEOUT 120)
  return()
endif()

set(expected "exactref needs C++20 (-std=c++20)")
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

# compile(HEADER STD RC OUT): RC and OUT of `CXX -std=STD -fsyntax-only` on a file holding one #include.
function(compile header std rc_var out_var)
  string(MAKE_C_IDENTIFIER "${header}_${std}" id)
  set(src ${WORK_DIR}/${id}.cpp)
  file(WRITE ${src} "#include <${header}>\n")
  execute_process(COMMAND ${CXX} -std=${std} -fsyntax-only -Wfatal-errors -I${INCLUDE_DIR} ${src}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  set(${rc_var} ${rc} PARENT_SCOPE)
  set(${out_var} "${out}" PARENT_SCOPE)
endfunction()

file(GLOB headers RELATIVE ${INCLUDE_DIR} ${INCLUDE_DIR}/exactref/*.h)
list(REMOVE_ITEM headers exactref/exactref.h)
set(failures "")
foreach(header exactref/exactref.h ${headers})
  compile(${header} c++17 rc out)
  string(REGEX MATCHALL "[^\n]*: (fatal )?error: [^\n]*" errors "${out}")  # GCC's and Clang's diagnostics
  list(LENGTH errors n_errors)
  string(FIND "${errors}" "exactref/config.h:" at_config)
  string(FIND "${errors}" "${expected}" with_reason)
  if(rc EQUAL 0)
    string(APPEND failures "${header}: compiled with -std=c++17\n")
  elseif(NOT n_errors EQUAL 1 OR at_config EQUAL -1 OR with_reason EQUAL -1)
    string(APPEND failures "${header}: with -std=c++17 the first error is not \"${expected}\":\n${out}\n")
  endif()
endforeach()
compile(exactref/format.h c++20 rc out)
if(NOT rc EQUAL 0)
  string(APPEND failures "exactref/format.h does not compile with -std=c++20 (the control):\n${out}\n")
endif()
if(failures)
  message(FATAL_ERROR "${failures}")
endif()
list(LENGTH headers n)
math(EXPR n "${n} + 1")
message(STATUS "${n} public headers stop at once under -std=c++17 with \"${expected}\"; format.h compiles under C++20")
