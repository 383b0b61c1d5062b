// Launchers of the 1-bit mask path's CUDA kernels (mask_kernels.cu).
#ifndef RELUGRAD_CUDA_MASK_KERNELS_H_
#define RELUGRAD_CUDA_MASK_KERNELS_H_

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "core/dtype_traits.h"
#include "cuda/device_params.h"
#include "cuda/relu_grad_kernels.h"

namespace relugrad {
namespace cuda {

// y = relu(x) and the mask, one thread per mask byte, in config's geometry
// (the grid-stride unroll does not apply: a byte's 8 elements are one
// thread's work). `vector`: x and y are 16-byte aligned (whole-vector loads
// for full bytes). n > 0.
cudaError_t LaunchForwardMask(Dtype dtype, int64_t n, const void* x, void* y, uint8_t* mask,
                              bool vector, const DeviceParams& params, cudaStream_t stream,
                              int max_blocks, const LaunchConfig& config);

// dx = bit ? pass(dy) : closed(dy). `vector`: dy and dx are 16-byte aligned.
cudaError_t LaunchGradMask(Dtype dtype, int64_t n, const void* dy, const uint8_t* mask, void* dx,
                           bool vector, const DeviceParams& params, cudaStream_t stream,
                           int max_blocks, const LaunchConfig& config);

// rg_<dtype>_relu_forward_mask__cuda_<body> / rg_<dtype>_relugrad_mask__cuda_<body>, body
// v16 / scalar (one-shot), with _gs (grid-stride) or _pipe (pipelined; its unaligned path is
// scalar_gs) for the loop geometries.
std::string MaskKernelName(Dtype dtype, bool forward, bool vector, Geometry geometry);

}  // namespace cuda
}  // namespace relugrad

#endif  // RELUGRAD_CUDA_MASK_KERNELS_H_
