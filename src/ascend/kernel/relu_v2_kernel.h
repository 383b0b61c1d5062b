// ReluV2 (forward: y = relu(x) and a 1-bit mask) and ReluGradV2 (backward:
// dx = bit ? dy : +0) as AscendC vector kernels for Ascend 910B, in the
// layout of relugrad's own mask and Ascend 950's ReluV2: bit i of the mask is
// element i of x, bit i % 8 of byte i / 8 (LSB first), ceil(n/8) bytes,
// padding bits 0; and in 910B's blocked layout (below). Same paradigm as relu_grad_kernel.h: per
// block, tiles stream CopyIn (MTE2) -> Compute (V) -> CopyOut (MTE3) through depth-2 queues.
//
// Exactness:
//  - the gate is a membership test of x's raw bits in the host's interval
//    sets (Member, the integer clamps of relu_grad_kernel.h): no float
//    compare ever sees x, so NaN, -0 and subnormals follow the host's rules;
//  - y = x & (open | keep) bitwise: x's bits, or +0;
//  - the bits come from Compares(GT, 0) on lanes that hold exactly 1.0 or +0
//    (the lane mask ANDed with 1.0's pattern), the one input on which a
//    float compare has no NaN, -0 or denormal question. 16-bit data compares
//    as half whatever its type: only those two patterns reach the compare;
//  - the backward is Select(mask, dy, +0) in tensor-scalar mode: a lane move
//    that never interprets dy (bf16 is moved as half: the same 16 bits).
//
// Tails: x is padded (DataCopyPad) with a raw pattern outside the gate, and
// the compare lanes past the 32-byte boundary are set to +0, so the padding
// bits of the last mask byte are 0 and every compared lane was written.
//
// One file per layout, each kernel a thin class around the shared tile loop
// and pipeline (relu_v2_tile.h): relu_v2_flat.h, relu_v2_blocked_nchw.h,
// relu_v2_blocked_nhwc.h. This header is the entry points' one include.
#ifndef RELUGRAD_ASCEND_KERNEL_RELU_V2_KERNEL_H_
#define RELUGRAD_ASCEND_KERNEL_RELU_V2_KERNEL_H_

#include "kernel_operator.h"
#include "relu_grad_kernel.h"
#include "relu_v2_blocked_nchw.h"
#include "relu_v2_blocked_nhwc.h"
#include "relu_v2_flat.h"
#include "relu_v2_tile.h"
#include "relu_v2_tiling.h"

namespace relugrad_ascend {

// This block's share of each plan; the entry points (relu_v2.cpp here, the
// CANN op package's) only read the tiling and call these.
__aicore__ inline void RunReluV2(GM_ADDR x, GM_ADDR y, GM_ADDR mask, const ReluV2TilingData& td) {
  RunTyped<ReluV2Kernel>(x, y, mask, td);
}

__aicore__ inline void RunReluGradV2(GM_ADDR dy, GM_ADDR mask, GM_ADDR dx,
                                     const ReluV2TilingData& td) {
  RunTyped<ReluGradV2Kernel>(dy, mask, dx, td);
}

__aicore__ inline void RunReluV2Blocked(GM_ADDR x, GM_ADDR y, GM_ADDR mask,
                                        const ReluV2BlockedTilingData& td) {
  if (td.layout == kRgBlockedFromNhwc) {
    RunTyped<ReluV2BlockedNhwcKernel>(x, y, mask, td);
  } else {
    RunTyped<ReluV2BlockedKernel>(x, y, mask, td);
  }
}

__aicore__ inline void RunReluGradV2Blocked(GM_ADDR dy, GM_ADDR mask, GM_ADDR dx,
                                            const ReluV2BlockedTilingData& td) {
  if (td.layout == kRgBlockedFromNhwc) {
    RunTyped<ReluGradV2BlockedNhwcKernel>(dy, mask, dx, td);
  } else {
    RunTyped<ReluGradV2BlockedKernel>(dy, mask, dx, td);
  }
}

}  // namespace relugrad_ascend

#endif  // RELUGRAD_ASCEND_KERNEL_RELU_V2_KERNEL_H_
