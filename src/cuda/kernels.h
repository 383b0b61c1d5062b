// Launchers of the ReluGrad CUDA kernels (kernels.cu). The host policy
// (device checks, pointer checks, error messages) lives in cuda_backend.cc;
// this layer only picks a kernel and launches it on the given stream.
#ifndef RELUGRAD_CUDA_KERNELS_H_
#define RELUGRAD_CUDA_KERNELS_H_

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "core/dtype_traits.h"
#include "cuda/device_params.h"
#include "cuda/element.h"
#include "cuda/kernel_body.h"

namespace relugrad {
namespace cuda {

// Vectors per thread per grid-stride turn in the vector kernel (see
// Vector16Body). 2 keeps 4 loads in flight per thread; RELUGRAD_CUDA_UNROLL=1
// in the environment (read once per process) selects 1, so the benchmark
// can compare the two on a GPU. Not yet measured on a GPU.
constexpr int kDefaultVectorUnroll = 2;
int VectorUnroll();

// Stable kernel name for logs and errors, e.g. "rg_f32_relugrad_select_nan_open__cuda_v16x2".
std::string KernelName(Dtype dtype, Mode mode, bool vector, int unroll);

// Launches the kernel for (dtype, mode, plan, unroll) with at most
// max_blocks blocks (a grid-stride loop covers any n) and returns
// cudaGetLastError() right after the launch. n > 0.
cudaError_t LaunchReluGrad(Dtype dtype, Mode mode, const VectorPlan& plan, int64_t n,
                           const void* dy, const void* s, void* dx, const DeviceParams& params,
                           cudaStream_t stream, int max_blocks, int unroll);

}  // namespace cuda
}  // namespace relugrad

#endif  // RELUGRAD_CUDA_KERNELS_H_
