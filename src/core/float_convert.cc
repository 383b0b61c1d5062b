#include "core/float_convert.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace relugrad {
namespace {

double HalfToDouble(uint16_t bits) {
  const int exponent = (bits >> 10) & 0x1f;
  const int mantissa = bits & 0x3ff;
  double magnitude;
  if (exponent == 0x1f) {
    magnitude = mantissa ? std::numeric_limits<double>::quiet_NaN()
                         : std::numeric_limits<double>::infinity();
  } else if (exponent == 0) {
    magnitude = std::ldexp(static_cast<double>(mantissa), -24);
  } else {
    magnitude = std::ldexp(static_cast<double>(1024 + mantissa), exponent - 25);
  }
  return (bits & 0x8000u) ? -magnitude : magnitude;
}

double BFloat16ToDouble(uint16_t bits) {
  const uint32_t wide = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &wide, sizeof(f));
  return f;
}

// Round-to-nearest-even for the 16-bit types by searching the ordered
// positive bit patterns: every value of these types is an exact double, so
// the midpoint test below is exact and needs no bit twiddling per format.
template <Dtype D>
uint16_t RoundTo16(double v) {
  using T = DtypeTraits<D>;
  const bool negative = std::signbit(v);
  const double a = std::fabs(v);
  // Largest finite pattern with value <= a.
  uint32_t lo = 0, hi = T::kInf;  // invariant: value(lo) <= a < value(hi)
  const double top = std::ldexp(1.0, D == Dtype::kF16 ? 16 : 128);  // "value" of inf for rounding
  auto value = [&](uint32_t b) { return b == T::kInf ? top : BitsToDouble(D, b); };
  if (a >= top) {
    lo = T::kInf;
  } else {
    while (hi - lo > 1) {
      const uint32_t mid = lo + (hi - lo) / 2;
      if (value(mid) <= a)
        lo = mid;
      else
        hi = mid;
    }
    const double midpoint = (value(lo) + value(hi)) / 2;  // exact: few bits
    if (a > midpoint || (a == midpoint && (lo & 1u))) lo = hi;
  }
  return static_cast<uint16_t>(lo | (negative ? T::kSign : 0u));
}

}  // namespace

double BitsToDouble(Dtype dtype, uint64_t bits) {
  switch (dtype) {
    case Dtype::kF16:
      return HalfToDouble(static_cast<uint16_t>(bits));
    case Dtype::kBF16:
      return BFloat16ToDouble(static_cast<uint16_t>(bits));
    case Dtype::kF32: {
      const uint32_t b = static_cast<uint32_t>(bits);
      float f;
      std::memcpy(&f, &b, sizeof(f));
      return f;
    }
    case Dtype::kF64: {
      double d;
      std::memcpy(&d, &bits, sizeof(d));
      return d;
    }
  }
  return std::numeric_limits<double>::quiet_NaN();
}

float RoundToFloat(double v) { return static_cast<float>(v); }

uint64_t DoubleToBitsRne(Dtype dtype, double v) {
  switch (dtype) {
    case Dtype::kF16:
      return RoundTo16<Dtype::kF16>(v);
    case Dtype::kBF16:
      return RoundTo16<Dtype::kBF16>(v);
    case Dtype::kF32: {
      const float f = RoundToFloat(v);
      uint32_t b;
      std::memcpy(&b, &f, sizeof(b));
      return b;
    }
    case Dtype::kF64: {
      uint64_t b;
      std::memcpy(&b, &v, sizeof(b));
      return b;
    }
  }
  return 0;
}

uint64_t ScalarToDtypeBits(Dtype dtype, double v) {
  if (dtype == Dtype::kF16 || dtype == Dtype::kBF16) {
    return DoubleToBitsRne(dtype, static_cast<double>(RoundToFloat(v)));
  }
  return DoubleToBitsRne(dtype, v);
}

}  // namespace relugrad
