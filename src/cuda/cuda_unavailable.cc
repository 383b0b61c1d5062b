// Linked when the library is built without CUDA (RELUGRAD_CUDA=OFF or no nvcc).
#include "core/backends.h"
#include "core/error.h"
#include "cuda/cuda_mask.h"

namespace relugrad {
namespace {

constexpr const char* kNotBuilt =
    "the CUDA backend is not built in this relugrad (configure with -DRELUGRAD_CUDA=ON and nvcc)";

}  // namespace

bool CudaBackendBuilt() { return false; }

relugrad_status CudaReluGrad(Dtype, int64_t, const void*, const void*, void*, const KernelParams&,
                             const Semantics&) {
  return Fail(RELUGRAD_UNSUPPORTED, "%s", kNotBuilt);
}

relugrad_status CudaReluForwardMask(Dtype, int64_t, const void*, void*, uint8_t*,
                                    const KernelParams&, const Semantics&) {
  return Fail(RELUGRAD_UNSUPPORTED, "%s", kNotBuilt);
}

relugrad_status CudaReluGradMask(Dtype, int64_t, const void*, const uint8_t*, void*,
                                 const KernelParams&, const Semantics&) {
  return Fail(RELUGRAD_UNSUPPORTED, "%s", kNotBuilt);
}

}  // namespace relugrad
