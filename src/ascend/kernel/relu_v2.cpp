// The AscendC entry points of ReluV2 (x -> y, mask) and ReluGradV2
// (dy, mask -> dx): inputs, outputs, workspace, tiling. The kernels and the
// reasoning for their exactness are in relu_v2_kernel.h.
#include "relu_v2_kernel.h"

extern "C" __global__ __aicore__ void relu_v2(GM_ADDR x, GM_ADDR y, GM_ADDR mask, GM_ADDR workspace,
                                              GM_ADDR tiling) {
  (void)workspace;
  REGISTER_TILING_DEFAULT(ReluV2TilingData);
  GET_TILING_DATA(td, tiling);
  relugrad_ascend::RunReluV2(x, y, mask, td);
}

extern "C" __global__ __aicore__ void relu_grad_v2(GM_ADDR dy, GM_ADDR mask, GM_ADDR dx,
                                                   GM_ADDR workspace, GM_ADDR tiling) {
  (void)workspace;
  REGISTER_TILING_DEFAULT(ReluV2TilingData);
  GET_TILING_DATA(td, tiling);
  relugrad_ascend::RunReluGradV2(dy, mask, dx, td);
}

extern "C" __global__ __aicore__ void relu_v2_blocked(GM_ADDR x, GM_ADDR y, GM_ADDR mask,
                                                      GM_ADDR workspace, GM_ADDR tiling) {
  (void)workspace;
  REGISTER_TILING_DEFAULT(ReluV2BlockedTilingData);
  GET_TILING_DATA(td, tiling);
  relugrad_ascend::RunReluV2Blocked(x, y, mask, td);
}

extern "C" __global__ __aicore__ void relu_grad_v2_blocked(GM_ADDR dy, GM_ADDR mask, GM_ADDR dx,
                                                           GM_ADDR workspace, GM_ADDR tiling) {
  (void)workspace;
  REGISTER_TILING_DEFAULT(ReluV2BlockedTilingData);
  GET_TILING_DATA(td, tiling);
  relugrad_ascend::RunReluGradV2Blocked(dy, mask, dx, td);
}
