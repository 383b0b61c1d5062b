// The per-target block kernels of the 1-bit mask path (mask_kernels.cc,
// compiled from mask-inl.h for every Highway target).
#ifndef RELUGRAD_CPU_MASK_KERNELS_H_
#define RELUGRAD_CPU_MASK_KERNELS_H_

#include <cstdint>

#include "core/semantics.h"

namespace relugrad {

// y[begin, end) and mask bits [begin, end). begin is a multiple of 8 (the
// block owns whole mask bytes); pointers are the arrays' bases.
// stream: non-temporal stores for y (whole vector-aligned groups).
using ForwardKernel = void (*)(const KernelParams& p, const void* x, void* y, uint8_t* mask,
                               int64_t begin, int64_t end, bool stream);
// dx[begin, end) from mask bits [begin, end). begin is a multiple of 8.
using GradMaskKernel = void (*)(const KernelParams& p, const void* dy, const uint8_t* mask,
                                void* dx, int64_t begin, int64_t end, bool stream);

// The kernels of the currently chosen target (respects the ISA cap).
ForwardKernel DispatchForwardKernel(Dtype dtype);
GradMaskKernel DispatchGradMaskKernel(Dtype dtype);

}  // namespace relugrad

#endif  // RELUGRAD_CPU_MASK_KERNELS_H_
