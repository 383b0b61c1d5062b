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

#include <cstdint>
#include <cstdlib>
#include <string>

namespace relugrad {
namespace cuda {
namespace {

// The bodies live in kernel_body.h (shared with the host tests); these
// wrappers only supply the thread's index and the grid's stride.
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
    ReluGradScalar(DeviceParams p, int64_t n, const typename DtypeTraits<D>::Bits* dy,
                   const typename DtypeTraits<D>::Bits* s, typename DtypeTraits<D>::Bits* dx) {
  const int64_t tid = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  ScalarBody<D, M>(p, n, dy, s, dx, tid, stride);
}

template <Dtype D, Mode M>
cudaError_t Launch(const VectorPlan& plan, int64_t n, const void* dy_v, const void* s_v, void* dx_v,
                   const DeviceParams& p, cudaStream_t stream, int max_blocks, int unroll) {
  using Bits = typename DtypeTraits<D>::Bits;
  const Bits* dy = static_cast<const Bits*>(dy_v);
  const Bits* s = static_cast<const Bits*>(s_v);
  Bits* dx = static_cast<Bits*>(dx_v);
  if (plan.vector) {
    const int blocks = BlocksFor(VectorWorkItems(plan), max_blocks);
    if (unroll == 2) {
      ReluGradVector16<D, M, 2><<<blocks, kThreadsPerBlock, 0, stream>>>(p, plan.head, plan.vectors,
                                                                         plan.tail, dy, s, dx);
    } else {
      ReluGradVector16<D, M, 1><<<blocks, kThreadsPerBlock, 0, stream>>>(p, plan.head, plan.vectors,
                                                                         plan.tail, dy, s, dx);
    }
  } else {
    ReluGradScalar<D, M>
        <<<BlocksFor(n, max_blocks), kThreadsPerBlock, 0, stream>>>(p, n, dy, s, dx);
  }
  return cudaGetLastError();
}

template <Dtype D>
cudaError_t LaunchMode(Mode mode, const VectorPlan& plan, int64_t n, const void* dy, const void* s,
                       void* dx, const DeviceParams& p, cudaStream_t stream, int max_blocks,
                       int unroll) {
  switch (mode) {
    case Mode::kSelectNanOpen:
      return Launch<D, Mode::kSelectNanOpen>(plan, n, dy, s, dx, p, stream, max_blocks, unroll);
    case Mode::kSelectNanClosed:
      return Launch<D, Mode::kSelectNanClosed>(plan, n, dy, s, dx, p, stream, max_blocks, unroll);
    case Mode::kGeneral:
      return Launch<D, Mode::kGeneral>(plan, n, dy, s, dx, p, stream, max_blocks, unroll);
  }
  return cudaErrorInvalidValue;
}

}  // namespace

int VectorUnroll() {
  // Read once: RELUGRAD_CUDA_UNROLL=1 or 2 (A/B switch for bench/gpu/check.sh).
  static const int unroll = [] {
    const char* v = std::getenv("RELUGRAD_CUDA_UNROLL");
    return (v != nullptr && v[0] == '1' && v[1] == '\0') ? 1 : kDefaultVectorUnroll;
  }();
  return unroll;
}

std::string KernelName(Dtype dtype, Mode mode, bool vector, int unroll) {
  static const char* const kDtypes[4] = {"f32", "f16", "bf16", "f64"};
  static const char* const kModes[3] = {"select_nan_open", "select_nan_closed", "general"};
  const int d = static_cast<int>(dtype) - 1;  // Dtype numbering starts at 1
  const int m = static_cast<int>(mode);
  std::string name = std::string("rg_") + (d >= 0 && d < 4 ? kDtypes[d] : "unknown") +
                     "_relugrad_" + (m >= 0 && m < 3 ? kModes[m] : "unknown") + "__cuda_";
  if (!vector) return name + "scalar";
  return name + (unroll == 2 ? "v16x2" : "v16");
}

cudaError_t LaunchReluGrad(Dtype dtype, Mode mode, const VectorPlan& plan, int64_t n,
                           const void* dy, const void* s, void* dx, const DeviceParams& p,
                           cudaStream_t stream, int max_blocks, int unroll) {
  switch (dtype) {
    case Dtype::kF32:
      return LaunchMode<Dtype::kF32>(mode, plan, n, dy, s, dx, p, stream, max_blocks, unroll);
    case Dtype::kF16:
      return LaunchMode<Dtype::kF16>(mode, plan, n, dy, s, dx, p, stream, max_blocks, unroll);
    case Dtype::kBF16:
      return LaunchMode<Dtype::kBF16>(mode, plan, n, dy, s, dx, p, stream, max_blocks, unroll);
    case Dtype::kF64:
      return LaunchMode<Dtype::kF64>(mode, plan, n, dy, s, dx, p, stream, max_blocks, unroll);
  }
  return cudaErrorInvalidValue;
}

}  // namespace cuda
}  // namespace relugrad
