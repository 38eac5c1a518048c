# cmake/exactref_cuda.cmake — can exactref::cuda be built as docs/cuda.md promises with this nvcc, these
# architectures and these flags? Included by the top-level CMakeLists.txt after enable_language(CUDA); that file fails
# (EXACTREF_CUDA=ON) or skips the CUDA face with a STATUS line (AUTO) when one of the checks below says no.
#
#   EXACTREF_CUDA_MIN_ARCH      80. The exact kernels (src/cuda/exact_kernels.h, step E2) find a warp's largest exponent
#                               field with __reduce_max_sync (PTX redux.sync), which exists from compute capability 8.0
#                               (A100, A10, RTX 30xx, L4, L40, H100, H200, B200, ...). A T4 or V100 cannot run them.
#   EXACTREF_CUDA_EXACT_FLAGS   the nvcc options that keep every device operation one IEEE operation: no FMA
#                               contraction, no flush-to-zero of subnormal results or operands, IEEE division and
#                               square root. src/cuda/CMakeLists.txt adds them as target options, which CMake places
#                               after CMAKE_CUDA_FLAGS and CMAKE_CUDA_FLAGS_<CONFIG> on nvcc's command line, and nvcc
#                               takes the last value of an option: so a user's --use_fast_math (= --ftz=true
#                               --prec-div=false --prec-sqrt=false --fmad=true) cannot reach the kernels. Without
#                               --ftz=false it would: __fadd_rn/__fmul_rn compile to add.rn.ftz.f32/mul.rn.ftz.f32, and a
#                               float-accumulated tree over {0x1p-126f, -0x1.8p-127f} would give 2^-126, not the host's
#                               2^-128.
#
#   exactref_cuda_check_architectures(<ok_var> <why_var>)
#       Checks CMAKE_CUDA_ARCHITECTURES against EXACTREF_CUDA_MIN_ARCH:
#         a list of numbers ("80-real;90-real;90-virtual", "86", "90a", "100f-real")  every entry must be >= 80;
#         native     the GPUs CMake found on this machine at configure time (CMAKE_CUDA_ARCHITECTURES_NATIVE) must
#                    all be >= 8.0; with no GPU visible native cannot be resolved (nvcc would fall back to its
#                    default, sm_75 for CUDA 13), so the check says no and names an explicit list to use instead;
#         all, all-major  refused: they include 3.5 to 7.5;
#         OFF / empty     accepted only when CMAKE_CUDA_FLAGS chooses the architecture itself (-arch, -gencode, ...;
#                    then it is the user's to get right); otherwise nvcc's default (below 8.0) would be used.
#   exactref_cuda_check_exact_flags(<ok_var> <why_var>)
#       Compiles a probe of the trees' float and double steps (include/exactref/cuda/arith.cuh) to PTX with nvcc and
#       the project's own flag order — CMAKE_CUDA_FLAGS, CMAKE_CUDA_FLAGS_<CONFIG>, then EXACTREF_CUDA_EXACT_FLAGS —
#       and says no when the PTX holds a flush-to-zero (.ftz.), an approximate (.approx.) or a fused (fma.)
#       instruction. About a second; the result is cached until the flags or the compiler change.

set(EXACTREF_CUDA_MIN_ARCH 80)
set(EXACTREF_CUDA_EXACT_FLAGS --fmad=false --ftz=false --prec-div=true --prec-sqrt=true)
set(_exactref_cuda_arch_hint
    "set CMAKE_CUDA_ARCHITECTURES to architectures of compute capability 8.0 or newer, e.g. \"80-real;90-real;90-virtual\" (the default), \"90\" for an H100/H200, or \"native\" on a machine whose GPU is 8.0 or newer")

function(exactref_cuda_check_architectures ok_var why_var)
  set(${ok_var} TRUE PARENT_SCOPE)
  set(${why_var} "" PARENT_SCOPE)
  set(archs "${CMAKE_CUDA_ARCHITECTURES}")
  set(what "CMAKE_CUDA_ARCHITECTURES is \"${archs}\"")
  set(minimum "exactref::cuda needs compute capability 8.0 or newer (its exact kernels use __reduce_max_sync)")
  if(archs STREQUAL "native")
    if(NOT CMAKE_CUDA_ARCHITECTURES_NATIVE)
      set(${ok_var} FALSE PARENT_SCOPE)
      set(${why_var} "${what}, but CMake found no GPU on this machine, so the architecture cannot be known (nvcc would build for its default, older than 8.0). ${minimum}: ${_exactref_cuda_arch_hint}." PARENT_SCOPE)
      return()
    endif()
    set(archs "${CMAKE_CUDA_ARCHITECTURES_NATIVE}")
    set(what "CMAKE_CUDA_ARCHITECTURES is \"native\", and this machine's GPUs are \"${archs}\"")
  elseif(archs MATCHES "^all(-major)?$")
    set(${ok_var} FALSE PARENT_SCOPE)
    set(${why_var} "${what}, which includes architectures older than 8.0 (3.5 to 7.5). ${minimum}: ${_exactref_cuda_arch_hint}." PARENT_SCOPE)
    return()
  elseif(NOT archs)  # "", OFF, FALSE, 0: CMake passes no architecture flag
    if(CMAKE_CUDA_FLAGS MATCHES "(^| )(-arch|--gpu-architecture|-gencode|--generate-code|-code|--gpu-code)[ =]")
      message(STATUS "exactref: CMAKE_CUDA_ARCHITECTURES is off and CMAKE_CUDA_FLAGS chooses the architectures; "
                     "exactref::cuda needs compute capability 8.0 or newer")
      return()
    endif()
    set(${ok_var} FALSE PARENT_SCOPE)
    set(${why_var} "${what}, so nvcc would build for its default architecture, older than 8.0. ${minimum}: ${_exactref_cuda_arch_hint}." PARENT_SCOPE)
    return()
  endif()
  set(too_old "")
  foreach(arch IN LISTS archs)
    if(arch MATCHES "^([0-9]+)" AND CMAKE_MATCH_1 LESS EXACTREF_CUDA_MIN_ARCH)
      list(APPEND too_old "${arch}")
    endif()
  endforeach()
  if(too_old)
    list(JOIN too_old ", " too_old)
    set(${ok_var} FALSE PARENT_SCOPE)
    set(${why_var} "${what}; older than 8.0: ${too_old}. ${minimum}: ${_exactref_cuda_arch_hint}." PARENT_SCOPE)
  endif()
endfunction()

function(exactref_cuda_check_exact_flags ok_var why_var)
  set(config_flags "")
  set(config "<CONFIG>")
  if(CMAKE_BUILD_TYPE)
    string(TOUPPER "${CMAKE_BUILD_TYPE}" config)
    set(config_flags "${CMAKE_CUDA_FLAGS_${config}}")
  endif()
  separate_arguments(all_user_flags UNIX_COMMAND "${CMAKE_CUDA_FLAGS} ${config_flags}")
  # The architecture options are left out (the probe compiles PTX for one virtual architecture; they do not change
  # how an operation rounds): "-arch X", "-arch=X", "-gencode arch=...,code=...", and their long forms.
  set(arch_option "^(-arch|--gpu-architecture|-gencode|--generate-code|-code|--gpu-code)")
  set(user_flags "")
  set(skip_next FALSE)
  foreach(flag IN LISTS all_user_flags)
    if(skip_next)
      set(skip_next FALSE)
    elseif(flag MATCHES "${arch_option}$")
      set(skip_next TRUE)
    elseif(NOT flag MATCHES "${arch_option}=")
      list(APPEND user_flags "${flag}")
    endif()
  endforeach()
  set(host_compiler "")
  if(CMAKE_CUDA_HOST_COMPILER)
    set(host_compiler "-ccbin=${CMAKE_CUDA_HOST_COMPILER}")
  endif()
  set(command "${CMAKE_CUDA_COMPILER}" ${host_compiler} ${user_flags} -std=c++20
      "-I${PROJECT_SOURCE_DIR}/include" ${EXACTREF_CUDA_EXACT_FLAGS} --ptx -arch=compute_${EXACTREF_CUDA_MIN_ARCH})
  string(SHA256 key "${command};${CMAKE_CUDA_COMPILER_VERSION}")
  if(EXACTREF_CUDA_EXACT_FLAGS_PROBE STREQUAL key)  # probed before with this command line: it passed
    set(${ok_var} TRUE PARENT_SCOPE)
    set(${why_var} "" PARENT_SCOPE)
    return()
  endif()

  set(dir "${PROJECT_BINARY_DIR}/CMakeFiles/exactref_cuda_flag_probe")
  file(MAKE_DIRECTORY "${dir}")
  file(WRITE "${dir}/probe.cu" [=[
// Written by cmake/exactref_cuda.cmake: the trees' float and double steps, and an expression nvcc would contract.
#include "exactref/cuda/arith.cuh"
using exactref::cuda::detail::device_arith;
__global__ void probe(float* f, double* d) {
    f[0] = device_arith<float>::add(f[1], f[2]);   // add.rn.f32, never add.rn.ftz.f32
    f[3] = device_arith<float>::mul(f[4], f[5]);   // mul.rn.f32, never mul.rn.ftz.f32
    f[6] = f[7] * f[8] + f[9];                     // mul + add, never fma (--fmad=false)
    d[0] = device_arith<double>::add(d[1], d[2]);
    d[3] = device_arith<double>::mul(d[4], d[5]);
    d[6] = d[7] * d[8] + d[9];
}
]=])
  execute_process(COMMAND ${command} -o "${dir}/probe.ptx" "${dir}/probe.cu"
                  RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE output)
  list(JOIN command " " shown)
  string(APPEND shown " -o ${dir}/probe.ptx ${dir}/probe.cu")
  if(NOT status EQUAL 0)
    set(${ok_var} FALSE PARENT_SCOPE)
    set(${why_var} "nvcc could not compile the floating-point probe (${dir}/probe.cu) with the project's CUDA flags.\n  command: ${shown}\n  output: ${output}" PARENT_SCOPE)
    return()
  endif()
  file(STRINGS "${dir}/probe.ptx" offending REGEX "\\.ftz\\.|\\.approx\\.|(^|[ \t])(fma|mad)(\\.[a-z0-9]+)*\\.f(16|32|64)[ \t]")  # predicated lines too; not integer mad
  if(offending)
    list(JOIN offending "\n    " offending)
    set(${ok_var} FALSE PARENT_SCOPE)
    set(${why_var} "with these CUDA flags the device trees would not compute the host's bits: nvcc compiled the trees' IEEE steps (include/exactref/cuda/arith.cuh) to flush-to-zero, approximate or fused instructions:\n    ${offending}\n  command: ${shown}\n  Remove the option that causes it from CMAKE_CUDA_FLAGS or CMAKE_CUDA_FLAGS_${config} (docs/cuda.md, \"Building\")." PARENT_SCOPE)
    return()
  endif()
  set(EXACTREF_CUDA_EXACT_FLAGS_PROBE "${key}" CACHE INTERNAL "the nvcc command line whose PTX passed the probe")
  set(${ok_var} TRUE PARENT_SCOPE)
  set(${why_var} "" PARENT_SCOPE)
endfunction()
