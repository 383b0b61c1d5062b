// The C entry points of plans: create (every check that does not depend on
// the arrays, done once), run (the array checks, then the backend), the
// queries a binding needs, destroy.
#include <cstddef>
#include <cstring>
#include <new>

#include "api/plan_run.h"
#include "core/error.h"
#include "relugrad/relugrad.h"

namespace relugrad {
namespace {

// A NULL plan or one of an op that `run` does not run: the caller's mistake.
relugrad_status FailNotRunnable(const relugrad_plan* plan, const char* run, const char* other) {
  if (plan == nullptr) return Fail(RELUGRAD_INVALID_ARGUMENT, "plan is NULL");
  return Fail(RELUGRAD_INVALID_ARGUMENT, "%s cannot run a %s plan (use %s)", run,
              relugrad_enum_name(RELUGRAD_ENUM_PLAN_OP, plan->op), other);
}

}  // namespace
}  // namespace relugrad

extern "C" {

relugrad_status relugrad_plan_create(relugrad_plan_op op, relugrad_dtype dtype,
                                     const relugrad_options* options, relugrad_plan** out) {
  using namespace relugrad;
  ClearLastError();
  if (out == nullptr) return Fail(RELUGRAD_INVALID_ARGUMENT, "out is NULL");
  *out = nullptr;
  relugrad_plan built;
  RELUGRAD_RETURN_IF_ERROR(BuildPlan(op, dtype, options, &built));
  relugrad_plan* plan = new (std::nothrow) relugrad_plan(built);
  if (plan == nullptr) return Fail(RELUGRAD_INTERNAL_ERROR, "out of memory for a plan");
  *out = plan;
  return RELUGRAD_OK;
}

void relugrad_plan_destroy(relugrad_plan* plan) { delete plan; }

relugrad_status relugrad_plan_run(const relugrad_plan* plan, int64_t n, const void* a,
                                  const void* b, void* out) {
  using namespace relugrad;
  ClearLastError();
  if (plan != nullptr && plan->op == RELUGRAD_OP_RELU_GRAD) return RunReluGrad(*plan, n, a, b, out);
  if (plan != nullptr && plan->op == RELUGRAD_OP_RELU_GRAD_MASK)
    return RunReluGradMask(*plan, n, a, static_cast<const uint8_t*>(b), out);
  return FailNotRunnable(plan, "relugrad_plan_run", "relugrad_plan_run_forward");
}

relugrad_status relugrad_plan_run_forward(const relugrad_plan* plan, int64_t n, const void* x,
                                          void* y, uint8_t* mask) {
  using namespace relugrad;
  ClearLastError();
  if (plan == nullptr || plan->op != RELUGRAD_OP_RELU_FORWARD_MASK)
    return FailNotRunnable(plan, "relugrad_plan_run_forward", "relugrad_plan_run");
  return RunReluForwardMask(*plan, n, x, y, mask);
}

relugrad_plan_op relugrad_plan_get_op(const relugrad_plan* plan) {
  return plan == nullptr ? static_cast<relugrad_plan_op>(0) : plan->op;
}

relugrad_dtype relugrad_plan_get_dtype(const relugrad_plan* plan) {
  return plan == nullptr ? static_cast<relugrad_dtype>(0)
                         : static_cast<relugrad_dtype>(plan->dtype);
}

const char* relugrad_plan_variant(const relugrad_plan* plan) {
  if (plan == nullptr || plan->backend->variant_name == nullptr) return "";
  const char* name = plan->backend->variant_name(plan->op, plan->variant);
  return name == nullptr ? "" : name;
}

relugrad_status relugrad_plan_get_options(const relugrad_plan* plan, relugrad_options* out) {
  using namespace relugrad;
  ClearLastError();
  if (plan == nullptr || out == nullptr)
    return Fail(RELUGRAD_INVALID_ARGUMENT, "%s is NULL", plan == nullptr ? "plan" : "out");
  const uint32_t size = out->struct_size;
  if (size < offsetof(relugrad_options, threshold) || size > sizeof(relugrad_options)) {
    return Fail(RELUGRAD_INVALID_ARGUMENT,
                "out->struct_size is %u; initialise it with relugrad_options_init()", size);
  }
  std::memcpy(out, &plan->options, size);
  out->struct_size = size;
  return RELUGRAD_OK;
}

}  // extern "C"
