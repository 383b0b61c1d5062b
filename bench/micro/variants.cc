// Kernel variants that exist only to be measured against the library's
// choices (docs/design.md, "Unrolling and prefetch"): loop unrolling x1/x2/x4, a software prefetch
// distance, and the f16/bf16 strategy "convert to f32 and compare floats"
// against the library's integer compare on raw bits. Torch semantics at
// t = 0 (open unless s <= 0; NaN gates open), the common case. Compiled for
// every Highway target like the library (foreach_target), so a cap set with
// relugrad_set_max_isa() applies to these too.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "variants.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "hwy/cache_control.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace relugrad_micro {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// dx = (s > 0 or s is a negative NaN) ? dy : 0 on raw f32 bits, unrolled kUnroll
// times, with an optional prefetch kPrefetch bytes ahead (0: none).
template <int kUnroll, int kPrefetch>
HWY_INLINE void SelectF32(const uint32_t* HWY_RESTRICT dy, const uint32_t* HWY_RESTRICT s,
                          uint32_t* HWY_RESTRICT dx, size_t n) {
  const hn::ScalableTag<uint32_t> du;
  const hn::RebindToSigned<decltype(du)> di;
  const size_t N = hn::Lanes(du);
  const auto zero_key = hn::Set(di, 0);
  const auto neg_inf = hn::Set(du, 0xff800000u);
  size_t i = 0;
  for (; i + kUnroll * N <= n; i += kUnroll * N) {
    if (kPrefetch > 0) {
      hwy::Prefetch(reinterpret_cast<const uint8_t*>(dy + i) + kPrefetch);
      hwy::Prefetch(reinterpret_cast<const uint8_t*>(s + i) + kPrefetch);
    }
    for (int u = 0; u < kUnroll; ++u) {
      const auto sv = hn::LoadU(du, s + i + u * N);
      const auto open =
          hn::Or(hn::RebindMask(du, hn::Gt(hn::BitCast(di, sv), zero_key)), hn::Gt(sv, neg_inf));
      hn::StoreU(hn::IfThenElseZero(open, hn::LoadU(du, dy + i + u * N)), du, dx + i + u * N);
    }
  }
  for (; i < n; ++i) {
    const int32_t b = static_cast<int32_t>(s[i]);
    dx[i] = (b > 0 || s[i] > 0xff800000u) ? dy[i] : 0;
  }
}

HWY_NOINLINE void SelectF32U1(const uint32_t* dy, const uint32_t* s, uint32_t* dx, size_t n) {
  SelectF32<1, 0>(dy, s, dx, n);
}
HWY_NOINLINE void SelectF32U2(const uint32_t* dy, const uint32_t* s, uint32_t* dx, size_t n) {
  SelectF32<2, 0>(dy, s, dx, n);
}
HWY_NOINLINE void SelectF32U4(const uint32_t* dy, const uint32_t* s, uint32_t* dx, size_t n) {
  SelectF32<4, 0>(dy, s, dx, n);
}
HWY_NOINLINE void SelectF32U2P512(const uint32_t* dy, const uint32_t* s, uint32_t* dx, size_t n) {
  SelectF32<2, 512>(dy, s, dx, n);
}
HWY_NOINLINE void SelectF32U2P2K(const uint32_t* dy, const uint32_t* s, uint32_t* dx, size_t n) {
  SelectF32<2, 2048>(dy, s, dx, n);
}

// f16 (kBf16 = false) or bf16: widen s to f32 and compare as floats:
// closed iff float(s) <= 0 (NaN compares false: open), then narrow the
// 32-bit mask back to 16-bit lanes.
template <bool kBf16>
HWY_INLINE void Select16ViaF32(const uint16_t* HWY_RESTRICT dy, const uint16_t* HWY_RESTRICT s,
                               uint16_t* HWY_RESTRICT dx, size_t n) {
  size_t i = 0;
#if HWY_TARGET != HWY_SCALAR  // one lane: no halves to combine
  const hn::ScalableTag<uint16_t> du16;
  const hn::ScalableTag<int16_t> di16;
  const hn::Half<decltype(di16)> dh16;
  const hn::Rebind<float, decltype(dh16)> df;
  const hn::Rebind<int32_t, decltype(dh16)> di32;
  using T16 = std::conditional_t<kBf16, hwy::bfloat16_t, hwy::float16_t>;
  const hn::Rebind<T16, decltype(df)> dt;
  const size_t N = hn::Lanes(du16), H = N / 2;
  const auto zero = hn::Zero(df);
  for (; i + N <= n; i += N) {
    const auto lo = hn::PromoteTo(df, hn::LoadU(dt, reinterpret_cast<const T16*>(s + i)));
    const auto hi = hn::PromoteTo(df, hn::LoadU(dt, reinterpret_cast<const T16*>(s + i + H)));
    const auto closed_lo =
        hn::DemoteTo(dh16, hn::BitCast(di32, hn::VecFromMask(df, hn::Le(lo, zero))));
    const auto closed_hi =
        hn::DemoteTo(dh16, hn::BitCast(di32, hn::VecFromMask(df, hn::Le(hi, zero))));
    const auto closed = hn::BitCast(du16, hn::Combine(di16, closed_hi, closed_lo));
    hn::StoreU(hn::AndNot(closed, hn::LoadU(du16, dy + i)), du16, dx + i);
  }
#endif
  for (; i < n; ++i) {  // tail: float(s) <= 0 <=> zero, or negative and not NaN
    const uint16_t mag = s[i] & 0x7fff, inf = kBf16 ? 0x7f80 : 0x7c00;
    const bool closed = mag == 0 || ((s[i] & 0x8000) != 0 && mag <= inf);
    dx[i] = closed ? 0 : dy[i];
  }
}

HWY_NOINLINE void F16ViaF32(const uint16_t* dy, const uint16_t* s, uint16_t* dx, size_t n) {
  Select16ViaF32<false>(dy, s, dx, n);
}
HWY_NOINLINE void BF16ViaF32(const uint16_t* dy, const uint16_t* s, uint16_t* dx, size_t n) {
  Select16ViaF32<true>(dy, s, dx, n);
}

}  // namespace HWY_NAMESPACE
}  // namespace relugrad_micro
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "variants.h"
namespace relugrad_micro {
HWY_EXPORT(SelectF32U1);
HWY_EXPORT(SelectF32U2);
HWY_EXPORT(SelectF32U4);
HWY_EXPORT(SelectF32U2P512);
HWY_EXPORT(SelectF32U2P2K);
HWY_EXPORT(F16ViaF32);
HWY_EXPORT(BF16ViaF32);
void SelectF32Unroll(int unroll, const uint32_t* dy, const uint32_t* s, uint32_t* dx, size_t n) {
  if (unroll == 1)
    HWY_DYNAMIC_DISPATCH(SelectF32U1)(dy, s, dx, n);
  else if (unroll == 4)
    HWY_DYNAMIC_DISPATCH(SelectF32U4)(dy, s, dx, n);
  else
    HWY_DYNAMIC_DISPATCH(SelectF32U2)(dy, s, dx, n);
}
void SelectF32Prefetch(int distance, const uint32_t* dy, const uint32_t* s, uint32_t* dx,
                       size_t n) {
  if (distance >= 2048)
    HWY_DYNAMIC_DISPATCH(SelectF32U2P2K)(dy, s, dx, n);
  else
    HWY_DYNAMIC_DISPATCH(SelectF32U2P512)(dy, s, dx, n);
}
void Select16ViaF32(bool bf16, const uint16_t* dy, const uint16_t* s, uint16_t* dx, size_t n) {
  if (bf16)
    HWY_DYNAMIC_DISPATCH(BF16ViaF32)(dy, s, dx, n);
  else
    HWY_DYNAMIC_DISPATCH(F16ViaF32)(dy, s, dx, n);
}
}  // namespace relugrad_micro
#endif
