# The MPI face's tests (docs/mpi.md): every tests/mpi/test_*.cpp is one MPI program (not GoogleTest: each rank checks,
# the exit code is agreed over the ranks), run by mpirun on P = 1, 2, 3, 5 and 8 ranks as ctest tests
# mpi.<program>.np<P>, label "mpi", and the example examples/mpi/allreduce.cpp (launch flags: cmake/exactref_mpi_tests.cmake). Registered only when exactref::mpi
# is built and an mpiexec was found; otherwise configure says why and there are no MPI tests to skip.
if(NOT TARGET exactref_mpi)
  message(STATUS "exactref: MPI tests not registered: exactref::mpi is not built (EXACTREF_MPI=${EXACTREF_MPI}; "
                 "Debian: libopenmpi-dev openmpi-bin)")
  return()
endif()
if(NOT MPIEXEC_EXECUTABLE)
  message(STATUS "exactref: MPI tests not registered: no mpiexec/mpirun found (Debian: openmpi-bin)")
  return()
endif()
include(${PROJECT_SOURCE_DIR}/cmake/exactref_mpi_tests.cmake)

file(GLOB _mpi_tests CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/../mpi/test_*.cpp)
foreach(src ${_mpi_tests})
  get_filename_component(name ${src} NAME_WE)
  add_executable(${name} ${src})
  target_link_libraries(${name} PRIVATE exactref::mpi)
  target_compile_options(${name} PRIVATE -Wall -Wextra -Wpedantic -Wno-psabi)
  foreach(ranks 1 2 3 5 8)
    exactref_add_mpi_test(mpi.${name}.np${ranks} ${ranks} $<TARGET_FILE:${name}>)
  endforeach()
endforeach()
unset(_mpi_tests)

# The example (examples/mpi/allreduce.cpp) checks itself: on 3 and 8 ranks, with fewer terms.
if(TARGET mpi_allreduce)
  foreach(ranks 3 8)
    exactref_add_mpi_test(mpi_example.allreduce.np${ranks} ${ranks} $<TARGET_FILE:mpi_allreduce> --n 20000)
  endforeach()
endif()
