# exactref_add_mpi_test(<name> <ranks> <executable> [args...]): a ctest test that runs the program on <ranks> MPI
# ranks with the MPIEXEC_* settings of FindMPI, label "mpi". Open MPI gets --oversubscribe --bind-to none (more ranks
# than cores) and, for a root build, --allow-run-as-root; its shared-memory single-copy is off (containers often
# forbid it). One OpenMP thread per rank: ranks oversubscribing the cores with spinning OpenMP teams run 20-40x
# slower (docs/mpi.md, "Threads"). Used by tests/cmake/mpi.cmake and examples/mpi/CMakeLists.txt.
if(NOT DEFINED EXACTREF_MPIEXEC_FLAGS)
  set(EXACTREF_MPIEXEC_FLAGS ${MPIEXEC_PREFLAGS})
  execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version OUTPUT_VARIABLE _exactref_mpi_version ERROR_QUIET)
  if(_exactref_mpi_version MATCHES "Open MPI|OpenRTE")
    list(PREPEND EXACTREF_MPIEXEC_FLAGS --oversubscribe --bind-to none)
    execute_process(COMMAND id -u OUTPUT_VARIABLE _exactref_uid OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(_exactref_uid STREQUAL "0")
      list(PREPEND EXACTREF_MPIEXEC_FLAGS --allow-run-as-root)
    endif()
  endif()
  unset(_exactref_mpi_version)
  unset(_exactref_uid)
endif()

function(exactref_add_mpi_test name ranks executable)
  add_test(NAME ${name}
           COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${ranks} ${EXACTREF_MPIEXEC_FLAGS} ${executable}
                   ${MPIEXEC_POSTFLAGS} ${ARGN})
  set_tests_properties(${name} PROPERTIES LABELS mpi TIMEOUT 120 PROCESSORS 2
                       ENVIRONMENT "OMPI_MCA_btl_vader_single_copy_mechanism=none;OMP_NUM_THREADS=1")
endfunction()
