// The rules of a call turned into data: MakeKernelParams derives, once per
// plan, the per-dtype KernelParams that every backend (CPU SIMD, CUDA,
// Ascend twin) consumes. No backend re-derives a rule; the scalar reference
// (reference.h) is the only other reader of the Rules.
#ifndef RELUGRAD_CORE_SEMANTICS_H_
#define RELUGRAD_CORE_SEMANTICS_H_

#include <cstdint>

#include "core/dtype_traits.h"
#include "core/rules.h"
#include "relugrad/relugrad.h"

namespace relugrad {

// What a closed gate writes.
enum class ClosedRule : uint8_t {
  kZero,      // +0 (select, alpha == 0)
  kMulZero,   // dy*0 (multiply, alpha == 0): signed zero, quieted NaN, inf -> default NaN
  kMulAlpha,  // dy*alpha rounded to the data type (alpha != 0, either combine)
};

// Per-dtype parameters, every bit pattern precomputed on the host. Keys are
// OrderKey() values widened to int64; bit patterns are widened to uint64.
struct KernelParams {
  Dtype dtype = Dtype::kF32;
  // Gate: open iff key(s) >= gate_key_lo, and then
  //   pass_if_gt: also key(s) <= key(+inf) (NaN gates closed),
  //   zero_if_le: or key(s) < key(-inf) (negative NaN gates open too).
  // gate_key_lo folds in threshold rounding and DAZ, so kernels need no
  // float compare at all.
  int64_t gate_key_lo = 0;
  bool gate_nan_open = true;  // zero_if_le
  // Upper bound (gate_max): when gate_upper, a non-NaN s is open only if
  // also key(s) <= gate_key_hi (the largest key below the rounded bound,
  // DAZ folded in as for gate_key_lo; key(-inf) - 1 when none is). NaN
  // gates keep gate_nan_open. No fast path reads it: every kernel that does
  // not apply it must not run when it is set.
  bool gate_upper = false;
  int64_t gate_key_hi = 0;
  // Open lanes under multiply: dy*1 quiets signalling NaNs, and with
  // FTZ/DAZ turns subnormal dy (subnormal in the compute type) into signed 0.
  bool open_multiply = false;
  bool flush_subnormals = false;  // FTZ/DAZ and the dtype has compute-type subnormals
  // Clip of open lanes (after the multiply rule): key < clip_key_lo -> clip_lo_bits,
  // key > clip_key_hi -> clip_hi_bits; NaN untouched.
  bool clip = false;
  int64_t clip_key_lo = 0, clip_key_hi = 0;
  uint64_t clip_lo_bits = 0, clip_hi_bits = 0;
  ClosedRule closed = ClosedRule::kZero;
  // alpha rounded to the compute type (float for f16/bf16/f32).
  double alpha = 0.0;
  float alpha_f32 = 0.0f;
  // Mask forward only: a closed x = -0 gives y = -0 (torch.relu), not +0.
  // Never set with kMulAlpha (y = x*alpha there).
  bool keep_negative_zero = false;

  // The common case every backend specialises: dx = open ? dy : +0.
  bool IsPlainSelect() const { return !open_multiply && !clip && closed == ClosedRule::kZero; }
};

// Runs the gate-key searches (up to 64 reference evaluations per bound):
// a plan calls it once at create, never per run.
KernelParams MakeKernelParams(Dtype dtype, const Rules& rules);

// The threshold as compared (exactly representable in double): rounded to
// the compute type or the data type as the options say.
double ComparedThreshold(Dtype dtype, const Rules& semantics);
// gate_max as compared, by the same rounding rule as the threshold.
double ComparedGateMax(Dtype dtype, const Rules& semantics);

}  // namespace relugrad

#endif  // RELUGRAD_CORE_SEMANTICS_H_
