// Launchers of the fused ReLU + dropout planes' CUDA kernels
// (dropout_kernels.cu), in the one-shot geometry of dropout_body.h.
#ifndef RELUGRAD_CUDA_DROPOUT_KERNELS_H_
#define RELUGRAD_CUDA_DROPOUT_KERNELS_H_

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "core/dtype_traits.h"

namespace relugrad {
namespace cuda {

// bits = the packed bytes != 0. n > 0.
cudaError_t LaunchPackBits(int64_t n, const uint8_t* bytes, uint8_t* bits, cudaStream_t stream);

// dx from dy and the two planes. `vector`: dy and dx are 16-byte aligned. n > 0.
cudaError_t LaunchReluDropoutGrad(Dtype dtype, int64_t n, const void* dy, const uint8_t* gate,
                                  const uint8_t* keep, double scale, void* dx, bool vector,
                                  cudaStream_t stream);

// rg_pack_bits__cuda_<u64 | bytes> / rg_<dtype>_relu_dropout_grad__cuda_<v16 | scalar>.
std::string DropoutKernelName(Dtype dtype, bool pack, bool vector);

}  // namespace cuda
}  // namespace relugrad

#endif  // RELUGRAD_CUDA_DROPOUT_KERNELS_H_
