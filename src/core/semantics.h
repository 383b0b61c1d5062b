// The semantics of one ReluGrad call as data: options are validated and
// resolved once here, then turned into per-dtype KernelParams that every
// backend (CPU SIMD, CUDA, Ascend twin) consumes. No backend re-derives a
// rule; the scalar reference (reference.h) is the only other reader of
// Semantics.
#ifndef RELUGRAD_CORE_SEMANTICS_H_
#define RELUGRAD_CORE_SEMANTICS_H_

#include <cstdint>
#include <limits>

#include "core/dtype_traits.h"
#include "relugrad/relugrad.h"

namespace relugrad {

// Validated options (every enum in range, threshold not NaN, alpha finite,
// clip_lo <= clip_hi, threads >= 0).
struct Semantics {
  relugrad_gate gate = RELUGRAD_GATE_ZERO_IF_LE;
  relugrad_combine combine = RELUGRAD_COMBINE_SELECT;
  relugrad_denormals denormals = RELUGRAD_DENORMALS_IEEE;
  relugrad_threshold_rounding threshold_rounding = RELUGRAD_THRESHOLD_COMPUTE;
  double threshold = 0.0;
  double alpha = 0.0;
  bool clip = false;
  double clip_lo = 0.0;
  double clip_hi = 0.0;
  int threads = 0;
  relugrad_backend backend = RELUGRAD_BACKEND_CPU;
  void* stream = nullptr;
  relugrad_stores stores = RELUGRAD_STORES_AUTO;  // performance only
  // Upper gate bound; +inf is none (validated: not NaN, > threshold).
  double gate_max = kNoGateMax;

  static constexpr double kNoGateMax = std::numeric_limits<double>::infinity();
  bool HasGateMax() const { return gate_max != kNoGateMax; }
};

// Copies the fields that fit in options->struct_size (defaults for the
// rest; NULL means the torch preset) and validates them. On failure sets the
// thread's last error and returns RELUGRAD_INVALID_ARGUMENT.
relugrad_status ResolveOptions(const relugrad_options* options, Semantics* out);

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

  // The common case every backend specialises: dx = open ? dy : +0.
  bool IsPlainSelect() const { return !open_multiply && !clip && closed == ClosedRule::kZero; }
};

KernelParams MakeKernelParams(Dtype dtype, const Semantics& semantics);

// What an entry point needs from its options: ResolveOptions, then
// MakeKernelParams.
struct ResolvedCall {
  Semantics sem;
  KernelParams params;
};

// ResolveOptions + MakeKernelParams behind a per-thread memo of the last
// full-size options struct (compared byte for byte) and dtype. The checks
// and the params memo's search cost about 25 ns, half of a call at n = 16;
// a repeated configuration, the usual case, costs one compare instead
// (docs/performance-notes.md, "Fixed cost of a call"). Returns the calling thread's slot, valid
// until its next ResolveCall (a pointer: building a ResolvedCall on the
// stack cost another 10 ns of zeroing), or nullptr with the error set.
const ResolvedCall* ResolveCall(const relugrad_options* options, Dtype dtype);

// The threshold as compared (exactly representable in double): rounded to
// the compute type or the data type as the options say.
double ComparedThreshold(Dtype dtype, const Semantics& semantics);
// gate_max as compared, by the same rounding rule as the threshold.
double ComparedGateMax(Dtype dtype, const Semantics& semantics);

}  // namespace relugrad

#endif  // RELUGRAD_CORE_SEMANTICS_H_
