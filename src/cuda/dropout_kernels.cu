// The fused ReLU + dropout planes' CUDA kernels: thin __global__ wrappers
// around dropout_body.h (shared with the host tests), one-shot geometry.
#include "cuda/dropout_kernels.h"

#include <cuda_runtime.h>

#include "cuda/dropout_body.h"

namespace relugrad {
namespace cuda {
namespace {

__global__ void __launch_bounds__(kOneShotThreads)
    PackBitsOneShot(uint32_t n, const uint8_t* bytes, uint8_t* bits, bool aligned8) {
  OneShotPackBitsBody(n, bytes, bits, aligned8, blockIdx.x, threadIdx.x);
}

template <Dtype D>
__global__ void __launch_bounds__(kOneShotThreads)
    ReluDropoutGradOneShot(uint32_t n, const typename DtypeTraits<D>::Bits* dy, const uint8_t* gate,
                           const uint8_t* keep, float scale_f, double scale_d,
                           typename DtypeTraits<D>::Bits* dx, bool vector) {
  OneShotReluDropoutGradBody<D>(n, dy, gate, keep, scale_f, scale_d, dx, vector, blockIdx.x,
                                threadIdx.x);
}

template <Dtype D>
cudaError_t Grad(int64_t n, const void* dy_v, const uint8_t* gate, const uint8_t* keep,
                 double scale, void* dx_v, bool vector, cudaStream_t stream) {
  using Bits = typename DtypeTraits<D>::Bits;
  const Bits* dy = static_cast<const Bits*>(dy_v);
  Bits* dx = static_cast<Bits*>(dx_v);
  // PyTorch's kernel multiplies by its accumulate type's scale: float for
  // f32/f16/bf16, double for f64 (core/dropout_rule.h).
  const float scale_f = static_cast<float>(scale);
  cudaError_t status = cudaSuccess;
  ForEachDropoutLaunch(n, sizeof(Bits), kMaxLaunchBytes,
                       [&](int64_t first, int64_t count, uint32_t blocks) {
                         if (status != cudaSuccess) return;
                         ReluDropoutGradOneShot<D><<<blocks, kOneShotThreads, 0, stream>>>(
                             static_cast<uint32_t>(count), dy + first, gate + first / 8,
                             keep + first / 8, scale_f, scale, dx + first, vector);
                         status = cudaGetLastError();
                       });
  return status;
}

}  // namespace

cudaError_t LaunchPackBits(int64_t n, const uint8_t* bytes, uint8_t* bits, cudaStream_t stream) {
  const bool aligned8 = reinterpret_cast<uintptr_t>(bytes) % 8 == 0;
  cudaError_t status = cudaSuccess;
  ForEachDropoutLaunch(n, 1, kMaxLaunchBytes, [&](int64_t first, int64_t count, uint32_t blocks) {
    if (status != cudaSuccess) return;
    PackBitsOneShot<<<blocks, kOneShotThreads, 0, stream>>>(
        static_cast<uint32_t>(count), bytes + first, bits + first / 8, aligned8);
    status = cudaGetLastError();
  });
  return status;
}

cudaError_t LaunchReluDropoutGrad(Dtype dtype, int64_t n, const void* dy, const uint8_t* gate,
                                  const uint8_t* keep, double scale, void* dx, bool vector,
                                  cudaStream_t stream) {
  switch (dtype) {
    case Dtype::kF32:
      return Grad<Dtype::kF32>(n, dy, gate, keep, scale, dx, vector, stream);
    case Dtype::kF16:
      return Grad<Dtype::kF16>(n, dy, gate, keep, scale, dx, vector, stream);
    case Dtype::kBF16:
      return Grad<Dtype::kBF16>(n, dy, gate, keep, scale, dx, vector, stream);
    case Dtype::kF64:
      return Grad<Dtype::kF64>(n, dy, gate, keep, scale, dx, vector, stream);
  }
  return cudaErrorInvalidValue;
}

std::string DropoutKernelName(Dtype dtype, bool pack, bool vector) {
  if (pack) return vector ? "rg_pack_bits__cuda_u64" : "rg_pack_bits__cuda_bytes";
  static const char* const kDtypes[4] = {"f32", "f16", "bf16", "f64"};
  const int d = static_cast<int>(dtype) - 1;
  return std::string("rg_") + (d >= 0 && d < 4 ? kDtypes[d] : "unknown") +
         "_relu_dropout_grad__cuda_" + (vector ? "v16" : "scalar");
}

}  // namespace cuda
}  // namespace relugrad
