# cmake/exactref_check_ptx.cmake — the test cuda_flags.tree_ptx (tests/cmake/cuda.cmake): builds the target
# exactref_cuda_ptx (src/cuda/tree_wide.cu and tree_narrow.cu compiled to PTX with exactref_cuda's options after the
# user's CMAKE_CUDA_FLAGS) and fails when the PTX holds a flush-to-zero (.ftz.), approximate (.approx.) or fused
# (fma.) floating-point instruction: the device trees would then not have the host's bits (docs/cuda.md, "Building").
# It also fails when a file holds no round-to-nearest addition at all, so a PTX file without the kernels cannot pass.
#
#   cmake -DBUILD_DIR=<build dir> -DCONFIG=<config> -DPTX_FILES=<a;b> -P cmake/exactref_check_ptx.cmake
foreach(var BUILD_DIR PTX_FILES)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "exactref_check_ptx.cmake: pass -D${var}=...")
  endif()
endforeach()
set(config_args "")
if(CONFIG)
  set(config_args --config "${CONFIG}")
endif()
execute_process(COMMAND "${CMAKE_COMMAND}" --build "${BUILD_DIR}" --target exactref_cuda_ptx ${config_args}
                RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE output)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "building exactref_cuda_ptx failed:\n${output}")
endif()
set(failed FALSE)
foreach(ptx IN LISTS PTX_FILES)
  if(NOT EXISTS "${ptx}")
    message(SEND_ERROR "${ptx} was not produced")
    set(failed TRUE)
    continue()
  endif()
  file(STRINGS "${ptx}" rounded REGEX "^[ \t]*(add|mul)\\.rn\\.f(32|64)[ \t]")
  file(STRINGS "${ptx}" offending REGEX "\\.ftz\\.|\\.approx\\.|(^|[ \t])(fma|mad)(\\.[a-z0-9]+)*\\.f(16|32|64)[ \t]")  # predicated lines too; not integer mad
  list(LENGTH rounded n_rounded)
  list(LENGTH offending n_offending)
  message(STATUS "${ptx}: ${n_rounded} add.rn/mul.rn.f32/f64, ${n_offending} .ftz./.approx./fma.")
  if(n_rounded EQUAL 0)
    message(SEND_ERROR "${ptx} holds no add.rn/mul.rn instruction: not the tree kernels?")
    set(failed TRUE)
  endif()
  if(n_offending GREATER 0)
    list(SUBLIST offending 0 5 first)
    list(JOIN first "\n    " first)
    message(SEND_ERROR "${ptx}: ${n_offending} flush-to-zero, approximate or fused instructions, e.g.\n    ${first}\n"
                       "The device trees would not give the host's bits: an option in CMAKE_CUDA_FLAGS overrides "
                       "EXACTREF_CUDA_EXACT_FLAGS (cmake/exactref_cuda.cmake).")
    set(failed TRUE)
  endif()
endforeach()
if(failed)
  message(FATAL_ERROR "exactref_check_ptx: the tree kernels' PTX is not IEEE")
endif()
