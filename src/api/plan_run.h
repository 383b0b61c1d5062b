// The runs of a built plan: the array checks of the op's one-shot call, then
// the backend row's entry point, timed under RELUGRAD_PROFILE. The C ABI's
// plans (api/plan.cc) and its one-shot calls (api/relu_grad.cc, api/mask.cc)
// both run through here, so a one-shot call and a plan run of the same
// options give the same checks, messages and bits. Here in api/, above the
// profiler, rather than beside BuildPlan in core/: core is below every
// folder that the profiler sees (cpu reports its blocks to it).
#ifndef RELUGRAD_API_PLAN_RUN_H_
#define RELUGRAD_API_PLAN_RUN_H_

#include <cstdint>

#include "core/dtype_traits.h"
#include "core/error.h"
#include "core/plan.h"
#include "core/rules.h"
#include "core/validate.h"
#include "profile/profile.h"
#include "relugrad/relugrad.h"

namespace relugrad {

// Each run takes a built plan of the matching op. Inline, so a one-shot call
// pays no extra call for them.
inline relugrad_status RunReluGrad(const relugrad_plan& plan, int64_t n, const void* dy,
                                   const void* s, void* dx) {
  const int64_t es = DtypeSize(plan.dtype);
  RELUGRAD_RETURN_IF_ERROR(ValidateCount(n, es));
  RELUGRAD_RETURN_IF_ERROR(ValidatePointer("dy", dy, n, es));
  RELUGRAD_RETURN_IF_ERROR(ValidatePointer("s", s, n, es));
  RELUGRAD_RETURN_IF_ERROR(ValidatePointer("dx", dx, n, es));
  RELUGRAD_RETURN_IF_ERROR(ValidateAliasing("dx", dx, n * es, "dy", dy, n * es));
  RELUGRAD_RETURN_IF_ERROR(ValidateAliasing("dx", dx, n * es, "s", s, n * es));
  // RELUGRAD_PROFILE: a load and a branch when off.
  profile::CallScope profile_scope(
      "relu_grad", plan.dtype, n, 3.0 * static_cast<double>(n) * static_cast<double>(es),
      profile::RuleLabel(plan.rules.gate == RELUGRAD_GATE_PASS_IF_GT,
                         plan.rules.combine == RELUGRAD_COMBINE_MULTIPLY));
  return plan.backend->relu_grad(plan.params, plan.execution, plan.variant, n, dy, s, dx);
}

namespace internal {

// Returns run(), timed under RELUGRAD_PROFILE as `op` (both mask ops move
// two arrays of n elements of es bytes and the mask). Off, run() stays a
// tail call: a scope with a destructor around it shows in a call at n = 16
// (docs/design.md, "Mask path fixed cost").
template <class Run>
relugrad_status ProfiledMaskOp(const char* op, const relugrad_plan& plan, int64_t n, int64_t es,
                               const Run& run) {
  if (!profile::Enabled()) return run();
  profile::CallScope profile_scope(
      op, plan.dtype, n, 2.0 * static_cast<double>(n) * static_cast<double>(es) + MaskBytes(n),
      profile::RuleLabel(plan.rules.gate == RELUGRAD_GATE_PASS_IF_GT,
                         plan.rules.combine == RELUGRAD_COMBINE_MULTIPLY));
  return run();
}

}  // namespace internal

inline relugrad_status RunReluForwardMask(const relugrad_plan& plan, int64_t n, const void* x,
                                          void* y, uint8_t* mask) {
  const int64_t es = DtypeSize(plan.dtype);
  RELUGRAD_RETURN_IF_ERROR(ValidateCount(n, es));
  const int64_t mb = MaskBytes(n);
  RELUGRAD_RETURN_IF_ERROR(ValidatePointer("x", x, n, es));
  RELUGRAD_RETURN_IF_ERROR(ValidatePointer("y", y, n, es));
  RELUGRAD_RETURN_IF_ERROR(ValidatePointer("mask", mask, mb, 1));
  RELUGRAD_RETURN_IF_ERROR(ValidateAliasing("y", y, n * es, "x", x, n * es));
  RELUGRAD_RETURN_IF_ERROR(ValidateMaskDisjoint(mask, mb, "x", x, n * es));
  RELUGRAD_RETURN_IF_ERROR(ValidateMaskDisjoint(mask, mb, "y", y, n * es));
  return internal::ProfiledMaskOp("relu_forward", plan, n, es, [&] {
    return plan.backend->relu_forward_mask(plan.params, plan.execution, n, x, y, mask);
  });
}

inline relugrad_status RunReluGradMask(const relugrad_plan& plan, int64_t n, const void* dy,
                                       const uint8_t* mask, void* dx) {
  const int64_t es = DtypeSize(plan.dtype);
  RELUGRAD_RETURN_IF_ERROR(ValidateCount(n, es));
  const int64_t mb = MaskBytes(n);
  RELUGRAD_RETURN_IF_ERROR(ValidatePointer("dy", dy, n, es));
  RELUGRAD_RETURN_IF_ERROR(ValidatePointer("mask", mask, mb, 1));
  RELUGRAD_RETURN_IF_ERROR(ValidatePointer("dx", dx, n, es));
  RELUGRAD_RETURN_IF_ERROR(ValidateAliasing("dx", dx, n * es, "dy", dy, n * es));
  RELUGRAD_RETURN_IF_ERROR(ValidateMaskDisjoint(mask, mb, "dy", dy, n * es));
  RELUGRAD_RETURN_IF_ERROR(ValidateMaskDisjoint(mask, mb, "dx", dx, n * es));
  return internal::ProfiledMaskOp("relu_grad_mask", plan, n, es, [&] {
    return plan.backend->relu_grad_mask(plan.params, plan.execution, n, dy, mask, dx);
  });
}

}  // namespace relugrad

#endif  // RELUGRAD_API_PLAN_RUN_H_
