// The per-target block kernels (cpu_kernels.cc) and the run-time choice of
// SIMD target (isa.cc).
#ifndef RELUGRAD_CPU_CPU_KERNELS_H_
#define RELUGRAD_CPU_CPU_KERNELS_H_

#include <cstdint>
#include <string>
#include <vector>

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

// Targets compiled in and attainable on this CPU, best first (Highway names,
// lower case), and the one dispatch uses now.
std::vector<std::string> AttainableIsas();
std::string SelectedIsa();

// Caps dispatch at `name`; nullptr, "" or "best" restore the default
// selection (Highway's best target, except AVX2 on AMD Zen 4: isa.cc).
// Applies RELUGRAD_MAX_ISA, or the default, on first use of the library.
relugrad_status SetMaxIsa(const char* name);
void ApplyIsaEnvironmentOnce();
// What the default selection ("best", no RELUGRAD_MAX_ISA) stops at, and why.
std::string DefaultIsaCapDescription();

}  // namespace relugrad

#endif  // RELUGRAD_CPU_CPU_KERNELS_H_
