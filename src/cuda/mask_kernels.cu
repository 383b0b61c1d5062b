// The 1-bit mask path's CUDA kernels: thin __global__ wrappers around the
// bodies in mask_body.h (shared with the host tests), one thread per mask
// byte, in the geometry the caller picks (one-shot by default).
#include "cuda/mask_kernels.h"

#include <cuda_runtime.h>

#include "cuda/launch_plan.h"
#include "cuda/mask_body.h"

namespace relugrad {
namespace cuda {
namespace {

template <Dtype D>
__global__ void __launch_bounds__(kOneShotThreads)
    ReluForwardMaskOneShot(DeviceParams p, uint32_t n, const typename DtypeTraits<D>::Bits* x,
                           typename DtypeTraits<D>::Bits* y, uint8_t* mask, bool vector) {
  OneShotForwardMaskBody<D>(p, n, x, y, mask, vector, blockIdx.x, threadIdx.x);
}

template <Dtype D>
__global__ void __launch_bounds__(kOneShotThreads)
    ReluGradMaskOneShot(DeviceParams p, uint32_t n, const typename DtypeTraits<D>::Bits* dy,
                        const uint8_t* mask, typename DtypeTraits<D>::Bits* dx, bool vector) {
  OneShotGradMaskBody<D>(p, n, dy, mask, dx, vector, blockIdx.x, threadIdx.x);
}

template <Dtype D, bool kPipelined>
__global__ void __launch_bounds__(kThreadsPerBlock)
    ReluForwardMask(DeviceParams p, int64_t n, const typename DtypeTraits<D>::Bits* x,
                    typename DtypeTraits<D>::Bits* y, uint8_t* mask, bool vector) {
  const int64_t tid = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  if constexpr (kPipelined) {
    PipelinedForwardMaskBody<D>(p, n, x, y, mask, vector, tid, stride);
  } else {
    ForwardMaskBody<D>(p, n, x, y, mask, vector, tid, stride);
  }
}

template <Dtype D, bool kPipelined>
__global__ void __launch_bounds__(kThreadsPerBlock)
    ReluGradMask(DeviceParams p, int64_t n, const typename DtypeTraits<D>::Bits* dy,
                 const uint8_t* mask, typename DtypeTraits<D>::Bits* dx, bool vector) {
  const int64_t tid = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  if constexpr (kPipelined) {
    PipelinedGradMaskBody<D>(p, n, dy, mask, dx, vector, tid, stride);
  } else {
    GradMaskBody<D>(p, n, dy, mask, dx, vector, tid, stride);
  }
}

constexpr int64_t kOneShotElementsPerBlock = int64_t{kOneShotThreads} * 8;  // 8 per mask byte

template <Dtype D>
cudaError_t Forward(int64_t n, const void* x_v, void* y_v, uint8_t* mask, bool vector,
                    const DeviceParams& p, cudaStream_t stream, int max_blocks,
                    const LaunchConfig& config) {
  using Bits = typename DtypeTraits<D>::Bits;
  const Bits* x = static_cast<const Bits*>(x_v);
  Bits* y = static_cast<Bits*>(y_v);
  if (config.geometry == Geometry::kOneShot) {
    cudaError_t status = cudaSuccess;
    ForEachElementLaunch(D, n, kMaxLaunchBytes, kOneShotElementsPerBlock,
                         [&](int64_t first, int64_t count, uint32_t blocks) {
                           if (status != cudaSuccess) return;
                           ReluForwardMaskOneShot<D><<<blocks, kOneShotThreads, 0, stream>>>(
                               p, static_cast<uint32_t>(count), x + first, y + first,
                               mask + first / 8, vector);
                           status = cudaGetLastError();
                         });
    return status;
  }
  const int blocks = BlocksFor((n + 7) / 8, max_blocks);
  if (config.geometry == Geometry::kPipelined) {
    ReluForwardMask<D, true><<<blocks, kThreadsPerBlock, 0, stream>>>(p, n, x, y, mask, vector);
  } else {
    ReluForwardMask<D, false><<<blocks, kThreadsPerBlock, 0, stream>>>(p, n, x, y, mask, vector);
  }
  return cudaGetLastError();
}

template <Dtype D>
cudaError_t Grad(int64_t n, const void* dy_v, const uint8_t* mask, void* dx_v, bool vector,
                 const DeviceParams& p, cudaStream_t stream, int max_blocks,
                 const LaunchConfig& config) {
  using Bits = typename DtypeTraits<D>::Bits;
  const Bits* dy = static_cast<const Bits*>(dy_v);
  Bits* dx = static_cast<Bits*>(dx_v);
  if (config.geometry == Geometry::kOneShot) {
    cudaError_t status = cudaSuccess;
    ForEachElementLaunch(D, n, kMaxLaunchBytes, kOneShotElementsPerBlock,
                         [&](int64_t first, int64_t count, uint32_t blocks) {
                           if (status != cudaSuccess) return;
                           ReluGradMaskOneShot<D><<<blocks, kOneShotThreads, 0, stream>>>(
                               p, static_cast<uint32_t>(count), dy + first, mask + first / 8,
                               dx + first, vector);
                           status = cudaGetLastError();
                         });
    return status;
  }
  const int blocks = BlocksFor((n + 7) / 8, max_blocks);
  if (config.geometry == Geometry::kPipelined) {
    ReluGradMask<D, true><<<blocks, kThreadsPerBlock, 0, stream>>>(p, n, dy, mask, dx, vector);
  } else {
    ReluGradMask<D, false><<<blocks, kThreadsPerBlock, 0, stream>>>(p, n, dy, mask, dx, vector);
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t LaunchForwardMask(Dtype dtype, int64_t n, const void* x, void* y, uint8_t* mask,
                              bool vector, const DeviceParams& p, cudaStream_t stream,
                              int max_blocks, const LaunchConfig& config) {
  switch (dtype) {
    case Dtype::kF32:
      return Forward<Dtype::kF32>(n, x, y, mask, vector, p, stream, max_blocks, config);
    case Dtype::kF16:
      return Forward<Dtype::kF16>(n, x, y, mask, vector, p, stream, max_blocks, config);
    case Dtype::kBF16:
      return Forward<Dtype::kBF16>(n, x, y, mask, vector, p, stream, max_blocks, config);
    case Dtype::kF64:
      return Forward<Dtype::kF64>(n, x, y, mask, vector, p, stream, max_blocks, config);
  }
  return cudaErrorInvalidValue;
}

cudaError_t LaunchGradMask(Dtype dtype, int64_t n, const void* dy, const uint8_t* mask, void* dx,
                           bool vector, const DeviceParams& p, cudaStream_t stream, int max_blocks,
                           const LaunchConfig& config) {
  switch (dtype) {
    case Dtype::kF32:
      return Grad<Dtype::kF32>(n, dy, mask, dx, vector, p, stream, max_blocks, config);
    case Dtype::kF16:
      return Grad<Dtype::kF16>(n, dy, mask, dx, vector, p, stream, max_blocks, config);
    case Dtype::kBF16:
      return Grad<Dtype::kBF16>(n, dy, mask, dx, vector, p, stream, max_blocks, config);
    case Dtype::kF64:
      return Grad<Dtype::kF64>(n, dy, mask, dx, vector, p, stream, max_blocks, config);
  }
  return cudaErrorInvalidValue;
}

std::string MaskKernelName(Dtype dtype, bool forward, bool vector, Geometry geometry) {
  static const char* const kDtypes[4] = {"f32", "f16", "bf16", "f64"};
  const int d = static_cast<int>(dtype) - 1;
  std::string name = std::string("rg_") + (d >= 0 && d < 4 ? kDtypes[d] : "unknown") +
                     (forward ? "_relu_forward_mask__cuda_" : "_relugrad_mask__cuda_");
  return name + GeometryKernelSuffix(geometry, vector, /*unroll=*/1);  // one vector per turn
}

}  // namespace cuda
}  // namespace relugrad
