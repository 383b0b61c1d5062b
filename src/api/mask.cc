// The C entry points of the 1-bit mask path: validate, resolve semantics,
// hand the work to a backend (CPU, or CUDA with device pointers). No
// computation happens here.
#include <cstdint>

#include "core/error.h"
#include "core/semantics.h"
#include "core/validate.h"
#include "cpu/mask_backend.h"
#include "cuda/cuda_mask.h"
#include "profile/profile.h"
#include "relugrad/relugrad.h"

namespace relugrad {
namespace {

int64_t MaskBytes(int64_t n) { return n / 8 + (n % 8 != 0 ? 1 : 0); }

// The mask may share no byte with any array, not even by being equal to it:
// unlike dx over dy, the mask and the data have different layouts.
relugrad_status ValidateMaskDisjoint(const void* mask, int64_t mask_bytes, const char* name,
                                     const void* p, int64_t bytes) {
  if (mask_bytes == 0 || bytes == 0) return RELUGRAD_OK;
  const uintptr_t m = reinterpret_cast<uintptr_t>(mask);
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  if (m + static_cast<uintptr_t>(mask_bytes) <= a || a + static_cast<uintptr_t>(bytes) <= m)
    return RELUGRAD_OK;
  return Fail(RELUGRAD_INVALID_ARGUMENT, "mask overlaps %s (the mask must not alias any array)",
              name);
}

relugrad_status ValidateCommon(relugrad_dtype dtype, int64_t n, const relugrad_options* options,
                               const ResolvedCall** call) {
  RELUGRAD_RETURN_IF_ERROR(ValidateDtypeAndCount(dtype, n));
  *call = ResolveCall(options, ToDtype(dtype));
  if (*call == nullptr) return RELUGRAD_INVALID_ARGUMENT;
  if ((*call)->sem.backend == RELUGRAD_BACKEND_ASCEND_TWIN) {
    return Fail(RELUGRAD_UNSUPPORTED,
                "the mask path has no Ascend kernel (use the cpu or cuda backend)");
  }
  return RELUGRAD_OK;
}

// Returns run(), timed under RELUGRAD_PROFILE as `op` (both mask calls move
// two arrays of n elements of es bytes and the mask). Off, run() stays a
// tail call: a scope with a destructor around it cost 4-5 ns of a 60 ns
// call at n = 16 (docs/performance-notes.md, "Mask path fixed cost").
template <class Run>
relugrad_status Profiled(const char* op, Dtype d, int64_t n, int64_t es, const Semantics& sem,
                         const Run& run) {
  if (!profile::Enabled()) return run();
  profile::CallScope profile_scope(op, d, n, 2.0 * static_cast<double>(n) * es + MaskBytes(n),
                                   profile::RuleLabel(sem.gate == RELUGRAD_GATE_PASS_IF_GT,
                                                      sem.combine == RELUGRAD_COMBINE_MULTIPLY));
  return run();
}

}  // namespace
}  // namespace relugrad

extern "C" {

int64_t relugrad_mask_bytes(int64_t n) { return n < 0 ? -1 : relugrad::MaskBytes(n); }

relugrad_status relugrad_relu_forward(relugrad_dtype dtype, int64_t n, const void* x, void* y,
                                      uint8_t* mask, const relugrad_options* options) {
  using namespace relugrad;
  const ResolvedCall* call;
  RELUGRAD_RETURN_IF_ERROR(ValidateCommon(dtype, n, options, &call));
  const Semantics& sem = call->sem;
  if (sem.HasGateMax()) {
    // Its y would be the clamp, not max(x, 0); the backward from a mask
    // (relugrad_relu_grad_mask) needs no bound and takes any options.
    return Fail(
        RELUGRAD_UNSUPPORTED,
        "relugrad_relu_forward writes relu(x); a gate with gate_max (hardtanh) has no "
        "mask forward (compute y with the framework, the gradient with relugrad_relu_grad)");
  }
  const int64_t es = static_cast<int64_t>(relugrad_dtype_size(dtype));
  const int64_t mb = MaskBytes(n);
  RELUGRAD_RETURN_IF_ERROR(ValidatePointer("x", x, n, es));
  RELUGRAD_RETURN_IF_ERROR(ValidatePointer("y", y, n, es));
  RELUGRAD_RETURN_IF_ERROR(ValidatePointer("mask", mask, mb, 1));
  RELUGRAD_RETURN_IF_ERROR(ValidateAliasing("y", y, n * es, "x", x, n * es));
  RELUGRAD_RETURN_IF_ERROR(ValidateMaskDisjoint(mask, mb, "x", x, n * es));
  RELUGRAD_RETURN_IF_ERROR(ValidateMaskDisjoint(mask, mb, "y", y, n * es));
  const Dtype d = ToDtype(dtype);
  const KernelParams& params = call->params;
  return Profiled("relu_forward", d, n, es, sem, [&] {
    if (sem.backend == RELUGRAD_BACKEND_CUDA)
      return CudaReluForwardMask(d, n, x, y, mask, params, sem);
    return CpuReluForward(d, n, x, y, mask, params, sem.threads, sem.stores);
  });
}

relugrad_status relugrad_relu_grad_mask(relugrad_dtype dtype, int64_t n, const void* dy,
                                        const uint8_t* mask, void* dx,
                                        const relugrad_options* options) {
  using namespace relugrad;
  const ResolvedCall* call;
  RELUGRAD_RETURN_IF_ERROR(ValidateCommon(dtype, n, options, &call));
  const Semantics& sem = call->sem;
  const int64_t es = static_cast<int64_t>(relugrad_dtype_size(dtype));
  const int64_t mb = MaskBytes(n);
  RELUGRAD_RETURN_IF_ERROR(ValidatePointer("dy", dy, n, es));
  RELUGRAD_RETURN_IF_ERROR(ValidatePointer("mask", mask, mb, 1));
  RELUGRAD_RETURN_IF_ERROR(ValidatePointer("dx", dx, n, es));
  RELUGRAD_RETURN_IF_ERROR(ValidateAliasing("dx", dx, n * es, "dy", dy, n * es));
  RELUGRAD_RETURN_IF_ERROR(ValidateMaskDisjoint(mask, mb, "dy", dy, n * es));
  RELUGRAD_RETURN_IF_ERROR(ValidateMaskDisjoint(mask, mb, "dx", dx, n * es));
  const Dtype d = ToDtype(dtype);
  const KernelParams& params = call->params;
  return Profiled("relu_grad_mask", d, n, es, sem, [&] {
    if (sem.backend == RELUGRAD_BACKEND_CUDA)
      return CudaReluGradMask(d, n, dy, mask, dx, params, sem);
    return CpuReluGradMask(d, n, dy, mask, dx, params, sem.threads, sem.stores);
  });
}

}  // extern "C"
