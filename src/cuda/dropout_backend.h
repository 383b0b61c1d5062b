// CUDA entry points of the fused ReLU + dropout planes (device pointers,
// launched on `stream`, a cudaStream_t or nullptr for the default stream;
// arguments already validated by api/dropout.cc). The CUDA row of the
// backend interface (backend_row.cc) calls them with the options' stream.
#ifndef RELUGRAD_CUDA_DROPOUT_BACKEND_H_
#define RELUGRAD_CUDA_DROPOUT_BACKEND_H_

#include <cstdint>

#include "core/semantics.h"

namespace relugrad {

relugrad_status CudaPackBits(int64_t n, const uint8_t* bytes, uint8_t* bits, void* stream);
relugrad_status CudaReluDropoutGrad(Dtype dtype, int64_t n, const void* dy, const uint8_t* gate,
                                    const uint8_t* keep, double scale, void* dx, void* stream);

}  // namespace relugrad

#endif  // RELUGRAD_CUDA_DROPOUT_BACKEND_H_
