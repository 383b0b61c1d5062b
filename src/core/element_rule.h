// The ReluGrad rule for one element on raw bits, written once for every
// scalar path: the CUDA kernels (nvcc compiles it as host-and-device code,
// src/cuda/element.h), the CPU's 16-bit dy*alpha path (scalar_alpha16.cc and
// the mask kernels' per-element fix-up) and the CUDA host tests, which run
// these very functions on the CPU against the scalar reference.
//
// Every rule is integer work on bit patterns, as in the SIMD kernels
// (src/cpu/rules-inl.h): order keys for the gate and the clip, masks for
// NaN/inf/subnormal. The one float operation is dy*alpha on closed lanes;
// the GPU's NaN rules differ from x86 (a NaN operand gives the canonical
// 0x7fffffff there, not the quieted operand), so NaN, DAZ and FTZ are
// handled explicitly around an IEEE round-to-nearest multiply (on the host:
// the caller runs it under an IEEE MXCSR, scoped_ieee_float.h), and 16-bit
// results are rounded back with a hand-written round-to-nearest-even.
//
// The rule functions take any params struct with KernelParams' field names
// for the pass and closed rules (KernelParams itself, or the CUDA kernels'
// flattened DeviceParams).
#ifndef RELUGRAD_CORE_ELEMENT_RULE_H_
#define RELUGRAD_CORE_ELEMENT_RULE_H_

#include <cstdint>

#include "core/dtype_traits.h"

#if !defined(__CUDA_ARCH__)
#include <cstring>
#endif

// Forced inline on every compiler: the rule sits inside the kernels' inner
// loops, and GCC's inliner, left to itself, called MulAlpha<bf16> out of line
// in the mask-gradient block once each of that table's rows had its own
// kernel instantiation (docs/design.md, "A loop where it was measured").
#if defined(__CUDACC__)
#define RG_RULE_INLINE __host__ __device__ __forceinline__
#elif defined(__GNUC__)
#define RG_RULE_INLINE inline __attribute__((always_inline))
#else
#define RG_RULE_INLINE inline
#endif

namespace relugrad {
namespace element {

// ---- bit casts and the IEEE multiply (device intrinsics / host operators) ----

RG_RULE_INLINE float FloatFromBits(uint32_t b) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(b);
#else
  float f;
  std::memcpy(&f, &b, sizeof(f));
  return f;
#endif
}

RG_RULE_INLINE uint32_t BitsFromFloat(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t b;
  std::memcpy(&b, &f, sizeof(b));
  return b;
#endif
}

RG_RULE_INLINE double DoubleFromBits(uint64_t b) {
#if defined(__CUDA_ARCH__)
  return __longlong_as_double(static_cast<long long>(b));
#else
  double d;
  std::memcpy(&d, &b, sizeof(d));
  return d;
#endif
}

RG_RULE_INLINE uint64_t BitsFromDouble(double d) {
#if defined(__CUDA_ARCH__)
  return static_cast<uint64_t>(__double_as_longlong(d));
#else
  uint64_t b;
  std::memcpy(&b, &d, sizeof(b));
  return b;
#endif
}

// Round-to-nearest-even multiplies that keep subnormals (IEEE): the __*_rn
// intrinsics are never contracted into an FMA and ignore -ftz/fast-math.
RG_RULE_INLINE float MulRn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}

RG_RULE_INLINE double MulRn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}

// ---- 16-bit <-> f32, written out so no header or rounding mode is involved ----

// Exact widening of a non-NaN f16 pattern.
RG_RULE_INLINE uint32_t F16ToF32Bits(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  const uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0x1fu) return sign | 0x7f800000u | (mantissa << 13);
  if (exponent != 0) return sign | ((exponent + 112u) << 23) | (mantissa << 13);
  if (mantissa == 0) return sign;
  // Subnormal: mantissa * 2^-24, normalised. Shift the leading one up to
  // bit 10; each shift lowers the exponent by one from 2^-14.
  uint32_t m = mantissa;
  uint32_t e = 113;  // f32 biased exponent of 2^-14
  while ((m & 0x400u) == 0) {
    m <<= 1;
    --e;
  }
  return sign | (e << 23) | ((m & 0x3ffu) << 13);
}

// Exact widening of a bf16 pattern (bf16 is the top half of an f32).
RG_RULE_INLINE uint32_t BF16ToF32Bits(uint16_t b) { return static_cast<uint32_t>(b) << 16; }

// f32 -> f16, round to nearest even, overflow to infinity. f must not be NaN.
RG_RULE_INLINE uint16_t F32BitsToF16Rne(uint32_t f) {
  const uint16_t sign = static_cast<uint16_t>((f >> 16) & 0x8000u);
  const uint32_t mag = f & 0x7fffffffu;
  if (mag >= 0x47800000u) return static_cast<uint16_t>(sign | 0x7c00u);  // >= 2^16 (or inf): inf
  if (mag >= 0x38800000u) {  // >= 2^-14: an f16 normal, or rounds up to inf
    // Rebias the exponent (127 -> 15) and drop 13 mantissa bits; a carry
    // out of the mantissa moves into the exponent, which is the right
    // result (up to 0x7c00 = inf for values >= 65520).
    const uint32_t h = ((mag - 0x38000000u) >> 13);
    const uint32_t rest = mag & 0x1fffu;
    const uint32_t round = (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ? 1u : 0u;
    return static_cast<uint16_t>(sign | (h + round));
  }
  // f16 subnormal or zero: the result is round(value / 2^-24).
  const uint32_t e = mag >> 23;
  if (e < 102) return sign;  // value < 2^-25: rounds to zero (f32 subnormals too)
  const uint32_t m = (mag & 0x7fffffu) | 0x800000u;  // value = m * 2^(e - 150)
  const uint32_t shift = 126 - e;                    // in [14, 24]
  uint32_t q = m >> shift;
  const uint32_t rest = m & ((1u << shift) - 1u);
  const uint32_t half = 1u << (shift - 1);
  if (rest > half || (rest == half && (q & 1u))) ++q;  // may become 0x400: min normal
  return static_cast<uint16_t>(sign | q);
}

// f32 -> bf16, round to nearest even, overflow to infinity. f must not be NaN.
RG_RULE_INLINE uint16_t F32BitsToBF16Rne(uint32_t f) {
  const uint32_t round = 0x7fffu + ((f >> 16) & 1u);
  return static_cast<uint16_t>((f + round) >> 16);
}

// ---- the element rule ----

// The gate on s's order key: open iff key >= gate_key_lo (key >
// lo_minus_1), and then pass_if_gt (nan_open false): key <= key(+inf), NaN
// closed; zero_if_le (nan_open): or key < key(-inf), the negative NaNs open
// too (positive NaNs lie above every threshold). With an upper bound a
// non-NaN s is open only if also key <= key_hi; NaN gates keep the rule above.
template <Dtype D>
RG_RULE_INLINE bool GateOpen(typename DtypeTraits<D>::Bits s, int64_t lo_minus_1, bool nan_open,
                             bool upper, int64_t key_hi) {
  using T = DtypeTraits<D>;
  using Key = typename T::Key;
  using Bits = typename T::Bits;
  const Key key = OrderKey<D>(s);
  const Key key_ninf = OrderKey<D>(static_cast<Bits>(T::kSign | T::kInf));
  const Key key_pinf = OrderKey<D>(static_cast<Bits>(T::kInf));
  const bool above = key > static_cast<Key>(lo_minus_1);
  const bool open = nan_open ? (above || key < key_ninf) : (above && key <= key_pinf);
  if (upper && key >= key_ninf && key <= key_pinf) return open && key <= static_cast<Key>(key_hi);
  return open;
}

// dy*alpha (alpha != 0) in the compute type, rounded to the data type, as
// the reference's Multiply(): NaN dy -> dy with the quiet bit; DAZ on dy and
// FTZ on the product when flushing; inf*0 (alpha that overflowed to inf
// times a zero dy) -> the x86 default NaN.
template <Dtype D, class P>
RG_RULE_INLINE typename DtypeTraits<D>::Bits MulAlpha(const P& p,
                                                      typename DtypeTraits<D>::Bits dy) {
  using T = DtypeTraits<D>;
  using Bits = typename T::Bits;
  if (IsNan<D>(dy)) return static_cast<Bits>(dy | T::kQuiet);
  const bool flush = p.flush_subnormals != 0;
  if constexpr (D == Dtype::kF64) {
    const uint64_t x = (flush && IsSubnormal<D>(dy)) ? (dy & T::kSign) : dy;
    uint64_t r = BitsFromDouble(MulRn(DoubleFromBits(x), static_cast<double>(p.alpha)));
    if (IsNan<Dtype::kF64>(r)) return DefaultNan<Dtype::kF64>();
    if (flush && IsSubnormal<Dtype::kF64>(r)) r &= T::kSign;
    return r;
  } else {
    using F32 = DtypeTraits<Dtype::kF32>;
    uint32_t x;
    if constexpr (D == Dtype::kF32) {
      x = dy;
    } else if constexpr (D == Dtype::kBF16) {
      x = BF16ToF32Bits(dy);
    } else {
      x = F16ToF32Bits(dy);  // never an f32 subnormal
    }
    if (flush && IsSubnormal<Dtype::kF32>(x)) x &= F32::kSign;
    uint32_t r = BitsFromFloat(MulRn(FloatFromBits(x), p.alpha_f32));
    if (IsNan<Dtype::kF32>(r)) return DefaultNan<D>();
    if (flush && IsSubnormal<Dtype::kF32>(r)) r &= F32::kSign;
    if constexpr (D == Dtype::kF32) {
      return r;
    } else if constexpr (D == Dtype::kBF16) {
      return F32BitsToBF16Rne(r);
    } else {
      return F32BitsToF16Rne(r);
    }
  }
}

// What an open gate writes: dy, or dy*1 under multiply (quiets NaNs,
// flushes subnormals under FTZ/DAZ), then the clip.
template <Dtype D, class P>
RG_RULE_INLINE typename DtypeTraits<D>::Bits OpenLane(const P& p,
                                                      typename DtypeTraits<D>::Bits dy) {
  using T = DtypeTraits<D>;
  using Bits = typename T::Bits;
  using Key = typename T::Key;
  const bool dy_nan = IsNan<D>(dy);
  Bits out = dy;
  if (p.open_multiply) {
    if (dy_nan) {
      out = static_cast<Bits>(dy | T::kQuiet);
    } else if (p.flush_subnormals && IsSubnormal<D>(dy)) {
      out = static_cast<Bits>(dy & T::kSign);
    }
  }
  if (p.clip && !dy_nan) {
    const Key key = OrderKey<D>(out);
    if (key < static_cast<Key>(p.clip_key_lo)) {
      out = static_cast<Bits>(p.clip_lo_bits);
    } else if (key > static_cast<Key>(p.clip_key_hi)) {
      out = static_cast<Bits>(p.clip_hi_bits);
    }
  }
  return out;
}

// dy*0 on a closed lane: a zero of dy's sign, inf -> the default NaN, a NaN
// quieted.
template <Dtype D>
RG_RULE_INLINE typename DtypeTraits<D>::Bits MulZero(typename DtypeTraits<D>::Bits dy) {
  using T = DtypeTraits<D>;
  using Bits = typename T::Bits;
  if (IsNan<D>(dy)) return static_cast<Bits>(dy | T::kQuiet);
  if (IsInf<D>(dy)) return DefaultNan<D>();
  return static_cast<Bits>(dy & T::kSign);
}

}  // namespace element
}  // namespace relugrad

#endif  // RELUGRAD_CORE_ELEMENT_RULE_H_
