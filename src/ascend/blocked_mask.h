// The 910B blocked-layout ReluV2 / ReluGradV2 kernels (mask (N, C1, H, W, 16)
// from an NCHW or NHWC x) on the CPU twin, for the CLI's
// `--backend ascend_twin --mask-layout blocked`. Not in the C ABI: the
// blocked mask is the 910B's, and no other backend writes it (relugrad's own
// mask is flat; relugrad_mask_to_blocked converts). Checked as the C entry
// points check: options resolved, dtype and shape, pointers; options->backend
// must be RELUGRAD_BACKEND_ASCEND_TWIN. What the kernels do not serve (f64,
// multiply, alpha, clip, a gate upper bound) is RELUGRAD_UNSUPPORTED, a twin
// rule violation RELUGRAD_INTERNAL_ERROR, each with the thread's last error.
// Without the twin built, both answer RELUGRAD_UNSUPPORTED.
#ifndef RELUGRAD_ASCEND_BLOCKED_MASK_H_
#define RELUGRAD_ASCEND_BLOCKED_MASK_H_

#include <cstdint>

#include "relugrad/relugrad.h"

namespace relugrad {

// The logical shape of x: N, C, H, W whatever the format.
struct BlockedShape {
  int64_t n = 0, c = 0, h = 0, w = 0;
};

// N*C*H*W, or -1 if a dimension is negative or the product overflows.
inline int64_t BlockedShapeElements(const BlockedShape& s) {
  int64_t nc = 0, nch = 0, nchw = 0;
  if (s.n < 0 || s.c < 0 || s.h < 0 || s.w < 0 || __builtin_mul_overflow(s.n, s.c, &nc) ||
      __builtin_mul_overflow(nc, s.h, &nch) || __builtin_mul_overflow(nch, s.w, &nchw)) {
    return -1;
  }
  return nchw;
}

// y (x's layout, may equal x) and the blocked mask
// (relugrad_mask_blocked_bytes(n, c, h, w) bytes, padding bits 0).
relugrad_status AscendTwinReluForwardBlocked(relugrad_dtype dtype, relugrad_x_format format,
                                             const BlockedShape& shape, const void* x, void* y,
                                             uint8_t* mask, const relugrad_options* options);
// dx = bit ? dy : +0 (x's layout, may equal dy); padding bits are not read.
relugrad_status AscendTwinReluGradMaskBlocked(relugrad_dtype dtype, relugrad_x_format format,
                                              const BlockedShape& shape, const void* dy,
                                              const uint8_t* mask, void* dx,
                                              const relugrad_options* options);

}  // namespace relugrad

#endif  // RELUGRAD_ASCEND_BLOCKED_MASK_H_
