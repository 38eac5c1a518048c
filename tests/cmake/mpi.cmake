# The MPI face's tests (docs/mpi.md): every tests/mpi/test_*.cpp is one MPI program (not GoogleTest: each rank checks,
# the exit code is agreed over the ranks), run by mpirun on P = 1, 2, 3, 5 and 8 ranks as ctest tests
# mpi.<program>.np<P>, label "mpi". Registered only when exactref::mpi is built and an mpiexec was found; otherwise
# configure says why and there are no MPI tests to skip. Open MPI gets --oversubscribe (more ranks than cores) and,
# for a root build, --allow-run-as-root; shared-memory single-copy is off (containers often forbid it). One OpenMP
# thread per rank: ranks oversubscribing the cores with spinning OpenMP teams run 20-40x slower (docs/mpi.md).
if(NOT TARGET exactref_mpi)
  message(STATUS "exactref: MPI tests not registered: exactref::mpi is not built (EXACTREF_MPI=${EXACTREF_MPI}; "
                 "Debian: libopenmpi-dev openmpi-bin)")
  return()
endif()
if(NOT MPIEXEC_EXECUTABLE)
  message(STATUS "exactref: MPI tests not registered: no mpiexec/mpirun found (Debian: openmpi-bin)")
  return()
endif()

set(_mpi_flags ${MPIEXEC_PREFLAGS})
execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version OUTPUT_VARIABLE _mpi_version ERROR_QUIET)
if(_mpi_version MATCHES "Open MPI|OpenRTE")
  list(PREPEND _mpi_flags --oversubscribe --bind-to none)
  execute_process(COMMAND id -u OUTPUT_VARIABLE _uid OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(_uid STREQUAL "0")
    list(PREPEND _mpi_flags --allow-run-as-root)
  endif()
endif()

file(GLOB _mpi_tests CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/../mpi/test_*.cpp)
foreach(src ${_mpi_tests})
  get_filename_component(name ${src} NAME_WE)
  add_executable(${name} ${src})
  target_link_libraries(${name} PRIVATE exactref::mpi)
  target_compile_options(${name} PRIVATE -Wall -Wextra -Wpedantic -Wno-psabi)
  foreach(ranks 1 2 3 5 8)
    add_test(NAME mpi.${name}.np${ranks}
             COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${ranks} ${_mpi_flags} $<TARGET_FILE:${name}>
                     ${MPIEXEC_POSTFLAGS})
    set_tests_properties(mpi.${name}.np${ranks} PROPERTIES LABELS mpi TIMEOUT 120 PROCESSORS 2
                         ENVIRONMENT "OMPI_MCA_btl_vader_single_copy_mechanism=none;OMP_NUM_THREADS=1")
  endforeach()
endforeach()
unset(_mpi_tests)
unset(_mpi_flags)
unset(_mpi_version)
unset(_uid)
