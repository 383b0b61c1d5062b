// The Ascend twin's row when the twin is not built: every plan for it is
// refused at create.
#include "core/backend.h"
#include "core/error.h"

namespace relugrad {
namespace {

relugrad_status Supports(relugrad_plan_op, const Rules&, const KernelParams&) {
  return Fail(RELUGRAD_UNSUPPORTED, "the Ascend twin backend is not built in this relugrad");
}

constexpr BackendOps kAscendTwinUnavailable = {"ascend_twin", false,   Supports,
                                               nullptr,       nullptr, nullptr};

}  // namespace

const BackendOps& AscendTwinBackendOps() { return kAscendTwinUnavailable; }

}  // namespace relugrad
