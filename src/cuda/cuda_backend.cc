// The CUDA row of the backend interface (core/backend.h) and its ReluGrad
// entry point: is there a device, are the pointers usable by it, then the
// kernel launch(es) on the plan's stream, checked (kernels.h: one launch per
// 2 GiB of each array in the default geometry). Arguments were validated by
// the plan; the rules arrive as KernelParams and are only flattened here
// (device_params.h). Every op, dtype and rule is implemented; the device
// itself is looked for at run time (UNSUPPORTED "no CUDA device").
#include "core/backend.h"
#include "core/error.h"
#include "cuda/cuda_dropout.h"
#include "cuda/cuda_mask.h"
#include "cuda/device_checks.h"
#include "cuda/device_params.h"
#include "cuda/element.h"
#include "cuda/kernels.h"

namespace relugrad {
namespace {

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

relugrad_status Supports(relugrad_plan_op, const Rules&, const KernelParams&) {
  return RELUGRAD_OK;
}

relugrad_status ReluGrad(const KernelParams& params, const Execution& execution, int32_t, int64_t n,
                         const void* dy, const void* s, void* dx) {
  return CudaReluGrad(params, execution.stream, n, dy, s, dx);
}

relugrad_status ReluForwardMask(const KernelParams& params, const Execution& execution, int64_t n,
                                const void* x, void* y, uint8_t* mask) {
  return CudaReluForwardMask(params.dtype, n, x, y, mask, params, execution.stream);
}

relugrad_status ReluGradMask(const KernelParams& params, const Execution& execution, int64_t n,
                             const void* dy, const uint8_t* mask, void* dx) {
  return CudaReluGradMask(params.dtype, n, dy, mask, dx, params, execution.stream);
}

relugrad_status PackBits(const Execution& execution, int64_t n, const uint8_t* bytes,
                         uint8_t* bits) {
  return CudaPackBits(n, bytes, bits, execution.stream);
}

relugrad_status ReluDropoutGrad(Dtype dtype, const Execution& execution, int64_t n, const void* dy,
                                const uint8_t* gate, const uint8_t* keep, double scale, void* dx) {
  return CudaReluDropoutGrad(dtype, n, dy, gate, keep, scale, dx, execution.stream);
}

constexpr BackendOps kCuda = {"cuda",       true,    Supports, ReluGrad, ReluForwardMask,
                              ReluGradMask, nullptr, nullptr,  PackBits, ReluDropoutGrad};

}  // namespace

const BackendOps& CudaBackendOps() { return kCuda; }

}  // namespace relugrad
