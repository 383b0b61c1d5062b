// The rule of relugrad_relu_dropout_grad for one element, on raw bits, written
// once for the CPU backend (cpu/dropout_backend.cc), the CUDA kernels
// (cuda/dropout_body.h) and the tests that run both on this machine.
//
// It is PyTorch CUDA's backward of relu -> dropout as two kernels compute it:
// native_dropout_backward's masked_scale_kernel, `(float)keep * dy * scale`
// in the accumulate type C (float for f32/f16/bf16, double for f64; scale
// cast to C, one rounding to T at the end), then threshold_backward(., y, 0),
// which writes +0 where the gate is closed. The two multiplies stay two IEEE
// round-to-nearest multiplies (MulRn: never contracted into an FMA, no FTZ).
//
// NaN results are the one place the backends differ, by decision:
//  - kDeviceNan (the CUDA kernels): what PyTorch's kernel writes on the GPU,
//    because it is the same operation on the same hardware: the GPU's own
//    multiply for f32/f64, and 0x7fff for every 16-bit NaN (__float2half and
//    __float2bfloat16, which c10::Half/BFloat16 use on the device, write it).
//  - otherwise (the CPU backend): x86's bits on every ISA, written explicitly
//    so an Arm host gives the same: a NaN dy quieted (sign and payload kept),
//    inf * 0 (an inf dy dropped, or a scale beyond the compute type's range
//    times a zero) the default NaN (DefaultNan).
#ifndef RELUGRAD_CORE_DROPOUT_RULE_H_
#define RELUGRAD_CORE_DROPOUT_RULE_H_

#include <cstdint>

#include "core/dtype_traits.h"
#include "core/element_rule.h"

namespace relugrad {
namespace element {

// The packed byte of 8 mask bytes (bit j = byte j != 0, LSB first), the
// bytes read as one little-endian word: no branch per byte.
RG_RULE_INLINE uint8_t PackEightBytes(uint64_t word) {
  constexpr uint64_t kLow7 = 0x7f7f7f7f7f7f7f7full;
  const uint64_t high = (((word & kLow7) + kLow7) | word) & ~kLow7;  // bit 8j+7: byte j != 0
  // bit 8j -> bit 56 + j of the product; no two partial products meet in the top byte.
  return static_cast<uint8_t>(((high >> 7) * 0x0102040810204080ull) >> 56);
}

// The 16-bit NaN PyTorch's CUDA conversions write.
constexpr uint16_t kDeviceNan16 = 0x7fffu;

// scale_f: (float)scale, for f32/f16/bf16; scale_d: scale, for f64.
template <Dtype D, bool kDeviceNan>
RG_RULE_INLINE typename DtypeTraits<D>::Bits DropoutGrad(typename DtypeTraits<D>::Bits dy,
                                                         bool gate, bool keep, float scale_f,
                                                         double scale_d) {
  using T = DtypeTraits<D>;
  using Bits = typename T::Bits;
  if (!gate) return static_cast<Bits>(0);
  if (IsNan<D>(dy)) {
    if constexpr (kDeviceNan) {
      if constexpr (sizeof(Bits) == 2) return static_cast<Bits>(kDeviceNan16);
    } else {
      return static_cast<Bits>(dy | T::kQuiet);
    }
  }
  if constexpr (D == Dtype::kF16 || D == Dtype::kBF16) {
    // dy is not NaN here, as F16ToF32Bits asks.
    const uint32_t w = D == Dtype::kF16 ? F16ToF32Bits(dy) : BF16ToF32Bits(dy);
    const uint32_t f = BitsFromFloat(MulRn(MulRn(keep ? 1.0f : 0.0f, FloatFromBits(w)), scale_f));
    if ((f & 0x7fffffffu) > 0x7f800000u) {  // inf * 0 (an inf dy dropped, or an inf scale_f)
      return static_cast<Bits>(kDeviceNan ? kDeviceNan16 : DefaultNan<D>());
    }
    return D == Dtype::kF16 ? F32BitsToF16Rne(f) : F32BitsToBF16Rne(f);
  } else {
    Bits r;
    if constexpr (D == Dtype::kF64) {
      r = BitsFromDouble(MulRn(MulRn(keep ? 1.0 : 0.0, DoubleFromBits(dy)), scale_d));
    } else {
      r = BitsFromFloat(MulRn(MulRn(keep ? 1.0f : 0.0f, FloatFromBits(dy)), scale_f));
    }
    // The device keeps its multiply's NaN; the CPU writes x86's inf * 0 on
    // every ISA (a NaN dy returned above).
    if constexpr (!kDeviceNan) {
      if (IsNan<D>(r)) return DefaultNan<D>();
    }
    return r;
  }
}

}  // namespace element
}  // namespace relugrad

#endif  // RELUGRAD_CORE_DROPOUT_RULE_H_
