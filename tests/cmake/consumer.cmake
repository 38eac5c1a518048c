# find_package(exactref) from another CMake project, against an install of this build tree.
add_test(NAME find_package_consumer
         COMMAND ${CMAKE_COMMAND} -DBUILD_DIR=${PROJECT_BINARY_DIR} -DSOURCE_DIR=${PROJECT_SOURCE_DIR}/tests/consumer
                 -DWORK_DIR=${PROJECT_BINARY_DIR}/consumer-test -P ${PROJECT_SOURCE_DIR}/tests/consumer/run.cmake)
set_tests_properties(find_package_consumer PROPERTIES LABELS unit TIMEOUT 600)
