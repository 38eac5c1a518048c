# Installs the build tree into a scratch prefix, then configures, builds and runs the consumer project against it,
# with the CUDA toolkit out of reach (CMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit): a consumer that does not ask for the
# cuda component must not need it, even when the installed build has exactref::cuda. When it has, a second configure
# asks for COMPONENTS cuda and must find exactref::cuda.
# cmake -DBUILD_DIR=... -DSOURCE_DIR=... -DWORK_DIR=... -P run.cmake
file(REMOVE_RECURSE ${WORK_DIR})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix
                RESULT_VARIABLE rc OUTPUT_QUIET)
if(rc)
  message(FATAL_ERROR "install failed: ${rc}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/build -DCMAKE_BUILD_TYPE=Release
                        -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=ON
                RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "configure failed: ${rc}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/build RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "build failed: ${rc}")
endif()
foreach(exe consumer consumer_gtest)
  execute_process(COMMAND ${WORK_DIR}/build/${exe} RESULT_VARIABLE rc)
  if(rc)
    message(FATAL_ERROR "${exe} failed: ${rc}")
  endif()
endforeach()
file(GLOB_RECURSE cuda_targets ${WORK_DIR}/prefix/exactrefCudaTargets.cmake)
if(cuda_targets)
  file(MAKE_DIRECTORY ${WORK_DIR}/cuda-consumer)
  file(WRITE ${WORK_DIR}/cuda-consumer/CMakeLists.txt
       "cmake_minimum_required(VERSION 3.25)\nproject(cuda_consumer LANGUAGES CXX)\n"
       "find_package(exactref 0.1 REQUIRED COMPONENTS cuda)\n"
       "if(NOT TARGET exactref::cuda OR NOT TARGET CUDA::cudart)\n  message(FATAL_ERROR \"no exactref::cuda\")\nendif()\n")
  execute_process(COMMAND ${CMAKE_COMMAND} -S ${WORK_DIR}/cuda-consumer -B ${WORK_DIR}/cuda-consumer/build
                          -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix RESULT_VARIABLE rc)
  if(rc)
    message(FATAL_ERROR "find_package(exactref COMPONENTS cuda) failed: ${rc}")
  endif()
endif()
