// The element rules of ReluGrad as Highway vector helpers, shared by the
// gate-from-s kernels (relu_grad-inl.h) and the gate-from-bitmask kernels
// (mask-inl.h): gate test on order keys, pass rules (multiply,
// FTZ, clip) and closed rules (+0, dy*0, dy*alpha). Every rule is an integer
// operation on bit patterns precomputed in KernelParams, except dy*alpha for
// alpha != 0 (float multiply; the caller pins MXCSR to IEEE) and, for f32/f64
// on x86, FloatMultiplyZeroVec (the caller sets DAZ; scoped_ieee_float.h).
// Included once per target (foreach_target) by each kernel family.

// Per-target include guard (Highway's idiom).
#if defined(RELUGRAD_CPU_RULES_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef RELUGRAD_CPU_RULES_INL_H_
#undef RELUGRAD_CPU_RULES_INL_H_
#else
#define RELUGRAD_CPU_RULES_INL_H_
#endif

#include <type_traits>

#include "core/dtype_traits.h"
#include "core/semantics.h"
#include "cpu/scoped_ieee_float.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace relugrad {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_ARCH_X86 && HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128
// v, with the compiler forbidden to know its value or to re-read it from
// memory: an empty asm that claims to modify the register. Costs no
// instruction.
template <class V>
HWY_INLINE V Opaque(V v) {
  asm("" : "+v"(v.raw));
  return v;
}
#endif

// One broadcast constant of a block. SVE vectors are sizeless and no struct may
// hold one, so on scalable targets the lane value is kept and broadcast where
// it is used (loop-invariant, hoisted by the compiler); on the other targets
// the vector itself is kept. Either way c.name() is the same vector.
template <class D>
class VecConst {
 public:
  using T = hn::TFromD<D>;
  VecConst() = default;
  VecConst(D d, T lane)
#if HWY_HAVE_SCALABLE
      : lane_(lane) {
    (void)d;
  }
  HWY_INLINE hn::Vec<D> operator()() const { return hn::Set(D(), lane_); }

 private:
  T lane_{};
#else
      : v_(hn::Set(d, lane)) {
  }
  HWY_INLINE hn::Vec<D> operator()() const { return v_; }

 private:
  hn::Vec<D> v_;
#endif
};

// Bit-pattern constants of one dtype, broadcast once per block.
template <Dtype D, class DU>
struct BitConstants {
  using Tr = DtypeTraits<D>;
  using U = typename Tr::Bits;
  using DI = hn::RebindToSigned<DU>;
  VecConst<DI> magnitude, key_lo_minus_1, key_pinf_plus_1, key_ninf, key_pinf, key_hi_plus_1;
  VecConst<DU> sign, quiet, inf, min_normal, default_nan;

  BitConstants(DU du, const KernelParams& p) {
    const DI di;
    using I = typename Tr::Key;
    magnitude = VecConst<DI>(di, static_cast<I>(Tr::kMagnitude));
    key_lo_minus_1 = VecConst<DI>(di, static_cast<I>(p.gate_key_lo - 1));
    key_pinf_plus_1 = VecConst<DI>(di, static_cast<I>(OrderKey<D>(Tr::kInf) + 1));
    key_ninf = VecConst<DI>(di, static_cast<I>(OrderKey<D>(static_cast<U>(Tr::kSign | Tr::kInf))));
    key_pinf = VecConst<DI>(di, static_cast<I>(OrderKey<D>(Tr::kInf)));
    // gate_key_hi <= key(+inf), so + 1 stays inside the key type.
    key_hi_plus_1 =
        p.gate_upper ? VecConst<DI>(di, static_cast<I>(p.gate_key_hi + 1)) : key_pinf_plus_1;
    sign = VecConst<DU>(du, static_cast<U>(Tr::kSign));
    quiet = VecConst<DU>(du, static_cast<U>(Tr::kQuiet));
    inf = VecConst<DU>(du, static_cast<U>(Tr::kInf));
    min_normal = VecConst<DU>(du, static_cast<U>(Tr::kMinNormal));
    default_nan = VecConst<DU>(du, DefaultNan<D>());
  }
};

// OrderKey() on a vector: negative patterns get their magnitude flipped.
template <class DI, class VI>
HWY_INLINE VI VecOrderKey(DI /*di*/, VI bits, VI magnitude) {
  return hn::Xor(bits, hn::And(hn::BroadcastSignBit(bits), magnitude));
}

template <Dtype D, class DU, class VU = hn::Vec<DU>>
HWY_INLINE auto GateOpen(DU du, const BitConstants<D, DU>& c, bool nan_open, VU s)
    -> decltype(hn::RebindMask(du,
                               hn::Gt(hn::BitCast(hn::RebindToSigned<DU>(), s), c.key_ninf()))) {
  const hn::RebindToSigned<DU> di;
  const auto key = VecOrderKey(di, hn::BitCast(di, s), c.magnitude());
  const auto above_lo = hn::Gt(key, c.key_lo_minus_1());
  const auto open = nan_open ? hn::Or(above_lo, hn::Lt(key, c.key_ninf()))
                             : hn::And(above_lo, hn::Lt(key, c.key_pinf_plus_1()));
  return hn::RebindMask(du, open);
}

// GateOpen with the upper bound (gate_upper): a non-NaN key must lie in
// [gate_key_lo, gate_key_hi]; a NaN (key above key(+inf) or below
// key(-inf)) is open iff nan_open.
template <Dtype D, class DU, class VU = hn::Vec<DU>>
HWY_INLINE auto GateOpenBounded(DU du, const BitConstants<D, DU>& c, bool nan_open, VU s)
    -> decltype(hn::RebindMask(du,
                               hn::Gt(hn::BitCast(hn::RebindToSigned<DU>(), s), c.key_ninf()))) {
  const hn::RebindToSigned<DU> di;
  const auto key = VecOrderKey(di, hn::BitCast(di, s), c.magnitude());
  const auto inside = hn::And(hn::Gt(key, c.key_lo_minus_1()), hn::Lt(key, c.key_hi_plus_1()));
  if (!nan_open) return hn::RebindMask(du, inside);
  const auto nan = hn::Or(hn::Lt(key, c.key_ninf()), hn::Gt(key, c.key_pinf()));
  return hn::RebindMask(du, hn::Or(inside, nan));
}

// open ? v : +0, as IfThenElseZero, in a form the compiler cannot fold with
// v's load into an AVX-512 zero-masking load (vmovdqu32 m512, zmm{k}{z}),
// which it does with IfThenElseZero: on Zen 5 zero-masking loads are slow
// on data from L3 or DRAM (a hardware rule). Zeroing the closed lanes of the
// loaded vector (a mask not and a merge-masked xor) costs one mask operation
// more (docs/design.md, "Zero-masking loads on Zen 5").
template <class DU>
HWY_INLINE hn::Vec<DU> OpenOrZero(DU /* du */, hn::Mask<DU> open, hn::Vec<DU> v) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  return hn::IfThenZeroElse(hn::Not(open), v);
#else
  return hn::IfThenElseZero(open, v);
#endif
}

// dx = open ? dy : +0 : the hot path of the torch and jax presets.
template <Dtype D, class DU>
HWY_INLINE hn::Vec<DU> PlainSelectVec(DU du, const BitConstants<D, DU>& c, bool nan_open,
                                      hn::Vec<DU> dy, hn::Vec<DU> s) {
  return OpenOrZero(du, GateOpen<D>(du, c, nan_open, s), dy);
}

// The plain-select gate for thresholds t >= +0 (gate_key_lo >= 0: every
// relu preset), on raw bits instead of order keys. Non-negative patterns
// are their own key, and every negative pattern has a key below 0 <= lo, so
//   zero_if_le: open <=> bits >= lo (signed)  or  bits > sign|inf (unsigned:
//               the negative NaNs, whose keys lie below key(-inf));
//   pass_if_gt: open <=> lo <= bits <= inf (signed).
// Exactly the key test, three vector operations fewer per vector (the
// key's shift/and/xor): it matters in L1 only (docs/design.md, "The gate on
// raw bits").
template <Dtype D, bool kNanOpen>
struct RawGate {
  using Tr = DtypeTraits<D>;
  using U = typename Tr::Bits;
  using I = typename Tr::Key;
  template <class DU>
  struct Consts {
    VecConst<hn::RebindToSigned<DU>> lo_minus_1, inf_plus_1;
    VecConst<DU> neg_inf;
    Consts(DU du, const KernelParams& p) {
      const hn::RebindToSigned<DU> di;
      lo_minus_1 = VecConst<hn::RebindToSigned<DU>>(di, static_cast<I>(p.gate_key_lo - 1));
      inf_plus_1 = VecConst<hn::RebindToSigned<DU>>(di, static_cast<I>(Tr::kInf + 1));
      neg_inf = VecConst<DU>(du, static_cast<U>(Tr::kSign | Tr::kInf));
    }
  };
  template <class DU>
  static HWY_INLINE hn::Mask<DU> Open(DU du, const Consts<DU>& c, hn::Vec<DU> s) {
    const hn::RebindToSigned<DU> di;
    const auto bits = hn::BitCast(di, s);
    const auto above = hn::RebindMask(du, hn::Gt(bits, c.lo_minus_1()));
    if constexpr (kNanOpen) {
      return hn::Or(above, hn::Gt(s, c.neg_inf()));
    } else {
      return hn::And(above, hn::RebindMask(du, hn::Lt(bits, c.inf_plus_1())));
    }
  }
  template <class DU>
  static HWY_INLINE hn::Vec<DU> Select(DU du, const Consts<DU>& c, hn::Vec<DU> dy, hn::Vec<DU> s) {
    return OpenOrZero(du, Open(du, c, s), dy);
  }
};

// RawGate<D, true> when gate_key_lo == 1 (zero_if_le with t = +-0: the
// torch preset). Closed <=> bits <= bits(-inf) as signed integers (-0, the
// negative numbers, -inf) or bits == +0; open is everything else: the
// positive patterns (+inf and +NaN included) and the negative NaNs, as
// RawGate decides. Two signed compares and an or, where RawGate needs an
// unsigned compare too, which AVX2 lacks (Highway emulates it with an
// xor): two vector operations fewer per vector, for the L1-bound small
// calls (docs/design.md, "The gate on raw bits").
template <Dtype D>
struct NanOpenZeroGate {
  using Tr = DtypeTraits<D>;
  using U = typename Tr::Bits;
  template <class DU>
  struct Consts {
    VecConst<hn::RebindToSigned<DU>> neg_inf_plus_1, zero;
    explicit Consts(DU /* du */) {
      using DI = hn::RebindToSigned<DU>;
      using I = hn::TFromD<DI>;
      // The signed lane with the bits of (sign | inf) + 1: two's complement wraps.
      neg_inf_plus_1 =
          VecConst<DI>(DI(), static_cast<I>(static_cast<U>((Tr::kSign | Tr::kInf) + 1)));
      zero = VecConst<DI>(DI(), I{0});
    }
  };
  template <class DU>
  static HWY_INLINE hn::Mask<DU> Closed(DU du, const Consts<DU>& c, hn::Vec<DU> s) {
    const hn::RebindToSigned<DU> di;
    const auto bits = hn::BitCast(di, s);
    return hn::RebindMask(du, hn::Or(hn::Lt(bits, c.neg_inf_plus_1()), hn::Eq(bits, c.zero())));
  }
  template <class DU>
  static HWY_INLINE hn::Vec<DU> Select(DU du, const Consts<DU>& c, hn::Vec<DU> dy, hn::Vec<DU> s) {
    return hn::IfThenZeroElse(Closed(du, c, s), dy);
  }
};

template <Dtype D, class DU>
HWY_INLINE hn::Vec<DU> IsNanMask(DU du, const BitConstants<D, DU>& c, hn::Vec<DU> v) {
  const hn::RebindToSigned<DU> di;
  const auto mag = hn::And(hn::BitCast(di, v), c.magnitude());
  return hn::VecFromMask(du, hn::RebindMask(du, hn::Gt(mag, hn::BitCast(di, c.inf()))));
}

template <Dtype D, class DU>
HWY_INLINE hn::Vec<DU> IsSubnormalMask(DU du, const BitConstants<D, DU>& c, hn::Vec<DU> v) {
  const hn::RebindToSigned<DU> di;
  const auto mag = hn::And(hn::BitCast(di, v), c.magnitude());
  const auto tiny = hn::Lt(mag, hn::BitCast(di, c.min_normal()));
  const auto nonzero = hn::Gt(mag, hn::Zero(di));
  return hn::VecFromMask(du, hn::RebindMask(du, hn::And(tiny, nonzero)));
}

// Float multiply dy*alpha for f32/f64 (same lane width as the bits).
template <Dtype D, class DU>
HWY_INLINE hn::Vec<DU> MulAlphaVec(DU du, const BitConstants<D, DU>& c, const KernelParams& p,
                                   hn::Vec<DU> dy) {
  using F = std::conditional_t<D == Dtype::kF64, double, float>;
  const hn::Rebind<F, DU> df;
  auto x = dy;
  if (p.flush_subnormals) {  // DAZ: subnormal dy counts as signed zero
    x = hn::IfThenElse(hn::MaskFromVec(IsSubnormalMask<D>(du, c, dy)), hn::And(dy, c.sign()), dy);
  }
#if HWY_ARCH_X86
  const auto product =
      hn::BitCast(du, hn::Mul(hn::BitCast(df, x), hn::Set(df, static_cast<F>(p.alpha))));
#else
  // The semantics' inf*0 is x86's default NaN (sign set), which x86's multiply
  // makes itself; other ISAs make their own (AArch64: sign clear), so a NaN
  // product of a non-NaN dy is replaced by it. A NaN dy stays dy quieted, as
  // the multiply propagates it on both.
  const auto raw =
      hn::BitCast(du, hn::Mul(hn::BitCast(df, x), hn::Set(df, static_cast<F>(p.alpha))));
  const auto invalid = hn::AndNot(IsNanMask<D>(du, c, x), IsNanMask<D>(du, c, raw));
  const auto product = hn::IfThenElse(hn::MaskFromVec(invalid), c.default_nan(), raw);
#endif
  if (!p.flush_subnormals) return product;
  // FTZ on the result.
  return hn::IfThenElse(hn::MaskFromVec(IsSubnormalMask<D>(du, c, product)),
                        hn::And(product, c.sign()), product);
}

// Open lanes under combine = multiply: dy*1 quiets a signalling NaN and,
// with FTZ/DAZ, turns a subnormal dy into signed zero.
template <Dtype D, class DU>
HWY_INLINE hn::Vec<DU> MultiplyPassVec(DU du, const BitConstants<D, DU>& c, hn::Mask<DU> dy_nan,
                                       hn::Vec<DU> dy, bool flush) {
  const auto pass = hn::IfThenElse(dy_nan, hn::Or(dy, c.quiet()), dy);
  if (!flush) return pass;
  return hn::IfThenElse(hn::MaskFromVec(IsSubnormalMask<D>(du, c, dy)), hn::And(dy, c.sign()),
                        pass);
}

// Closed lanes under multiply with alpha = 0: dy*0 is a zero of dy's sign,
// inf gives the default NaN, a NaN is quieted.
template <Dtype D, class DU>
HWY_INLINE hn::Vec<DU> MulZeroClosedVec(DU du, const BitConstants<D, DU>& c, hn::Mask<DU> dy_nan,
                                        hn::Vec<DU> dy) {
  const hn::RebindToSigned<DU> di;
  const auto mag = hn::And(dy, hn::BitCast(du, c.magnitude()));
  const auto closed =
      hn::IfThenElse(hn::RebindMask(du, hn::Eq(hn::BitCast(di, mag), hn::BitCast(di, c.inf()))),
                     c.default_nan(), hn::And(dy, c.sign()));
  return hn::IfThenElse(dy_nan, hn::Or(dy, c.quiet()), closed);
}

// CombineVec's rule for combine = multiply with alpha = 0 and no clip (the
// tensorflow and onednn presets), with the options fixed at compile time: in
// CombineVec they are fields of `p`, which the loop must re-read after every
// store through dx (dx may alias anything), which held that loop far below
// the plain select in L1 (docs/design.md, "Multiply rule fused").
// The same rules as MultiplyPassVec and MulZeroClosedVec, ordered to share
// work: a NaN dy gives dy quieted whether the lane is open or closed; then
// an open lane keeps dy (with FTZ, a dy below the smallest normal gives
// dy & sign, which for +-0 is dy itself); every other lane gives dy*0 =
// dy & sign, or the default NaN for an infinite dy (never an open lane:
// infinities are not below the smallest normal). Two vector operations
// fewer than composing the two helpers (docs/design.md, "Multiply rule fused").
template <Dtype D, bool kFlush, class DU>
HWY_INLINE hn::Vec<DU> MultiplyZeroVec(DU du, const BitConstants<D, DU>& c, hn::Mask<DU> open,
                                       hn::Vec<DU> dy) {
  const hn::RebindToSigned<DU> di;
  const auto mag = hn::And(hn::BitCast(di, dy), c.magnitude());
  const auto inf = hn::BitCast(di, c.inf());
  auto keep = open;
  if constexpr (kFlush)
    keep = hn::AndNot(hn::RebindMask(du, hn::Lt(mag, hn::BitCast(di, c.min_normal()))), open);
  const auto zeroed =
      hn::IfThenElse(hn::RebindMask(du, hn::Eq(mag, inf)), c.default_nan(), hn::And(dy, c.sign()));
  const auto value = hn::IfThenElse(keep, dy, zeroed);
  return hn::IfThenElse(hn::RebindMask(du, hn::Gt(mag, inf)), hn::Or(dy, c.quiet()), value);
}

#if RELUGRAD_X86_MXCSR && HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128
// MultiplyZeroVec for f32/f64 with x86's multiply (UsesFloatMultiplyRule,
// scoped_ieee_float.h), under the MXCSR the caller set (KernelMxcsr: DAZ).
// dy*0 is the closed-lane rule exactly (a zero of dy's sign, inf*0 the
// default NaN, a NaN quieted); with flush_subnormals, dy*1 is the open-lane
// rule. Without, an open lane keeps dy (a subnormal too) unless dy is a
// NaN, which dy*0 quiets as dy*1 would. Not on the scalar/emulated targets:
// there the compiler may fold dy*1 into dy, which differs for a signalling
// NaN and, under DAZ, a subnormal. 2-4 vector operations against
// MultiplyZeroVec's ~9 (docs/design.md, "Multiply rule on x86's multiply").
#undef RELUGRAD_HAVE_FLOAT_MULTIPLY_RULE  // defined per target
#define RELUGRAD_HAVE_FLOAT_MULTIPLY_RULE 1
template <Dtype D, bool kFlush, class DU>
HWY_INLINE hn::Vec<DU> FloatMultiplyZeroVec(DU du, hn::Mask<DU> open, hn::Vec<DU> dy) {
  static_assert(D == Dtype::kF32 || D == Dtype::kF64, "f32/f64 only");
  using F = std::conditional_t<D == Dtype::kF64, double, float>;
  const hn::Rebind<F, DU> df;
  const auto x = hn::BitCast(df, dy);
  const auto gate = hn::RebindMask(df, open);
  if constexpr (kFlush) {
    // Opaque: LLVM rewrites x * select(m, 1, 0) as select(m, x * 1, x * 0)
    // and then x * 1 as x (it assumes no DAZ and ignores signalling NaNs),
    // which the AVX-512 target's mask registers expose to it; the api fuzzer
    // caught a subnormal dy passed through unflushed (clang build, avx3).
    return hn::BitCast(du, hn::Mul(x, Opaque(hn::IfThenElseZero(gate, hn::Set(df, F{1})))));
  }
  const auto keep = hn::AndNot(hn::IsNaN(x), gate);
  return hn::BitCast(du, hn::IfThenElse(keep, x, hn::Mul(x, hn::Zero(df))));
}
#else
#undef RELUGRAD_HAVE_FLOAT_MULTIPLY_RULE
#define RELUGRAD_HAVE_FLOAT_MULTIPLY_RULE 0
// Declared only, so that callers can name it in a discarded if-constexpr
// branch; never instantiated on these targets.
template <Dtype D, bool kFlush, class DU>
hn::Vec<DU> FloatMultiplyZeroVec(DU du, hn::Mask<DU> open, hn::Vec<DU> dy);
#endif

// Every rule given the gate decision: multiply on open lanes, clip, dy*0 or
// dy*alpha on closed ones. Shared by the gate-from-s kernel (GeneralVec in
// relu_grad-inl.h) and the gate-from-bitmask kernel (mask-inl.h), so
// both apply the very same pass/closed rules. For 16-bit data with
// alpha != 0 the closed lanes are left to the caller's scalar pass (see
// scalar_alpha16.h); here they get +0 as a placeholder.
template <Dtype D, class DU>
HWY_INLINE hn::Vec<DU> CombineVec(DU du, const BitConstants<D, DU>& c, const KernelParams& p,
                                  hn::Mask<DU> open, hn::Vec<DU> dy) {
  const hn::RebindToSigned<DU> di;
  const auto dy_nan = hn::MaskFromVec(IsNanMask<D>(du, c, dy));
  auto pass = dy;
  if (p.open_multiply) pass = MultiplyPassVec<D>(du, c, dy_nan, dy, p.flush_subnormals);
  if (p.clip) {
    using I = typename DtypeTraits<D>::Key;
    const auto key = VecOrderKey(di, hn::BitCast(di, pass), c.magnitude());
    const auto below = hn::AndNot(hn::RebindMask(di, dy_nan),
                                  hn::Lt(key, hn::Set(di, static_cast<I>(p.clip_key_lo))));
    const auto above = hn::AndNot(hn::RebindMask(di, dy_nan),
                                  hn::Gt(key, hn::Set(di, static_cast<I>(p.clip_key_hi))));
    using U = typename DtypeTraits<D>::Bits;
    pass = hn::IfThenElse(hn::RebindMask(du, below), hn::Set(du, static_cast<U>(p.clip_lo_bits)),
                          pass);
    pass = hn::IfThenElse(hn::RebindMask(du, above), hn::Set(du, static_cast<U>(p.clip_hi_bits)),
                          pass);
  }
  hn::Vec<DU> closed = hn::Zero(du);
  if (p.closed == ClosedRule::kMulZero) {
    closed = MulZeroClosedVec<D>(du, c, dy_nan, dy);
  } else if (p.closed == ClosedRule::kMulAlpha) {
    if constexpr (sizeof(typename DtypeTraits<D>::Bits) >= 4) closed = MulAlphaVec<D>(du, c, p, dy);
  }
  return hn::IfThenElse(open, pass, closed);
}

}  // namespace HWY_NAMESPACE
}  // namespace relugrad
HWY_AFTER_NAMESPACE();

#endif  // RELUGRAD_CPU_RULES_INL_H_
