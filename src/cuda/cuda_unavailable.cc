// The CUDA row when the library is built without CUDA (RELUGRAD_CUDA=OFF or
// no nvcc): every plan for it is refused at create, with the reason.
#include "core/backend.h"
#include "core/error.h"

namespace relugrad {
namespace {

relugrad_status Supports(relugrad_plan_op, const Rules&, const KernelParams&) {
  return Fail(RELUGRAD_UNSUPPORTED,
              "the CUDA backend is not built in this relugrad (configure with -DRELUGRAD_CUDA=ON "
              "and nvcc)");
}

constexpr BackendOps kCudaUnavailable = {"cuda", false, Supports, nullptr, nullptr, nullptr};

}  // namespace

const BackendOps& CudaBackendOps() { return kCudaUnavailable; }

}  // namespace relugrad
