// The one-shot C entry points of the 1-bit mask path: plans run once (the
// thread's one-shot plan of each op, api/one_shot_plan.h). No computation
// happens here.
#include <cstdint>

#include "api/one_shot_plan.h"
#include "api/plan_run.h"
#include "core/error.h"
#include "core/validate.h"
#include "relugrad/relugrad.h"

extern "C" {

int64_t relugrad_mask_bytes(int64_t n) { return n < 0 ? -1 : relugrad::MaskBytes(n); }

relugrad_status relugrad_relu_forward(relugrad_dtype dtype, int64_t n, const void* x, void* y,
                                      uint8_t* mask, const relugrad_options* options) {
  using namespace relugrad;
  RELUGRAD_RETURN_IF_ERROR(ValidateDtypeAndCount(dtype, n));
  const relugrad_plan* plan;
  RELUGRAD_RETURN_IF_ERROR(OneShotPlan<RELUGRAD_OP_RELU_FORWARD_MASK>(dtype, options, &plan));
  return RunReluForwardMask(*plan, n, x, y, mask);
}

relugrad_status relugrad_relu_grad_mask(relugrad_dtype dtype, int64_t n, const void* dy,
                                        const uint8_t* mask, void* dx,
                                        const relugrad_options* options) {
  using namespace relugrad;
  RELUGRAD_RETURN_IF_ERROR(ValidateDtypeAndCount(dtype, n));
  const relugrad_plan* plan;
  RELUGRAD_RETURN_IF_ERROR(OneShotPlan<RELUGRAD_OP_RELU_GRAD_MASK>(dtype, options, &plan));
  return RunReluGradMask(*plan, n, dy, mask, dx);
}

}  // extern "C"
