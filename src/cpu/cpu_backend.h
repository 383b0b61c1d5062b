// The CPU backend: runs the dispatched Highway block kernel over the blocks
// and chunks the launch policy (cpu/launch.h) decides, on the worker pool.
#ifndef RELUGRAD_CPU_CPU_BACKEND_H_
#define RELUGRAD_CPU_CPU_BACKEND_H_

#include <cstdint>

#include "core/semantics.h"
#include "cpu/launch.h"
#include "cpu/variants.h"

namespace relugrad {

// threads: 0 = all cores. Arguments already validated. Blocks, chunks,
// stores and wake-ups as LaunchPolicy::ForThisMachine() decides.
relugrad_status CpuReluGrad(Dtype dtype, int64_t n, const void* dy, const void* s, void* dx,
                            const KernelParams& params, int threads,
                            relugrad_stores stores = RELUGRAD_STORES_AUTO);
// The same with the kernel variant chosen beforehand (a plan's: it is
// SelectCpuVariant(dtype, params), selected once at create).
relugrad_status CpuReluGrad(Dtype dtype, int64_t n, const void* dy, const void* s, void* dx,
                            const KernelParams& params, int threads, relugrad_stores stores,
                            CpuVariantId variant);
// The same under `policy` (tests and benchmarks: a forced split, a forced
// store), with the variant selected here unless given.
relugrad_status CpuReluGrad(Dtype dtype, int64_t n, const void* dy, const void* s, void* dx,
                            const KernelParams& params, int threads, relugrad_stores stores,
                            const LaunchPolicy& policy);
relugrad_status CpuReluGrad(Dtype dtype, int64_t n, const void* dy, const void* s, void* dx,
                            const KernelParams& params, int threads, relugrad_stores stores,
                            const LaunchPolicy& policy, CpuVariantId variant);

// Worker count for threads == 0.
int DefaultThreads();

}  // namespace relugrad

#endif  // RELUGRAD_CPU_CPU_BACKEND_H_
