// Host side of the CUDA mask path: the same device and pointer checks as
// ReluGrad (device_checks.h), then one launch on the caller's stream.
#include "cuda/mask_backend.h"

#include "core/error.h"
#include "cuda/device_checks.h"
#include "cuda/device_params.h"
#include "cuda/launch_plan.h"
#include "cuda/mask_kernels.h"

namespace relugrad {

relugrad_status CudaReluForwardMask(Dtype dtype, int64_t n, const void* x, void* y, uint8_t* mask,
                                    const KernelParams& params, void* stream) {
  cuda::LaunchTarget target;
  RELUGRAD_RETURN_IF_ERROR(
      cuda::CheckLaunch(n, stream, {{"x", x}, {"y", y}, {"mask", mask}}, &target));
  if (n == 0) return RELUGRAD_OK;
  const cuda::EnvLaunchConfig& env = cuda::LaunchConfigFromEnv();
  if (!env.ok) return Fail(RELUGRAD_INVALID_ARGUMENT, "%s", env.error.c_str());
  const bool vector = cuda::Aligned16(x) && cuda::Aligned16(y);
  const cudaError_t e =
      cuda::LaunchForwardMask(dtype, n, x, y, mask, vector, cuda::ToDeviceParams(params),
                              static_cast<cudaStream_t>(stream), target.max_blocks, env.config);
  if (e != cudaSuccess) {
    return cuda::LaunchFailed(
        cuda::MaskKernelName(dtype, true, vector, env.config.geometry).c_str(),
        static_cast<long long>(n), stream, target.device, e);
  }
  return RELUGRAD_OK;
}

relugrad_status CudaReluGradMask(Dtype dtype, int64_t n, const void* dy, const uint8_t* mask,
                                 void* dx, const KernelParams& params, void* stream) {
  cuda::LaunchTarget target;
  RELUGRAD_RETURN_IF_ERROR(
      cuda::CheckLaunch(n, stream, {{"dy", dy}, {"mask", mask}, {"dx", dx}}, &target));
  if (n == 0) return RELUGRAD_OK;
  const cuda::EnvLaunchConfig& env = cuda::LaunchConfigFromEnv();
  if (!env.ok) return Fail(RELUGRAD_INVALID_ARGUMENT, "%s", env.error.c_str());
  const bool vector = cuda::Aligned16(dy) && cuda::Aligned16(dx);
  const cudaError_t e =
      cuda::LaunchGradMask(dtype, n, dy, mask, dx, vector, cuda::ToDeviceParams(params),
                           static_cast<cudaStream_t>(stream), target.max_blocks, env.config);
  if (e != cudaSuccess) {
    return cuda::LaunchFailed(
        cuda::MaskKernelName(dtype, false, vector, env.config.geometry).c_str(),
        static_cast<long long>(n), stream, target.device, e);
  }
  return RELUGRAD_OK;
}

}  // namespace relugrad
