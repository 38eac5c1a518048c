# The documentation stands on its own: README.md, docs/ and the public headers' comments (include/) must not point
# at things a user of the repository cannot see — a developer's absolute paths (/work/...), the design file
# (DESIGN.md, "DESIGN §3") or issue numbers ("issue 12"). This file has two roles:
#   - included by tests/CMakeLists.txt, it registers the test `docs.self_contained`;
#   - run with `cmake -P` by that test, it lists every offending line (file:line: text) and fails when there is one.

if(NOT CMAKE_SCRIPT_MODE_FILE)
  add_test(NAME docs.self_contained
           COMMAND ${CMAKE_COMMAND} -DREPO_DIR=${PROJECT_SOURCE_DIR} -P ${CMAKE_CURRENT_LIST_FILE})
  set_tests_properties(docs.self_contained PROPERTIES LABELS unit TIMEOUT 60)
  return()
endif()

# CMake regular expressions have no case-insensitive flag: [Ii]ssue.
set(forbidden "/work/" "DESIGN\\.md" "DESIGN §" "[Ii]ssue [0-9]+")
file(GLOB docs RELATIVE ${REPO_DIR} ${REPO_DIR}/README.md ${REPO_DIR}/docs/*.md ${REPO_DIR}/docs/algorithms/*.md)
file(GLOB_RECURSE headers RELATIVE ${REPO_DIR} ${REPO_DIR}/include/*.h ${REPO_DIR}/include/*.cuh)
list(LENGTH docs n_docs)
if(n_docs LESS 10)
  message(FATAL_ERROR "docs.cmake: found only ${n_docs} documents under ${REPO_DIR}")
endif()
set(found "")
foreach(f ${docs} ${headers})
  file(STRINGS ${REPO_DIR}/${f} lines)
  set(line_no 0)
  foreach(line IN LISTS lines)
    math(EXPR line_no "${line_no} + 1")
    foreach(pattern IN LISTS forbidden)
      if(line MATCHES "${pattern}")
        string(APPEND found "${f}:${line_no}: (${CMAKE_MATCH_0}) ${line}\n")
      endif()
    endforeach()
  endforeach()
endforeach()
if(found)
  message(FATAL_ERROR "references a user cannot follow (rewrite them into self-contained text):\n${found}")
endif()
list(LENGTH headers n_headers)
message(STATUS "${n_docs} documents and ${n_headers} public headers point at nothing outside the repository")
