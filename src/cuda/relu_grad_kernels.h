// Launchers of the ReluGrad CUDA kernels (relu_grad_kernels.cc; the kernels are in
// relu_grad_kernels.cuh, compiled per dtype). The host policy
// (device checks, pointer checks, error messages) lives in relu_grad_backend.cc;
// this layer only picks a kernel and launches it on the given stream.
#ifndef RELUGRAD_CUDA_RELU_GRAD_KERNELS_H_
#define RELUGRAD_CUDA_RELU_GRAD_KERNELS_H_

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "core/dtype_traits.h"
#include "cuda/device_params.h"
#include "cuda/element.h"
#include "cuda/launch_config.h"
#include "cuda/launch_plan.h"

namespace relugrad {
namespace cuda {

// The environment's choice (ParseLaunchConfig), read once per process. ok is
// false (and error says why) when a variable holds a value it rejects: the
// entry points then refuse to launch (INVALID_ARGUMENT).
struct EnvLaunchConfig {
  LaunchConfig config;
  bool ok = true;
  std::string error;
};
const EnvLaunchConfig& LaunchConfigFromEnv();

// Stable kernel name for logs and errors: rg_<dtype>_relugrad_<mode>__cuda_<body>, body
// v16 / scalar (one-shot), v16_gs / v16x2_gs / scalar_gs (grid-stride), v16_pipe (pipelined;
// its scalar path is scalar_gs).
std::string KernelName(Dtype dtype, Mode mode, bool vector, const LaunchConfig& config);

// Launches the kernel(s) for (dtype, mode, plan, config) on `stream` and returns the first
// failed cudaGetLastError() after a launch, else cudaSuccess. One-shot: one launch per
// kMaxLaunchBytes of each array (one for any call up to 2 GiB per array); loop geometries: one
// launch of at most max_blocks blocks. n > 0.
cudaError_t LaunchReluGrad(Dtype dtype, Mode mode, const VectorPlan& plan, int64_t n,
                           const void* dy, const void* s, void* dx, const DeviceParams& params,
                           cudaStream_t stream, int max_blocks, const LaunchConfig& config);

}  // namespace cuda
}  // namespace relugrad

#endif  // RELUGRAD_CUDA_RELU_GRAD_KERNELS_H_
