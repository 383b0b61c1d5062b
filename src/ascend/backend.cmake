# AscendC kernel + CPU twin (issue 8).
#
# RELUGRAD_ASCEND_TWIN (default ON): the kernel source
# (kernel/relu_grad.cpp) is compiled by the host compiler against the twin's
# kernel_operator.h and linked into relugrad as RELUGRAD_BACKEND_ASCEND_TWIN.
# OFF: the stub that reports the backend as not built.
#
# The NPU build (CANN custom-op package) is separate: src/ascend/npu/, only
# when ASCEND_HOME_PATH points at a CANN install (see docs/ascend.md).
if(RELUGRAD_ASCEND_TWIN)
  set(_rg_ascend ${CMAKE_CURRENT_LIST_DIR})
  target_sources(relugrad_objects PRIVATE
    ${_rg_ascend}/ascend_twin_backend.cc
    ${_rg_ascend}/twin_launch.cc
    ${_rg_ascend}/cost_model.cc
    ${_rg_ascend}/host/relu_grad_tiling_host.cc
    ${_rg_ascend}/twin/twin_runtime.cc
    ${_rg_ascend}/kernel/relu_grad.cpp)
  # The kernel includes "kernel_operator.h" and "relu_grad_tiling.h" exactly
  # as it does under the CANN toolchain.
  set_source_files_properties(${_rg_ascend}/kernel/relu_grad.cpp PROPERTIES
    LANGUAGE CXX
    INCLUDE_DIRECTORIES "${_rg_ascend}/twin/include;${_rg_ascend}/kernel")
else()
  target_sources(relugrad_objects PRIVATE ${CMAKE_CURRENT_LIST_DIR}/ascend_twin_unavailable.cc)
endif()

if(DEFINED ENV{ASCEND_HOME_PATH} AND EXISTS "$ENV{ASCEND_HOME_PATH}")
  message(STATUS "relugrad: CANN found at $ENV{ASCEND_HOME_PATH}; build the NPU package with "
                 "src/ascend/npu/build.sh (see docs/ascend.md)")
endif()
