// CUDA entry points of the 1-bit mask path (device pointers, semantics.stream;
// arguments already validated by api/mask.cc, which calls them for
// RELUGRAD_BACKEND_CUDA); cuda_unavailable.cc provides the UNSUPPORTED stubs
// when the backend is not built.
#ifndef RELUGRAD_CUDA_CUDA_MASK_H_
#define RELUGRAD_CUDA_CUDA_MASK_H_

#include <cstdint>

#include "core/semantics.h"

namespace relugrad {

relugrad_status CudaReluForwardMask(Dtype dtype, int64_t n, const void* x, void* y, uint8_t* mask,
                                    const KernelParams& params, const Semantics& semantics);
relugrad_status CudaReluGradMask(Dtype dtype, int64_t n, const void* dy, const uint8_t* mask,
                                 void* dx, const KernelParams& params, const Semantics& semantics);

}  // namespace relugrad

#endif  // RELUGRAD_CUDA_CUDA_MASK_H_
