// Linked when the library is built without CUDA (RELUGRAD_CUDA=OFF or no nvcc).
#include "core/backends.h"
#include "core/error.h"

namespace relugrad {

bool CudaBackendBuilt() { return false; }

relugrad_status CudaReluGrad(Dtype, int64_t, const void*, const void*, void*, const KernelParams&,
                             const Semantics&) {
  return Fail(RELUGRAD_UNSUPPORTED, "the CUDA backend is not built in this relugrad (configure with -DRELUGRAD_CUDA=ON and nvcc)");
}

}  // namespace relugrad
