// Entry points of the non-CPU backends. Each backend folder provides them;
// when a backend is not built, its *_unavailable.cc returns UNSUPPORTED.
#ifndef RELUGRAD_CORE_BACKENDS_H_
#define RELUGRAD_CORE_BACKENDS_H_

#include <cstdint>

#include "core/semantics.h"

namespace relugrad {

// Device pointers; runs on semantics.stream. Arguments already validated.
bool CudaBackendBuilt();
relugrad_status CudaReluGrad(Dtype dtype, int64_t n, const void* dy, const void* s, void* dx,
                             const KernelParams& params, const Semantics& semantics);

// The AscendC kernel executed by the CPU twin (host pointers).
bool AscendTwinBuilt();
relugrad_status AscendTwinReluGrad(Dtype dtype, int64_t n, const void* dy, const void* s, void* dx,
                                   const KernelParams& params, const Semantics& semantics);

}  // namespace relugrad

#endif  // RELUGRAD_CORE_BACKENDS_H_
