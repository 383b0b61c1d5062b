// The ReluGrad CUDA kernels: one rule per element (element.h), a 16-byte
// vector body with scalar head and tail, or an all-scalar kernel when the
// three pointers disagree on their offset within 16 bytes. The work is
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

constexpr int kVectorBytes = 16;

template <Dtype D>
union Vector16 {
  uint4 v;
  typename DtypeTraits<D>::Bits lane[kVectorBytes / sizeof(typename DtypeTraits<D>::Bits)];
};

// Vector body over [head, head + vectors * lanes), then the `head` leading
// and `tail` trailing elements done one by one by the first threads.
template <Dtype D, Mode M>
__global__ void __launch_bounds__(kThreadsPerBlock)
    ReluGradVector16(DeviceParams p, int64_t head, int64_t vectors, int64_t tail,
                     const typename DtypeTraits<D>::Bits* dy,
                     const typename DtypeTraits<D>::Bits* s,
                     typename DtypeTraits<D>::Bits* dx) {
  using Bits = typename DtypeTraits<D>::Bits;
  constexpr int kLanes = kVectorBytes / sizeof(Bits);
  const int64_t tid = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const uint4* dy_v = reinterpret_cast<const uint4*>(dy + head);
  const uint4* s_v = reinterpret_cast<const uint4*>(s + head);
  uint4* dx_v = reinterpret_cast<uint4*>(dx + head);
  for (int64_t i = tid; i < vectors; i += stride) {
    Vector16<D> a, b, out;
    a.v = dy_v[i];
    b.v = s_v[i];
#pragma unroll
    for (int l = 0; l < kLanes; ++l) out.lane[l] = Element<D, M>(p, a.lane[l], b.lane[l]);
    dx_v[i] = out.v;
  }
  if (tid < head + tail) {
    const int64_t i = tid < head ? tid : head + vectors * kLanes + (tid - head);
    dx[i] = Element<D, M>(p, dy[i], s[i]);
  }
}

template <Dtype D, Mode M>
__global__ void __launch_bounds__(kThreadsPerBlock)
    ReluGradScalar(DeviceParams p, int64_t n, const typename DtypeTraits<D>::Bits* dy,
                   const typename DtypeTraits<D>::Bits* s, typename DtypeTraits<D>::Bits* dx) {
  const int64_t tid = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = tid; i < n; i += stride) dx[i] = Element<D, M>(p, dy[i], s[i]);
}

int BlocksFor(int64_t work_items, int max_blocks) {
  const int64_t needed = (work_items + kThreadsPerBlock - 1) / kThreadsPerBlock;
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(needed, std::max(1, max_blocks))));
}

template <Dtype D, Mode M>
cudaError_t Launch(const VectorPlan& plan, int64_t n, const void* dy_v, const void* s_v, void* dx_v,
                   const DeviceParams& p, cudaStream_t stream, int max_blocks) {
  using Bits = typename DtypeTraits<D>::Bits;
  const Bits* dy = static_cast<const Bits*>(dy_v);
  const Bits* s = static_cast<const Bits*>(s_v);
  Bits* dx = static_cast<Bits*>(dx_v);
  if (plan.vector) {
    // The scalar edges are handled by threads 0..head+tail-1, so the grid
    // must have at least that many (head + tail < 2 * 8 <= one block).
    const int blocks = BlocksFor(std::max<int64_t>(plan.vectors, plan.head + plan.tail), max_blocks);
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

VectorPlan PlanVectors(Dtype dtype, int64_t n, const void* dy, const void* s, const void* dx) {
  const int64_t es = DtypeSize(dtype);
  const uintptr_t offset = reinterpret_cast<uintptr_t>(dy) % kVectorBytes;
  VectorPlan plan{false, 0, 0, 0};
  if (reinterpret_cast<uintptr_t>(s) % kVectorBytes != offset ||
      reinterpret_cast<uintptr_t>(dx) % kVectorBytes != offset) {
    return plan;  // no common 16-byte phase: scalar kernel
  }
  const int64_t lanes = kVectorBytes / es;
  // Pointers are element-aligned (validated), so the gap is whole elements.
  const int64_t head = std::min<int64_t>(n, static_cast<int64_t>((kVectorBytes - offset) % kVectorBytes) / es);
  plan.vector = true;
  plan.head = head;
  plan.vectors = (n - head) / lanes;
  plan.tail = n - head - plan.vectors * lanes;
  return plan;
}

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
