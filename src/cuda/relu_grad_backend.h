// CUDA entry point of ReluGrad (device pointers, launched on `stream`, a
// cudaStream_t or nullptr for the default stream; arrays already validated by
// the plan). The CUDA row of the backend interface (backend_row.cc) calls it
// with its plan's stream.
#ifndef RELUGRAD_CUDA_RELU_GRAD_BACKEND_H_
#define RELUGRAD_CUDA_RELU_GRAD_BACKEND_H_

#include <cstdint>

#include "core/semantics.h"

namespace relugrad {

relugrad_status CudaReluGrad(const KernelParams& params, void* stream, int64_t n, const void* dy,
                             const void* s, void* dx);

}  // namespace relugrad

#endif  // RELUGRAD_CUDA_RELU_GRAD_BACKEND_H_
