// The plan: one operator for one dtype with its options resolved once.
// Create validates every option, splits them into Rules and Execution,
// derives the KernelParams, picks the backend's row and asks it whether it
// implements the op; a run checks only n and the arrays, then calls the
// row's entry point. The C ABI's plans (api/plan.cc) and its one-shot calls
// (api/relu_grad.cc, api/mask.cc) both run through here, so a one-shot call
// and a plan run of the same options give the same checks, messages and
// bits.
#ifndef RELUGRAD_CORE_PLAN_H_
#define RELUGRAD_CORE_PLAN_H_

#include <cstdint>

#include "core/backend.h"
#include "core/dtype_traits.h"
#include "core/error.h"
#include "core/rules.h"
#include "core/semantics.h"
#include "core/validate.h"
#include "profile/profile.h"
#include "relugrad/relugrad.h"

// The C ABI's opaque type. Immutable after BuildPlan: runs only read it.
// Every member has a constant initialiser, so a thread-local plan (the
// one-shot calls' entry, api/one_shot_plan.h) needs no guard on access.
struct relugrad_plan {
  relugrad_plan_op op = RELUGRAD_OP_RELU_GRAD;
  relugrad::Dtype dtype = relugrad::Dtype::kF32;
  relugrad_options options = {};  // as resolved (full size, threads capped)
  relugrad::Rules rules;
  relugrad::KernelParams params;
  relugrad::Execution execution;
  const relugrad::BackendOps* backend = nullptr;
  int32_t variant = -1;  // backend->select_variant's choice (-1: none)
};

namespace relugrad {

// Fills *plan from op, dtype and options, or fails with the thread's last
// error set (INVALID_ARGUMENT, or UNSUPPORTED from the backend's Supports);
// *plan is then unspecified. Allocates nothing.
relugrad_status BuildPlan(relugrad_plan_op op, relugrad_dtype dtype,
                          const relugrad_options* options, relugrad_plan* plan);

inline int64_t MaskBytes(int64_t n) { return n / 8 + (n % 8 != 0 ? 1 : 0); }  // n >= 0

// The mask may share no byte with any array, not even by being equal to it:
// unlike dx over dy, the mask and the data have different layouts.
inline relugrad_status ValidateMaskDisjoint(const void* mask, int64_t mask_bytes, const char* name,
                                            const void* p, int64_t bytes) {
  if (mask_bytes == 0 || bytes == 0) return RELUGRAD_OK;
  const uintptr_t m = reinterpret_cast<uintptr_t>(mask);
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  if (m + static_cast<uintptr_t>(mask_bytes) <= a || a + static_cast<uintptr_t>(bytes) <= m)
    return RELUGRAD_OK;
  return Fail(RELUGRAD_INVALID_ARGUMENT, "mask overlaps %s (the mask must not alias any array)",
              name);
}

// The runs of a built plan of the matching op: the array checks of the
// op's one-shot call, then the backend's entry point, timed under
// RELUGRAD_PROFILE. Inline, so a one-shot call pays no extra call for them.
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

#endif  // RELUGRAD_CORE_PLAN_H_
