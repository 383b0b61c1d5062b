#include "core/mask_reference.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "core/float_convert.h"
#include "core/reference.h"

namespace relugrad {
namespace {

uint64_t LoadBits(Dtype dtype, const void* base, int64_t i) {
  const int es = DtypeSize(dtype);
  uint64_t v = 0;
  std::memcpy(&v, static_cast<const char*>(base) + i * es, es);  // little-endian
  return v;
}

void StoreBits(Dtype dtype, void* base, int64_t i, uint64_t bits) {
  const int es = DtypeSize(dtype);
  std::memcpy(static_cast<char*>(base) + i * es, &bits, es);
}

uint64_t PlusInf(Dtype dtype) {
  switch (dtype) {
    case Dtype::kF16:
      return DtypeTraits<Dtype::kF16>::kInf;
    case Dtype::kBF16:
      return DtypeTraits<Dtype::kBF16>::kInf;
    case Dtype::kF32:
      return DtypeTraits<Dtype::kF32>::kInf;
    case Dtype::kF64:
      return DtypeTraits<Dtype::kF64>::kInf;
  }
  return 0;
}

// The same semantics with a threshold that opens (t = -inf) or closes
// (t = +inf) the gate of s = +inf, for both gate predicates and any DAZ.
Rules WithThreshold(const Rules& sem, double t) {
  Rules s = sem;
  s.threshold = t;
  s.threshold_rounding = RELUGRAD_THRESHOLD_COMPUTE;
  s.gate_max = Rules::kNoGateMax;  // else s = +inf would close every gate
  return s;
}

}  // namespace

uint64_t ReferenceGradMaskElement(Dtype dtype, uint64_t dy_bits, bool open, const Rules& sem) {
  const double inf = std::numeric_limits<double>::infinity();
  return ReferenceElement(dtype, dy_bits, PlusInf(dtype), WithThreshold(sem, open ? -inf : inf));
}

uint64_t ReferenceForwardElement(Dtype dtype, uint64_t x_bits, const Rules& sem, bool* open) {
  *open = ReferenceGateOpen(dtype, x_bits, sem);
  if (*open) return x_bits;
  if (sem.alpha != 0.0 && (dtype == Dtype::kF64 || RoundToFloat(sem.alpha) != 0.0f)) {
    // Leaky ReLU: x*alpha is the closed-gate rule applied to x (a closed
    // gate with alpha != 0 gives dy*alpha under either combine).
    return ReferenceGradMaskElement(dtype, x_bits, false, sem);
  }
  // max(x, 0): a NaN stays (bits kept), everything else closed is +0 but
  // for x = -0 under keep_negative_zero (clamp_min(-0, 0) = -0).
  const uint64_t negative_zero = uint64_t{1} << (8 * DtypeSize(dtype) - 1);
  if (sem.keep_negative_zero && x_bits == negative_zero) return x_bits;
  return std::isnan(BitsToDouble(dtype, x_bits)) ? x_bits : 0;
}

void ReferenceForwardRun(Dtype dtype, int64_t n, const void* x, void* y, uint8_t* mask,
                         const Rules& sem) {
  if (n > 0) std::memset(mask, 0, static_cast<size_t>((n + 7) / 8));
  for (int64_t i = 0; i < n; ++i) {
    bool open = false;
    StoreBits(dtype, y, i, ReferenceForwardElement(dtype, LoadBits(dtype, x, i), sem, &open));
    if (open) mask[i / 8] = static_cast<uint8_t>(mask[i / 8] | (1u << (i % 8)));
  }
}

void ReferenceGradMaskRun(Dtype dtype, int64_t n, const void* dy, const uint8_t* mask, void* dx,
                          const Rules& sem) {
  for (int64_t i = 0; i < n; ++i) {
    StoreBits(dtype, dx, i,
              ReferenceGradMaskElement(dtype, LoadBits(dtype, dy, i), MaskBit(mask, i), sem));
  }
}

}  // namespace relugrad
