// The ReluGrad CUDA kernels: one rule per element (element.h), a 16-byte
// vector body with scalar head and tail, or an all-scalar kernel when the
// three pointers disagree on their offset within 16 bytes (kernel_body.h
// holds the bodies and the split). The work is
// memory-bound (3 bytes moved per byte of output), so the kernels are built
// for bandwidth: 16-byte loads/stores (the widest per-thread access), a
// grid-stride loop with 64-bit indices (any n), and no shared memory.
//
// dx may alias dy or s exactly: each element is read and written by the same
// thread in the same iteration, so no pointer is __restrict__ and no
// read-only-cache load (ld.global.nc) is used.
#include "cuda/kernels.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

namespace relugrad {
namespace cuda {
namespace {

// The bodies live in kernel_body.h (shared with the host tests); these
// wrappers only supply the thread's index and the grid's stride.
template <Dtype D, Mode M>
__global__ void __launch_bounds__(kThreadsPerBlock)
    ReluGradVector16(DeviceParams p, int64_t head, int64_t vectors, int64_t tail,
                     const typename DtypeTraits<D>::Bits* dy,
                     const typename DtypeTraits<D>::Bits* s,
                     typename DtypeTraits<D>::Bits* dx) {
  const int64_t tid = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  Vector16Body<D, M>(p, head, vectors, tail, dy, s, dx, tid, stride);
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
cudaError_t Launch(const VectorPlan& plan, int64_t n, const void* dy_v, const void* s_v, void* dx_v,
                   const DeviceParams& p, cudaStream_t stream, int max_blocks) {
  using Bits = typename DtypeTraits<D>::Bits;
  const Bits* dy = static_cast<const Bits*>(dy_v);
  const Bits* s = static_cast<const Bits*>(s_v);
  Bits* dx = static_cast<Bits*>(dx_v);
  if (plan.vector) {
    const int blocks = BlocksFor(VectorWorkItems(plan), max_blocks);
    ReluGradVector16<D, M><<<blocks, kThreadsPerBlock, 0, stream>>>(p, plan.head, plan.vectors,
                                                                     plan.tail, dy, s, dx);
  } else {
    ReluGradScalar<D, M><<<BlocksFor(n, max_blocks), kThreadsPerBlock, 0, stream>>>(p, n, dy, s, dx);
  }
  return cudaGetLastError();
}

template <Dtype D>
cudaError_t LaunchMode(Mode mode, const VectorPlan& plan, int64_t n, const void* dy, const void* s,
                       void* dx, const DeviceParams& p, cudaStream_t stream, int max_blocks) {
  switch (mode) {
    case Mode::kSelectNanOpen:
      return Launch<D, Mode::kSelectNanOpen>(plan, n, dy, s, dx, p, stream, max_blocks);
    case Mode::kSelectNanClosed:
      return Launch<D, Mode::kSelectNanClosed>(plan, n, dy, s, dx, p, stream, max_blocks);
    case Mode::kGeneral:
      return Launch<D, Mode::kGeneral>(plan, n, dy, s, dx, p, stream, max_blocks);
  }
  return cudaErrorInvalidValue;
}

}  // namespace

const char* KernelName(Dtype dtype, Mode mode, bool vector) {
  // [dtype][mode][vector]
  static const char* const kNames[4][3][2] = {
      {{"rg_f32_relugrad_select_nan_open__cuda_scalar", "rg_f32_relugrad_select_nan_open__cuda_v16"},
       {"rg_f32_relugrad_select_nan_closed__cuda_scalar", "rg_f32_relugrad_select_nan_closed__cuda_v16"},
       {"rg_f32_relugrad_general__cuda_scalar", "rg_f32_relugrad_general__cuda_v16"}},
      {{"rg_f16_relugrad_select_nan_open__cuda_scalar", "rg_f16_relugrad_select_nan_open__cuda_v16"},
       {"rg_f16_relugrad_select_nan_closed__cuda_scalar", "rg_f16_relugrad_select_nan_closed__cuda_v16"},
       {"rg_f16_relugrad_general__cuda_scalar", "rg_f16_relugrad_general__cuda_v16"}},
      {{"rg_bf16_relugrad_select_nan_open__cuda_scalar", "rg_bf16_relugrad_select_nan_open__cuda_v16"},
       {"rg_bf16_relugrad_select_nan_closed__cuda_scalar", "rg_bf16_relugrad_select_nan_closed__cuda_v16"},
       {"rg_bf16_relugrad_general__cuda_scalar", "rg_bf16_relugrad_general__cuda_v16"}},
      {{"rg_f64_relugrad_select_nan_open__cuda_scalar", "rg_f64_relugrad_select_nan_open__cuda_v16"},
       {"rg_f64_relugrad_select_nan_closed__cuda_scalar", "rg_f64_relugrad_select_nan_closed__cuda_v16"},
       {"rg_f64_relugrad_general__cuda_scalar", "rg_f64_relugrad_general__cuda_v16"}},
  };
  const int d = static_cast<int>(dtype) - 1;  // Dtype numbering starts at 1
  if (d < 0 || d > 3) return "rg_unknown__cuda";
  return kNames[d][static_cast<int>(mode)][vector ? 1 : 0];
}

cudaError_t LaunchReluGrad(Dtype dtype, Mode mode, const VectorPlan& plan, int64_t n,
                           const void* dy, const void* s, void* dx, const DeviceParams& p,
                           cudaStream_t stream, int max_blocks) {
  switch (dtype) {
    case Dtype::kF32: return LaunchMode<Dtype::kF32>(mode, plan, n, dy, s, dx, p, stream, max_blocks);
    case Dtype::kF16: return LaunchMode<Dtype::kF16>(mode, plan, n, dy, s, dx, p, stream, max_blocks);
    case Dtype::kBF16: return LaunchMode<Dtype::kBF16>(mode, plan, n, dy, s, dx, p, stream, max_blocks);
    case Dtype::kF64: return LaunchMode<Dtype::kF64>(mode, plan, n, dy, s, dx, p, stream, max_blocks);
  }
  return cudaErrorInvalidValue;
}

}  // namespace cuda
}  // namespace relugrad
