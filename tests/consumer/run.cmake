# Installs the build tree into a scratch prefix, then configures, builds and runs the consumer project against it,
# with the CUDA toolkit out of reach (CMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit): a consumer that does not ask for the
# cuda component must not need it, even when the installed build has exactref::cuda. When it has, a second configure
# asks for COMPONENTS cuda and must find exactref::cuda. Likewise MPI (CMAKE_DISABLE_FIND_PACKAGE_MPI): when the
# installed build has exactref::mpi, a consumer asking for COMPONENTS mpi builds and runs an exactref::mpi::sum
# (a singleton MPI job: one rank, no mpirun).
# cmake -DBUILD_DIR=... -DSOURCE_DIR=... -DWORK_DIR=... -P run.cmake
file(REMOVE_RECURSE ${WORK_DIR})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix
                RESULT_VARIABLE rc OUTPUT_QUIET)
if(rc)
  message(FATAL_ERROR "install failed: ${rc}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/build -DCMAKE_BUILD_TYPE=Release
                        -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=ON
                        -DCMAKE_DISABLE_FIND_PACKAGE_MPI=ON
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
file(GLOB_RECURSE mpi_targets ${WORK_DIR}/prefix/exactrefMpiTargets.cmake)
if(mpi_targets)
  file(MAKE_DIRECTORY ${WORK_DIR}/mpi-consumer)
  file(WRITE ${WORK_DIR}/mpi-consumer/CMakeLists.txt
       "cmake_minimum_required(VERSION 3.25)\nproject(mpi_consumer LANGUAGES CXX)\n"
       "find_package(exactref 0.1 REQUIRED COMPONENTS mpi)\n"
       "add_executable(mpi_consumer main.cpp)\ntarget_link_libraries(mpi_consumer PRIVATE exactref::mpi)\n")
  file(WRITE ${WORK_DIR}/mpi-consumer/main.cpp
       "#include <exactref/mpi.h>\n#include <vector>\n"
       "int main(int argc, char** argv) {\n  MPI_Init(&argc, &argv);\n"
       "  const std::vector<double> x{0.1, 0.2, 0.3};\n"
       "  const bool ok = exactref::mpi::sum(MPI_COMM_WORLD, x).nearest<double>() == 0.6;\n"
       "  MPI_Finalize();\n  return ok ? 0 : 1;\n}\n")
  foreach(step configure build run)
    if(step STREQUAL "configure")
      set(command ${CMAKE_COMMAND} -S ${WORK_DIR}/mpi-consumer -B ${WORK_DIR}/mpi-consumer/build
                  -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix)
    elseif(step STREQUAL "build")
      set(command ${CMAKE_COMMAND} --build ${WORK_DIR}/mpi-consumer/build)
    else()
      set(command ${WORK_DIR}/mpi-consumer/build/mpi_consumer)
    endif()
    execute_process(COMMAND ${command} RESULT_VARIABLE rc)
    if(rc)
      message(FATAL_ERROR "the find_package(exactref COMPONENTS mpi) consumer: ${step} failed: ${rc}")
    endif()
  endforeach()
endif()
