// The C entry points' path under a launch policy of the test's choosing: the
// options resolved as the entry point resolves them, its profiler scope,
// then the CPU backend with `policy` (the library itself always passes
// LaunchPolicy::ForThisMachine()). For tests that check how a call splits
// or stores, whatever the pool's state.
#ifndef RELUGRAD_TESTS_POLICY_CALLS_H_
#define RELUGRAD_TESTS_POLICY_CALLS_H_

#include <cstdint>

#include "core/dtype_traits.h"
#include "core/rules.h"
#include "core/semantics.h"
#include "cpu/launch.h"
#include "cpu/mask_backend.h"
#include "cpu/relu_grad_backend.h"
#include "cpu/variants.h"
#include "profile/profile.h"
#include "relugrad/relugrad.h"

namespace relugrad {
namespace testing {

// This machine's policy, except that every call that may split does, and
// wakes the workers: the split no longer depends on whether they slept.
inline LaunchPolicy AlwaysSplitPolicy() {
  LaunchPolicy policy = LaunchPolicy::ForThisMachine();
  policy.wake_bytes = 1;
  return policy;
}

inline const char* RuleOf(const Rules& sem) {
  return profile::RuleLabel(sem.gate == RELUGRAD_GATE_PASS_IF_GT,
                            sem.combine == RELUGRAD_COMBINE_MULTIPLY);
}

// The options as a plan resolves them, for the CPU backend's own entry points.
struct Resolved {
  Rules rules;
  Execution exec;
  KernelParams params;
};

inline bool Resolve(const relugrad_options& o, Dtype d, Resolved* r) {
  if (ResolveOptions(&o, &r->rules, &r->exec) != RELUGRAD_OK) return false;
  r->params = MakeKernelParams(d, r->rules);
  return true;
}

// relugrad_relu_grad on the CPU backend under `policy`; options already valid.
inline relugrad_status ReluGradUnderPolicy(relugrad_dtype dtype, int64_t n, const void* dy,
                                           const void* s, void* dx, const relugrad_options& o,
                                           const LaunchPolicy& policy) {
  const Dtype d = ToDtype(dtype);
  Resolved r;
  if (!Resolve(o, d, &r)) return RELUGRAD_INVALID_ARGUMENT;
  profile::CallScope scope("relu_grad", d, n, 3.0 * static_cast<double>(n) * DtypeSize(d),
                           RuleOf(r.rules));
  return CpuReluGrad(d, n, dy, s, dx, r.params, r.exec.threads, r.exec.stores,
                     SelectCpuVariant(d, r.params), policy);
}

// relugrad_relu_forward likewise.
inline relugrad_status ReluForwardUnderPolicy(relugrad_dtype dtype, int64_t n, const void* x,
                                              void* y, uint8_t* mask, const relugrad_options& o,
                                              const LaunchPolicy& policy) {
  const Dtype d = ToDtype(dtype);
  Resolved r;
  if (!Resolve(o, d, &r)) return RELUGRAD_INVALID_ARGUMENT;
  profile::CallScope scope(
      "relu_forward", d, n,
      2.0 * static_cast<double>(n) * DtypeSize(d) + static_cast<double>((n + 7) / 8),
      RuleOf(r.rules));
  return CpuReluForward(d, n, x, y, mask, r.params, r.exec.threads, r.exec.stores, policy);
}

// relugrad_relu_grad_mask likewise.
inline relugrad_status ReluGradMaskUnderPolicy(relugrad_dtype dtype, int64_t n, const void* dy,
                                               const uint8_t* mask, void* dx,
                                               const relugrad_options& o,
                                               const LaunchPolicy& policy) {
  const Dtype d = ToDtype(dtype);
  Resolved r;
  if (!Resolve(o, d, &r)) return RELUGRAD_INVALID_ARGUMENT;
  profile::CallScope scope(
      "relu_grad_mask", d, n,
      2.0 * static_cast<double>(n) * DtypeSize(d) + static_cast<double>((n + 7) / 8),
      RuleOf(r.rules));
  return CpuReluGradMask(d, n, dy, mask, dx, r.params, r.exec.threads, r.exec.stores, policy);
}

}  // namespace testing
}  // namespace relugrad

#endif  // RELUGRAD_TESTS_POLICY_CALLS_H_
