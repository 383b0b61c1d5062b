// v * alpha for f16/bf16 data (alpha != 0), one element: an f32 multiply
// rounded to nearest even back to 16 bits. Shared by the gate-from-s path
// (scalar_alpha16.cc) and the mask path (relugrad_mask-inl.h). Per element
// because Highway 1.0.3's emulated 16-bit conversions truncate and mishandle
// inf/NaN (see core/float_convert.h).
#ifndef RELUGRAD_CPU_MUL_ALPHA16_H_
#define RELUGRAD_CPU_MUL_ALPHA16_H_

#include <cmath>
#include <cstdint>

#include "core/dtype_traits.h"
#include "core/float_convert.h"
#include "core/semantics.h"

namespace relugrad {

template <Dtype D>
inline uint16_t MulAlpha16(const KernelParams& p, uint16_t v) {
  using T = DtypeTraits<D>;
  if (IsNan<D>(v)) return static_cast<uint16_t>(v | T::kQuiet);
  float f = static_cast<float>(BitsToDouble(D, v));
  if (p.flush_subnormals && IsSubnormal<D>(v)) f = std::copysign(0.0f, f);
  // Both operands are floats: the double product is exact, and one rounding
  // to float is IEEE's f32 multiply.
  float product = static_cast<float>(static_cast<double>(f) * p.alpha_f32);
  if (std::isnan(product)) return DefaultNan<D>();  // 0 * alpha where alpha rounded to inf
  if (p.flush_subnormals && product != 0.0f && std::fabs(product) < 0x1p-126f) {
    product = std::copysign(0.0f, product);  // FTZ on the result
  }
  return static_cast<uint16_t>(DoubleToBitsRne(D, product));
}

}  // namespace relugrad

#endif  // RELUGRAD_CPU_MUL_ALPHA16_H_
