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
  blocks = std::max<int64_t>(blocks, 1);
  const int64_t per_block = (n + blocks - 1) / blocks;
  td->blockElems = static_cast<uint64_t>((per_block + g - 1) / g * g);
  td->blocks = static_cast<uint32_t>((n + static_cast<int64_t>(td->blockElems) - 1) /
                                     static_cast<int64_t>(td->blockElems));
  return true;
}

}  // namespace ascend
}  // namespace relugrad
