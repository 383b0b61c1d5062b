// The plan: one operator for one dtype with its options resolved once.
// Create validates every option, splits them into Rules and Execution,
// derives the KernelParams, picks the backend's row and asks it whether it
// implements the op; a run (api/plan_run.h) checks only n and the arrays,
// then calls the row's entry point.
#ifndef RELUGRAD_CORE_PLAN_H_
#define RELUGRAD_CORE_PLAN_H_

#include <cstdint>

#include "core/backend.h"
#include "core/dtype_traits.h"
#include "core/error.h"
#include "core/rules.h"
#include "core/semantics.h"
#include "core/validate.h"
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

}  // namespace relugrad

#endif  // RELUGRAD_CORE_PLAN_H_
