// The run-time choice of SIMD target: which Highway targets this build and
// CPU offer, which one dispatch uses now, and the cap on it
// (relugrad_set_max_isa, RELUGRAD_MAX_ISA). Process-wide state below every
// folder that dispatches or reports a target: the CPU kernels, the profiler,
// the benchmark triad and the C ABI's info.
#ifndef RELUGRAD_ISA_ISA_H_
#define RELUGRAD_ISA_ISA_H_

#include <string>
#include <vector>

#include "relugrad/relugrad.h"

namespace relugrad {

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

#endif  // RELUGRAD_ISA_ISA_H_
