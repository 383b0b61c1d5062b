// Kernel entry of the CANN custom operator ReluGradCustom (UNTESTED: no CANN
// here): the same kernel body as the kernel-launch build and the CPU twin.
#include "relu_grad_kernel.h"

extern "C" __global__ __aicore__ void relu_grad_custom(GM_ADDR dy, GM_ADDR s, GM_ADDR dx, GM_ADDR workspace,
                                                       GM_ADDR tiling) {
  (void)workspace;
  REGISTER_TILING_DEFAULT(ReluGradTilingData);
  GET_TILING_DATA(td, tiling);
  relugrad_ascend::RunReluGrad(dy, s, dx, td);
}
