// The CUDA backend's host side: is there a device, are the pointers usable
// by it, then one kernel launch on the caller's stream, checked. Arguments
// were validated by the operator layer (api/relu_grad.cc); the rules arrive
// as KernelParams and are only flattened here (device_params.h).
#include "core/backends.h"
#include "core/error.h"
#include "cuda/device_checks.h"
#include "cuda/device_params.h"
#include "cuda/element.h"
#include "cuda/kernels.h"

namespace relugrad {

bool CudaBackendBuilt() { return true; }

relugrad_status CudaReluGrad(Dtype dtype, int64_t n, const void* dy, const void* s, void* dx,
                             const KernelParams& params, const Semantics& semantics) {
  cuda::LaunchTarget target;
  RELUGRAD_RETURN_IF_ERROR(
      cuda::CheckLaunch(n, semantics.stream, {{"dy", dy}, {"s", s}, {"dx", dx}}, &target));
  if (n == 0) return RELUGRAD_OK;

  const cuda::Mode mode = cuda::ModeFor(params);
  const cuda::VectorPlan plan = cuda::PlanVectors(dtype, n, dy, s, dx);
  const int unroll = cuda::VectorUnroll();
  const cudaError_t e =
      cuda::LaunchReluGrad(dtype, mode, plan, n, dy, s, dx, cuda::ToDeviceParams(params),
                           static_cast<cudaStream_t>(semantics.stream), target.max_blocks, unroll);
  if (e != cudaSuccess) {
    return cuda::LaunchFailed(cuda::KernelName(dtype, mode, plan.vector, unroll).c_str(),
                              static_cast<long long>(n), semantics.stream, target.device, e);
  }
  return RELUGRAD_OK;
}

}  // namespace relugrad
