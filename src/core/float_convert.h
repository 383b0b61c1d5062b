// Exact conversions between raw bits and double, and round-to-nearest-even
// from double to each type. Written by hand because the 16-bit conversions
// of Highway's emulated targets truncate and ignore inf/NaN, and the
// reference must not depend on the ISA it runs on.
#ifndef RELUGRAD_CORE_FLOAT_CONVERT_H_
#define RELUGRAD_CORE_FLOAT_CONVERT_H_

#include <cstdint>

#include "core/dtype_traits.h"

namespace relugrad {

// Exact value of a non-NaN bit pattern (NaN in, some NaN out).
double BitsToDouble(Dtype dtype, uint64_t bits);

// Rounds v to the nearest value of dtype (ties to even), with overflow to
// infinity as IEEE does. v must not be NaN.
uint64_t DoubleToBitsRne(Dtype dtype, double v);

// Rounds v to float (ties to even), the compute type of f16/bf16/f32.
float RoundToFloat(double v);

}  // namespace relugrad

#endif  // RELUGRAD_CORE_FLOAT_CONVERT_H_
