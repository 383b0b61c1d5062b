// The CPU backend: runs the dispatched Highway block kernel over the blocks
// and chunks the launch policy (cpu/launch.h) decides, on the worker pool.
#ifndef RELUGRAD_CPU_RELU_GRAD_BACKEND_H_
#define RELUGRAD_CPU_RELU_GRAD_BACKEND_H_

#include <cstdint>

#include "core/semantics.h"
#include "cpu/launch.h"
#include "cpu/variants.h"

namespace relugrad {

// dx for n elements with the kernel variant row `variant`, which must be
// SelectCpuVariant(dtype, params) (a plan selects it once at create).
// threads: 0 = all cores. Arguments already validated. Blocks, chunks,
// stores and wake-ups as LaunchPolicy::ForThisMachine() decides.
relugrad_status CpuReluGrad(Dtype dtype, int64_t n, const void* dy, const void* s, void* dx,
                            const KernelParams& params, int threads, relugrad_stores stores,
                            CpuVariantId variant);
// The same under `policy` (tests and benchmarks: a forced split, a forced
// store). Two entry points rather than a defaulted argument: the plan's is
// compiled with this machine's policy as a known object, which keeps small
// calls from paying for a reference.
relugrad_status CpuReluGrad(Dtype dtype, int64_t n, const void* dy, const void* s, void* dx,
                            const KernelParams& params, int threads, relugrad_stores stores,
                            CpuVariantId variant, const LaunchPolicy& policy);

// Worker count for threads == 0.
int DefaultThreads();

}  // namespace relugrad

#endif  // RELUGRAD_CPU_RELU_GRAD_BACKEND_H_
