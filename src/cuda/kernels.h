// Launchers of the ReluGrad CUDA kernels (kernels.cu). The host policy
// (device checks, pointer checks, error messages) lives in cuda_backend.cc;
// this layer only picks a kernel and launches it on the given stream.
#ifndef RELUGRAD_CUDA_KERNELS_H_
#define RELUGRAD_CUDA_KERNELS_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "core/dtype_traits.h"
#include "cuda/device_params.h"
#include "cuda/element.h"
#include "cuda/kernel_body.h"

namespace relugrad {
namespace cuda {

// Stable kernel name for logs and errors, e.g. "rg_f32_relugrad_select_nan_open__cuda_v16".
const char* KernelName(Dtype dtype, Mode mode, bool vector);

// Launches the kernel for (dtype, mode, plan) with at most max_blocks blocks
// (a grid-stride loop covers any n) and returns cudaGetLastError() right
// after the launch. n > 0.
cudaError_t LaunchReluGrad(Dtype dtype, Mode mode, const VectorPlan& plan, int64_t n,
                           const void* dy, const void* s, void* dx, const DeviceParams& params,
                           cudaStream_t stream, int max_blocks);

}  // namespace cuda
}  // namespace relugrad

#endif  // RELUGRAD_CUDA_KERNELS_H_
