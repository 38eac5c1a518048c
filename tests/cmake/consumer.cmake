# find_package(exactref) from another CMake project, against an install of this build tree.
add_test(NAME find_package_consumer
         COMMAND ${CMAKE_COMMAND} -DBUILD_DIR=${PROJECT_BINARY_DIR} -DSOURCE_DIR=${PROJECT_SOURCE_DIR}/tests/consumer
                 -DWORK_DIR=${PROJECT_BINARY_DIR}/consumer-test -P ${PROJECT_SOURCE_DIR}/tests/consumer/run.cmake)
set_tests_properties(find_package_consumer PROPERTIES LABELS unit TIMEOUT 600)
# The README's install commands and consumer, read from README.md and run as written (a lean build in build/lean).
add_test(NAME find_package_consumer.readme
         COMMAND ${CMAKE_COMMAND} -DREPO_DIR=${PROJECT_SOURCE_DIR} -DWORK_DIR=${PROJECT_BINARY_DIR}/readme-consumer-test
                 -P ${PROJECT_SOURCE_DIR}/tests/consumer/readme.cmake)
set_tests_properties(find_package_consumer.readme PROPERTIES LABELS unit TIMEOUT 900 RUN_SERIAL TRUE)
if(EXACTREF_CCACHE_TEST_ENV)  # its lean build takes the library's objects from this build's ccache (CMakeLists.txt)
  set_tests_properties(find_package_consumer.readme PROPERTIES ENVIRONMENT "${EXACTREF_CCACHE_TEST_ENV}")
endif()
