#include "core/reference.h"

#include <cmath>
#include <cstring>

#include "core/float_convert.h"

namespace relugrad {
namespace {

uint64_t LoadBits(Dtype dtype, const void* base, int64_t i) {
  const char* p = static_cast<const char*>(base) + i * DtypeSize(dtype);
  switch (DtypeSize(dtype)) {
    case 2: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      return v;
    }
    case 4: {
      uint32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    default: {
      uint64_t v;
      std::memcpy(&v, p, 8);
      return v;
    }
  }
}

void StoreBits(Dtype dtype, void* base, int64_t i, uint64_t bits) {
  char* p = static_cast<char*>(base) + i * DtypeSize(dtype);
  switch (DtypeSize(dtype)) {
    case 2: {
      const uint16_t v = static_cast<uint16_t>(bits);
      std::memcpy(p, &v, 2);
      break;
    }
    case 4: {
      const uint32_t v = static_cast<uint32_t>(bits);
      std::memcpy(p, &v, 4);
      break;
    }
    default:
      std::memcpy(p, &bits, 8);
      break;
  }
}

uint64_t QuietBit(Dtype dtype) {
  switch (dtype) {
    case Dtype::kF16:
      return DtypeTraits<Dtype::kF16>::kQuiet;
    case Dtype::kBF16:
      return DtypeTraits<Dtype::kBF16>::kQuiet;
    case Dtype::kF32:
      return DtypeTraits<Dtype::kF32>::kQuiet;
    case Dtype::kF64:
      return DtypeTraits<Dtype::kF64>::kQuiet;
  }
  return 0;
}

uint64_t DefaultNanBits(Dtype dtype) {
  switch (dtype) {
    case Dtype::kF16:
      return DefaultNan<Dtype::kF16>();
    case Dtype::kBF16:
      return DefaultNan<Dtype::kBF16>();
    case Dtype::kF32:
      return DefaultNan<Dtype::kF32>();
    case Dtype::kF64:
      return DefaultNan<Dtype::kF64>();
  }
  return 0;
}

bool IsNanBits(Dtype dtype, uint64_t bits) { return std::isnan(BitsToDouble(dtype, bits)); }

bool ComputeIsF64(Dtype dtype) { return dtype == Dtype::kF64; }

// Subnormal in the compute type (f32 for f16/bf16/f32, f64 for f64). Every
// f16 value is an f32 normal or zero, so f16 data never has one.
bool IsComputeSubnormal(Dtype dtype, double v) {
  const double min_normal = ComputeIsF64(dtype) ? 0x1p-1022 : 0x1p-126;
  return v != 0.0 && std::fabs(v) < min_normal;
}

double FlushIfDaz(Dtype dtype, double v, const Rules& sem) {
  if (sem.denormals == RELUGRAD_DENORMALS_FTZ_DAZ && IsComputeSubnormal(dtype, v)) {
    return std::copysign(0.0, v);
  }
  return v;
}

double ComputeAlpha(Dtype dtype, const Rules& sem) {
  return ComputeIsF64(dtype) ? sem.alpha : static_cast<double>(RoundToFloat(sem.alpha));
}

// IEEE dy * factor in the compute type, as x86 does it (a NaN operand comes
// back quieted, inf * 0 is the default NaN), then rounded to the data type.
uint64_t Multiply(Dtype dtype, uint64_t dy_bits, double factor, const Rules& sem) {
  if (IsNanBits(dtype, dy_bits)) return dy_bits | QuietBit(dtype);
  const double x = FlushIfDaz(dtype, BitsToDouble(dtype, dy_bits), sem);
  if (std::isinf(x) && factor == 0.0) return DefaultNanBits(dtype);
  double product = x * factor;  // exact for f32 operands; IEEE for f64
  if (!ComputeIsF64(dtype)) product = RoundToFloat(product);
  // 0 * inf where alpha itself overflowed the compute type (|alpha| > FLT_MAX).
  if (std::isnan(product)) return DefaultNanBits(dtype);
  product = FlushIfDaz(dtype, product, sem);  // FTZ on the result
  return DoubleToBitsRne(dtype, product);
}

uint64_t Clip(Dtype dtype, uint64_t bits, const Rules& sem) {
  if (IsNanBits(dtype, bits)) return bits;
  // Bounds in the data type as PyTorch's clamp converts them (through
  // float for 16-bit data); clamping in f32 and rounding the result gives
  // the same bits, rounding being monotone.
  const uint64_t lo = ScalarToDtypeBits(dtype, sem.clip_lo);
  const uint64_t hi = ScalarToDtypeBits(dtype, sem.clip_hi);
  const double v = BitsToDouble(dtype, bits);
  if (v < BitsToDouble(dtype, lo)) return lo;
  if (v > BitsToDouble(dtype, hi)) return hi;
  return bits;
}

}  // namespace

bool ReferenceBelowGateMax(Dtype dtype, uint64_t s_bits, const Rules& sem) {
  if (!sem.HasGateMax()) return true;
  const double v = FlushIfDaz(dtype, BitsToDouble(dtype, s_bits), sem);
  const double h = FlushIfDaz(dtype, ComparedGateMax(dtype, sem), sem);
  return v < h;
}

bool ReferenceGateOpen(Dtype dtype, uint64_t s_bits, const Rules& sem) {
  if (IsNanBits(dtype, s_bits)) return sem.gate == RELUGRAD_GATE_ZERO_IF_LE;
  const double v = FlushIfDaz(dtype, BitsToDouble(dtype, s_bits), sem);
  const double t = FlushIfDaz(dtype, ComparedThreshold(dtype, sem), sem);
  const bool above = sem.gate == RELUGRAD_GATE_PASS_IF_GT ? v > t : !(v <= t);
  return above && ReferenceBelowGateMax(dtype, s_bits, sem);
}

uint64_t ReferenceElement(Dtype dtype, uint64_t dy_bits, uint64_t s_bits, const Rules& sem) {
  if (ReferenceGateOpen(dtype, s_bits, sem)) {
    uint64_t out =
        sem.combine == RELUGRAD_COMBINE_MULTIPLY ? Multiply(dtype, dy_bits, 1.0, sem) : dy_bits;
    if (sem.clip) out = Clip(dtype, out, sem);
    return out;
  }
  const double alpha = ComputeAlpha(dtype, sem);
  if (alpha != 0.0) return Multiply(dtype, dy_bits, alpha, sem);
  if (sem.combine == RELUGRAD_COMBINE_MULTIPLY) return Multiply(dtype, dy_bits, 0.0, sem);
  return 0;  // +0
}

void ReferenceRun(Dtype dtype, int64_t n, const void* dy, const void* s, void* dx,
                  const Rules& sem) {
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t dy_bits = LoadBits(dtype, dy, i);
    const uint64_t s_bits = LoadBits(dtype, s, i);
    StoreBits(dtype, dx, i, ReferenceElement(dtype, dy_bits, s_bits, sem));
  }
}

}  // namespace relugrad
