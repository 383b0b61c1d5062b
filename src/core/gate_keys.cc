#include "core/gate_keys.h"

#include <cmath>

#include "core/float_convert.h"

namespace relugrad {
namespace {

template <Dtype D>
constexpr int64_t KeyNegInf() {
  using T = DtypeTraits<D>;
  return OrderKey<D>(static_cast<typename T::Bits>(T::kSign | T::kInf));
}

template <Dtype D>
constexpr int64_t KeyPosInf() {
  return OrderKey<D>(DtypeTraits<D>::kInf);
}

template <Dtype D>
double ValueOfKey(int64_t key) {
  return BitsToDouble(D, BitsFromKey<D>(static_cast<typename DtypeTraits<D>::Key>(key)));
}

// DAZ as the frameworks apply it to a compared value: a subnormal of the
// compute type (f32 for 16-bit and f32 data, f64 for f64) counts as zero.
double FlushedBound(Dtype dtype, double v, const Rules& sem) {
  if (sem.denormals != RELUGRAD_DENORMALS_FTZ_DAZ) return v;
  const double min_normal = dtype == Dtype::kF64 ? 0x1p-1022 : 0x1p-126;
  return std::fabs(v) < min_normal ? 0.0 : v;
}

// Whether the data's own subnormals read as zero under the options: f16's
// subnormals are f32 normals, so only bf16/f32/f64 data flush.
bool DataFlushes(Dtype dtype, const Rules& sem) {
  return sem.denormals == RELUGRAD_DENORMALS_FTZ_DAZ && dtype != Dtype::kF16;
}

// A key whose value is within a few ulps of v (v not NaN, not zero): the
// round-to-nearest pattern, which the callers step to the exact answer.
template <Dtype D>
int64_t NearKey(double v) {
  return OrderKey<D>(static_cast<typename DtypeTraits<D>::Bits>(DoubleToBitsRne(D, v)));
}

// Largest key whose value is <= t (t not NaN; -inf at least, since
// value(key(-inf)) = -inf <= every t). For t = +-0 that is +0's key 0.
template <Dtype D>
int64_t FloorKey(double t) {
  if (t == 0.0) return 0;
  int64_t k = NearKey<D>(t);
  while (k > KeyNegInf<D>() && ValueOfKey<D>(k) > t) --k;
  while (k < KeyPosInf<D>() && ValueOfKey<D>(k + 1) <= t) ++k;
  return k;
}

// Smallest key whose value is >= h (h not NaN). For h = +-0 that is -0's
// key -1.
template <Dtype D>
int64_t CeilKey(double h) {
  if (h == 0.0) return -1;
  int64_t k = NearKey<D>(h);
  while (k < KeyPosInf<D>() && ValueOfKey<D>(k) < h) ++k;
  while (k > KeyNegInf<D>() && ValueOfKey<D>(k - 1) >= h) --k;
  return k;
}

template <Dtype D>
int64_t KeyLo(const Rules& sem) {
  using T = DtypeTraits<D>;
  const double t = FlushedBound(D, ComparedThreshold(D, sem), sem);
  // Strict compare: the next key above the largest value <= t.
  int64_t lo = FloorKey<D>(t) + 1;
  // Under DAZ a positive subnormal s reads as +0, which passes only if
  // 0 > t; t is then not a subnormal (flushed above), so that is t < 0,
  // and lo already lies at or below the negative values. With t = 0 the
  // subnormals above +0 stay closed: the first open key is the smallest
  // normal.
  if (DataFlushes(D, sem) && t == 0.0) lo = OrderKey<D>(T::kMinNormal);
  return lo;
}

template <Dtype D>
int64_t KeyHi(const Rules& sem) {
  using T = DtypeTraits<D>;
  const double h = FlushedBound(D, ComparedGateMax(D, sem), sem);
  // Strict compare: the key below the smallest value >= h.
  int64_t hi = CeilKey<D>(h) - 1;
  // Under DAZ a negative subnormal s reads as -0, which lies below h only
  // if h > 0; with h = 0 the largest value below is -min_normal.
  if (DataFlushes(D, sem) && h == 0.0) {
    hi = OrderKey<D>(static_cast<typename T::Bits>(T::kSign | T::kMinNormal));
  }
  return hi;
}

template <Dtype D>
int64_t KeyOf(uint64_t bits) {
  return OrderKey<D>(static_cast<typename DtypeTraits<D>::Bits>(bits));
}

template <Dtype D>
void Fill(KernelParams* p, const Rules& sem) {
  using T = DtypeTraits<D>;
  p->gate_key_lo = KeyLo<D>(sem);
  if (p->gate_upper) p->gate_key_hi = KeyHi<D>(sem);
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

int64_t GateKeyLo(Dtype dtype, const Rules& sem) {
  switch (dtype) {
    case Dtype::kF16:
      return KeyLo<Dtype::kF16>(sem);
    case Dtype::kBF16:
      return KeyLo<Dtype::kBF16>(sem);
    case Dtype::kF32:
      return KeyLo<Dtype::kF32>(sem);
    case Dtype::kF64:
      return KeyLo<Dtype::kF64>(sem);
  }
  return 0;
}

int64_t GateKeyHi(Dtype dtype, const Rules& sem) {
  switch (dtype) {
    case Dtype::kF16:
      return KeyHi<Dtype::kF16>(sem);
    case Dtype::kBF16:
      return KeyHi<Dtype::kBF16>(sem);
    case Dtype::kF32:
      return KeyHi<Dtype::kF32>(sem);
    case Dtype::kF64:
      return KeyHi<Dtype::kF64>(sem);
  }
  return 0;
}

void FillKeys(KernelParams* p, const Rules& sem) {
  switch (p->dtype) {
    case Dtype::kF16:
      Fill<Dtype::kF16>(p, sem);
      break;
    case Dtype::kBF16:
      Fill<Dtype::kBF16>(p, sem);
      break;
    case Dtype::kF32:
      Fill<Dtype::kF32>(p, sem);
      break;
    case Dtype::kF64:
      Fill<Dtype::kF64>(p, sem);
      break;
  }
}

}  // namespace relugrad
