// The AscendC kernel entry point: inputs, output, workspace, tiling (the
// order CANN's kernel launch and op packages use). The kernel itself and the
// reasoning for its exactness are in relu_grad_kernel.h.
#include "relu_grad_kernel.h"

extern "C" __global__ __aicore__ void relu_grad(GM_ADDR dy, GM_ADDR s, GM_ADDR dx, GM_ADDR workspace,
                                                GM_ADDR tiling) {
  (void)workspace;
  REGISTER_TILING_DEFAULT(ReluGradTilingData);
  GET_TILING_DATA(td, tiling);
  relugrad_ascend::RunReluGrad(dy, s, dx, td);
}
