// One launcher per dtype, each defined in its own translation unit
// (kernels_<dtype>.cu, from relu_grad_kernels.cuh) and dispatched by
// LaunchReluGrad (relu_grad_kernels.cc). Arguments as LaunchReluGrad's.
#ifndef RELUGRAD_CUDA_RELU_GRAD_KERNELS_DTYPE_H_
#define RELUGRAD_CUDA_RELU_GRAD_KERNELS_DTYPE_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "cuda/device_params.h"
#include "cuda/element.h"
#include "cuda/launch_config.h"
#include "cuda/launch_plan.h"

namespace relugrad {
namespace cuda {

#define RG_DECLARE_LAUNCH(NAME)                                                                 \
  cudaError_t NAME(Mode mode, const VectorPlan& plan, int64_t n, const void* dy, const void* s, \
                   void* dx, const DeviceParams& p, cudaStream_t stream, int max_blocks,        \
                   const LaunchConfig& config)
RG_DECLARE_LAUNCH(LaunchReluGradF32);
RG_DECLARE_LAUNCH(LaunchReluGradF16);
RG_DECLARE_LAUNCH(LaunchReluGradBF16);
RG_DECLARE_LAUNCH(LaunchReluGradF64);

}  // namespace cuda
}  // namespace relugrad

#endif  // RELUGRAD_CUDA_RELU_GRAD_KERNELS_DTYPE_H_
