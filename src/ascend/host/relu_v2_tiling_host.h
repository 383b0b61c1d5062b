// Host side of the ReluV2 / ReluGradV2 kernels: (op, dtype, n, core count,
// KernelParams) -> ReluV2TilingData. The block split keeps each core on whole
// 32-byte mask granules (kRgMaskGranuleElems elements); the tile is the
// largest multiple of a granule whose queues and scratch fit the 184 KiB
// TPipe may hand out.
#ifndef RELUGRAD_ASCEND_HOST_RELU_V2_TILING_HOST_H_
#define RELUGRAD_ASCEND_HOST_RELU_V2_TILING_HOST_H_

#include <cstdint>

#include "ascend/host/relu_grad_tiling_host.h"
#include "ascend/kernel/relu_v2_tiling.h"
#include "core/semantics.h"

namespace relugrad {
namespace ascend {

enum class MaskOp { kForward, kBackward };

struct MaskTilingRequest {
  MaskOp op = MaskOp::kForward;
  Dtype dtype = Dtype::kF32;
  int64_t n = 0;
  int cores = kDefaultCores;
  int64_t grain_bytes = kGrainBytes;  // of the data array per core, as ReluGrad's
  // The output arrays (y or dx, and the forward's mask). Block boundaries are
  // 32-byte aligned relative to them; where one is not 32-byte aligned itself
  // a single block writes everything, so no core shares a granule (GE
  // allocates aligned: the op package passes 0).
  uint64_t out_address = 0, mask_address = 0;
};

// False (with *why set) for what the kernels do not serve: f64, a closed
// rule other than +0 (multiply, alpha, clip), a gate upper bound, or a gate
// that no pattern closes (the tail has no padding value).
bool MakeReluV2Tiling(const MaskTilingRequest& request, const KernelParams& params,
                      ReluV2TilingData* tiling, const char** why);

// UB bytes one tile of tile_elems takes in op's kernel (queues x 2 and
// scratch), for the tiling and its tests.
int64_t ReluV2TileUbBytes(MaskOp op, Dtype dtype, int64_t tile_elems);

// The blocked layout (N, C1, H, W, 16) from an NCHW or NHWC x of logical shape (n, c, h, w).
struct BlockedTilingRequest {
  MaskOp op = MaskOp::kForward;
  Dtype dtype = Dtype::kF32;
  relugrad_x_format format = RELUGRAD_X_NCHW;  // x's (and y's, dy's, dx's) layout
  int64_t n = 0, c = 0, h = 0, w = 0;
  int cores = kDefaultCores;
  int64_t grain_bytes = kGrainBytes;
  uint64_t out_address = 0, mask_address = 0;  // as MaskTilingRequest's
};
// As MakeReluV2Tiling, and false for negative or overflowing dimensions or
// a format other than NCHW / NHWC.
bool MakeReluV2BlockedTiling(const BlockedTilingRequest& request, const KernelParams& params,
                             ReluV2BlockedTilingData* tiling, const char** why);
// UB bytes of one tile of tile_hw positions (x 16 channels) in op's blocked kernel for format.
int64_t ReluV2BlockedTileUbBytes(MaskOp op, Dtype dtype, relugrad_x_format format, int64_t tile_hw);

// Block b's elements [begin, end) and mask bytes [begin / 8, ceil(end / 8)).
inline int64_t MaskBlockBegin(const ReluV2TilingData& td, int b) {
  const uint64_t v = static_cast<uint64_t>(b) * td.blockElems;
  return static_cast<int64_t>(v < td.n ? v : td.n);
}
inline int64_t MaskBlockEnd(const ReluV2TilingData& td, int b) {
  const uint64_t v = static_cast<uint64_t>(b + 1) * td.blockElems;
  return static_cast<int64_t>(v < td.n ? v : td.n);
}

}  // namespace ascend
}  // namespace relugrad

#endif  // RELUGRAD_ASCEND_HOST_RELU_V2_TILING_HOST_H_
