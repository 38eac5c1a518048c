# The CUDA face's tests (docs/cuda.md).
#   test_cuda_*.cpp  the block emulator and the device arithmetic on the host compiler: always built and run, with or
#                    without CUDA. Compiled without floating-point contraction, like the trees they check.
#   test_gpu_*.cpp   the real kernels. With exactref::cuda built they link it (EXACTREF_HAVE_CUDA) and skip, with the
#                    reason, when no device is present; without it they compile to a test that skips and says so.
file(GLOB _exactref_cuda_tests CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/test_cuda_*.cpp
                                                 ${CMAKE_CURRENT_SOURCE_DIR}/test_gpu_*.cpp)
# Their own options, so they leave out the tests' shared precompiled header (tests/CMakeLists.txt), made without them.
set_source_files_properties(${_exactref_cuda_tests} PROPERTIES COMPILE_OPTIONS "-ffp-contract=off;-fno-fast-math"
                            SKIP_PRECOMPILE_HEADERS ON)
file(GLOB _exactref_gpu_tests CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/test_gpu_*.cpp)
foreach(src ${_exactref_gpu_tests})
  get_filename_component(name ${src} NAME_WE)
  if(TARGET ${name}_objects AND TARGET exactref_cuda)  # the test's object file (tests/CMakeLists.txt)
    target_link_libraries(${name}_objects PUBLIC exactref::cuda)
    target_compile_definitions(${name}_objects PRIVATE EXACTREF_HAVE_CUDA=1)
  endif()
endforeach()
unset(_exactref_cuda_tests)
unset(_exactref_gpu_tests)

# The library's CUDA options win over the user's CMAKE_CUDA_FLAGS (e.g. --use_fast_math): the float tree kernels,
# compiled to PTX as the library compiles them, hold no .ftz./.approx./fma. instruction (cmake/exactref_check_ptx.cmake).
if(TARGET exactref_cuda_ptx)
  add_test(NAME cuda_flags.tree_ptx
           COMMAND ${CMAKE_COMMAND} -DBUILD_DIR=${PROJECT_BINARY_DIR} -DCONFIG=$<CONFIG>
                   "-DPTX_FILES=$<TARGET_OBJECTS:exactref_cuda_ptx>" -P ${PROJECT_SOURCE_DIR}/cmake/exactref_check_ptx.cmake)
  set_tests_properties(cuda_flags.tree_ptx PROPERTIES LABELS unit TIMEOUT 300)
endif()
