// The ReluGrad rule for one element, on raw bits, as the CUDA kernels run
// it: the scalar rule of core/element_rule.h (host-and-device code) on the
// kernels' flattened DeviceParams, plus the kernel flavours (Mode). nvcc
// compiles it into the kernels, and the host tests
// (tests/cuda/cuda_element_test.cc) compile the very same functions with the
// C++ compiler and compare them bit for bit with the scalar reference on this
// machine, with or without a GPU.
#ifndef RELUGRAD_CUDA_ELEMENT_H_
#define RELUGRAD_CUDA_ELEMENT_H_

#include <cstdint>

#include "core/dtype_traits.h"
#include "core/element_rule.h"
#include "cuda/device_params.h"

#if defined(__CUDACC__)
#define RG_INLINE __host__ __device__ __forceinline__
#else
#define RG_INLINE inline
#endif

namespace relugrad {
namespace cuda {

// The scalar rule's pieces (core/element_rule.h), named here as the
// kernels and the host tests know them.
using element::BF16ToF32Bits;
using element::BitsFromDouble;
using element::BitsFromFloat;
using element::DoubleFromBits;
using element::F16ToF32Bits;
using element::F32BitsToBF16Rne;
using element::F32BitsToF16Rne;
using element::FloatFromBits;
using element::MulAlpha;
using element::MulRn;
using element::OpenLane;

// ---- the element rule ----

template <Dtype D>
RG_INLINE bool GateOpen(const DeviceParams& p, typename DtypeTraits<D>::Bits s, bool nan_open) {
  // p is uniform across a launch: the rule's branches do not diverge.
  return element::GateOpen<D>(s, p.gate_key_lo_minus_1, nan_open, p.gate_upper != 0, p.gate_key_hi);
}

// dx = open ? dy : +0 : the torch and jax presets.
template <Dtype D, bool kNanOpen>
RG_INLINE typename DtypeTraits<D>::Bits PlainSelect(const DeviceParams& p,
                                                    typename DtypeTraits<D>::Bits dy,
                                                    typename DtypeTraits<D>::Bits s) {
  return GateOpen<D>(p, s, kNanOpen) ? dy : static_cast<typename DtypeTraits<D>::Bits>(0);
}

// What a closed gate writes: +0, dy*0 (signed zero, inf -> default NaN,
// NaN quieted) or dy*alpha.
template <Dtype D>
RG_INLINE typename DtypeTraits<D>::Bits ClosedLane(const DeviceParams& p,
                                                   typename DtypeTraits<D>::Bits dy) {
  switch (p.closed) {
    case kClosedMulZero:
      return element::MulZero<D>(dy);
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
// of x; y = x when open, else x*alpha (leaky) or max(x, 0) (a NaN x stays,
// and a -0 under keep_negative_zero).
template <Dtype D>
RG_INLINE typename DtypeTraits<D>::Bits ForwardElement(const DeviceParams& p,
                                                       typename DtypeTraits<D>::Bits x,
                                                       bool* open) {
  *open = GateOpen<D>(p, x, p.gate_nan_open != 0);
  if (*open) return x;
  if (p.closed == kClosedMulAlpha) return MulAlpha<D>(p, x);
  // keep_negative_zero: clamp_min(-0, 0) = -0 (torch.relu).
  if (p.keep_negative_zero != 0 && x == DtypeTraits<D>::kSign) return x;
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
