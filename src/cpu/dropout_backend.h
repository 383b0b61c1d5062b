// The CPU backend of the fused ReLU + dropout planes (relugrad.h, "ReLU
// followed by dropout"): relugrad_pack_bits and relugrad_relu_dropout_grad.
#ifndef RELUGRAD_CPU_DROPOUT_BACKEND_H_
#define RELUGRAD_CPU_DROPOUT_BACKEND_H_

#include <cstdint>

#include "core/semantics.h"

namespace relugrad {

// Arguments already validated. threads: 0 = all cores; blocks and wake-ups
// as the launch policy decides for the mask backward (cpu/launch.h).
relugrad_status CpuPackBits(int64_t n, const uint8_t* bytes, uint8_t* bits, int threads);
relugrad_status CpuReluDropoutGrad(Dtype dtype, int64_t n, const void* dy, const uint8_t* gate,
                                   const uint8_t* keep, double scale, void* dx, int threads);

}  // namespace relugrad

#endif  // RELUGRAD_CPU_DROPOUT_BACKEND_H_
