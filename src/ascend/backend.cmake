# AscendC kernel + CPU twin.
#
# RELUGRAD_ASCEND_TWIN (default ON): the kernel source
# (kernel/relu_grad.cpp, kernel/relu_v2.cpp) is compiled by the host compiler against the twin's
# kernel_operator.h and linked into relugrad as RELUGRAD_BACKEND_ASCEND_TWIN.
# OFF: the stub that reports the backend as not built.
#
# The NPU build (src/ascend/npu/, below) happens only when ASCEND_HOME_PATH
# points at a CANN install; see docs/ascend.md.
if(RELUGRAD_ASCEND_TWIN)
  set(_rg_ascend ${CMAKE_CURRENT_LIST_DIR})
  target_sources(relugrad_objects PRIVATE
    ${_rg_ascend}/ascend_twin_backend.cc
    ${_rg_ascend}/twin_launch.cc
    ${_rg_ascend}/cost_model.cc
    ${_rg_ascend}/host/relu_grad_tiling_host.cc
    ${_rg_ascend}/host/relu_v2_tiling_host.cc
    ${_rg_ascend}/twin/twin_runtime.cc
    ${_rg_ascend}/kernel/relu_grad.cpp
    ${_rg_ascend}/kernel/relu_v2.cpp)
  # The kernel includes "kernel_operator.h" and "relu_grad_tiling.h" exactly
  # as it does under the CANN toolchain.
  set_source_files_properties(${_rg_ascend}/kernel/relu_grad.cpp ${_rg_ascend}/kernel/relu_v2.cpp PROPERTIES
    LANGUAGE CXX
    INCLUDE_DIRECTORIES "${_rg_ascend}/twin/include;${_rg_ascend}/kernel")
else()
  target_sources(relugrad_objects PRIVATE ${CMAKE_CURRENT_LIST_DIR}/ascend_twin_unavailable.cc)
endif()
# The blocked <-> flat ReluV2 mask conversion is host code: built with or without the twin.
target_sources(relugrad_objects PRIVATE ${CMAKE_CURRENT_LIST_DIR}/mask_layout.cc)

# The NPU build only where a CANN toolkit is installed (UNTESTED here: no
# CANN in any registry we reach). It is a separate CMake project because
# CANN's ascendc.cmake brings its own compilers for the device code.
# -DRELUGRAD_ASCEND_NPU=OFF skips it even with CANN present.
if(DEFINED ENV{ASCEND_HOME_PATH} AND EXISTS "$ENV{ASCEND_HOME_PATH}")
  option(RELUGRAD_ASCEND_NPU "Build the AscendC kernel for the NPU (CANN found)" ON)
endif()
if(RELUGRAD_ASCEND_NPU AND DEFINED ENV{ASCEND_HOME_PATH} AND EXISTS "$ENV{ASCEND_HOME_PATH}")
  set(RELUGRAD_ASCEND_SOC "Ascend910B3" CACHE STRING "NPU model for the CANN build (npu-smi info)")
  include(ExternalProject)
  ExternalProject_Add(relugrad_ascend_npu
    SOURCE_DIR ${CMAKE_CURRENT_LIST_DIR}/npu
    BINARY_DIR ${CMAKE_BINARY_DIR}/ascend_npu
    CMAKE_ARGS -DSOC_VERSION=${RELUGRAD_ASCEND_SOC} -DASCEND_CANN_PACKAGE_PATH=$ENV{ASCEND_HOME_PATH}
               -DRELUGRAD_SOURCE_DIR=${PROJECT_SOURCE_DIR} -DCMAKE_BUILD_TYPE=Release
    INSTALL_COMMAND "")
  # The custom-op package (msopgen project + build.sh), on demand.
  add_custom_target(relugrad_ascend_op_package
    COMMAND ${CMAKE_CURRENT_LIST_DIR}/npu/op_package/build_package.sh ${RELUGRAD_ASCEND_SOC}
            ${CMAKE_BINARY_DIR}/ascend_op_package
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
    COMMENT "Building the ReluGradCustom CANN operator package (untested)")
  add_custom_target(relugrad_ascend_mask_op_package
    COMMAND ${CMAKE_CURRENT_LIST_DIR}/npu/op_package/build_mask_package.sh ${RELUGRAD_ASCEND_SOC}
            ${CMAKE_BINARY_DIR}/ascend_mask_op_package
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
    COMMENT "Building the ReluV2Custom / ReluGradV2Custom CANN operator package (untested)")
  message(STATUS "relugrad: CANN at $ENV{ASCEND_HOME_PATH}: building the AscendC kernel for ${RELUGRAD_ASCEND_SOC} "
                 "(${CMAKE_BINARY_DIR}/ascend_npu/relugrad_ascend_run)")
endif()
