// Host side of the ReluGrad CUDA kernels: the environment's launch geometry
// (read once), the kernels' names, and the dispatch on dtype to the
// per-dtype translation units (kernels_<dtype>.cu, from relu_grad_kernels.cuh,
// which also says how the kernels are built and why).
#include "cuda/relu_grad_kernels.h"
#include "cuda/relu_grad_kernels_dtype.h"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdlib>
#include <string>

namespace relugrad {
namespace cuda {

const EnvLaunchConfig& LaunchConfigFromEnv() {
  static const EnvLaunchConfig env = [] {
    EnvLaunchConfig e;
    e.ok = ParseLaunchConfig(std::getenv("RELUGRAD_CUDA_GEOMETRY"),
                             std::getenv("RELUGRAD_CUDA_UNROLL"), &e.config, &e.error);
    return e;
  }();
  return env;
}

std::string KernelName(Dtype dtype, Mode mode, bool vector, const LaunchConfig& config) {
  static const char* const kDtypes[4] = {"f32", "f16", "bf16", "f64"};
  static const char* const kModes[3] = {"select_nan_open", "select_nan_closed", "general"};
  const int d = static_cast<int>(dtype) - 1;  // Dtype numbering starts at 1
  const int m = static_cast<int>(mode);
  std::string name = std::string("rg_") + (d >= 0 && d < 4 ? kDtypes[d] : "unknown") +
                     "_relugrad_" + (m >= 0 && m < 3 ? kModes[m] : "unknown") + "__cuda_";
  return name + GeometryKernelSuffix(config.geometry, vector, config.unroll);
}

cudaError_t LaunchReluGrad(Dtype dtype, Mode mode, const VectorPlan& plan, int64_t n,
                           const void* dy, const void* s, void* dx, const DeviceParams& p,
                           cudaStream_t stream, int max_blocks, const LaunchConfig& config) {
  switch (dtype) {
    case Dtype::kF32:
      return LaunchReluGradF32(mode, plan, n, dy, s, dx, p, stream, max_blocks, config);
    case Dtype::kF16:
      return LaunchReluGradF16(mode, plan, n, dy, s, dx, p, stream, max_blocks, config);
    case Dtype::kBF16:
      return LaunchReluGradBF16(mode, plan, n, dy, s, dx, p, stream, max_blocks, config);
    case Dtype::kF64:
      return LaunchReluGradF64(mode, plan, n, dy, s, dx, p, stream, max_blocks, config);
  }
  return cudaErrorInvalidValue;
}

}  // namespace cuda
}  // namespace relugrad
