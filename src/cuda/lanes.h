// 16-byte vectors and their lanes, the unit every CUDA kernel body moves
// (relu_grad_kernels.cuh, mask_kernels.cu, dropout_kernels.cu). Host-and-device
// code, as the bodies are (launch_plan.h).
#ifndef RELUGRAD_CUDA_LANES_H_
#define RELUGRAD_CUDA_LANES_H_

#include <cstdint>

#include "core/dtype_traits.h"

namespace relugrad {
namespace cuda {

constexpr int kVectorBytes = 16;

// Full unrolling on the device keeps the lane arrays in registers (a
// dynamically indexed array would live in local memory).
#if defined(__CUDA_ARCH__)
#define RG_UNROLL _Pragma("unroll")
#else
#define RG_UNROLL
#endif

// 16 bytes moved as one access (ld/st.global.v4.u32 on the device).
struct alignas(16) Bytes16 {
  uint32_t w[4];
};

template <Dtype D>
union Lanes16 {
  Bytes16 v;
  typename DtypeTraits<D>::Bits lane[kVectorBytes / sizeof(typename DtypeTraits<D>::Bits)];
};

}  // namespace cuda
}  // namespace relugrad

#endif  // RELUGRAD_CUDA_LANES_H_
