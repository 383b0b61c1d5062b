#include "ascend/twin_launch.h"

#include <algorithm>
#include <utility>

namespace relugrad {
namespace ascend {

std::vector<ascend_twin::PipeCounters> LaunchWithTiling(ascend_twin::KernelFn kernel,
                                                        const ReluGradTilingData& tiling,
                                                        const WorkPlan& plan, const void* dy,
                                                        const void* s, void* dx, int block_dim) {
  const size_t elem = static_cast<size_t>(plan.elem_bytes);
  const size_t bytes = static_cast<size_t>(plan.n) * elem;
  ascend_twin::GmSpace gm;
  gm.AddInput(dy, bytes, "dy");
  gm.AddInput(s, bytes, "s");
  // Each core may write exactly the slices of dx the host planned for it:
  // plan block b runs on core b % block_dim (the kernel's block stride).
  std::vector<std::vector<std::pair<size_t, size_t>>> shares(static_cast<size_t>(block_dim));
  for (int b = 0; b < plan.blocks; ++b) {
    shares[static_cast<size_t>(b % block_dim)].emplace_back(
        static_cast<size_t>(plan.Begin(b)) * elem, static_cast<size_t>(plan.End(b)) * elem);
  }
  gm.AddOutputRanges(dx, bytes, "dx", std::move(shares));
  ReluGradTilingData copy = tiling;  // the kernel reads it as GM
  gm.AddInput(&copy, sizeof(copy), "tiling");
  return ascend_twin::Launch(kernel, block_dim, gm, static_cast<uint8_t*>(const_cast<void*>(dy)),
                             static_cast<uint8_t*>(const_cast<void*>(s)), static_cast<uint8_t*>(dx),
                             nullptr, reinterpret_cast<uint8_t*>(&copy));
}

bool RunOnTwin(const TilingRequest& request, const void* dy, const void* s, void* dx,
               const KernelParams& params, TwinRun* run, const char** why) {
  if (!MakeTiling(request, params, &run->tiling, &run->plan, why)) return false;
  run->counters = LaunchWithTiling(&relu_grad, run->tiling, run->plan, dy, s, dx, run->plan.blocks);
  return true;
}

std::vector<ascend_twin::PipeCounters> LaunchMaskWithTiling(MaskOp op,
                                                            const ReluV2TilingData& tiling,
                                                            const void* in, const void* mask_in,
                                                            void* out, uint8_t* mask_out,
                                                            int block_dim) {
  const size_t elem = static_cast<size_t>(DtypeSize(static_cast<Dtype>(tiling.dtype)));
  const size_t n = static_cast<size_t>(tiling.n);
  const size_t mask_bytes = (n + 7) / 8;
  ascend_twin::GmSpace gm;
  gm.AddInput(in, n * elem, op == MaskOp::kForward ? "x" : "dy");
  if (op == MaskOp::kBackward) gm.AddInput(mask_in, mask_bytes, "mask");
  // Plan block b runs on core b % block_dim (the kernels' block stride).
  std::vector<std::vector<std::pair<size_t, size_t>>> data(static_cast<size_t>(block_dim));
  std::vector<std::vector<std::pair<size_t, size_t>>> bits(static_cast<size_t>(block_dim));
  for (int b = 0; b < static_cast<int>(tiling.blocks); ++b) {
    const size_t begin = static_cast<size_t>(MaskBlockBegin(tiling, b));
    const size_t end = static_cast<size_t>(MaskBlockEnd(tiling, b));
    data[static_cast<size_t>(b % block_dim)].emplace_back(begin * elem, end * elem);
    bits[static_cast<size_t>(b % block_dim)].emplace_back(begin / 8, (end + 7) / 8);
  }
  gm.AddOutputRanges(out, n * elem, op == MaskOp::kForward ? "y" : "dx", std::move(data));
  if (op == MaskOp::kForward) gm.AddOutputRanges(mask_out, mask_bytes, "mask", std::move(bits));
  ReluV2TilingData copy = tiling;  // the kernel reads it as GM
  gm.AddInput(&copy, sizeof(copy), "tiling");
  uint8_t* a = static_cast<uint8_t*>(const_cast<void*>(in));
  uint8_t* o = static_cast<uint8_t*>(out);
  if (op == MaskOp::kForward) {
    return ascend_twin::Launch(&relu_v2, block_dim, gm, a, o, mask_out, nullptr,
                               reinterpret_cast<uint8_t*>(&copy));
  }
  return ascend_twin::Launch(&relu_grad_v2, block_dim, gm, a,
                             static_cast<uint8_t*>(const_cast<void*>(mask_in)), o, nullptr,
                             reinterpret_cast<uint8_t*>(&copy));
}

bool RunReluV2OnTwin(const MaskTilingRequest& request, const KernelParams& params, const void* x,
                     void* y, uint8_t* mask, MaskTwinRun* run, const char** why) {
  MaskTilingRequest r = request;
  r.op = MaskOp::kForward;
  r.out_address = reinterpret_cast<uintptr_t>(y);
  r.mask_address = reinterpret_cast<uintptr_t>(mask);
  if (!MakeReluV2Tiling(r, params, &run->tiling, why)) return false;
  run->counters = LaunchMaskWithTiling(MaskOp::kForward, run->tiling, x, nullptr, y, mask,
                                       static_cast<int>(run->tiling.blocks));
  return true;
}

bool RunReluGradV2OnTwin(const MaskTilingRequest& request, const KernelParams& params,
                         const void* dy, const uint8_t* mask, void* dx, MaskTwinRun* run,
                         const char** why) {
  MaskTilingRequest r = request;
  r.op = MaskOp::kBackward;
  r.out_address = reinterpret_cast<uintptr_t>(dx);
  r.mask_address = 0;  // read only
  if (!MakeReluV2Tiling(r, params, &run->tiling, why)) return false;
  run->counters = LaunchMaskWithTiling(MaskOp::kBackward, run->tiling, dy, mask, dx, nullptr,
                                       static_cast<int>(run->tiling.blocks));
  return true;
}

std::vector<ascend_twin::PipeCounters> LaunchBlockedWithTiling(
    MaskOp op, const ReluV2BlockedTilingData& tiling, const void* in, const uint8_t* mask_in,
    void* out, uint8_t* mask_out, int block_dim) {
  const size_t elem = static_cast<size_t>(DtypeSize(static_cast<Dtype>(tiling.dtype)));
  const size_t image = static_cast<size_t>(tiling.c * tiling.hw);  // elements of one image
  const size_t c1 = static_cast<size_t>((tiling.c + 15) / 16);
  const size_t groups = static_cast<size_t>(tiling.n) * c1;
  const size_t bytes = static_cast<size_t>(tiling.n) * image * elem;
  const size_t mask_bytes = groups * static_cast<size_t>(tiling.hw) * 2;
  ascend_twin::GmSpace gm;
  gm.AddInput(in, bytes, op == MaskOp::kForward ? "x" : "dy");
  if (op == MaskOp::kBackward) gm.AddInput(mask_in, mask_bytes, "mask");
  // Block b owns groups [b * groupsPerBlock, ...): whole images of y and their mask bytes.
  std::vector<std::vector<std::pair<size_t, size_t>>> data(static_cast<size_t>(block_dim));
  std::vector<std::vector<std::pair<size_t, size_t>>> bits(static_cast<size_t>(block_dim));
  for (size_t b = 0; b < tiling.blocks; ++b) {
    const size_t g0 = std::min(groups, b * static_cast<size_t>(tiling.groupsPerBlock));
    const size_t g1 = std::min(groups, g0 + static_cast<size_t>(tiling.groupsPerBlock));
    data[b % static_cast<size_t>(block_dim)].emplace_back(g0 / c1 * image * elem,
                                                          g1 / c1 * image * elem);
    bits[b % static_cast<size_t>(block_dim)].emplace_back(g0 * tiling.hw * 2, g1 * tiling.hw * 2);
  }
  gm.AddOutputRanges(out, bytes, op == MaskOp::kForward ? "y" : "dx", std::move(data));
  if (op == MaskOp::kForward) gm.AddOutputRanges(mask_out, mask_bytes, "mask", std::move(bits));
  ReluV2BlockedTilingData copy = tiling;
  gm.AddInput(&copy, sizeof(copy), "tiling");
  uint8_t* a = static_cast<uint8_t*>(const_cast<void*>(in));
  uint8_t* o = static_cast<uint8_t*>(out);
  if (op == MaskOp::kForward) {
    return ascend_twin::Launch(&relu_v2_blocked, block_dim, gm, a, o, mask_out, nullptr,
                               reinterpret_cast<uint8_t*>(&copy));
  }
  return ascend_twin::Launch(&relu_grad_v2_blocked, block_dim, gm, a, const_cast<uint8_t*>(mask_in),
                             o, nullptr, reinterpret_cast<uint8_t*>(&copy));
}

bool RunBlockedOnTwin(const BlockedTilingRequest& request, const KernelParams& params,
                      const void* in, const uint8_t* mask_in, void* out, uint8_t* mask_out,
                      BlockedTwinRun* run, const char** why) {
  BlockedTilingRequest r = request;
  r.out_address = reinterpret_cast<uintptr_t>(out);
  r.mask_address = reinterpret_cast<uintptr_t>(mask_out);
  if (!MakeReluV2BlockedTiling(r, params, &run->tiling, why)) return false;
  run->counters = LaunchBlockedWithTiling(request.op, run->tiling, in, mask_in, out, mask_out,
                                          static_cast<int>(run->tiling.blocks));
  return true;
}

}  // namespace ascend
}  // namespace relugrad
