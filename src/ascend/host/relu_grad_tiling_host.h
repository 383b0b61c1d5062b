// Host side of the Ascend kernel: turns (dtype, n, dx address, core count,
// KernelParams) into the kernel's ReluGradTilingData, using the shared work
// plan. Used by the twin backend here and by the CANN tiling function
// (src/ascend/op_host) on a machine with CANN.
#ifndef RELUGRAD_ASCEND_HOST_RELU_GRAD_TILING_HOST_H_
#define RELUGRAD_ASCEND_HOST_RELU_GRAD_TILING_HOST_H_

#include <cstdint>

#include "ascend/kernel/relu_grad_tiling.h"
#include "core/semantics.h"
#include "core/work_plan.h"

namespace relugrad {
namespace ascend {

// 910B facts the plan depends on (docs/ascend.md).
constexpr int64_t kUbTPipeBytes = 184 * 1024;
constexpr int64_t kUnitBytes = 32;       // DataCopy granule: block boundaries on dx
constexpr int64_t kTileUnitBytes = 256;  // one vector repeat: tiles are whole repeats
constexpr int kQueueBuffers = 6;         // dy, s, dx queues x double buffering
// Below this many bytes of dx per core, fewer cores are used (a launch
// costs microseconds; a core should stream at least a few tiles).
constexpr int64_t kGrainBytes = 16 * 1024;
constexpr int kDefaultCores = 40;  // 910B3/B4 vector cores; B1/B2 have 48 (GetCoreNumAiv)

struct TilingRequest {
  Dtype dtype = Dtype::kF32;
  int64_t n = 0;
  uint64_t dx_address = 0;
  int cores = kDefaultCores;
  int64_t grain_bytes = kGrainBytes;
};

// False (with *why set) for what the kernel does not serve (f64).
bool MakeTiling(const TilingRequest& request, const KernelParams& params,
                ReluGradTilingData* tiling, WorkPlan* plan, const char** why);

// Raw-pattern set of the keys [key_lo, key_hi] (inclusive, any order
// handling done by the caller) for a lane of `bits` bits. Exposed for tests.
RgRawSet KeyIntervalsToRawSet(int bits, const int64_t* key_lo, const int64_t* key_hi,
                              int intervals);

}  // namespace ascend
}  // namespace relugrad

#endif  // RELUGRAD_ASCEND_HOST_RELU_GRAD_TILING_HOST_H_
