// Host side of the fused ReLU + dropout planes on CUDA: the device and
// pointer checks every CUDA entry point runs (device_checks.h), then one
// launch (per 2 GiB of an array) on the caller's stream.
#include "cuda/dropout_backend.h"

#include "core/error.h"
#include "cuda/device_checks.h"
#include "cuda/dropout_kernels.h"
#include "cuda/launch_plan.h"

namespace relugrad {

relugrad_status CudaPackBits(int64_t n, const uint8_t* bytes, uint8_t* bits, void* stream) {
  cuda::LaunchTarget target;
  RELUGRAD_RETURN_IF_ERROR(
      cuda::CheckLaunch(n, stream, {{"bytes", bytes}, {"bits", bits}}, &target));
  if (n == 0) return RELUGRAD_OK;
  const cudaError_t e = cuda::LaunchPackBits(n, bytes, bits, static_cast<cudaStream_t>(stream));
  if (e != cudaSuccess) {
    return cuda::LaunchFailed(
        cuda::DropoutKernelName(Dtype::kF32, true, reinterpret_cast<uintptr_t>(bytes) % 8 == 0)
            .c_str(),
        static_cast<long long>(n), stream, target.device, e);
  }
  return RELUGRAD_OK;
}

relugrad_status CudaReluDropoutGrad(Dtype dtype, int64_t n, const void* dy, const uint8_t* gate,
                                    const uint8_t* keep, double scale, void* dx, void* stream) {
  cuda::LaunchTarget target;
  RELUGRAD_RETURN_IF_ERROR(cuda::CheckLaunch(
      n, stream, {{"dy", dy}, {"gate", gate}, {"keep", keep}, {"dx", dx}}, &target));
  if (n == 0) return RELUGRAD_OK;
  const bool vector = cuda::Aligned16(dy) && cuda::Aligned16(dx);
  const cudaError_t e = cuda::LaunchReluDropoutGrad(dtype, n, dy, gate, keep, scale, dx, vector,
                                                    static_cast<cudaStream_t>(stream));
  if (e != cudaSuccess) {
    return cuda::LaunchFailed(cuda::DropoutKernelName(dtype, false, vector).c_str(),
                              static_cast<long long>(n), stream, target.device, e);
  }
  return RELUGRAD_OK;
}

}  // namespace relugrad
