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

// A scalar option (a double: threshold, clip bound) in the data type, as
// PyTorch converts a Python float for a 16-bit tensor (c10::Scalar::to<T>:
// double -> float -> T, two roundings to nearest even; c10::Half and
// c10::BFloat16 are built from a float only). f32 and f64 as DoubleToBitsRne.
// The two roundings differ from one where v lies within half an f32 ulp of
// a 16-bit midpoint: bf16 1 + 2^-8 + 2^-40 gives 1.0 here, 1.0078125 rounded
// once. v must not be NaN.
uint64_t ScalarToDtypeBits(Dtype dtype, double v);

}  // namespace relugrad

#endif  // RELUGRAD_CORE_FLOAT_CONVERT_H_
