// Runs the AscendC relu_grad kernel on the CPU twin: host tiling, GM
// registration with per-block write shares from the work plan, one thread
// per block. Shared by the backend (ascend_twin_backend.cc) and the tests.
#ifndef RELUGRAD_ASCEND_TWIN_LAUNCH_H_
#define RELUGRAD_ASCEND_TWIN_LAUNCH_H_

#include <cstdint>
#include <vector>

#include "ascend/host/relu_grad_tiling_host.h"
#include "ascend/host/relu_v2_tiling_host.h"
#include "ascend/twin/twin_runtime.h"
#include "core/semantics.h"
#include "core/work_plan.h"

// The kernel entry point (src/ascend/kernel/relu_grad.cpp).
extern "C" void relu_grad(uint8_t* dy, uint8_t* s, uint8_t* dx, uint8_t* workspace,
                          uint8_t* tiling);
// The mask kernels (src/ascend/kernel/relu_v2.cpp).
extern "C" void relu_v2(uint8_t* x, uint8_t* y, uint8_t* mask, uint8_t* workspace, uint8_t* tiling);
extern "C" void relu_grad_v2(uint8_t* dy, uint8_t* mask, uint8_t* dx, uint8_t* workspace,
                             uint8_t* tiling);
extern "C" void relu_v2_blocked(uint8_t* x, uint8_t* y, uint8_t* mask, uint8_t* workspace,
                                uint8_t* tiling);
extern "C" void relu_grad_v2_blocked(uint8_t* dy, uint8_t* mask, uint8_t* dx, uint8_t* workspace,
                                     uint8_t* tiling);

namespace relugrad {
namespace ascend {

struct TwinRun {
  ReluGradTilingData tiling;
  WorkPlan plan;
  std::vector<ascend_twin::PipeCounters> counters;  // per block
};

// False with *why for requests the kernel does not serve (f64). Throws
// ascend_twin::TwinViolation when the kernel breaks a hardware rule.
bool RunOnTwin(const TilingRequest& request, const void* dy, const void* s, void* dx,
               const KernelParams& params, TwinRun* run, const char** why);

// Same, with a caller-made tiling (tests seed bad ones) and the kernel to run.
std::vector<ascend_twin::PipeCounters> LaunchWithTiling(ascend_twin::KernelFn kernel,
                                                        const ReluGradTilingData& tiling,
                                                        const WorkPlan& plan, const void* dy,
                                                        const void* s, void* dx, int block_dim);

// The mask kernels, flat layout. Forward: x -> y, mask (ceil(n/8) bytes);
// block b may write y's elements and the mask bytes of its span only.
// Backward: dy, mask -> dx. False with *why for what the kernels do not serve.
struct MaskTwinRun {
  ReluV2TilingData tiling;
  std::vector<ascend_twin::PipeCounters> counters;  // per block
};
bool RunReluV2OnTwin(const MaskTilingRequest& request, const KernelParams& params, const void* x,
                     void* y, uint8_t* mask, MaskTwinRun* run, const char** why);
bool RunReluGradV2OnTwin(const MaskTilingRequest& request, const KernelParams& params,
                         const void* dy, const uint8_t* mask, void* dx, MaskTwinRun* run,
                         const char** why);

// Same, with a caller-made tiling (tests seed bad ones): op's kernel on
// block_dim cores, the shares taken from the tiling's block split.
std::vector<ascend_twin::PipeCounters> LaunchMaskWithTiling(MaskOp op,
                                                            const ReluV2TilingData& tiling,
                                                            const void* in, const void* mask_in,
                                                            void* out, uint8_t* mask_out,
                                                            int block_dim);

// The blocked-layout kernels (NCHW x, mask (N, C1, H, W, 16)): op's kernel
// with the request's tiling, or a caller-made one (tests seed bad ones); the
// shares are the tiling's runs of images. The mask holds
// relugrad_mask_blocked_bytes(n, c, h, w) bytes.
struct BlockedTwinRun {
  ReluV2BlockedTilingData tiling;
  std::vector<ascend_twin::PipeCounters> counters;
};
bool RunBlockedOnTwin(const BlockedTilingRequest& request, const KernelParams& params,
                      const void* in, const uint8_t* mask_in, void* out, uint8_t* mask_out,
                      BlockedTwinRun* run, const char** why);
std::vector<ascend_twin::PipeCounters> LaunchBlockedWithTiling(
    MaskOp op, const ReluV2BlockedTilingData& tiling, const void* in, const uint8_t* mask_in,
    void* out, uint8_t* mask_out, int block_dim);

}  // namespace ascend
}  // namespace relugrad

#endif  // RELUGRAD_ASCEND_TWIN_LAUNCH_H_
