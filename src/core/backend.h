// The one interface every backend implements: a table of entry points
// (BackendOps), one row per backend, each defined in the backend's own
// folder. A backend that is not built links a row whose Supports answers
// RELUGRAD_UNSUPPORTED with the reason. The plan (core/plan.h) picks the row
// of its options' backend, asks Supports once at create and calls the entry
// point of its op on every run.
#ifndef RELUGRAD_CORE_BACKEND_H_
#define RELUGRAD_CORE_BACKEND_H_

#include <cstdint>

#include "core/rules.h"
#include "core/semantics.h"
#include "relugrad/relugrad.h"

namespace relugrad {

// Entry points. The arrays were validated by the plan (n >= 0, pointers,
// alignment, aliasing); params.dtype is their dtype. Each backend reads the
// part of Execution it uses (CPU: threads, stores; CUDA: stream). variant:
// what the row's select_variant chose at create (-1 without one).
using ReluGradEntry = relugrad_status (*)(const KernelParams& params, const Execution& execution,
                                          int32_t variant, int64_t n, const void* dy, const void* s,
                                          void* dx);
using ReluForwardMaskEntry = relugrad_status (*)(const KernelParams& params,
                                                 const Execution& execution, int64_t n,
                                                 const void* x, void* y, uint8_t* mask);
using ReluGradMaskEntry = relugrad_status (*)(const KernelParams& params,
                                              const Execution& execution, int64_t n, const void* dy,
                                              const uint8_t* mask, void* dx);
// The fused ReLU + dropout planes (relugrad_pack_bits,
// relugrad_relu_dropout_grad); arrays validated by the API (api/dropout.cc).
using PackBitsEntry = relugrad_status (*)(const Execution& execution, int64_t n,
                                          const uint8_t* bytes, uint8_t* bits);
using ReluDropoutGradEntry = relugrad_status (*)(Dtype dtype, const Execution& execution, int64_t n,
                                                 const void* dy, const uint8_t* gate,
                                                 const uint8_t* keep, double scale, void* dx);
// RELUGRAD_OK when the backend implements op for dtype under these rules,
// else RELUGRAD_UNSUPPORTED with the thread's last error saying why. Called
// at plan create, so a run never meets an op its backend refuses.
using SupportsEntry = relugrad_status (*)(relugrad_plan_op op, const Rules& rules,
                                          const KernelParams& params);
// The named kernel variant the backend runs op with for these params, chosen
// once at create and held by the plan (CPU: a row of cpu/variants.inc), and
// its stable name; -1 / nullptr: the backend has one kernel for the op.
using SelectVariantEntry = int32_t (*)(relugrad_plan_op op, const KernelParams& params);
using VariantNameEntry = const char* (*)(relugrad_plan_op op, int32_t variant);

struct BackendOps {
  const char* name;  // the relugrad_backend's canonical name
  bool built;        // relugrad_backend_available
  SupportsEntry supports;
  // nullptr where supports refuses the op for every dtype and rule.
  ReluGradEntry relu_grad;
  ReluForwardMaskEntry relu_forward_mask;
  ReluGradMaskEntry relu_grad_mask;
  // nullptr: one kernel per op (variant -1).
  SelectVariantEntry select_variant = nullptr;
  VariantNameEntry variant_name = nullptr;
  // nullptr: the backend does not implement the planes (UNSUPPORTED).
  PackBitsEntry pack_bits = nullptr;
  ReluDropoutGradEntry relu_dropout_grad = nullptr;
};

// The rows: cpu/backend_row.cc, cuda/backend_row.cc (or
// cuda/cuda_unavailable.cc), ascend/ascend_twin_backend.cc (or
// ascend/ascend_twin_unavailable.cc).
const BackendOps& CpuBackendOps();
const BackendOps& CudaBackendOps();
const BackendOps& AscendTwinBackendOps();

// The row of a backend value; nullptr for a value outside relugrad_backend.
inline const BackendOps* FindBackendOps(relugrad_backend backend) {
  switch (backend) {
    case RELUGRAD_BACKEND_CPU:
      return &CpuBackendOps();
    case RELUGRAD_BACKEND_CUDA:
      return &CudaBackendOps();
    case RELUGRAD_BACKEND_ASCEND_TWIN:
      return &AscendTwinBackendOps();
  }
  return nullptr;
}

}  // namespace relugrad

#endif  // RELUGRAD_CORE_BACKEND_H_
