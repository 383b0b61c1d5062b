#include "core/plan.h"

#include <cstring>

#include "core/error.h"
#include "core/validate.h"

namespace relugrad {
namespace {

bool ValidOp(relugrad_plan_op op) {
  int v;
  std::memcpy(&v, &op, sizeof(v));  // any int may arrive from C; compare the raw value
  return v >= RELUGRAD_OP_RELU_GRAD && v <= RELUGRAD_OP_RELU_GRAD_MASK;
}

// What the operator itself cannot compute, whatever the backend.
relugrad_status OpSupports(relugrad_plan_op op, const Rules& rules) {
  if (op == RELUGRAD_OP_RELU_FORWARD_MASK && rules.HasGateMax()) {
    // Its y would be the clamp, not max(x, 0); the backward from a mask
    // needs no bound and takes any options.
    return Fail(
        RELUGRAD_UNSUPPORTED,
        "relugrad_relu_forward writes relu(x); a gate with gate_max (hardtanh) has no "
        "mask forward (compute y with the framework, the gradient with relugrad_relu_grad)");
  }
  return RELUGRAD_OK;
}

bool HasEntry(const BackendOps& ops, relugrad_plan_op op) {
  switch (op) {
    case RELUGRAD_OP_RELU_GRAD:
      return ops.relu_grad != nullptr;
    case RELUGRAD_OP_RELU_FORWARD_MASK:
      return ops.relu_forward_mask != nullptr;
    case RELUGRAD_OP_RELU_GRAD_MASK:
      return ops.relu_grad_mask != nullptr;
  }
  return false;
}

}  // namespace

relugrad_status BuildPlan(relugrad_plan_op op, relugrad_dtype dtype,
                          const relugrad_options* options, relugrad_plan* plan) {
  if (!ValidOp(op)) {
    int v;
    std::memcpy(&v, &op, sizeof(v));
    return Fail(RELUGRAD_INVALID_ARGUMENT, "op %d is not a relugrad_plan_op", v);
  }
  RELUGRAD_RETURN_IF_ERROR(ValidateDtype(dtype));
  RELUGRAD_RETURN_IF_ERROR(FullOptions(options, &plan->options));
  RELUGRAD_RETURN_IF_ERROR(ResolveOptions(&plan->options, &plan->rules, &plan->execution));
  plan->options.threads = plan->execution.threads;
  plan->op = op;
  plan->dtype = ToDtype(dtype);
  plan->params = MakeKernelParams(plan->dtype, plan->rules);
  plan->backend = FindBackendOps(plan->execution.backend);  // in range: validated
  RELUGRAD_RETURN_IF_ERROR(plan->backend->supports(op, plan->rules, plan->params));
  RELUGRAD_RETURN_IF_ERROR(OpSupports(op, plan->rules));
  if (!HasEntry(*plan->backend, op)) {
    return Fail(RELUGRAD_INTERNAL_ERROR, "the %s backend accepted an op it has no entry point for",
                plan->backend->name);
  }
  plan->variant = plan->backend->select_variant == nullptr
                      ? -1
                      : plan->backend->select_variant(op, plan->params);
  return RELUGRAD_OK;
}

}  // namespace relugrad
