// The CPU backend of the 1-bit mask path: the dispatched Highway block
// kernels over the launch policy's blocks, which fall on whole mask bytes,
// on the worker pool (as relu_grad_backend.h does for the gate-from-s path).
#ifndef RELUGRAD_CPU_MASK_BACKEND_H_
#define RELUGRAD_CPU_MASK_BACKEND_H_

#include <cstdint>

#include "core/semantics.h"
#include "cpu/launch.h"

namespace relugrad {

// threads: 0 = all cores. Arguments already validated. Blocks (on whole
// mask bytes), chunks, stores and wake-ups as the launch policy decides
// (cpu/launch.h; stores: the caller's hint, AUTO at mask_stream_bytes).
relugrad_status CpuReluForward(Dtype dtype, int64_t n, const void* x, void* y, uint8_t* mask,
                               const KernelParams& params, int threads,
                               relugrad_stores stores = RELUGRAD_STORES_AUTO);
relugrad_status CpuReluGradMask(Dtype dtype, int64_t n, const void* dy, const uint8_t* mask,
                                void* dx, const KernelParams& params, int threads,
                                relugrad_stores stores = RELUGRAD_STORES_AUTO);
// The same under `policy` (tests and benchmarks).
relugrad_status CpuReluForward(Dtype dtype, int64_t n, const void* x, void* y, uint8_t* mask,
                               const KernelParams& params, int threads, relugrad_stores stores,
                               const LaunchPolicy& policy);
relugrad_status CpuReluGradMask(Dtype dtype, int64_t n, const void* dy, const uint8_t* mask,
                                void* dx, const KernelParams& params, int threads,
                                relugrad_stores stores, const LaunchPolicy& policy);

}  // namespace relugrad

#endif  // RELUGRAD_CPU_MASK_BACKEND_H_
