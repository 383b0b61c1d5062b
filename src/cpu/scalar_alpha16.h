// dy*alpha for f16/bf16 (alpha != 0): per element, with the scalar rule of
// core/element_rule.h, because the closed lanes need an f32 multiply and a
// round-to-nearest-even back to 16 bits, and Highway 1.0.3's emulated 16-bit
// conversions truncate and mishandle inf/NaN (see float_convert.h). A rare
// configuration (onednn preset with a leaky slope on 16-bit data); the
// common paths stay vectorised. Runs under an IEEE MXCSR (KernelMxcsr).
#ifndef RELUGRAD_CPU_SCALAR_ALPHA16_H_
#define RELUGRAD_CPU_SCALAR_ALPHA16_H_

#include <cstdint>

#include "core/semantics.h"

namespace relugrad {

void RunBlockAlpha16(const KernelParams& p, const void* dy, const void* s, void* dx, int64_t begin,
                     int64_t end);

}  // namespace relugrad

#endif  // RELUGRAD_CPU_SCALAR_ALPHA16_H_
