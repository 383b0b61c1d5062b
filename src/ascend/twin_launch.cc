#include "ascend/twin_launch.h"

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

}  // namespace ascend
}  // namespace relugrad
