// Linked when the Ascend CPU twin is not built.
#include "core/backends.h"
#include "core/error.h"

namespace relugrad {

bool AscendTwinBuilt() { return false; }

relugrad_status AscendTwinReluGrad(Dtype, int64_t, const void*, const void*, void*,
                                   const KernelParams&, const Semantics&) {
  return Fail(RELUGRAD_UNSUPPORTED, "the Ascend twin backend is not built in this relugrad");
}

}  // namespace relugrad
