# The README's "Use it from your project" commands, run as written: the shell blocks and the consumer's CMakeLists.txt
# are read from README.md between the readme-install, readme-consumer-cmakelists and readme-consumer-build markers,
# so the documentation and this test cannot drift apart. The install commands run in the source tree (their
# build/lean), PREFIX points into WORK_DIR, and the consumer (my_app, with tests/consumer/main.cpp as its main.cpp)
# is configured, built and run in WORK_DIR.
# cmake -DREPO_DIR=... -DWORK_DIR=... -P readme.cmake
file(READ ${REPO_DIR}/README.md readme)

# readme_block(NAME VAR): the fenced code between <!-- NAME:begin --> and <!-- NAME:end -->, without the fences.
function(readme_block name var)
  string(FIND "${readme}" "<!-- ${name}:begin -->" begin)
  string(FIND "${readme}" "<!-- ${name}:end -->" end)
  if(begin EQUAL -1 OR end EQUAL -1 OR end LESS begin)
    message(FATAL_ERROR "README.md has no block between <!-- ${name}:begin --> and <!-- ${name}:end -->")
  endif()
  math(EXPR length "${end} - ${begin}")
  string(SUBSTRING "${readme}" ${begin} ${length} text)
  string(REGEX REPLACE "^<!--[^\n]*\n```[a-z]*\n" "" text "${text}")
  string(REGEX REPLACE "```[ \n]*$" "" text "${text}")
  set(${var} "${text}" PARENT_SCOPE)
endfunction()

readme_block(readme-install install)
readme_block(readme-consumer-cmakelists cmakelists)
readme_block(readme-consumer-build consumer_build)
foreach(what install cmakelists consumer_build)
  if(NOT ${what} MATCHES "[a-z]")
    message(FATAL_ERROR "README.md's ${what} block is empty")
  endif()
endforeach()

file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR}/my_app)
file(WRITE ${WORK_DIR}/my_app/CMakeLists.txt "${cmakelists}")
file(COPY_FILE ${REPO_DIR}/tests/consumer/main.cpp ${WORK_DIR}/my_app/main.cpp)
set(ENV{PREFIX} ${WORK_DIR}/prefix)

# run(DIR SCRIPT WHAT): SCRIPT under bash -eu in DIR, its output in WORK_DIR/WHAT.log; its tail on failure.
function(run dir script what)
  execute_process(COMMAND bash -euc "${script}" WORKING_DIRECTORY ${dir} RESULT_VARIABLE rc
                  OUTPUT_FILE ${WORK_DIR}/${what}.log ERROR_FILE ${WORK_DIR}/${what}.err)
  if(rc)
    file(READ ${WORK_DIR}/${what}.err err)
    message(FATAL_ERROR "README's ${what} commands failed (${rc}):\n${script}\n${err}\n(log: ${WORK_DIR}/${what}.log)")
  endif()
endfunction()
run(${REPO_DIR} "${install}" install)
# With ccache (CMakeLists.txt: EXACTREF_CCACHE_DIR) the lean build took the library's objects from the tests' build
# through CMAKE_CXX_COMPILER_LAUNCHER, which CMake keeps in the build folder's cache: take it out again, so that a
# user's own run of the README's commands in that folder does not go through ccache.
if(DEFINED ENV{CMAKE_CXX_COMPILER_LAUNCHER})
  unset(ENV{CMAKE_CXX_COMPILER_LAUNCHER})
  if(NOT install MATCHES "-B ([^ \n]+)")
    message(FATAL_ERROR "README.md's install block has no `cmake -B <folder>`: ${install}")
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} -U CMAKE_CXX_COMPILER_LAUNCHER -B ${CMAKE_MATCH_1}
                  WORKING_DIRECTORY ${REPO_DIR} RESULT_VARIABLE rc OUTPUT_QUIET)
  if(rc)
    message(FATAL_ERROR "could not take the compiler launcher out of ${REPO_DIR}/${CMAKE_MATCH_1}: ${rc}")
  endif()
endif()
file(GLOB_RECURSE oracles ${WORK_DIR}/prefix/*oracle*)
file(GLOB_RECURSE config ${WORK_DIR}/prefix/exactrefConfig.cmake)
if(NOT config OR oracles)
  message(FATAL_ERROR "the lean install must hold exactrefConfig.cmake and no oracle: config '${config}', oracles '${oracles}'")
endif()
run(${WORK_DIR} "${consumer_build}" consumer_build)
execute_process(COMMAND ${WORK_DIR}/my_app/build/my_app RESULT_VARIABLE rc OUTPUT_VARIABLE out)
if(rc OR NOT out MATCHES "exact 33554432, left fold 16777216: ok")
  message(FATAL_ERROR "my_app failed (${rc}): ${out}")
endif()
message(STATUS "README install commands: ok (${out})")
