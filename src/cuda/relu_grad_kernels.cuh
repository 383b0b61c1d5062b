// The ReluGrad CUDA kernels: one rule per element (element.h), a 16-byte
// vector body with scalar head and tail, or an all-scalar kernel when the
// three pointers disagree on their offset within 16 bytes, in one of three
// launch geometries (relu_grad_body.h holds the bodies, launch_plan.h the
// split into launches and the reasons). The work is memory-bound (3 bytes moved per
// byte of output), so the kernels are built for bytes in flight: 16-byte
// loads/stores (the widest per-thread access), every load of a thread before
// its stores, and no shared memory. dx may alias dy or s exactly, so no
// pointer is __restrict__ and no read-only-cache load (ld.global.nc) is used.
//
// Included by one translation unit per dtype (relu_grad_kernels_f32.cu, relu_grad_kernels_f16.cu,
// relu_grad_kernels_bf16.cu, relu_grad_kernels_f64.cu), so a parallel build compiles the dtypes'
// instantiations side by side. Everything here has internal linkage: each
// unit exports only its LaunchReluGrad<dtype> (relu_grad_kernels_dtype.h).
#ifndef RELUGRAD_CUDA_RELU_GRAD_KERNELS_CUH_
#define RELUGRAD_CUDA_RELU_GRAD_KERNELS_CUH_

#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/launch_plan.h"
#include "cuda/relu_grad_body.h"
#include "cuda/relu_grad_kernels.h"
#include "cuda/relu_grad_kernels_dtype.h"

namespace relugrad {
namespace cuda {
namespace {

// The bodies live in relu_grad_body.h (shared with the host tests); these
// wrappers only supply the block and thread indices.
template <Dtype D, Mode M>
__global__ void __launch_bounds__(kOneShotThreads)
    ReluGradOneShotVector(DeviceParams p, uint32_t vectors, int head, int tail,
                          const typename DtypeTraits<D>::Bits* dy,
                          const typename DtypeTraits<D>::Bits* s,
                          typename DtypeTraits<D>::Bits* dx) {
  OneShotVectorBody<D, M>(p, vectors, head, tail, dy, s, dx, blockIdx.x, threadIdx.x);
}

template <Dtype D, Mode M>
__global__ void __launch_bounds__(kOneShotThreads)
    ReluGradOneShotScalar(DeviceParams p, uint32_t n, const typename DtypeTraits<D>::Bits* dy,
                          const typename DtypeTraits<D>::Bits* s,
                          typename DtypeTraits<D>::Bits* dx) {
  OneShotScalarBody<D, M>(p, n, dy, s, dx, blockIdx.x, threadIdx.x);
}

template <Dtype D, Mode M, int kUnroll>
__global__ void __launch_bounds__(kThreadsPerBlock)
    ReluGradVector16(DeviceParams p, int64_t head, int64_t vectors, int64_t tail,
                     const typename DtypeTraits<D>::Bits* dy,
                     const typename DtypeTraits<D>::Bits* s, typename DtypeTraits<D>::Bits* dx) {
  const int64_t tid = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  Vector16Body<D, M, kUnroll>(p, head, vectors, tail, dy, s, dx, tid, stride);
}

template <Dtype D, Mode M>
__global__ void __launch_bounds__(kThreadsPerBlock)
    ReluGradPipelined(DeviceParams p, int64_t head, int64_t vectors, int64_t tail,
                      const typename DtypeTraits<D>::Bits* dy,
                      const typename DtypeTraits<D>::Bits* s, typename DtypeTraits<D>::Bits* dx) {
  const int64_t tid = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  PipelinedVectorBody<D, M>(p, head, vectors, tail, dy, s, dx, tid, stride);
}

template <Dtype D, Mode M>
__global__ void __launch_bounds__(kThreadsPerBlock)
    ReluGradScalar(DeviceParams p, int64_t n, const typename DtypeTraits<D>::Bits* dy,
                   const typename DtypeTraits<D>::Bits* s, typename DtypeTraits<D>::Bits* dx) {
  const int64_t tid = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  ScalarBody<D, M>(p, n, dy, s, dx, tid, stride);
}

template <Dtype D, Mode M>
cudaError_t LaunchOneShot(const VectorPlan& plan, int64_t n,
                          const typename DtypeTraits<D>::Bits* dy,
                          const typename DtypeTraits<D>::Bits* s, typename DtypeTraits<D>::Bits* dx,
                          const DeviceParams& p, cudaStream_t stream) {
  constexpr int64_t kLanes = kVectorBytes / sizeof(typename DtypeTraits<D>::Bits);
  cudaError_t status = cudaSuccess;
  if (plan.vector) {
    ForEachVectorLaunch(D, plan, kMaxLaunchBytes,
                        [&](int64_t first, int64_t vectors, int head, int tail, uint32_t blocks) {
                          if (status != cudaSuccess) return;
                          const int64_t at = plan.head + first * kLanes;
                          ReluGradOneShotVector<D, M><<<blocks, kOneShotThreads, 0, stream>>>(
                              p, static_cast<uint32_t>(vectors), head, tail, dy + at, s + at,
                              dx + at);
                          status = cudaGetLastError();
                        });
  } else {
    ForEachElementLaunch(D, n, kMaxLaunchBytes, int64_t{kOneShotThreads} * kElementsPerThread,
                         [&](int64_t first, int64_t count, uint32_t blocks) {
                           if (status != cudaSuccess) return;
                           ReluGradOneShotScalar<D, M><<<blocks, kOneShotThreads, 0, stream>>>(
                               p, static_cast<uint32_t>(count), dy + first, s + first, dx + first);
                           status = cudaGetLastError();
                         });
  }
  return status;
}

template <Dtype D, Mode M>
cudaError_t Launch(const VectorPlan& plan, int64_t n, const void* dy_v, const void* s_v, void* dx_v,
                   const DeviceParams& p, cudaStream_t stream, int max_blocks,
                   const LaunchConfig& config) {
  using Bits = typename DtypeTraits<D>::Bits;
  const Bits* dy = static_cast<const Bits*>(dy_v);
  const Bits* s = static_cast<const Bits*>(s_v);
  Bits* dx = static_cast<Bits*>(dx_v);
  if (config.geometry == Geometry::kOneShot)
    return LaunchOneShot<D, M>(plan, n, dy, s, dx, p, stream);
  if (!plan.vector) {
    ReluGradScalar<D, M>
        <<<BlocksFor(n, max_blocks), kThreadsPerBlock, 0, stream>>>(p, n, dy, s, dx);
    return cudaGetLastError();
  }
  const int blocks = BlocksFor(VectorWorkItems(plan), max_blocks);
  if (config.geometry == Geometry::kPipelined) {
    ReluGradPipelined<D, M>
        <<<blocks, kThreadsPerBlock, 0, stream>>>(p, plan.head, plan.vectors, plan.tail, dy, s, dx);
  } else if (config.unroll == 2) {
    ReluGradVector16<D, M, 2>
        <<<blocks, kThreadsPerBlock, 0, stream>>>(p, plan.head, plan.vectors, plan.tail, dy, s, dx);
  } else {
    ReluGradVector16<D, M, 1>
        <<<blocks, kThreadsPerBlock, 0, stream>>>(p, plan.head, plan.vectors, plan.tail, dy, s, dx);
  }
  return cudaGetLastError();
}

template <Dtype D>
cudaError_t LaunchMode(Mode mode, const VectorPlan& plan, int64_t n, const void* dy, const void* s,
                       void* dx, const DeviceParams& p, cudaStream_t stream, int max_blocks,
                       const LaunchConfig& config) {
  switch (mode) {
    case Mode::kSelectNanOpen:
      return Launch<D, Mode::kSelectNanOpen>(plan, n, dy, s, dx, p, stream, max_blocks, config);
    case Mode::kSelectNanClosed:
      return Launch<D, Mode::kSelectNanClosed>(plan, n, dy, s, dx, p, stream, max_blocks, config);
    case Mode::kGeneral:
      return Launch<D, Mode::kGeneral>(plan, n, dy, s, dx, p, stream, max_blocks, config);
  }
  return cudaErrorInvalidValue;
}

}  // namespace

}  // namespace cuda
}  // namespace relugrad

#endif  // RELUGRAD_CUDA_RELU_GRAD_KERNELS_CUH_
