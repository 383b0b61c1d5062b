# CUDA backend. Included from src/CMakeLists.txt before the
# libraries relugrad / relugrad_internal are made from relugrad_objects.
#
# RELUGRAD_CUDA: ON (fail without nvcc), OFF (stub), AUTO (on when
# check_language(CUDA) finds nvcc). When on: sm_90 SASS plus compute_90 PTX
# (Hopper, and PTX the driver JIT-compiles for newer GPUs) unless the user
# set CMAKE_CUDA_ARCHITECTURES; the kernels go into relugrad_objects and
# cudart is linked into every library made from them.
string(TOUPPER "${RELUGRAD_CUDA}" _rg_cuda_mode)
if(NOT _rg_cuda_mode MATCHES "^(ON|OFF|AUTO|TRUE|FALSE|YES|NO|1|0)$")
  message(FATAL_ERROR "RELUGRAD_CUDA must be ON, OFF or AUTO (got '${RELUGRAD_CUDA}')")
endif()

set(RELUGRAD_CUDA_ENABLED OFF)
if(_rg_cuda_mode STREQUAL "AUTO")
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    set(RELUGRAD_CUDA_ENABLED ON)
  endif()
elseif(RELUGRAD_CUDA)
  include(CheckLanguage)
  check_language(CUDA)
  if(NOT CMAKE_CUDA_COMPILER)
    message(FATAL_ERROR "RELUGRAD_CUDA=ON but no CUDA compiler was found "
                        "(put nvcc on PATH or set CMAKE_CUDA_COMPILER / CUDACXX)")
  endif()
  set(RELUGRAD_CUDA_ENABLED ON)
endif()

if(RELUGRAD_CUDA_ENABLED)
  # enable_language() has to see CMAKE_CUDA_ARCHITECTURES; an empty value
  # would make CMake probe the (possibly absent) GPU.
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES OR CMAKE_CUDA_ARCHITECTURES STREQUAL "")
    set(CMAKE_CUDA_ARCHITECTURES "90-real;90-virtual" CACHE STRING
        "CUDA architectures (relugrad default: sm_90 SASS + compute_90 PTX)" FORCE)
  endif()
  enable_language(CUDA)
  # check_language() proved that nvcc compiles; the toolkit's libraries may
  # still be half-installed. AUTO then builds without the backend and says why.
  if(_rg_cuda_mode STREQUAL "AUTO")
    find_package(CUDAToolkit QUIET)
    if(NOT CUDAToolkit_FOUND)
      message(STATUS "relugrad: CUDA backend skipped: nvcc works but the CUDA toolkit's "
                     "libraries (cudart) were not found")
      set(RELUGRAD_CUDA_ENABLED OFF)
    endif()
  else()
    find_package(CUDAToolkit REQUIRED)
  endif()
endif()

if(RELUGRAD_CUDA_ENABLED)
  # relugrad_objects exists already, so its CUDA properties are set on it
  # directly (the CMAKE_CUDA_* defaults only reach targets created later).
  set_target_properties(relugrad_objects PROPERTIES
    CUDA_ARCHITECTURES "${CMAKE_CUDA_ARCHITECTURES}"
    CUDA_STANDARD 17
    CUDA_STANDARD_REQUIRED ON
    CUDA_VISIBILITY_PRESET hidden)
  target_sources(relugrad_objects PRIVATE
    ${CMAKE_CURRENT_LIST_DIR}/backend_row.cc
    ${CMAKE_CURRENT_LIST_DIR}/device_checks.cc
    ${CMAKE_CURRENT_LIST_DIR}/dropout_backend.cc
    ${CMAKE_CURRENT_LIST_DIR}/dropout_kernels.cu
    ${CMAKE_CURRENT_LIST_DIR}/mask_backend.cc
    ${CMAKE_CURRENT_LIST_DIR}/mask_kernels.cu
    ${CMAKE_CURRENT_LIST_DIR}/relu_grad_backend.cc
    ${CMAKE_CURRENT_LIST_DIR}/relu_grad_kernels.cc
    ${CMAKE_CURRENT_LIST_DIR}/relu_grad_kernels_f32.cu
    ${CMAKE_CURRENT_LIST_DIR}/relu_grad_kernels_f16.cu
    ${CMAKE_CURRENT_LIST_DIR}/relu_grad_kernels_bf16.cu
    ${CMAKE_CURRENT_LIST_DIR}/relu_grad_kernels_f64.cu)
  # No -use_fast_math: element.h relies on IEEE __fmul_rn/__dmul_rn and
  # integer work only, but keep the whole file IEEE so no one is surprised.
  target_compile_options(relugrad_objects PRIVATE
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra --Werror=all-warnings>)
  # PUBLIC on the object library reaches relugrad_internal (which links
  # relugrad_objects) and its consumers. The shared/static relugrad takes the
  # objects only, so it links cudart itself: privately for a shared library
  # (an implementation detail), and for a static one consumers need it at
  # their link step too (see cmake/install.cmake: CUDAToolkit must be found
  # by the package config in that case).
  target_link_libraries(relugrad_objects PUBLIC CUDA::cudart)
  cmake_language(DEFER DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR} CALL
                 _relugrad_cuda_link_libraries)
  function(_relugrad_cuda_link_libraries)
    if(BUILD_SHARED_LIBS)
      target_link_libraries(relugrad PRIVATE CUDA::cudart)
    else()
      target_link_libraries(relugrad PRIVATE $<BUILD_INTERFACE:CUDA::cudart>)
      target_link_libraries(relugrad INTERFACE $<INSTALL_INTERFACE:CUDA::cudart>)
    endif()
  endfunction()
  message(STATUS "relugrad: CUDA backend on (nvcc ${CMAKE_CUDA_COMPILER_VERSION}, "
                 "architectures ${CMAKE_CUDA_ARCHITECTURES})")
else()
  message(STATUS "relugrad: CUDA backend off (RELUGRAD_CUDA=${RELUGRAD_CUDA})")
  target_sources(relugrad_objects PRIVATE ${CMAKE_CURRENT_LIST_DIR}/cuda_unavailable.cc)
endif()
set(RELUGRAD_CUDA_ENABLED ${RELUGRAD_CUDA_ENABLED} CACHE INTERNAL "whether the CUDA backend is built")
