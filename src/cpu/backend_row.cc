// The CPU row of the backend interface (core/backend.h): every op, every
// dtype and rule; the entry points hand the plan's params and its threads
// and store hint to the CPU backend (relu_grad_backend.h, mask_backend.h, dropout_backend.h).
#include "core/backend.h"
#include "cpu/dropout_backend.h"
#include "cpu/mask_backend.h"
#include "cpu/relu_grad_backend.h"
#include "cpu/variants.h"

namespace relugrad {
namespace {

relugrad_status Supports(relugrad_plan_op, const Rules&, const KernelParams&) {
  return RELUGRAD_OK;
}

relugrad_status ReluGrad(const KernelParams& params, const Execution& execution, int32_t variant,
                         int64_t n, const void* dy, const void* s, void* dx) {
  return CpuReluGrad(params.dtype, n, dy, s, dx, params, execution.threads, execution.stores,
                     static_cast<CpuVariantId>(variant));
}

// relu_grad runs a row of the variant table; the mask ops choose per block.
int32_t SelectVariant(relugrad_plan_op op, const KernelParams& params) {
  if (op != RELUGRAD_OP_RELU_GRAD) return -1;
  return static_cast<int32_t>(SelectCpuVariant(params.dtype, params));
}

const char* VariantName(relugrad_plan_op op, int32_t variant) {
  if (op != RELUGRAD_OP_RELU_GRAD || variant < 0 || variant >= kCpuVariantCount) return nullptr;
  return CpuVariants()[variant].name;
}

relugrad_status ReluForwardMask(const KernelParams& params, const Execution& execution, int64_t n,
                                const void* x, void* y, uint8_t* mask) {
  return CpuReluForward(params.dtype, n, x, y, mask, params, execution.threads, execution.stores);
}

relugrad_status ReluGradMask(const KernelParams& params, const Execution& execution, int64_t n,
                             const void* dy, const uint8_t* mask, void* dx) {
  return CpuReluGradMask(params.dtype, n, dy, mask, dx, params, execution.threads,
                         execution.stores);
}

relugrad_status PackBits(const Execution& execution, int64_t n, const uint8_t* bytes,
                         uint8_t* bits) {
  return CpuPackBits(n, bytes, bits, execution.threads);
}

relugrad_status ReluDropoutGrad(Dtype dtype, const Execution& execution, int64_t n, const void* dy,
                                const uint8_t* gate, const uint8_t* keep, double scale, void* dx) {
  return CpuReluDropoutGrad(dtype, n, dy, gate, keep, scale, dx, execution.threads);
}

constexpr BackendOps kCpu = {"cpu",        true,          Supports,    ReluGrad, ReluForwardMask,
                             ReluGradMask, SelectVariant, VariantName, PackBits, ReluDropoutGrad};

}  // namespace

const BackendOps& CpuBackendOps() { return kCpu; }

}  // namespace relugrad
