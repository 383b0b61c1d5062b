// Host side of ReluGrad on CUDA: is there a device, are the pointers usable
// by it, then the kernel launch(es) on the plan's stream, checked
// (relu_grad_kernels.h: one launch per 2 GiB of each array in the default
// geometry). Arguments were validated by the plan; the rules arrive as
// KernelParams and are only flattened here (device_params.h).
#include "cuda/relu_grad_backend.h"

#include "core/error.h"
#include "cuda/device_checks.h"
#include "cuda/device_params.h"
#include "cuda/element.h"
#include "cuda/relu_grad_kernels.h"

namespace relugrad {

relugrad_status CudaReluGrad(const KernelParams& params, void* stream, int64_t n, const void* dy,
                             const void* s, void* dx) {
  const Dtype dtype = params.dtype;
  cuda::LaunchTarget target;
  RELUGRAD_RETURN_IF_ERROR(
      cuda::CheckLaunch(n, stream, {{"dy", dy}, {"s", s}, {"dx", dx}}, &target));
  if (n == 0) return RELUGRAD_OK;

  const cuda::EnvLaunchConfig& env = cuda::LaunchConfigFromEnv();
  if (!env.ok) return Fail(RELUGRAD_INVALID_ARGUMENT, "%s", env.error.c_str());

  const cuda::Mode mode = cuda::ModeFor(params);
  const cuda::VectorPlan plan = cuda::PlanVectors(dtype, n, dy, s, dx);
  const cudaError_t e =
      cuda::LaunchReluGrad(dtype, mode, plan, n, dy, s, dx, cuda::ToDeviceParams(params),
                           static_cast<cudaStream_t>(stream), target.max_blocks, env.config);
  if (e != cudaSuccess) {
    return cuda::LaunchFailed(cuda::KernelName(dtype, mode, plan.vector, env.config).c_str(),
                              static_cast<long long>(n), stream, target.device, e);
  }
  return RELUGRAD_OK;
}

}  // namespace relugrad
