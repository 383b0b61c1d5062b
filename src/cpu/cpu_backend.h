// The CPU backend: splits the work with the shared WorkPlan, runs the
// dispatched Highway block kernel on the worker pool.
#ifndef RELUGRAD_CPU_CPU_BACKEND_H_
#define RELUGRAD_CPU_CPU_BACKEND_H_

#include <cstdint>

#include "core/semantics.h"

namespace relugrad {

// Below this many bytes of dx per block, fewer blocks are used: a wake-up
// costs about as much as computing 16 KiB in L1 here (REFERENCE.md: two
// threads lose at 4K f32 elements and win from 64K).
constexpr int64_t kCpuGrainBytes = 64 * 1024;
// Block boundaries fall on cache lines of dx: no two threads write one line.
constexpr int64_t kCpuUnitBytes = 64;

// threads: 0 = all cores. Arguments already validated.
relugrad_status CpuReluGrad(Dtype dtype, int64_t n, const void* dy, const void* s, void* dx,
                            const KernelParams& params, int threads);

// Worker count for threads == 0.
int DefaultThreads();

}  // namespace relugrad

#endif  // RELUGRAD_CPU_CPU_BACKEND_H_
