#include "core/semantics.h"

#include <cmath>
#include <cstddef>
#include <cstring>

#include "core/error.h"
#include "core/float_convert.h"
#include "core/gate_keys.h"

namespace relugrad {

// Data-type rounding converts t as PyTorch converts a Python float for the
// tensor's type (through float for 16-bit data: ScalarToDtypeBits), which is
// what its 1.x CPU and CUDA threshold kernels compared against.
namespace {
double RoundedBound(Dtype dtype, relugrad_threshold_rounding rounding, double value) {
  if (rounding == RELUGRAD_THRESHOLD_DTYPE) {
    return BitsToDouble(dtype, ScalarToDtypeBits(dtype, value));
  }
  return dtype == Dtype::kF64 ? value : static_cast<double>(RoundToFloat(value));
}
}  // namespace

double ComparedThreshold(Dtype dtype, const Rules& sem) {
  return RoundedBound(dtype, sem.threshold_rounding, sem.threshold);
}

// PyTorch's hardtanh_backward rounds both bounds alike (to float for
// 16-bit and f32 data, as it compares in float), so the upper bound follows
// the threshold's rounding rule.
double ComparedGateMax(Dtype dtype, const Rules& sem) {
  return RoundedBound(dtype, sem.threshold_rounding, sem.gate_max);
}

KernelParams MakeKernelParams(Dtype dtype, const Rules& sem) {
  KernelParams p;
  p.dtype = dtype;
  p.gate_nan_open = sem.gate == RELUGRAD_GATE_ZERO_IF_LE;
  p.open_multiply = sem.combine == RELUGRAD_COMBINE_MULTIPLY;
  // f16 data has no subnormals in its f32 compute type.
  p.flush_subnormals = sem.denormals == RELUGRAD_DENORMALS_FTZ_DAZ && dtype != Dtype::kF16;
  p.clip = sem.clip;
  p.gate_upper = sem.HasGateMax();
  // alpha is never rounded to the data type: it is a factor of the
  // compute-type multiply (float for 16-bit data, as oneDNN's float alpha
  // and PyTorch's opmath negative slope), whose product alone is rounded.
  p.alpha = dtype == Dtype::kF64 ? sem.alpha : static_cast<double>(RoundToFloat(sem.alpha));
  p.alpha_f32 = RoundToFloat(sem.alpha);
  if (p.alpha != 0.0) {
    p.closed = ClosedRule::kMulAlpha;
  } else {
    p.closed = p.open_multiply ? ClosedRule::kMulZero : ClosedRule::kZero;
  }
  // Where y = x*alpha the product decides the sign of a zero.
  p.keep_negative_zero = sem.keep_negative_zero && p.closed != ClosedRule::kMulAlpha;
  FillKeys(&p, sem);
  return p;
}

}  // namespace relugrad
