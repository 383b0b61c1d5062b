#include "ascend/host/relu_v2_tiling_host.h"

#include <algorithm>
#include <cstring>

#include "core/work_plan.h"

namespace relugrad {
namespace ascend {
namespace {

bool InRawSet(const RgRawSet& set, int32_t v) {
  for (uint32_t j = 0; j < set.count; ++j) {
    if (v >= set.lo[j] && v <= set.hi[j]) return true;
  }
  return false;
}

}  // namespace

int64_t ReluV2TileUbBytes(MaskOp op, Dtype dtype, int64_t tile_elems) {
  const int64_t elem = DtypeSize(dtype);
  // Forward: x in, y out (x 2 each), the mask out (x 2, one bit per element), the scratch slots.
  // Backward: dy in, dx out (x 2 each), the mask in (x 2).
  const int64_t tiles = op == MaskOp::kForward ? 4 + kRgReluV2Slots : 4;
  return tile_elems * elem * tiles + 2 * (tile_elems / 8);
}

bool MakeReluV2Tiling(const MaskTilingRequest& req, const KernelParams& p, ReluV2TilingData* td,
                      const char** why) {
  if (req.dtype == Dtype::kF64) {
    *why = "the Ascend kernels have no f64: 910B vector units have no f64 arithmetic or compare";
    return false;
  }
  if (!p.IsPlainSelect() || p.gate_upper) {
    *why =
        "the Ascend mask kernels write y = x or +0 and dx = dy or +0 (select); multiply, alpha, "
        "clip and a gate upper bound are not served (use the cpu backend)";
    return false;
  }
  std::memset(td, 0, sizeof(*td));
  // The gate's raw-pattern set is ReluGrad's (one derivation of the rule).
  {
    TilingRequest gr;
    gr.dtype = req.dtype;
    gr.n = 0;
    ReluGradTilingData grad;
    WorkPlan unused;
    if (!MakeTiling(gr, p, &grad, &unused, why)) return false;
    td->gate = grad.gate;
  }
  const int bits = 8 * DtypeSize(req.dtype);
  const int32_t lane_min = bits == 16 ? -32768 : -2147483647 - 1;
  const int32_t lane_max = bits == 16 ? 32767 : 2147483647;
  const int32_t inf = req.dtype == Dtype::kF32   ? 0x7f800000
                      : req.dtype == Dtype::kF16 ? 0x7c00
                                                 : 0x7f80;
  // y keeps a closed x only where max(x, 0) is x's own bits: a NaN, and -0
  // under keep_negative_zero. Raw order: -0, the negative NaNs, the positive NaNs.
  uint32_t k = 0;
  if (p.keep_negative_zero) {
    td->keep.lo[k] = lane_min;
    td->keep.hi[k++] = lane_min;
  }
  td->keep.lo[k] = lane_min + inf + 1;
  td->keep.hi[k++] = -1;
  td->keep.lo[k] = inf + 1;
  td->keep.hi[k++] = lane_max;
  td->keep.count = k;
  // Padding lanes must close the gate so the last byte's padding bits are 0.
  const int32_t candidates[] = {0, lane_min + inf, lane_min, -1};
  bool found = false;
  for (int32_t c : candidates) {
    if (!InRawSet(td->gate, c)) {
      td->closedPad = c;
      found = true;
      break;
    }
  }
  if (!found) {
    *why = "the gate is open for +0, -0, -inf and NaN: no padding value closes it";
    return false;
  }

  td->dtype = static_cast<uint32_t>(req.dtype);
  td->n = static_cast<uint64_t>(req.n);
  const int64_t elem = DtypeSize(req.dtype);
  const int64_t g = kRgMaskGranuleElems;
  // The largest tile of whole granules within the TPipe budget.
  const int64_t per_granule = ReluV2TileUbBytes(req.op, req.dtype, g);
  td->tileElems = static_cast<uint32_t>(kUbTPipeBytes / per_granule * g);
  // Cores: one per grain of data bytes, at most req.cores; blocks of whole granules.
  const int64_t n = std::max<int64_t>(req.n, 1);
  int64_t blocks = std::max(1, req.cores);
  if (req.grain_bytes > 0) {
    blocks = std::min<int64_t>(blocks, (n * elem + req.grain_bytes - 1) / req.grain_bytes);
  }
  if (req.out_address % 32 != 0 || req.mask_address % 32 != 0) blocks = 1;
  blocks = std::max<int64_t>(blocks, 1);
  const int64_t per_block = (n + blocks - 1) / blocks;
  td->blockElems = static_cast<uint64_t>((per_block + g - 1) / g * g);
  td->blocks = static_cast<uint32_t>((n + static_cast<int64_t>(td->blockElems) - 1) /
                                     static_cast<int64_t>(td->blockElems));
  return true;
}

int64_t ReluV2BlockedTileUbBytes(MaskOp op, Dtype dtype, relugrad_x_format format,
                                 int64_t tile_hw) {
  // NHWC: a tile is the flat kernel's on 16 lanes a position (the same queues and slots).
  if (format == RELUGRAD_X_NHWC) return ReluV2TileUbBytes(op, dtype, 16 * tile_hw);
  const int64_t plane = tile_hw * DtypeSize(dtype);
  const int64_t marks = 16 * tile_hw * 2;  // one [16][tile_hw] half matrix
  if (op == MaskOp::kForward) {
    // x in, y out (x 2 each, 16 planes), the mask out (x 2), scratch planes, two marker matrices.
    return 2 * 16 * plane * 2 + 2 * (2 * tile_hw) + kRgReluV2Slots * plane + 2 * marks;
  }
  // dy in, dx out, the mask in, three marker matrices, a lane mask and an f32 widening.
  return 2 * 16 * plane * 2 + 2 * (2 * tile_hw) + 3 * marks + 2 * tile_hw * 4;
}

bool MakeReluV2BlockedTiling(const BlockedTilingRequest& req, const KernelParams& p,
                             ReluV2BlockedTilingData* td, const char** why) {
  if (req.format != RELUGRAD_X_NCHW && req.format != RELUGRAD_X_NHWC) {
    *why = "the blocked layout is built from an NCHW or an NHWC x";
    return false;
  }
  if (req.n < 0 || req.c < 1 || req.h < 0 || req.w < 0) {
    *why = "the blocked layout needs n, h, w >= 0 and c >= 1";
    return false;
  }
  const int64_t kMax = int64_t{1} << 40;
  if (req.h > kMax || req.w > kMax || req.c > kMax || req.n > kMax ||
      (req.h > 0 && req.w > kMax / req.h) ||
      (req.h * req.w > 0 && req.c > kMax / (req.h * req.w)) ||
      (req.c * req.h * req.w > 0 && req.n > kMax / (req.c * req.h * req.w))) {
    *why = "the blocked layout's shape overflows";
    return false;
  }
  MaskTilingRequest flat;
  flat.op = req.op;
  flat.dtype = req.dtype;
  ReluV2TilingData rules;
  if (!MakeReluV2Tiling(flat, p, &rules, why)) return false;
  std::memset(td, 0, sizeof(*td));
  td->gate = rules.gate;
  td->keep = rules.keep;
  td->closedPad = rules.closedPad;
  td->dtype = static_cast<uint32_t>(req.dtype);
  td->n = static_cast<uint64_t>(req.n);
  td->c = static_cast<uint64_t>(req.c);
  td->hw = static_cast<uint64_t>(req.h * req.w);
  td->layout = req.format == RELUGRAD_X_NHWC ? kRgBlockedFromNhwc : kRgBlockedFromNchw;
  const int64_t elem = DtypeSize(req.dtype), hw = req.h * req.w, c1 = (req.c + 15) / 16;
  // The largest tile of 16-position steps within the budget (the UB bytes are
  // linear in the tile), no wider than the image. NCHW: a step is one
  // transpose repeat, and a transpose repeats at most 255 times. NHWC: 16
  // rows of 16 lanes are whole mask granules and compare repeats; a copy
  // moves at most 4095 rows, and the f32 row-gap Duplicate repeats (8 rows
  // each) at most 255 times.
  const int64_t per16 = ReluV2BlockedTileUbBytes(req.op, req.dtype, req.format, 16);
  const int64_t cap = req.format == RELUGRAD_X_NHWC ? 255 * 8 / 16 * 16 : 255 * 16;
  int64_t tile = std::min<int64_t>(kUbTPipeBytes / per16 * 16, cap);
  tile = std::min<int64_t>(tile, std::max<int64_t>(16, (hw + 15) / 16 * 16));
  td->tileHw = static_cast<uint32_t>(tile);
  // A block owns whole runs of `run` images: the smallest run after which
  // both y (run * C * HW elements) and the mask (run * C1 * HW * 2 bytes)
  // start on a 32-byte boundary again.
  int64_t run = 1;
  while (run < 32 && ((run * req.c * hw * elem) % 32 != 0 || (run * c1 * hw * 2) % 32 != 0)) ++run;
  const int64_t runs = std::max<int64_t>(1, (req.n + run - 1) / run);
  int64_t blocks = std::max(1, req.cores);
  if (req.grain_bytes > 0) {
    const int64_t bytes = std::max<int64_t>(1, req.n * req.c * hw * elem);
    blocks = std::min<int64_t>(blocks, (bytes + req.grain_bytes - 1) / req.grain_bytes);
  }
  if (req.out_address % 32 != 0 || req.mask_address % 32 != 0) blocks = 1;
  blocks = std::max<int64_t>(1, std::min(blocks, runs));
  const int64_t runs_per_block = (runs + blocks - 1) / blocks;
  td->groupsPerBlock = static_cast<uint64_t>(runs_per_block * run * c1);
  td->blocks = static_cast<uint32_t>((runs + runs_per_block - 1) / runs_per_block);
  return true;
}

}  // namespace ascend
}  // namespace relugrad
