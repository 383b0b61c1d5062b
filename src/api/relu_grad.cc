// The one-shot C entry point of the ReluGrad operator: a plan run once
// (the thread's one-shot plan, api/one_shot_plan.h), and the scalar
// reference. No computation happens here.
#include "api/one_shot_plan.h"
#include "api/plan_run.h"
#include "core/error.h"
#include "core/reference.h"
#include "core/rules.h"
#include "core/validate.h"
#include "relugrad/relugrad.h"

namespace relugrad {
namespace {

// The array checks of relugrad_relu_grad, for the reference.
relugrad_status ValidateArrays(int64_t n, int64_t es, const void* dy, const void* s,
                               const void* dx) {
  RELUGRAD_RETURN_IF_ERROR(ValidatePointer("dy", dy, n, es));
  RELUGRAD_RETURN_IF_ERROR(ValidatePointer("s", s, n, es));
  RELUGRAD_RETURN_IF_ERROR(ValidatePointer("dx", dx, n, es));
  RELUGRAD_RETURN_IF_ERROR(ValidateAliasing("dx", dx, n * es, "dy", dy, n * es));
  RELUGRAD_RETURN_IF_ERROR(ValidateAliasing("dx", dx, n * es, "s", s, n * es));
  return RELUGRAD_OK;
}

}  // namespace
}  // namespace relugrad

extern "C" {

relugrad_status relugrad_relu_grad(relugrad_dtype dtype, int64_t n, const void* dy, const void* s,
                                   void* dx, const relugrad_options* options) {
  using namespace relugrad;
  // The checks in the order of every entry point: dtype, n, options
  // (through the plan), arrays (in the run).
  RELUGRAD_RETURN_IF_ERROR(ValidateDtypeAndCount(dtype, n));
  const relugrad_plan* plan;
  RELUGRAD_RETURN_IF_ERROR(OneShotPlan<RELUGRAD_OP_RELU_GRAD>(dtype, options, &plan));
  return RunReluGrad(*plan, n, dy, s, dx);
}

// The reference resolves its options afresh: the oracle the tests hold the
// fast path to shares no plan with it.
relugrad_status relugrad_relu_grad_reference(relugrad_dtype dtype, int64_t n, const void* dy,
                                             const void* s, void* dx,
                                             const relugrad_options* options) {
  using namespace relugrad;
  RELUGRAD_RETURN_IF_ERROR(ValidateDtypeAndCount(dtype, n));
  Rules rules;
  Execution execution;
  RELUGRAD_RETURN_IF_ERROR(ResolveOptions(options, &rules, &execution));
  RELUGRAD_RETURN_IF_ERROR(
      ValidateArrays(n, static_cast<int64_t>(relugrad_dtype_size(dtype)), dy, s, dx));
  if (execution.backend != RELUGRAD_BACKEND_CPU) {
    return Fail(RELUGRAD_INVALID_ARGUMENT,
                "the reference runs on host memory only (backend must be cpu)");
  }
  ReferenceRun(ToDtype(dtype), n, dy, s, dx, rules);
  return RELUGRAD_OK;
}

const char* relugrad_last_error(void) { return relugrad::LastError(); }

const char* relugrad_status_name(relugrad_status status) {
  switch (status) {
    case RELUGRAD_OK:
      return "ok";
    case RELUGRAD_INVALID_ARGUMENT:
      return "invalid argument";
    case RELUGRAD_UNSUPPORTED:
      return "unsupported";
    case RELUGRAD_INTERNAL_ERROR:
      return "internal error";
  }
  return "unknown status";
}

}  // extern "C"
