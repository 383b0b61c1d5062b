// The 1-bit mask path on raw bits, written once with Highway and compiled
// for every target by mask_kernels.cc (foreach_target). Included once per
// target.
//
//   forward:  bit[i] = gate_open(x[i]);  y[i] = bit ? x : closed_fwd(x)
//             closed_fwd(x) = alpha != 0 ? x*alpha : (x is NaN ? x : +0)
//   backward: dx[i] = bit[i] ? pass(dy[i]) : closed(dy[i])
//
// The gate and the pass/closed rules are the ones of the gate-from-s kernel
// (cpu/rules-inl.h, KernelParams), so relu_grad_mask(dy, forward_mask(x))
// equals relu_grad(dy, x) bit for bit by construction.
//
// Layout: bit i of the mask is bit (i % 8) of byte i / 8 (LSB first). Work
// goes in groups of max(64, lanes) elements: one group is a whole number of
// vectors and of mask bytes. Blocks start at multiples of 8 elements (the
// backend's plan), so a block owns whole mask bytes. Mask bits go through a
// padded stack copy because Highway's LoadMaskBits/StoreMaskBits may touch 8
// bytes; the last partial group of a block goes through bounce buffers as in
// relu_grad-inl.h: never a byte read or written outside [p, p + n).
//
// Streaming: for large outputs that alias no input the backend asks for
// non-temporal stores (Stream) of whole vector-aligned groups: no read for
// ownership of y/dx, so DRAM moves dy + mask + dx = 8.125 bytes per f32
// element instead of 12.125. FlushStream orders them before the join.

// Per-target include guard (Highway's idiom).
#if defined(RELUGRAD_CPU_MASK_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef RELUGRAD_CPU_MASK_INL_H_
#undef RELUGRAD_CPU_MASK_INL_H_
#else
#define RELUGRAD_CPU_MASK_INL_H_
#endif

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/dtype_traits.h"
#include "core/element_rule.h"
#include "core/semantics.h"
#include "cpu/mask_kernels.h"
#include "cpu/rules-inl.h"
#include "cpu/variants.h"
#include "hwy/cache_control.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace relugrad {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Elements per group, at most: 64 (one 8-byte word of mask bits) or one
// vector when vectors are longer (SVE/RVV).
template <class U>
constexpr int64_t MaxGroup() {
  return std::max<int64_t>(64, HWY_MAX_BYTES / sizeof(U));
}

// Forward: the mask bits of 64 elements (64 / lanes vectors, lanes <= 64)
// gathered in a register word and stored once, y stored as each vector makes
// it. One store of bits per 64 elements, not one per vector: a 2-byte store
// of each vector's bits beside each vector of y makes the kernel store-bound
// (docs/design.md, "Mask forward: raw-bit gate, one store of bits per 64
// elements").
template <bool kStream, class DU, class Op>
HWY_INLINE uint64_t ForwardWord(DU du, const hn::TFromD<DU>* x, hn::TFromD<DU>* y, const Op& op) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(du));
  const uint64_t lane_bits = lanes >= 64 ? ~uint64_t{0} : (uint64_t{1} << lanes) - 1u;
  uint64_t word = 0;
  for (int64_t e = 0; e < 64; e += lanes) {
    hn::Mask<DU> open;
    const auto out = op(hn::LoadU(du, x + e), &open);
    if constexpr (kStream)
      hn::Stream(out, du, y + e);
    else
      hn::StoreU(out, du, y + e);
    // StoreMaskBits writes (lanes + 7) / 8 bytes; the compiler keeps them in
    // registers (a mask-register move on AVX-512, movmsk on AVX2).
    uint8_t tmp[8] = {};
    hn::StoreMaskBits(du, open, tmp);
    uint64_t bits;
    std::memcpy(&bits, tmp, sizeof(bits));
    word |= (bits & lane_bits) << e;
  }
  return word;
}

// One group (max(64, lanes) elements): forward. Writes exactly its bytes of
// mask bits to `bits`: the output mask itself for a whole group in place,
// else a scratch.
template <bool kStream, class DU, class Op>
HWY_INLINE void ForwardGroup(DU du, const hn::TFromD<DU>* x, hn::TFromD<DU>* y, uint8_t* bits,
                             const Op& op) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(du));
  if (lanes <= 64) {  // g = 64
    const uint64_t word = ForwardWord<kStream>(du, x, y, op);
    std::memcpy(bits, &word, sizeof(word));
    return;
  }
  // Vectors of more than 64 lanes (SVE/RVV): g = lanes, whole bytes per vector.
  hn::Mask<DU> open;
  const auto out = op(hn::LoadU(du, x), &open);
  if constexpr (kStream)
    hn::Stream(out, du, y);
  else
    hn::StoreU(out, du, y);
  hn::StoreMaskBits(du, open, bits);
}

// One group: backward. `bits` holds the group's g/8 mask bytes plus 8 bytes
// of padding.
template <bool kStream, class DU, class Op>
HWY_INLINE void GradGroup(DU du, int64_t g, const hn::TFromD<DU>* dy, const uint8_t* bits,
                          hn::TFromD<DU>* dx, const Op& op) {
  using U = hn::TFromD<DU>;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(du));
  if (lanes >= 8) {
    for (int64_t e = 0; e < g; e += lanes) {
      const auto out = op(hn::LoadMaskBits(du, bits + e / 8), hn::LoadU(du, dy + e));
      if constexpr (kStream)
        hn::Stream(out, du, dx + e);
      else
        hn::StoreU(out, du, dx + e);
    }
    return;
  }
  // Fewer than 8 lanes (f64 on AVX2, f32/f64 on SSE4): then g = 64, and the
  // group's mask is one 64-bit word. Each vector tests its lanes' bits in a
  // register. Staging a shifted byte in memory for LoadMaskBits, as before,
  // stalled on store forwarding (docs/design.md, "Mask path fixed cost").
  uint64_t word;
  std::memcpy(&word, bits, sizeof(word));
  // Bit j of lane j; lanes < 8 here, so the vector lies within the table
  // (Shl would do it in registers, but SSSE3 and older have no variable shift).
  HWY_ALIGN static constexpr U kLaneBit[8] = {1, 2, 4, 8, 16, 32, 64, 128};
  const auto lane_bit = hn::Load(du, kLaneBit);
  for (int64_t e = 0; e < g; e += lanes) {
    const auto open = hn::TestBit(hn::Set(du, static_cast<U>(word >> e)), lane_bit);
    const auto out = op(open, hn::LoadU(du, dy + e));
    if constexpr (kStream)
      hn::Stream(out, du, dx + e);
    else
      hn::StoreU(out, du, dx + e);
  }
}

// Runs groups over [begin, end). Whole groups in range are processed in
// place; the rest, and every group when `via_buffers` (the 16-bit alpha
// fix-up needs the inputs intact), go through bounce buffers.
template <Dtype D, class Op>
HWY_INLINE void ForwardGroups(const KernelParams& p, const void* x_v, void* y_v, uint8_t* mask,
                              int64_t begin, int64_t end, bool via_buffers, bool stream,
                              const Op& op) {
  using U = typename DtypeTraits<D>::Bits;
  constexpr int64_t kMax = MaxGroup<U>();
  const hn::ScalableTag<U> du;
  const int64_t g = std::max<int64_t>(64, static_cast<int64_t>(hn::Lanes(du)));
  const uintptr_t vec_bytes = hn::Lanes(du) * sizeof(U);
  const U* x = static_cast<const U*>(x_v);
  U* y = static_cast<U*>(y_v);  // may alias x exactly: no restrict
  HWY_ALIGN uint8_t bits[kMax / 8 + 8];
  int64_t i = begin;
  if (!via_buffers) {
    for (; i + g <= end; i += g) {
      if (stream && reinterpret_cast<uintptr_t>(y + i) % vec_bytes == 0) {
        ForwardGroup<true>(du, x + i, y + i, mask + i / 8, op);
      } else {
        ForwardGroup<false>(du, x + i, y + i, mask + i / 8, op);
      }
    }
    if (stream) hwy::FlushStream();
  }
  HWY_ALIGN U in[kMax];
  HWY_ALIGN U out[kMax];
  for (; i < end; i += g) {
    const int64_t rest = std::min(g, end - i);
    std::memset(in, 0, sizeof(in));
    std::memcpy(in, x + i, static_cast<size_t>(rest) * sizeof(U));
    std::memset(bits, 0, sizeof(bits));
    ForwardGroup<false>(du, in, out, bits, op);
    if constexpr (sizeof(U) == 2) {
      if (p.closed == ClosedRule::kMulAlpha) {
        for (int64_t j = 0; j < rest; ++j) {
          if (!((bits[j / 8] >> (j % 8)) & 1)) out[j] = element::MulAlpha<D>(p, in[j]);
        }
      }
    }
    std::memcpy(y + i, out, static_cast<size_t>(rest) * sizeof(U));
    // Padding bits of the array's last byte are documented zero (the zero
    // fill of `in` may have opened them, e.g. with a negative threshold).
    if (rest % 8 != 0)
      bits[rest / 8] = static_cast<uint8_t>(bits[rest / 8] & ((1u << (rest % 8)) - 1u));
    std::memcpy(mask + i / 8, bits, static_cast<size_t>((rest + 7) / 8));
  }
}

template <Dtype D, class Op>
HWY_INLINE void GradGroups(const KernelParams& p, const void* dy_v, const uint8_t* mask, void* dx_v,
                           int64_t begin, int64_t end, bool via_buffers, bool stream,
                           const Op& op) {
  using U = typename DtypeTraits<D>::Bits;
  constexpr int64_t kMax = MaxGroup<U>();
  const hn::ScalableTag<U> du;
  const int64_t g = std::max<int64_t>(64, static_cast<int64_t>(hn::Lanes(du)));
  const uintptr_t vec_bytes = hn::Lanes(du) * sizeof(U);
  const U* dy = static_cast<const U*>(dy_v);
  U* dx = static_cast<U*>(dx_v);  // may alias dy exactly: no restrict
  HWY_ALIGN uint8_t bits[kMax / 8 + 8] = {};
  int64_t i = begin;
  if (!via_buffers) {
    for (; i + g <= end; i += g) {
      std::memcpy(bits, mask + i / 8, static_cast<size_t>(g / 8));
      if (stream && reinterpret_cast<uintptr_t>(dx + i) % vec_bytes == 0) {
        GradGroup<true>(du, g, dy + i, bits, dx + i, op);
      } else {
        GradGroup<false>(du, g, dy + i, bits, dx + i, op);
      }
    }
    if (stream) hwy::FlushStream();
  }
  HWY_ALIGN U in[kMax];
  HWY_ALIGN U out[kMax];
  for (; i < end; i += g) {
    const int64_t rest = std::min(g, end - i);
    std::memset(in, 0, sizeof(in));
    std::memcpy(in, dy + i, static_cast<size_t>(rest) * sizeof(U));
    std::memset(bits, 0, sizeof(bits));
    std::memcpy(bits, mask + i / 8, static_cast<size_t>((rest + 7) / 8));
    GradGroup<false>(du, g, in, bits, out, op);
    if constexpr (sizeof(U) == 2) {
      if (p.closed == ClosedRule::kMulAlpha) {
        for (int64_t j = 0; j < rest; ++j) {
          if (!((bits[j / 8] >> (j % 8)) & 1)) out[j] = element::MulAlpha<D>(p, in[j]);
        }
      }
    }
    std::memcpy(dx + i, out, static_cast<size_t>(rest) * sizeof(U));
  }
}

// One row of mask_forward_variants.inc: y and the mask for [begin, end).
template <Dtype D, MaskForwardVariantId V>
HWY_INLINE void RunMaskForwardVariant(const KernelParams& p, const void* x, void* y, uint8_t* mask,
                                      int64_t begin, int64_t end, bool stream) {
  using U = typename DtypeTraits<D>::Bits;
  using DU = hn::ScalableTag<U>;
  using Id = MaskForwardVariantId;
  const DU du;
  const BitConstants<D, DU> c(du, p);
  const bool nan_open = p.gate_nan_open;
  if constexpr (V == Id::kTorchRelu) {
    // y = x < 0 ? +0 : x on raw bits: zeroed are the negative non-NaN
    // patterns but -0, the signed bits in (INT_MIN, bits(-inf)], i.e.
    // bits - 1 < bits(-inf) (subtracted unsigned, so -0's wrap to INT_MAX is
    // defined; +0 gives -1, not below; a NaN of either sign is never below).
    // The gate then reads y: it is closed exactly where y is +-0 (x <= 0),
    // and open for x > 0 and every NaN, whose y is x: one test of y's
    // magnitude bits instead of the gate's two compares of x.
    const hn::RebindToSigned<DU> di;
    const auto one = hn::Set(du, U{1});
    const auto neg_inf = hn::BitCast(di, hn::Or(c.sign(), c.inf()));
    const auto magnitude = hn::BitCast(du, c.magnitude());
    ForwardGroups<D>(p, x, y, mask, begin, end, false, stream,
                     [&](hn::Vec<DU> v, hn::Mask<DU>* open) {
                       const auto below_zero = hn::Lt(hn::BitCast(di, hn::Sub(v, one)), neg_inf);
                       const auto out = hn::IfThenZeroElse(hn::RebindMask(du, below_zero), v);
                       *open = hn::Ne(hn::And(out, magnitude), hn::Zero(du));
                       return out;
                     });
  } else if constexpr (V == Id::kNanOpenZeroGate) {
    const typename NanOpenZeroGate<D>::template Consts<DU> zc(du);
    ForwardGroups<D>(p, x, y, mask, begin, end, false, stream,
                     [&](hn::Vec<DU> v, hn::Mask<DU>* open) {
                       const auto closed = NanOpenZeroGate<D>::Closed(du, zc, v);
                       *open = hn::Not(closed);
                       return hn::IfThenZeroElse(closed, v);
                     });
  } else if constexpr (V == Id::kZeroClosed) {
    // closed_fwd(x) = NaN ? x : +0 (max(x, 0) keeps a NaN; TF/JAX measured),
    // and x itself for x = -0 under keep_negative_zero.
    const auto kept = [&](hn::Vec<DU> v, hn::Mask<DU>* open) {
      *open = GateOpen<D>(du, c, nan_open, v);
      return hn::Or(*open, hn::MaskFromVec(IsNanMask<D>(du, c, v)));
    };
    if (p.keep_negative_zero) {
      ForwardGroups<D>(p, x, y, mask, begin, end, false, stream,
                       [&](hn::Vec<DU> v, hn::Mask<DU>* open) {
                         const auto keep = hn::Or(kept(v, open), hn::Eq(v, c.sign()));
                         return OpenOrZero(du, keep, v);
                       });
    } else {
      ForwardGroups<D>(
          p, x, y, mask, begin, end, false, stream,
          [&](hn::Vec<DU> v, hn::Mask<DU>* open) { return OpenOrZero(du, kept(v, open), v); });
    }
  } else {
    static_assert(V == Id::kAlpha || V == Id::kAlpha16, "every row has a body");
    // Leaky ReLU: closed_fwd(x) = x*alpha (NaN quieted by the multiply). One
    // body for both rows: the dtype decides the per-element 16-bit path.
    const bool wide = sizeof(U) >= 4;
    ForwardGroups<D>(
        p, x, y, mask, begin, end, !wide, stream, [&](hn::Vec<DU> v, hn::Mask<DU>* open) {
          *open = GateOpen<D>(du, c, nan_open, v);
          hn::Vec<DU> closed = hn::Zero(du);  // 16-bit: fixed up per element by ForwardGroups
          if constexpr (sizeof(U) >= 4) closed = MulAlphaVec<D>(du, c, p, v);
          return hn::IfThenElse(*open, v, closed);
        });
  }
}

// One row's forward kernel, as MaskForwardVariantKernel hands it out.
template <Dtype D, MaskForwardVariantId V>
HWY_NOINLINE void MaskForwardVariantBlock(const KernelParams& p, const void* x, void* y,
                                          uint8_t* mask, int64_t begin, int64_t end, bool stream) {
  RunMaskForwardVariant<D, V>(p, x, y, mask, begin, end, stream);
}

// This target's forward kernels of every row, indexed by MaskForwardVariantId.
template <Dtype D>
HWY_INLINE const ForwardKernel* MaskForwardVariantTable() {
  static constexpr ForwardKernel kTable[] = {
#define RG_MASK_FORWARD_VARIANT(id, ...) &MaskForwardVariantBlock<D, MaskForwardVariantId::id>,
#include "cpu/mask_forward_variants.inc"
#undef RG_MASK_FORWARD_VARIANT
  };
  static_assert(sizeof(kTable) / sizeof(kTable[0]) == kMaskForwardVariantCount, "one body per row");
  return kTable;
}

// y and the mask for [begin, end); begin is a multiple of 8. Runs the first
// row of mask_forward_variants.inc that holds (the bodies inlined here, as
// the if on the closed rule they replace was).
template <Dtype D>
HWY_NOINLINE void ForwardBlock(const KernelParams& p, const void* x, void* y, uint8_t* mask,
                               int64_t begin, int64_t end, bool stream) {
  switch (SelectMaskForwardVariant(D, p)) {
#define RG_MASK_FORWARD_VARIANT(id, ...)                                                   \
  case MaskForwardVariantId::id:                                                           \
    RunMaskForwardVariant<D, MaskForwardVariantId::id>(p, x, y, mask, begin, end, stream); \
    return;
#include "cpu/mask_forward_variants.inc"
#undef RG_MASK_FORWARD_VARIANT
    case MaskForwardVariantId::kCount:
      break;
  }
}

// One row of mask_variants.inc: dx for [begin, end) from the mask.
template <Dtype D, MaskGradVariantId V>
HWY_INLINE void RunMaskGradVariant(const KernelParams& p, const void* dy, const uint8_t* mask,
                                   void* dx, int64_t begin, int64_t end, bool stream) {
  using U = typename DtypeTraits<D>::Bits;
  using DU = hn::ScalableTag<U>;
  using Id = MaskGradVariantId;
  const DU du;
  const BitConstants<D, DU> c(du, p);
  if constexpr (V == Id::kPlainSelect) {
    GradGroups<D>(p, dy, mask, dx, begin, end, false, stream,
                  [&](hn::Mask<DU> open, hn::Vec<DU> v) { return OpenOrZero(du, open, v); });
  } else if constexpr (V == Id::kMulZeroX86Flush || V == Id::kMulZeroX86 ||
                       V == Id::kMulZeroFlush || V == Id::kMulZero) {
    // tensorflow / onednn: the multiply rule with every option a constant,
    // as in the gate-from-s kernel (relu_grad-inl.h).
    constexpr bool kFlush = V == Id::kMulZeroX86Flush || V == Id::kMulZeroFlush;
    constexpr bool kNative = RELUGRAD_HAVE_FLOAT_MULTIPLY_RULE &&
                             (D == Dtype::kF32 || D == Dtype::kF64) &&
                             (V == Id::kMulZeroX86Flush || V == Id::kMulZeroX86);
    GradGroups<D>(p, dy, mask, dx, begin, end, false, stream,
                  [&](hn::Mask<DU> open, hn::Vec<DU> v) {
                    if constexpr (kNative) {
                      return FloatMultiplyZeroVec<D, kFlush>(du, open, v);
                    } else {
                      return MultiplyZeroVec<D, kFlush>(du, c, open, v);
                    }
                  });
  } else {
    static_assert(V == Id::kGeneral, "every row has a body");
    const bool via_buffers = sizeof(U) == 2 && p.closed == ClosedRule::kMulAlpha;
    GradGroups<D>(
        p, dy, mask, dx, begin, end, via_buffers, stream,
        [&](hn::Mask<DU> open, hn::Vec<DU> v) { return CombineVec<D>(du, c, p, open, v); });
  }
}

// One row's kernel, as MaskGradVariantKernel hands it out.
template <Dtype D, MaskGradVariantId V>
HWY_NOINLINE void MaskGradVariantBlock(const KernelParams& p, const void* dy, const uint8_t* mask,
                                       void* dx, int64_t begin, int64_t end, bool stream) {
  RunMaskGradVariant<D, V>(p, dy, mask, dx, begin, end, stream);
}

// This target's kernels of every backward-from-mask row, indexed by id.
template <Dtype D>
HWY_INLINE const GradMaskKernel* MaskGradVariantTable() {
  static constexpr GradMaskKernel kTable[] = {
#define RG_MASK_VARIANT(id, ...) &MaskGradVariantBlock<D, MaskGradVariantId::id>,
#include "cpu/mask_variants.inc"
#undef RG_MASK_VARIANT
  };
  static_assert(sizeof(kTable) / sizeof(kTable[0]) == kMaskGradVariantCount, "one body per row");
  return kTable;
}

// dx for [begin, end) from the mask; begin is a multiple of 8. Runs the
// first row of mask_variants.inc that holds.
template <Dtype D>
HWY_NOINLINE void GradMaskBlock(const KernelParams& p, const void* dy, const uint8_t* mask,
                                void* dx, int64_t begin, int64_t end, bool stream) {
  switch (SelectMaskGradVariant(D, p)) {
#define RG_MASK_VARIANT(id, ...)                                                       \
  case MaskGradVariantId::id:                                                          \
    RunMaskGradVariant<D, MaskGradVariantId::id>(p, dy, mask, dx, begin, end, stream); \
    return;
#include "cpu/mask_variants.inc"
#undef RG_MASK_VARIANT
    case MaskGradVariantId::kCount:
      break;
  }
}

// Entry points exported per target (one per element width).
HWY_NOINLINE void ForwardBlockF16(const KernelParams& p, const void* x, void* y, uint8_t* m,
                                  int64_t b, int64_t e, bool st) {
  ForwardBlock<Dtype::kF16>(p, x, y, m, b, e, st);
}
HWY_NOINLINE void ForwardBlockBF16(const KernelParams& p, const void* x, void* y, uint8_t* m,
                                   int64_t b, int64_t e, bool st) {
  ForwardBlock<Dtype::kBF16>(p, x, y, m, b, e, st);
}
HWY_NOINLINE void ForwardBlockF32(const KernelParams& p, const void* x, void* y, uint8_t* m,
                                  int64_t b, int64_t e, bool st) {
  ForwardBlock<Dtype::kF32>(p, x, y, m, b, e, st);
}
HWY_NOINLINE void ForwardBlockF64(const KernelParams& p, const void* x, void* y, uint8_t* m,
                                  int64_t b, int64_t e, bool st) {
  ForwardBlock<Dtype::kF64>(p, x, y, m, b, e, st);
}
// The forward rows' kernels exported per target (one table per element width).
HWY_NOINLINE const ForwardKernel* MaskForwardKernelsF16() {
  return MaskForwardVariantTable<Dtype::kF16>();
}
HWY_NOINLINE const ForwardKernel* MaskForwardKernelsBF16() {
  return MaskForwardVariantTable<Dtype::kBF16>();
}
HWY_NOINLINE const ForwardKernel* MaskForwardKernelsF32() {
  return MaskForwardVariantTable<Dtype::kF32>();
}
HWY_NOINLINE const ForwardKernel* MaskForwardKernelsF64() {
  return MaskForwardVariantTable<Dtype::kF64>();
}
// The backward rows' kernels exported per target.
HWY_NOINLINE const GradMaskKernel* MaskGradKernelsF16() {
  return MaskGradVariantTable<Dtype::kF16>();
}
HWY_NOINLINE const GradMaskKernel* MaskGradKernelsBF16() {
  return MaskGradVariantTable<Dtype::kBF16>();
}
HWY_NOINLINE const GradMaskKernel* MaskGradKernelsF32() {
  return MaskGradVariantTable<Dtype::kF32>();
}
HWY_NOINLINE const GradMaskKernel* MaskGradKernelsF64() {
  return MaskGradVariantTable<Dtype::kF64>();
}
HWY_NOINLINE void GradMaskBlockF16(const KernelParams& p, const void* dy, const uint8_t* m,
                                   void* dx, int64_t b, int64_t e, bool st) {
  GradMaskBlock<Dtype::kF16>(p, dy, m, dx, b, e, st);
}
HWY_NOINLINE void GradMaskBlockBF16(const KernelParams& p, const void* dy, const uint8_t* m,
                                    void* dx, int64_t b, int64_t e, bool st) {
  GradMaskBlock<Dtype::kBF16>(p, dy, m, dx, b, e, st);
}
HWY_NOINLINE void GradMaskBlockF32(const KernelParams& p, const void* dy, const uint8_t* m,
                                   void* dx, int64_t b, int64_t e, bool st) {
  GradMaskBlock<Dtype::kF32>(p, dy, m, dx, b, e, st);
}
HWY_NOINLINE void GradMaskBlockF64(const KernelParams& p, const void* dy, const uint8_t* m,
                                   void* dx, int64_t b, int64_t e, bool st) {
  GradMaskBlock<Dtype::kF64>(p, dy, m, dx, b, e, st);
}

}  // namespace HWY_NAMESPACE
}  // namespace relugrad
HWY_AFTER_NAMESPACE();

#endif  // RELUGRAD_CPU_MASK_INL_H_
