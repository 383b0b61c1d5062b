// The tiling data handed from the host tiling function to the AscendC
// kernel: a plain struct (new-style REGISTER_TILING_DEFAULT / GET_TILING_DATA)
// that compiles both for the device and the host. Every semantic rule arrives
// here already resolved: relugrad::KernelParams (src/core/semantics.h) is
// translated by host/relu_grad_tiling_host.cc into sets of raw bit patterns,
// so the kernel only clamps and masks integers.
#ifndef RELUGRAD_ASCEND_KERNEL_RELU_GRAD_TILING_H_
#define RELUGRAD_ASCEND_KERNEL_RELU_GRAD_TILING_H_

#include <stdint.h>

// A set of raw bit patterns (the data's bits read as a signed integer of the
// lane width, sign-extended to 32 bits) as up to four disjoint inclusive
// intervals (a bounded gate with open NaNs needs four: (lo, -0], [+0, hi),
// the positive and the negative NaNs). An interval reaching the lane type's
// minimum or maximum has no bound on that side.
struct RgRawSet {
  uint32_t count;
  int32_t lo[4];
  int32_t hi[4];
};

enum RgClosedRule : uint32_t {
  kRgClosedZero = 0,      // +0
  kRgClosedMulZero = 1,   // dy * 0 (signed zero, quieted NaN, inf -> default NaN)
  kRgClosedMulAlpha = 2,  // dy * alpha in f32, rounded to the data type
};

enum RgDtype : uint32_t { kRgF32 = 1, kRgF16 = 2, kRgBF16 = 3 };  // relugrad_dtype numbering

struct ReluGradTilingData {
  // Work plan (relugrad::WorkPlan, unit 32 bytes, tiles multiple of 256 bytes).
  uint64_t n;
  uint64_t headElems;     // elements before dx's first 32-byte boundary (block 0 takes them)
  uint64_t blockElems;    // elements per block after the head (multiple of 32 bytes)
  uint32_t blocks;        // block dim of the launch
  uint32_t tileElems;     // elements per tile (multiple of 256 bytes)
  uint32_t dtype;         // RgDtype
  uint32_t scratchSlots;  // tile-sized VECCALC slots (RgScratchSlots)
  // Semantics (from KernelParams).
  uint32_t plainSelect;   // dx = open ? dy : +0
  uint32_t openMultiply;  // open lanes: dy * 1 (quiet NaN; FTZ when flushing)
  uint32_t flushSubnormals;
  uint32_t clip;
  uint32_t closedRule;  // RgClosedRule
  float alpha;          // alpha rounded to f32
  RgRawSet gate;        // s patterns that open the gate
  RgRawSet clipBelow;   // non-NaN patterns below clip_lo
  RgRawSet clipAbove;   // non-NaN patterns above clip_hi
  int32_t clipLoBits;   // sign-extended raw patterns
  int32_t clipHiBits;
};

// Tile-sized scratch slots the kernel carves out of one TBuf (see
// relu_grad.cpp for the layout); the host divides the UB by 6 + this.
inline uint32_t RgScratchSlots(uint32_t dtype, uint32_t plain, uint32_t closedRule,
                               uint32_t flush) {
  if (plain) return 2;  // two temporaries for the gate mask; the mask itself lives in the out tile
  uint32_t slots = 14;  // masks, temporaries and constants of the general path
  if (dtype != kRgF32 && closedRule == kRgClosedMulAlpha) {
    slots += 2;             // the f32 product of a 16-bit tile
    if (flush) slots += 8;  // f32-lane temporaries and sign constant for FTZ
  }
  return slots;
}

#endif  // RELUGRAD_ASCEND_KERNEL_RELU_GRAD_TILING_H_
