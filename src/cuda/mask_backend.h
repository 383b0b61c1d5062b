// CUDA entry points of the 1-bit mask path (device pointers, launched on
// `stream`, a cudaStream_t or nullptr for the default stream; arrays already
// validated by the plan). The CUDA row of the backend interface
// (backend_row.cc) calls them with its plan's stream.
#ifndef RELUGRAD_CUDA_MASK_BACKEND_H_
#define RELUGRAD_CUDA_MASK_BACKEND_H_

#include <cstdint>

#include "core/semantics.h"

namespace relugrad {

relugrad_status CudaReluForwardMask(Dtype dtype, int64_t n, const void* x, void* y, uint8_t* mask,
                                    const KernelParams& params, void* stream);
relugrad_status CudaReluGradMask(Dtype dtype, int64_t n, const void* dy, const uint8_t* mask,
                                 void* dx, const KernelParams& params, void* stream);

}  // namespace relugrad

#endif  // RELUGRAD_CUDA_MASK_BACKEND_H_
