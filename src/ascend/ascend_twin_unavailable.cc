// The Ascend twin's row when the twin is not built: every plan for it is
// refused at create, and so are the blocked entry points (blocked_mask.h).
#include "ascend/blocked_mask.h"
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

relugrad_status AscendTwinReluForwardBlocked(relugrad_dtype, relugrad_x_format, const BlockedShape&,
                                             const void*, void*, uint8_t*,
                                             const relugrad_options*) {
  ClearLastError();
  return Fail(RELUGRAD_UNSUPPORTED, "the Ascend twin backend is not built in this relugrad");
}

relugrad_status AscendTwinReluGradMaskBlocked(relugrad_dtype, relugrad_x_format,
                                              const BlockedShape&, const void*, const uint8_t*,
                                              void*, const relugrad_options*) {
  ClearLastError();
  return Fail(RELUGRAD_UNSUPPORTED, "the Ascend twin backend is not built in this relugrad");
}

}  // namespace relugrad
