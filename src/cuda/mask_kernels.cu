// The 1-bit mask path's CUDA kernels: thin __global__ wrappers around the
// bodies in kernel_body.h (shared with the host tests), one thread per mask
// byte, grid-stride over the bytes.
#include "cuda/mask_kernels.h"

#include <cuda_runtime.h>

#include "cuda/kernel_body.h"

namespace relugrad {
namespace cuda {
namespace {

template <Dtype D>
__global__ void __launch_bounds__(kThreadsPerBlock)
    ReluForwardMask(DeviceParams p, int64_t n, const typename DtypeTraits<D>::Bits* x,
                    typename DtypeTraits<D>::Bits* y, uint8_t* mask, bool vector) {
  const int64_t tid = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  ForwardMaskBody<D>(p, n, x, y, mask, vector, tid, stride);
}

template <Dtype D>
__global__ void __launch_bounds__(kThreadsPerBlock)
    ReluGradMask(DeviceParams p, int64_t n, const typename DtypeTraits<D>::Bits* dy,
                 const uint8_t* mask, typename DtypeTraits<D>::Bits* dx, bool vector) {
  const int64_t tid = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  GradMaskBody<D>(p, n, dy, mask, dx, vector, tid, stride);
}

template <Dtype D>
cudaError_t Forward(int64_t n, const void* x, void* y, uint8_t* mask, bool vector,
                    const DeviceParams& p, cudaStream_t stream, int max_blocks) {
  using Bits = typename DtypeTraits<D>::Bits;
  ReluForwardMask<D><<<BlocksFor((n + 7) / 8, max_blocks), kThreadsPerBlock, 0, stream>>>(
      p, n, static_cast<const Bits*>(x), static_cast<Bits*>(y), mask, vector);
  return cudaGetLastError();
}

template <Dtype D>
cudaError_t Grad(int64_t n, const void* dy, const uint8_t* mask, void* dx, bool vector,
                 const DeviceParams& p, cudaStream_t stream, int max_blocks) {
  using Bits = typename DtypeTraits<D>::Bits;
  ReluGradMask<D><<<BlocksFor((n + 7) / 8, max_blocks), kThreadsPerBlock, 0, stream>>>(
      p, n, static_cast<const Bits*>(dy), mask, static_cast<Bits*>(dx), vector);
  return cudaGetLastError();
}

}  // namespace

cudaError_t LaunchForwardMask(Dtype dtype, int64_t n, const void* x, void* y, uint8_t* mask,
                              bool vector, const DeviceParams& p, cudaStream_t stream,
                              int max_blocks) {
  switch (dtype) {
    case Dtype::kF32:
      return Forward<Dtype::kF32>(n, x, y, mask, vector, p, stream, max_blocks);
    case Dtype::kF16:
      return Forward<Dtype::kF16>(n, x, y, mask, vector, p, stream, max_blocks);
    case Dtype::kBF16:
      return Forward<Dtype::kBF16>(n, x, y, mask, vector, p, stream, max_blocks);
    case Dtype::kF64:
      return Forward<Dtype::kF64>(n, x, y, mask, vector, p, stream, max_blocks);
  }
  return cudaErrorInvalidValue;
}

cudaError_t LaunchGradMask(Dtype dtype, int64_t n, const void* dy, const uint8_t* mask, void* dx,
                           bool vector, const DeviceParams& p, cudaStream_t stream,
                           int max_blocks) {
  switch (dtype) {
    case Dtype::kF32:
      return Grad<Dtype::kF32>(n, dy, mask, dx, vector, p, stream, max_blocks);
    case Dtype::kF16:
      return Grad<Dtype::kF16>(n, dy, mask, dx, vector, p, stream, max_blocks);
    case Dtype::kBF16:
      return Grad<Dtype::kBF16>(n, dy, mask, dx, vector, p, stream, max_blocks);
    case Dtype::kF64:
      return Grad<Dtype::kF64>(n, dy, mask, dx, vector, p, stream, max_blocks);
  }
  return cudaErrorInvalidValue;
}

const char* MaskKernelName(Dtype dtype, bool forward, bool vector) {
  // [dtype][forward][vector]
  static const char* const kNames[4][2][2] = {
      {{"rg_f32_relugrad_mask__cuda_scalar", "rg_f32_relugrad_mask__cuda_v16"},
       {"rg_f32_relu_forward_mask__cuda_scalar", "rg_f32_relu_forward_mask__cuda_v16"}},
      {{"rg_f16_relugrad_mask__cuda_scalar", "rg_f16_relugrad_mask__cuda_v16"},
       {"rg_f16_relu_forward_mask__cuda_scalar", "rg_f16_relu_forward_mask__cuda_v16"}},
      {{"rg_bf16_relugrad_mask__cuda_scalar", "rg_bf16_relugrad_mask__cuda_v16"},
       {"rg_bf16_relu_forward_mask__cuda_scalar", "rg_bf16_relu_forward_mask__cuda_v16"}},
      {{"rg_f64_relugrad_mask__cuda_scalar", "rg_f64_relugrad_mask__cuda_v16"},
       {"rg_f64_relu_forward_mask__cuda_scalar", "rg_f64_relu_forward_mask__cuda_v16"}},
  };
  const int d = static_cast<int>(dtype) - 1;
  if (d < 0 || d > 3) return "rg_unknown_mask__cuda";
  return kNames[d][forward ? 1 : 0][vector ? 1 : 0];
}

}  // namespace cuda
}  // namespace relugrad
