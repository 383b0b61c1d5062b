// The CPU backend of the 1-bit mask path: the shared WorkPlan, with block
// boundaries on whole mask bytes, and the dispatched Highway block kernels on
// the worker pool (as cpu_backend.h does for the gate-from-s path).
#ifndef RELUGRAD_CPU_MASK_BACKEND_H_
#define RELUGRAD_CPU_MASK_BACKEND_H_

#include <cstdint>

#include "core/semantics.h"
#include "core/work_plan.h"

namespace relugrad {

// The plan for n elements whose large output (y or dx) starts at
// `out_address`: 64-byte units of that output (cpu_backend.h's grain and
// unit) and every block boundary on a multiple of 8 elements, so a block
// owns whole mask bytes and no two threads ever write one byte. When the
// output's misalignment makes both impossible (an element offset that is not
// a multiple of 8 from a cache line), the byte rule wins and one line per
// boundary is shared (false sharing only, never a race).
WorkPlan MakeMaskWorkPlan(int64_t n, int elem_bytes, uintptr_t out_address, int threads);

// Outputs (y or dx) of at least this many bytes that alias no input are
// written with non-temporal stores: then dy + dx exceed the 32 MiB L3 here
// and a read for ownership would add 4 bytes per f32 element to the 8.125
// the mask path needs (bench/mask: measured with and without).
constexpr int64_t kMaskStreamBytes = 8 << 20;

// For A/B benchmarks and tests only: overrides kMaskStreamBytes process-wide
// (0 restores it, a negative value disables streaming). Same bits either way.
void SetMaskStreamBytesForBenchmark(int64_t bytes);

// threads: 0 = all cores. Arguments already validated.
// stores: the caller's hint (relugrad.h), AUTO at kMaskStreamBytes.
relugrad_status CpuReluForward(Dtype dtype, int64_t n, const void* x, void* y, uint8_t* mask,
                               const KernelParams& params, int threads,
                               relugrad_stores stores = RELUGRAD_STORES_AUTO);
relugrad_status CpuReluGradMask(Dtype dtype, int64_t n, const void* dy, const uint8_t* mask,
                                void* dx, const KernelParams& params, int threads,
                                relugrad_stores stores = RELUGRAD_STORES_AUTO);

}  // namespace relugrad

#endif  // RELUGRAD_CPU_MASK_BACKEND_H_
