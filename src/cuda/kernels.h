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

namespace relugrad {
namespace cuda {

// Threads per block of every kernel.
constexpr int kThreadsPerBlock = 256;

// How a call is split between the 16-byte vector body and scalar elements.
// Vectors are used when dy, s and dx sit at the same offset within 16 bytes
// (then `head` scalar elements bring all three to a 16-byte boundary);
// otherwise every element goes through the scalar kernel.
struct VectorPlan {
  bool vector;      // false: scalar kernel for all n elements
  int64_t head;     // scalar elements before the first aligned vector
  int64_t vectors;  // 16-byte vectors in the body
  int64_t tail;     // scalar elements after the body
};

VectorPlan PlanVectors(Dtype dtype, int64_t n, const void* dy, const void* s, const void* dx);

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
