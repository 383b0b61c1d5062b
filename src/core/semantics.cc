#include "core/semantics.h"

#include <cmath>
#include <cstddef>
#include <cstring>

#include "core/error.h"
#include "core/float_convert.h"
#include "core/reference.h"

namespace relugrad {
namespace {

// Smallest key k in [key(-inf), key(+inf) + 1] whose value passes the
// threshold (key(+inf) + 1 when none does). The gate is monotone in the order key
// over non-NaN values, so a binary search with the reference predicate
// decides the kernels' integer threshold exactly, DAZ and rounding included.
template <Dtype D>
int64_t GateKeyLo(const Semantics& bounded) {
  using T = DtypeTraits<D>;
  // The lower half of the gate alone: with the upper bound the gate is not
  // monotone in the key (GateKeyHi finds the other end).
  Semantics sem = bounded;
  sem.gate_max = Semantics::kNoGateMax;
  int64_t lo = OrderKey<D>(T::kSign | T::kInf);  // key(-inf)
  int64_t hi = OrderKey<D>(T::kInf) + 1;         // sentinel "always open"
  auto open = [&](int64_t key) {
    if (key == static_cast<int64_t>(OrderKey<D>(T::kInf)) + 1) return true;
    const auto bits = BitsFromKey<D>(static_cast<typename T::Key>(key));
    return ReferenceGateOpen(D, bits, sem);
  };
  if (open(lo)) return lo;
  // The f64 key span exceeds int64: measure distances in uint64.
  auto span = [&] { return static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo); };
  while (span() > 1) {  // invariant: !open(lo), open(hi)
    const int64_t mid = static_cast<int64_t>(static_cast<uint64_t>(lo) + span() / 2);
    if (open(mid))
      hi = mid;
    else
      lo = mid;
  }
  return hi;
}

// Largest key k in [key(-inf) - 1, key(+inf)] whose value passes the upper
// bound (key(-inf) - 1 when none does): the bound's test is monotone
// decreasing in the key over non-NaN values, so the same search as
// GateKeyLo decides it exactly.
template <Dtype D>
int64_t GateKeyHi(const Semantics& sem) {
  using T = DtypeTraits<D>;
  int64_t lo = static_cast<int64_t>(OrderKey<D>(T::kSign | T::kInf)) - 1;  // "none below"
  int64_t hi = OrderKey<D>(T::kInf);
  auto below = [&](int64_t key) {
    const auto bits = BitsFromKey<D>(static_cast<typename T::Key>(key));
    return ReferenceBelowGateMax(D, bits, sem);
  };
  if (below(hi)) return hi;
  auto span = [&] { return static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo); };
  while (span() > 1) {  // invariant: lo passes (or is the sentinel), hi does not
    const int64_t mid = static_cast<int64_t>(static_cast<uint64_t>(lo) + span() / 2);
    if (below(mid))
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

template <Dtype D>
int64_t KeyOf(uint64_t bits) {
  return OrderKey<D>(static_cast<typename DtypeTraits<D>::Bits>(bits));
}

template <Dtype D>
void FillKeys(KernelParams* p, const Semantics& sem) {
  using T = DtypeTraits<D>;
  p->gate_key_lo = GateKeyLo<D>(sem);
  if (p->gate_upper) p->gate_key_hi = GateKeyHi<D>(sem);
  if (p->clip) {
    p->clip_lo_bits = ScalarToDtypeBits(D, sem.clip_lo);
    p->clip_hi_bits = ScalarToDtypeBits(D, sem.clip_hi);
    // Float compares treat -0 == +0; in key order -0 is one below +0.
    const bool lo_zero = (p->clip_lo_bits & T::kMagnitude) == 0;
    const bool hi_zero = (p->clip_hi_bits & T::kMagnitude) == 0;
    p->clip_key_lo = lo_zero ? KeyOf<D>(T::kSign) : KeyOf<D>(p->clip_lo_bits);
    p->clip_key_hi = hi_zero ? 0 : KeyOf<D>(p->clip_hi_bits);
  }
}

}  // namespace

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

double ComparedThreshold(Dtype dtype, const Semantics& sem) {
  return RoundedBound(dtype, sem.threshold_rounding, sem.threshold);
}

// PyTorch's hardtanh_backward rounds both bounds alike (to float for
// 16-bit and f32 data, as it compares in float), so the upper bound follows
// the threshold's rounding rule.
double ComparedGateMax(Dtype dtype, const Semantics& sem) {
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
  switch (dtype) {
    case Dtype::kF16:
      FillKeys<Dtype::kF16>(&p, sem);
      break;
    case Dtype::kBF16:
      FillKeys<Dtype::kBF16>(&p, sem);
      break;
    case Dtype::kF32:
      FillKeys<Dtype::kF32>(&p, sem);
      break;
    case Dtype::kF64:
      FillKeys<Dtype::kF64>(&p, sem);
      break;
  }
  return p;
}

}  // namespace relugrad
