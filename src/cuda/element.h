// The ReluGrad rule for one element, on raw bits, as the CUDA kernels run
// it. Host-and-device code: nvcc compiles it into the kernels, and the host
// tests (tests/cuda/cuda_element_test.cc) compile the very same functions
// with the C++ compiler and compare them bit for bit with the scalar
// reference on this machine, with or without a GPU.
//
// Every rule is integer work on bit patterns, as in the CPU kernel
// (src/cpu/relugrad-inl.h): order keys for the gate and the clip, masks for
// NaN/inf/subnormal. The one float operation is dy*alpha on closed lanes;
// the GPU's NaN rules differ from x86 (a NaN operand gives the canonical
// 0x7fffffff there, not the quieted operand), so NaN, DAZ and FTZ are
// handled explicitly around an IEEE round-to-nearest multiply, and 16-bit
// results are rounded back with a hand-written round-to-nearest-even.
#ifndef RELUGRAD_CUDA_ELEMENT_H_
#define RELUGRAD_CUDA_ELEMENT_H_

#include <cstdint>

#include "core/dtype_traits.h"
#include "cuda/device_params.h"

#if !defined(__CUDA_ARCH__)
#include <cstring>
#endif

#if defined(__CUDACC__)
#define RG_INLINE __host__ __device__ __forceinline__
#else
#define RG_INLINE inline
#endif

namespace relugrad {
namespace cuda {

// ---- bit casts and the IEEE multiply (device intrinsics / host operators) ----

RG_INLINE float FloatFromBits(uint32_t b) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(b);
#else
  float f;
  std::memcpy(&f, &b, sizeof(f));
  return f;
#endif
}

RG_INLINE uint32_t BitsFromFloat(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t b;
  std::memcpy(&b, &f, sizeof(b));
  return b;
#endif
}

RG_INLINE double DoubleFromBits(uint64_t b) {
#if defined(__CUDA_ARCH__)
  return __longlong_as_double(static_cast<long long>(b));
#else
  double d;
  std::memcpy(&d, &b, sizeof(d));
  return d;
#endif
}

RG_INLINE uint64_t BitsFromDouble(double d) {
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
RG_INLINE float MulRn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}

RG_INLINE double MulRn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}

// ---- 16-bit <-> f32, written out so no header or rounding mode is involved ----

// Exact widening of a non-NaN f16 pattern.
RG_INLINE uint32_t F16ToF32Bits(uint16_t h) {
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
RG_INLINE uint32_t BF16ToF32Bits(uint16_t b) { return static_cast<uint32_t>(b) << 16; }

// f32 -> f16, round to nearest even, overflow to infinity. f must not be NaN.
RG_INLINE uint16_t F32BitsToF16Rne(uint32_t f) {
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
RG_INLINE uint16_t F32BitsToBF16Rne(uint32_t f) {
  const uint32_t round = 0x7fffu + ((f >> 16) & 1u);
  return static_cast<uint16_t>((f + round) >> 16);
}

// ---- the element rule ----

template <Dtype D>
RG_INLINE bool GateOpen(const DeviceParams& p, typename DtypeTraits<D>::Bits s, bool nan_open) {
  using T = DtypeTraits<D>;
  using Key = typename T::Key;
  using Bits = typename T::Bits;
  const Key key = OrderKey<D>(s);
  const Key lo_minus_1 = static_cast<Key>(p.gate_key_lo_minus_1);
  const Key key_ninf = OrderKey<D>(static_cast<Bits>(T::kSign | T::kInf));
  const Key key_pinf = OrderKey<D>(static_cast<Bits>(T::kInf));
  const bool above = key > lo_minus_1;
  // zero_if_le: negative NaNs (keys below -inf) open too; positive NaNs are
  // above every threshold. pass_if_gt: NaNs on either side stay closed.
  const bool open = nan_open ? (above || key < key_ninf) : (above && key <= key_pinf);
  // The upper bound (hardtanh) closes non-NaN gates above it; NaN gates keep
  // the rule above. p is uniform across a launch: the branch does not diverge.
  if (p.gate_upper && key >= key_ninf && key <= key_pinf) {
    return open && key <= static_cast<Key>(p.gate_key_hi);
  }
  return open;
}

// dy*alpha (alpha != 0) in the compute type, rounded to the data type, as
// the reference's Multiply(): NaN dy -> dy with the quiet bit; DAZ on dy and
// FTZ on the product when flushing; inf*0 (alpha that overflowed to inf
// times a zero dy) -> the x86 default NaN.
template <Dtype D>
RG_INLINE typename DtypeTraits<D>::Bits MulAlpha(const DeviceParams& p,
                                                 typename DtypeTraits<D>::Bits dy) {
  using T = DtypeTraits<D>;
  using Bits = typename T::Bits;
  if (IsNan<D>(dy)) return static_cast<Bits>(dy | T::kQuiet);
  const bool flush = p.flush_subnormals != 0;
  if constexpr (D == Dtype::kF64) {
    const uint64_t x = (flush && IsSubnormal<D>(dy)) ? (dy & T::kSign) : dy;
    uint64_t r = BitsFromDouble(MulRn(DoubleFromBits(x), p.alpha));
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

// dx = open ? dy : +0 : the torch and jax presets.
template <Dtype D, bool kNanOpen>
RG_INLINE typename DtypeTraits<D>::Bits PlainSelect(const DeviceParams& p,
                                                    typename DtypeTraits<D>::Bits dy,
                                                    typename DtypeTraits<D>::Bits s) {
  return GateOpen<D>(p, s, kNanOpen) ? dy : static_cast<typename DtypeTraits<D>::Bits>(0);
}

// What an open gate writes: dy, or dy*1 under multiply (quiets NaNs,
// flushes subnormals under FTZ/DAZ), then the clip.
template <Dtype D>
RG_INLINE typename DtypeTraits<D>::Bits OpenLane(const DeviceParams& p,
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

// What a closed gate writes: +0, dy*0 (signed zero, inf -> default NaN,
// NaN quieted) or dy*alpha.
template <Dtype D>
RG_INLINE typename DtypeTraits<D>::Bits ClosedLane(const DeviceParams& p,
                                                   typename DtypeTraits<D>::Bits dy) {
  using T = DtypeTraits<D>;
  using Bits = typename T::Bits;
  switch (p.closed) {
    case kClosedMulZero:
      if (IsNan<D>(dy)) return static_cast<Bits>(dy | T::kQuiet);
      if (IsInf<D>(dy)) return DefaultNan<D>();
      return static_cast<Bits>(dy & T::kSign);
    case kClosedMulAlpha:
      return MulAlpha<D>(p, dy);
    default:
      return 0;
  }
}

// Every rule. Branches on p are uniform across a launch, so they do not
// diverge.
template <Dtype D>
RG_INLINE typename DtypeTraits<D>::Bits General(const DeviceParams& p,
                                                typename DtypeTraits<D>::Bits dy,
                                                typename DtypeTraits<D>::Bits s) {
  return GateOpen<D>(p, s, p.gate_nan_open != 0) ? OpenLane<D>(p, dy) : ClosedLane<D>(p, dy);
}

// ReLU forward of the mask path (core/mask_reference.h): *open = the gate
// of x; y = x when open, else x*alpha (leaky) or max(x, 0) (a NaN x stays).
template <Dtype D>
RG_INLINE typename DtypeTraits<D>::Bits ForwardElement(const DeviceParams& p,
                                                       typename DtypeTraits<D>::Bits x,
                                                       bool* open) {
  *open = GateOpen<D>(p, x, p.gate_nan_open != 0);
  if (*open) return x;
  if (p.closed == kClosedMulAlpha) return MulAlpha<D>(p, x);
  return IsNan<D>(x) ? x : static_cast<typename DtypeTraits<D>::Bits>(0);
}

// The three kernel flavours; plain select is split on the NaN rule so its
// hot loop carries no runtime flag at all.
enum class Mode : int { kSelectNanOpen = 0, kSelectNanClosed = 1, kGeneral = 2 };

template <Dtype D, Mode M>
RG_INLINE typename DtypeTraits<D>::Bits Element(const DeviceParams& p,
                                                typename DtypeTraits<D>::Bits dy,
                                                typename DtypeTraits<D>::Bits s) {
  if constexpr (M == Mode::kSelectNanOpen) {
    return PlainSelect<D, true>(p, dy, s);
  } else if constexpr (M == Mode::kSelectNanClosed) {
    return PlainSelect<D, false>(p, dy, s);
  } else {
    return General<D>(p, dy, s);
  }
}

inline Mode ModeFor(const KernelParams& p) {
  if (!p.IsPlainSelect()) return Mode::kGeneral;
  return p.gate_nan_open ? Mode::kSelectNanOpen : Mode::kSelectNanClosed;
}

}  // namespace cuda
}  // namespace relugrad

#endif  // RELUGRAD_CUDA_ELEMENT_H_
