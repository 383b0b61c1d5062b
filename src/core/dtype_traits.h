// Bit-level facts about each floating type. ReluGrad never rounds on its
// main paths (the output is dy, a zero, or a quieted NaN), so every backend
// works on raw bits; these traits are the one place that knows the layouts.
#ifndef RELUGRAD_CORE_DTYPE_TRAITS_H_
#define RELUGRAD_CORE_DTYPE_TRAITS_H_

#include <cstdint>

#include "relugrad/relugrad.h"

#if defined(__CUDACC__)
#define RG_HOST_DEVICE __host__ __device__
#else
#define RG_HOST_DEVICE
#endif

namespace relugrad {

enum class Dtype : int { kF32 = 1, kF16 = 2, kBF16 = 3, kF64 = 4 };

template <Dtype D>
struct DtypeTraits;

template <>
struct DtypeTraits<Dtype::kF16> {
  using Bits = uint16_t;
  using Key = int16_t;
  static constexpr int kBits = 16;
  static constexpr int kMantissaBits = 10;
  static constexpr Bits kSign = 0x8000u;
  static constexpr Bits kMagnitude = 0x7fffu;
  static constexpr Bits kInf = 0x7c00u;    // exponent all ones
  static constexpr Bits kQuiet = 0x0200u;  // top mantissa bit
  static constexpr Bits kMinNormal = 0x0400u;
};

template <>
struct DtypeTraits<Dtype::kBF16> {
  using Bits = uint16_t;
  using Key = int16_t;
  static constexpr int kBits = 16;
  static constexpr int kMantissaBits = 7;
  static constexpr Bits kSign = 0x8000u;
  static constexpr Bits kMagnitude = 0x7fffu;
  static constexpr Bits kInf = 0x7f80u;
  static constexpr Bits kQuiet = 0x0040u;
  static constexpr Bits kMinNormal = 0x0080u;
};

template <>
struct DtypeTraits<Dtype::kF32> {
  using Bits = uint32_t;
  using Key = int32_t;
  static constexpr int kBits = 32;
  static constexpr int kMantissaBits = 23;
  static constexpr Bits kSign = 0x80000000u;
  static constexpr Bits kMagnitude = 0x7fffffffu;
  static constexpr Bits kInf = 0x7f800000u;
  static constexpr Bits kQuiet = 0x00400000u;
  static constexpr Bits kMinNormal = 0x00800000u;
};

template <>
struct DtypeTraits<Dtype::kF64> {
  using Bits = uint64_t;
  using Key = int64_t;
  static constexpr int kBits = 64;
  static constexpr int kMantissaBits = 52;
  static constexpr Bits kSign = 0x8000000000000000ull;
  static constexpr Bits kMagnitude = 0x7fffffffffffffffull;
  static constexpr Bits kInf = 0x7ff0000000000000ull;
  static constexpr Bits kQuiet = 0x0008000000000000ull;
  static constexpr Bits kMinNormal = 0x0010000000000000ull;
};

// The "total order key": a signed integer that orders all non-NaN values
// like the numbers they encode (with -0 one below +0), negative NaNs below
// -inf and positive NaNs above +inf. Gate tests and clipping become integer
// compares, exact on every ISA (no FTZ/DAZ or NaN-compare surprises).
template <Dtype D>
RG_HOST_DEVICE constexpr typename DtypeTraits<D>::Key OrderKey(typename DtypeTraits<D>::Bits bits) {
  using T = DtypeTraits<D>;
  using Key = typename T::Key;
  const Key k = static_cast<Key>(bits);
  return k < 0 ? static_cast<Key>(k ^ static_cast<Key>(T::kMagnitude)) : k;
}

template <Dtype D>
RG_HOST_DEVICE constexpr typename DtypeTraits<D>::Bits BitsFromKey(
    typename DtypeTraits<D>::Key key) {
  using T = DtypeTraits<D>;
  using Key = typename T::Key;
  const Key k = key < 0 ? static_cast<Key>(key ^ static_cast<Key>(T::kMagnitude)) : key;
  return static_cast<typename T::Bits>(k);
}

template <Dtype D>
RG_HOST_DEVICE constexpr bool IsNan(typename DtypeTraits<D>::Bits bits) {
  using T = DtypeTraits<D>;
  return (bits & T::kMagnitude) > T::kInf;
}

template <Dtype D>
RG_HOST_DEVICE constexpr bool IsInf(typename DtypeTraits<D>::Bits bits) {
  using T = DtypeTraits<D>;
  return (bits & T::kMagnitude) == T::kInf;
}

template <Dtype D>
RG_HOST_DEVICE constexpr bool IsSubnormal(typename DtypeTraits<D>::Bits bits) {
  using T = DtypeTraits<D>;
  const auto mag = bits & T::kMagnitude;
  return mag != 0 && mag < T::kMinNormal;
}

// x86's "QNaN floating-point indefinite" (what inf*0 produces there): sign
// set, exponent all ones, quiet bit set. relugrad produces it on every ISA.
template <Dtype D>
RG_HOST_DEVICE constexpr typename DtypeTraits<D>::Bits DefaultNan() {
  using T = DtypeTraits<D>;
  return static_cast<typename T::Bits>(T::kSign | T::kInf | T::kQuiet);
}

inline Dtype ToDtype(relugrad_dtype d) { return static_cast<Dtype>(d); }

inline int DtypeSize(Dtype d) {
  switch (d) {
    case Dtype::kF16:
    case Dtype::kBF16:
      return 2;
    case Dtype::kF32:
      return 4;
    case Dtype::kF64:
      return 8;
  }
  return 0;
}

}  // namespace relugrad

#endif  // RELUGRAD_CORE_DTYPE_TRAITS_H_
