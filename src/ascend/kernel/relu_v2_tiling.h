// The tiling data of the AscendC ReluV2 (forward: y and a 1-bit mask, flat
// layout: bit i = element i of x, LSB first, relugrad's and Ascend 950's;
// and the 910B blocked layout, ReluV2BlockedTilingData) and ReluGradV2
// (backward from that mask) kernels: a plain struct, like
// relu_grad_tiling.h, with the gate resolved by the host into raw bit-pattern
// sets (host/relu_v2_tiling_host.cc) so the kernels only clamp and mask
// integers.
//
// Ownership invariant: a core owns whole 32-byte granules of the mask. Block
// boundaries fall on multiples of kRgMaskGranuleElems elements (one granule =
// 256 mask bits), and so do tile boundaries, so no two cores (and no two
// copies of one core) write the same mask byte.
#ifndef RELUGRAD_ASCEND_KERNEL_RELU_V2_TILING_H_
#define RELUGRAD_ASCEND_KERNEL_RELU_V2_TILING_H_

#include <stdint.h>

#include "relu_grad_tiling.h"

constexpr uint32_t kRgMaskGranuleElems = 256;  // elements whose bits fill one 32-byte granule

struct ReluV2TilingData {
  uint64_t n;           // elements of x
  uint64_t blockElems;  // elements per block, a multiple of kRgMaskGranuleElems
  uint32_t blocks;      // block dim of the launch
  uint32_t tileElems;   // elements per tile, a multiple of kRgMaskGranuleElems
  uint32_t dtype;       // RgDtype
  RgRawSet gate;        // x patterns that open the gate (the mask bit)
  RgRawSet keep;        // closed x patterns y keeps (NaN; -0 under keep_negative_zero)
  int32_t closedPad;    // a raw pattern outside the gate: the tail's padding lanes
};

// The 910B blocked layout (N, C1 = ceil(C/16), H, W, C0 = 16) from an NCHW
// or NHWC x: the bit of x's element (n, c, hw) is element
// ((n*C1 + c/16)*HW + hw)*16 + c%16, padding channels 0
// (relugrad_mask_to_blocked's layout); y and dx keep x's layout. Work unit:
// a group (n, c1) = up to 16 channels at HW positions; a block owns a run of
// whole images whose y and mask starts are both 32-byte aligned, so no
// granule of y or of the mask is written by two cores (an image's y and its
// mask are contiguous in either layout).
constexpr uint32_t kRgBlockedFromNchw = 0;  // x is (N, C, H, W): a group is 16 planes
constexpr uint32_t kRgBlockedFromNhwc = 1;  // x is (N, H, W, C): a group is HW rows of 16 lanes

struct ReluV2BlockedTilingData {
  uint64_t n, c, hw;        // N, C, H*W of x
  uint64_t groupsPerBlock;  // (n, c1) groups per block: a multiple of C1 * (aligned image run)
  uint32_t blocks;
  uint32_t tileHw;  // hw positions per tile, a multiple of 16 (NCHW: one transpose repeat)
  uint32_t dtype;
  uint32_t layout;  // kRgBlockedFromNchw or kRgBlockedFromNhwc
  RgRawSet gate;
  RgRawSet keep;
  int32_t closedPad;
};

// Tile-sized VECCALC slots of the forward: gate, two temporaries, keep,
// the constant 1.0 and the compare operand. The backward needs none.
constexpr uint32_t kRgReluV2Slots = 6;

#endif  // RELUGRAD_ASCEND_KERNEL_RELU_V2_TILING_H_
