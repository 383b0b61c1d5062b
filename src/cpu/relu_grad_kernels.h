// The per-target block kernels (relu_grad_kernels.cc); the run-time choice of SIMD
// target they dispatch on is isa/isa.h.
#ifndef RELUGRAD_CPU_RELU_GRAD_KERNELS_H_
#define RELUGRAD_CPU_RELU_GRAD_KERNELS_H_

#include <cstdint>

#include "core/semantics.h"

namespace relugrad {

// Computes dx[begin, end) for one block. Pointers are the arrays' bases.
using BlockKernel = void (*)(const KernelParams& p, const void* dy, const void* s, void* dx,
                             int64_t begin, int64_t end);

// The kernel of the currently chosen target (respects the ISA cap): it
// selects the variant row per call (SelectCpuVariant) and runs its body. A
// caller that holds a selected row takes CpuVariantKernel (variants.h).
BlockKernel DispatchBlockKernel(Dtype dtype);
// Same results, non-temporal stores for dx's whole aligned cache lines: for
// outputs larger than the caches that alias no input .
BlockKernel DispatchStreamingBlockKernel(Dtype dtype);

}  // namespace relugrad

#endif  // RELUGRAD_CPU_RELU_GRAD_KERNELS_H_
