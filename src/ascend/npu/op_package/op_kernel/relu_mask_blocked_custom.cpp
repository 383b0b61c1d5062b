// Kernel entries of the CANN custom operators ReluV2BlockedCustom and
// ReluGradV2BlockedCustom (UNTESTED: no CANN here): the same kernel bodies as
// the kernel-launch build and the CPU twin (src/ascend/kernel/relu_v2_kernel.h);
// the tiling's layout field picks the NCHW or the NHWC kernel.
#include "relu_v2_kernel.h"

extern "C" __global__ __aicore__ void relu_v2_blocked_custom(GM_ADDR x, GM_ADDR y, GM_ADDR mask,
                                                             GM_ADDR workspace, GM_ADDR tiling) {
  (void)workspace;
  REGISTER_TILING_DEFAULT(ReluV2BlockedTilingData);
  GET_TILING_DATA(td, tiling);
  relugrad_ascend::RunReluV2Blocked(x, y, mask, td);
}

extern "C" __global__ __aicore__ void relu_grad_v2_blocked_custom(GM_ADDR dy, GM_ADDR mask,
                                                                  GM_ADDR dx, GM_ADDR workspace,
                                                                  GM_ADDR tiling) {
  (void)workspace;
  REGISTER_TILING_DEFAULT(ReluV2BlockedTilingData);
  GET_TILING_DATA(td, tiling);
  relugrad_ascend::RunReluGradV2Blocked(dy, mask, dx, td);
}
