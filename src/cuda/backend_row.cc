// The CUDA row of the backend interface (core/backend.h): every op, dtype and
// rule is implemented; the entry points hand the plan's params and stream to
// the CUDA host side of each op (relu_grad_backend.h, mask_backend.h,
// dropout_backend.h), where the device itself is looked for at run time
// (UNSUPPORTED "no CUDA device").
#include "core/backend.h"
#include "cuda/dropout_backend.h"
#include "cuda/mask_backend.h"
#include "cuda/relu_grad_backend.h"

namespace relugrad {
namespace {

relugrad_status Supports(relugrad_plan_op, const Rules&, const KernelParams&) {
  return RELUGRAD_OK;
}

relugrad_status ReluGrad(const KernelParams& params, const Execution& execution, int32_t, int64_t n,
                         const void* dy, const void* s, void* dx) {
  return CudaReluGrad(params, execution.stream, n, dy, s, dx);
}

relugrad_status ReluForwardMask(const KernelParams& params, const Execution& execution, int64_t n,
                                const void* x, void* y, uint8_t* mask) {
  return CudaReluForwardMask(params.dtype, n, x, y, mask, params, execution.stream);
}

relugrad_status ReluGradMask(const KernelParams& params, const Execution& execution, int64_t n,
                             const void* dy, const uint8_t* mask, void* dx) {
  return CudaReluGradMask(params.dtype, n, dy, mask, dx, params, execution.stream);
}

relugrad_status PackBits(const Execution& execution, int64_t n, const uint8_t* bytes,
                         uint8_t* bits) {
  return CudaPackBits(n, bytes, bits, execution.stream);
}

relugrad_status ReluDropoutGrad(Dtype dtype, const Execution& execution, int64_t n, const void* dy,
                                const uint8_t* gate, const uint8_t* keep, double scale, void* dx) {
  return CudaReluDropoutGrad(dtype, n, dy, gate, keep, scale, dx, execution.stream);
}

constexpr BackendOps kCuda = {"cuda",       true,    Supports, ReluGrad, ReluForwardMask,
                              ReluGradMask, nullptr, nullptr,  PackBits, ReluDropoutGrad};

}  // namespace

const BackendOps& CudaBackendOps() { return kCuda; }

}  // namespace relugrad
