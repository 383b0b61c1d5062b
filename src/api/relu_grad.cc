// The C entry points of the ReluGrad operator: validate, resolve semantics,
// hand the work to a backend. No computation happens here.
#include "core/backends.h"
#include "core/error.h"
#include "core/reference.h"
#include "core/semantics.h"
#include "core/validate.h"
#include "cpu/cpu_backend.h"
#include "profile/profile.h"
#include "relugrad/relugrad.h"

namespace relugrad {
namespace {

// The arrays' checks, after the dtype's, n's and the options'.
relugrad_status ValidateArrays(int64_t n, int64_t es, const void* dy, const void* s,
                               const void* dx) {
  RELUGRAD_RETURN_IF_ERROR(ValidatePointer("dy", dy, n, es));
  RELUGRAD_RETURN_IF_ERROR(ValidatePointer("s", s, n, es));
  RELUGRAD_RETURN_IF_ERROR(ValidatePointer("dx", dx, n, es));
  RELUGRAD_RETURN_IF_ERROR(ValidateAliasing("dx", dx, n * es, "dy", dy, n * es));
  RELUGRAD_RETURN_IF_ERROR(ValidateAliasing("dx", dx, n * es, "s", s, n * es));
  return RELUGRAD_OK;
}

// The operator's checks; the options through the thread's memo.
relugrad_status ValidateCall(relugrad_dtype dtype, int64_t n, const void* dy, const void* s,
                             void* dx, const relugrad_options* options, const ResolvedCall** call) {
  RELUGRAD_RETURN_IF_ERROR(ValidateDtypeAndCount(dtype, n));
  *call = ResolveCall(options, ToDtype(dtype));
  if (*call == nullptr) return RELUGRAD_INVALID_ARGUMENT;
  return ValidateArrays(n, static_cast<int64_t>(relugrad_dtype_size(dtype)), dy, s, dx);
}

// The same checks for the reference, which resolves its options afresh:
// the oracle the tests hold the fast path to shares none of its memos.
relugrad_status ValidateReferenceCall(relugrad_dtype dtype, int64_t n, const void* dy,
                                      const void* s, void* dx, const relugrad_options* options,
                                      Semantics* sem) {
  RELUGRAD_RETURN_IF_ERROR(ValidateDtypeAndCount(dtype, n));
  RELUGRAD_RETURN_IF_ERROR(ResolveOptions(options, sem));
  return ValidateArrays(n, static_cast<int64_t>(relugrad_dtype_size(dtype)), dy, s, dx);
}

}  // namespace
}  // namespace relugrad

extern "C" {

relugrad_status relugrad_relu_grad(relugrad_dtype dtype, int64_t n, const void* dy, const void* s,
                                   void* dx, const relugrad_options* options) {
  using namespace relugrad;
  const ResolvedCall* call;
  RELUGRAD_RETURN_IF_ERROR(ValidateCall(dtype, n, dy, s, dx, options, &call));
  const Dtype d = ToDtype(dtype);
  const Semantics& sem = call->sem;
  const KernelParams& params = call->params;
  // RELUGRAD_PROFILE: a load and a branch when off.
  profile::CallScope profile_scope("relu_grad", d, n, 3.0 * static_cast<double>(n) * DtypeSize(d),
                                   profile::RuleLabel(sem.gate == RELUGRAD_GATE_PASS_IF_GT,
                                                      sem.combine == RELUGRAD_COMBINE_MULTIPLY));
  switch (sem.backend) {
    case RELUGRAD_BACKEND_CPU:
      return CpuReluGrad(d, n, dy, s, dx, params, sem.threads, sem.stores);
    case RELUGRAD_BACKEND_CUDA:
      return CudaReluGrad(d, n, dy, s, dx, params, sem);
    case RELUGRAD_BACKEND_ASCEND_TWIN:
      return AscendTwinReluGrad(d, n, dy, s, dx, params, sem);
  }
  return Fail(RELUGRAD_INVALID_ARGUMENT, "unknown backend");
}

relugrad_status relugrad_relu_grad_reference(relugrad_dtype dtype, int64_t n, const void* dy,
                                             const void* s, void* dx,
                                             const relugrad_options* options) {
  using namespace relugrad;
  Semantics sem;
  RELUGRAD_RETURN_IF_ERROR(ValidateReferenceCall(dtype, n, dy, s, dx, options, &sem));
  if (sem.backend != RELUGRAD_BACKEND_CPU) {
    return Fail(RELUGRAD_INVALID_ARGUMENT,
                "the reference runs on host memory only (backend must be cpu)");
  }
  ReferenceRun(ToDtype(dtype), n, dy, s, dx, sem);
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
