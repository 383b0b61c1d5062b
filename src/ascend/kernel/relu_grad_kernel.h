// ReluGrad as an AscendC vector kernel (the kernel body; relu_grad.cpp is
// the entry point) for Ascend 910B (dav-c220), in the
// standard TPipe/TQue paradigm: per block, tiles stream through
//   CopyIn (MTE2: DataCopy / DataCopyPad) -> Compute (V) -> CopyOut (MTE3)
// with depth-2 queues, so tile i+1's copy-in overlaps tile i's compute and
// tile i-1's copy-out.
//
// Exactness. dx is dy's bits, a zero, a quieted NaN or (alpha != 0) a
// product, and the reference decides every lane with integer keys. This
// kernel therefore never asks the vector unit a float question:
//  - the gate, the NaN/subnormal/inf tests and the clip are membership tests
//    of the raw bit pattern (as int16/int32) in sets of intervals the host
//    precomputed from KernelParams. A bound test is built from integer
//    Maxs/Mins/Adds, which have no NaN, -0 or denormal cases:
//        Adds(Mins(Maxs(v, a-1), a), -a)  ==  (v < a) ? -1 : 0
//    (910B has no integer Compares beyond EQ, and float Compares would
//    bring FTZ/NaN questions the docs do not settle);
//  - results are blended with And/Or/Not on 16-bit lanes (the only widths
//    910B's bitwise instructions take; 32-bit data is viewed as int16 pairs);
//  - the only float arithmetic is dy*alpha (Muls in f32, Cast with RINT for
//    16-bit data), whose NaN lanes are then overwritten bitwise with dy|quiet
//    and whose FTZ, when asked for, is applied bitwise.
// docs/ascend.md lists each sequence and why it is exact.
//
// The same source runs on the host through the CPU twin
// (src/ascend/twin/include/kernel_operator.h), which checks the hardware
// rules while it executes.
#ifndef RELUGRAD_ASCEND_KERNEL_RELU_GRAD_KERNEL_H_
#define RELUGRAD_ASCEND_KERNEL_RELU_GRAD_KERNEL_H_

#include "kernel_operator.h"
#include "relu_grad_tiling.h"

namespace relugrad_ascend {

using namespace AscendC;

constexpr int32_t kBufferNum = 2;    // double buffering
constexpr uint32_t kCopyBytes = 32;  // DataCopy granule / UB alignment

template <typename F>
struct Layout;
template <>
struct Layout<float> {
  using I = int32_t;
  static constexpr int32_t kMin = -2147483647 - 1, kMax = 2147483647;
  static constexpr int32_t kInf = 0x7f800000, kQuiet = 0x00400000, kMinNormal = 0x00800000;
  static constexpr int32_t kDefaultNan = -4194304;  // 0xffc00000: sign | inf | quiet
};
template <>
struct Layout<half> {
  using I = int16_t;
  static constexpr int32_t kMin = -32768, kMax = 32767;
  static constexpr int32_t kInf = 0x7c00, kQuiet = 0x0200, kMinNormal = 0x0400;
  static constexpr int32_t kDefaultNan = -512;  // 0xfe00
};
template <>
struct Layout<bfloat16_t> {
  using I = int16_t;
  static constexpr int32_t kMin = -32768, kMax = 32767;
  static constexpr int32_t kInf = 0x7f80, kQuiet = 0x0040, kMinNormal = 0x0080;
  static constexpr int32_t kDefaultNan = -64;  // 0xffc0
};

template <typename I>
struct LaneRange;
template <>
struct LaneRange<int32_t> {
  static constexpr int32_t kMin = -2147483647 - 1, kMax = 2147483647;
};
template <>
struct LaneRange<int16_t> {
  static constexpr int32_t kMin = -32768, kMax = 32767;
};

// ---- Bitwise helpers: 16-bit lanes whatever the data width ----
template <typename I>
__aicore__ inline int32_t Halves(uint32_t count) {
  return static_cast<int32_t>(count * sizeof(I) / sizeof(int16_t));
}
template <typename I>
__aicore__ inline void BitAnd(const LocalTensor<I>& d, const LocalTensor<I>& a,
                              const LocalTensor<I>& b, uint32_t c) {
  And(d.template ReinterpretCast<int16_t>(), a.template ReinterpretCast<int16_t>(),
      b.template ReinterpretCast<int16_t>(), Halves<I>(c));
}
template <typename I>
__aicore__ inline void BitOr(const LocalTensor<I>& d, const LocalTensor<I>& a,
                             const LocalTensor<I>& b, uint32_t c) {
  Or(d.template ReinterpretCast<int16_t>(), a.template ReinterpretCast<int16_t>(),
     b.template ReinterpretCast<int16_t>(), Halves<I>(c));
}
template <typename I>
__aicore__ inline void BitNot(const LocalTensor<I>& d, const LocalTensor<I>& a, uint32_t c) {
  Not(d.template ReinterpretCast<int16_t>(), a.template ReinterpretCast<int16_t>(), Halves<I>(c));
}
// d = m ? a : b, lane masks all-ones/zero. d may be a or b, never m or tmp.
template <typename I>
__aicore__ inline void Blend(const LocalTensor<I>& d, const LocalTensor<I>& m,
                             const LocalTensor<I>& a, const LocalTensor<I>& b,
                             const LocalTensor<I>& tmp, uint32_t c) {
  BitNot(tmp, m, c);
  BitAnd(tmp, tmp, b, c);
  BitAnd(d, a, m, c);
  BitOr(d, d, tmp, c);
}

// ---- Integer interval tests (exact: integer clamps never round) ----
// d = (v < a) ? -1 : 0, for a > lane minimum. Every intermediate is in
// [a-1, a], so nothing overflows.
template <typename I>
__aicore__ inline void MaskLt(const LocalTensor<I>& d, const LocalTensor<I>& v, int32_t a,
                              uint32_t c) {
  Maxs(d, v, static_cast<I>(a - 1), static_cast<int32_t>(c));
  Mins(d, d, static_cast<I>(a), static_cast<int32_t>(c));
  Adds(d, d, static_cast<I>(-a), static_cast<int32_t>(c));
}
// d = (v <= b) ? -1 : 0, for b < lane maximum; intermediates in [b, b+1].
template <typename I>
__aicore__ inline void MaskLe(const LocalTensor<I>& d, const LocalTensor<I>& v, int32_t b,
                              uint32_t c) {
  Mins(d, v, static_cast<I>(b + 1), static_cast<int32_t>(c));
  Maxs(d, d, static_cast<I>(b), static_cast<int32_t>(c));
  Adds(d, d, static_cast<I>(-(b + 1)), static_cast<int32_t>(c));
}
// d = (lo <= v <= hi) ? -1 : 0. d must not be v or tmp.
template <typename I>
__aicore__ inline void RangeMask(const LocalTensor<I>& d, const LocalTensor<I>& v, int32_t lo,
                                 int32_t hi, const LocalTensor<I>& tmp, uint32_t c) {
  const bool has_lo = lo > LaneRange<I>::kMin;
  const bool has_hi = hi < LaneRange<I>::kMax;
  if (!has_lo && !has_hi) {
    Duplicate(d, static_cast<I>(-1), static_cast<int32_t>(c));
  } else if (!has_lo) {
    MaskLe(d, v, hi, c);
  } else if (!has_hi) {
    MaskLt(d, v, lo, c);
    BitNot(d, d, c);
  } else {
    MaskLe(d, v, hi, c);
    MaskLt(tmp, v, lo, c);
    BitNot(tmp, tmp, c);
    BitAnd(d, d, tmp, c);
  }
}
// d = (v in set) ? -1 : 0. d must not be v, t1 or t2.
template <typename I>
__aicore__ inline void Member(const LocalTensor<I>& d, const LocalTensor<I>& v, const RgRawSet& set,
                              const LocalTensor<I>& t1, const LocalTensor<I>& t2, uint32_t c) {
  if (set.count == 0) {
    Duplicate(d, static_cast<I>(0), static_cast<int32_t>(c));
    return;
  }
  RangeMask(d, v, set.lo[0], set.hi[0], t2, c);
  for (uint32_t j = 1; j < set.count; ++j) {
    RangeMask(t1, v, set.lo[j], set.hi[j], t2, c);
    BitOr(d, d, t1, c);
  }
}
// FTZ on f32 lanes: subnormal patterns keep only their sign bit.
__aicore__ inline void FlushF32(const LocalTensor<int32_t>& x, const LocalTensor<int32_t>& t1,
                                const LocalTensor<int32_t>& t2, const LocalTensor<int32_t>& m,
                                const LocalTensor<int32_t>& sign, uint32_t c) {
  RgRawSet sub;
  sub.count = 2;
  sub.lo[0] = LaneRange<int32_t>::kMin + 1;  // -subnormals: 0x80000001 .. 0x807fffff
  sub.hi[0] = LaneRange<int32_t>::kMin + 0x007fffff;
  sub.lo[1] = 1;  // +subnormals: 0x00000001 .. 0x007fffff
  sub.hi[1] = 0x007fffff;
  Member(m, x, sub, t1, t2, c);
  BitNot(m, m, c);
  BitOr(m, m, sign, c);
  BitAnd(x, x, m, c);
}

template <typename F>
class ReluGradKernel {
  using L = Layout<F>;
  using I = typename L::I;

 public:
  __aicore__ inline ReluGradKernel() {}

  __aicore__ inline void Init(GM_ADDR dy, GM_ADDR s, GM_ADDR dx, const ReluGradTilingData& td) {
    td_ = td;
    dy_ = dy;
    s_ = s;
    dx_ = dx;
    // A core takes plan blocks idx, idx + cores, ...: the launch is normally
    // exactly td.blocks wide, and a narrower one still covers every block.
    first_ = static_cast<uint64_t>(GetBlockIdx());
    stride_ = static_cast<uint64_t>(GetBlockNum());
    if (first_ >= td.blocks) return;  // wider than the plan: nothing to do
    tileBytes_ = td.tileElems * static_cast<uint32_t>(sizeof(F));
    pipe_.InitBuffer(inDy_, kBufferNum, tileBytes_);
    pipe_.InitBuffer(inS_, kBufferNum, tileBytes_);
    pipe_.InitBuffer(out_, kBufferNum, tileBytes_);
    pipe_.InitBuffer(calc_, td.scratchSlots * tileBytes_);
    if (!td.plainSelect) InitConstants();
  }

  __aicore__ inline void Process() {
    for (uint64_t b = first_; b < td_.blocks; b += stride_) {
      // The work plan's block split (relugrad::WorkPlan::Begin/End).
      const uint64_t begin = b == 0 ? 0 : Min(td_.n, td_.headElems + b * td_.blockElems);
      const uint64_t end =
          b + 1 == td_.blocks ? td_.n : Min(td_.n, td_.headElems + (b + 1) * td_.blockElems);
      const uint64_t len = end - begin;
      dyGm_.SetGlobalBuffer(reinterpret_cast<__gm__ F*>(dy_) + begin, len);
      sGm_.SetGlobalBuffer(reinterpret_cast<__gm__ F*>(s_) + begin, len);
      dxGm_.SetGlobalBuffer(reinterpret_cast<__gm__ F*>(dx_) + begin, len);
      const uint64_t tiles = (len + td_.tileElems - 1) / td_.tileElems;
      for (uint64_t t = 0; t < tiles; ++t) {
        const uint64_t off = t * td_.tileElems;
        const uint32_t cnt =
            static_cast<uint32_t>(Min(static_cast<uint64_t>(td_.tileElems), len - off));
        CopyIn(off, cnt);
        Compute(cnt);
        CopyOut(off, cnt);
      }
    }
  }

 private:
  __aicore__ static inline uint64_t Min(uint64_t a, uint64_t b) { return a < b ? a : b; }

  template <typename T>
  __aicore__ inline LocalTensor<T> Slot(uint32_t k) {
    return calc_.template Get<T>()[k * tileBytes_ / static_cast<uint32_t>(sizeof(T))];
  }

  // General-path slot layout (RgScratchSlots counts them):
  //  0 gate mask  1 t1  2 t2  3 |dy|  4 NaN(dy)  5 pass  6 closed  7 t3
  //  8 magnitude  9 sign  10 quiet  11 clip_lo  12 clip_hi  13 default NaN
  //  14-15 f32 product (16-bit data, alpha)  16-23 f32 t1/t2/mask/sign (FTZ)
  __aicore__ inline void InitConstants() {
    const int32_t c = static_cast<int32_t>(td_.tileElems);
    Duplicate(Slot<I>(8), static_cast<I>(L::kMax), c);
    Duplicate(Slot<I>(9), static_cast<I>(L::kMin), c);
    Duplicate(Slot<I>(10), static_cast<I>(L::kQuiet), c);
    Duplicate(Slot<I>(11), static_cast<I>(td_.clipLoBits), c);
    Duplicate(Slot<I>(12), static_cast<I>(td_.clipHiBits), c);
    Duplicate(Slot<I>(13), static_cast<I>(L::kDefaultNan), c);
    if (sizeof(I) == 2 && td_.closedRule == kRgClosedMulAlpha && td_.flushSubnormals) {
      Duplicate(Slot<int32_t>(22), static_cast<int32_t>(LaneRange<int32_t>::kMin), c);
    }
  }

  __aicore__ inline void CopyIn(uint64_t off, uint32_t cnt) {
    LocalTensor<F> dy = inDy_.template AllocTensor<F>();
    LocalTensor<F> s = inS_.template AllocTensor<F>();
    const uint32_t bytes = cnt * static_cast<uint32_t>(sizeof(F));
    if (bytes % kCopyBytes == 0) {
      DataCopy(dy, dyGm_[off], cnt);
      DataCopy(s, sGm_[off], cnt);
    } else {
      // The tail: byte-exact read, zero padding up to the 32-byte boundary so
      // the vector instructions read only written UB.
      const uint32_t padded = (bytes + kCopyBytes - 1) / kCopyBytes * kCopyBytes;
      const DataCopyExtParams params(1, bytes, 0, 0, 0);
      const DataCopyPadExtParams<F> pad(true, 0, static_cast<uint8_t>((padded - bytes) / sizeof(F)),
                                        F{});
      DataCopyPad(dy, dyGm_[off], params, pad);
      DataCopyPad(s, sGm_[off], params, pad);
    }
    inDy_.EnQue(dy);
    inS_.EnQue(s);
  }

  __aicore__ inline void Compute(uint32_t cnt) {
    LocalTensor<F> dyF = inDy_.template DeQue<F>();
    LocalTensor<F> sF = inS_.template DeQue<F>();
    LocalTensor<F> outF = out_.template AllocTensor<F>();
    // Whole 32-byte blocks: the padding lanes are computed and never copied out.
    const uint32_t per_block = kCopyBytes / static_cast<uint32_t>(sizeof(F));
    const uint32_t c = (cnt + per_block - 1) / per_block * per_block;
    const LocalTensor<I> dy = dyF.template ReinterpretCast<I>();
    const LocalTensor<I> s = sF.template ReinterpretCast<I>();
    const LocalTensor<I> out = outF.template ReinterpretCast<I>();
    if (td_.plainSelect) {
      Member(out, s, td_.gate, Slot<I>(0), Slot<I>(1), c);
      BitAnd(out, out, dy, c);
    } else {
      General(out, dy, s, c);
    }
    out_.EnQue(outF);
    inDy_.FreeTensor(dyF);
    inS_.FreeTensor(sF);
  }

  __aicore__ inline void General(const LocalTensor<I>& out, const LocalTensor<I>& dy,
                                 const LocalTensor<I>& s, uint32_t c) {
    const LocalTensor<I> gate = Slot<I>(0), t1 = Slot<I>(1), t2 = Slot<I>(2), mag = Slot<I>(3);
    const LocalTensor<I> nan = Slot<I>(4), pass = Slot<I>(5), closed = Slot<I>(6), t3 = Slot<I>(7);
    const LocalTensor<I> magC = Slot<I>(8), signC = Slot<I>(9), quietC = Slot<I>(10);
    Member(gate, s, td_.gate, t1, t2, c);
    BitAnd(mag, dy, magC, c);
    MaskLt(nan, mag, L::kInf + 1, c);  // |dy| > inf  <=>  NaN
    BitNot(nan, nan, c);

    // Open lanes.
    LocalTensor<I> open = dy;
    if (td_.openMultiply) {  // dy * 1
      BitAnd(pass, nan, quietC, c);
      BitOr(pass, pass, dy, c);  // NaN -> quiet NaN, payload kept
      if (td_.flushSubnormals) {
        RangeMask(t3, mag, 1, L::kMinNormal - 1, t1, c);
        BitAnd(t2, dy, signC, c);
        Blend(pass, t3, t2, pass, t1, c);  // subnormal -> signed zero
      }
      open = pass;
    }
    if (td_.clip) {  // the sets exclude NaN, so NaN passes untouched
      Member(t3, open, td_.clipBelow, t1, t2, c);
      Blend(pass, t3, Slot<I>(11), open, t1, c);
      Member(t3, pass, td_.clipAbove, t1, t2, c);
      Blend(pass, t3, Slot<I>(12), pass, t1, c);
      open = pass;
    }

    // Closed lanes.
    if (td_.closedRule == kRgClosedZero) {
      BitAnd(out, open, gate, c);
      return;
    }
    if (td_.closedRule == kRgClosedMulZero) {
      BitAnd(closed, dy, signC, c);  // finite * 0 = zero with dy's sign
      RangeMask(t3, mag, L::kInf, L::kInf, t1, c);
      Blend(closed, t3, Slot<I>(13), closed, t1, c);  // inf * 0 = default NaN
    } else {
      MulAlpha(closed, dy, mag, c);
    }
    BitOr(t2, dy, quietC, c);
    Blend(closed, nan, t2, closed, t1, c);  // NaN * x = quieted dy
    Blend(out, gate, open, closed, t1, c);
  }

  // closed = dy * alpha (not yet NaN-fixed).
  __aicore__ inline void MulAlpha(const LocalTensor<I>& closed, const LocalTensor<I>& dy,
                                  const LocalTensor<I>& mag, uint32_t c) {
    const LocalTensor<I> t1 = Slot<I>(1), t2 = Slot<I>(2), t3 = Slot<I>(7), signC = Slot<I>(9);
    LocalTensor<I> x = dy;
    if (td_.flushSubnormals) {  // DAZ: subnormal dy counts as signed zero
      RangeMask(t3, mag, 1, L::kMinNormal - 1, t1, c);
      BitAnd(t2, dy, signC, c);
      Blend(closed, t3, t2, dy, t1, c);
      x = closed;
    }
    if constexpr (sizeof(I) == 4) {
      const LocalTensor<float> prod = closed.template ReinterpretCast<float>();
      Muls(prod, x.template ReinterpretCast<float>(), td_.alpha, static_cast<int32_t>(c));
      if (td_.flushSubnormals) FlushF32(closed, t1, t2, t3, signC, c);  // FTZ on the result
    } else {
      const LocalTensor<float> wide = Slot<float>(14);
      Cast(wide, x.template ReinterpretCast<F>(), RoundMode::CAST_NONE, c);  // exact
      Muls(wide, wide, td_.alpha, static_cast<int32_t>(c));
      if (td_.flushSubnormals) {
        FlushF32(wide.template ReinterpretCast<int32_t>(), Slot<int32_t>(16), Slot<int32_t>(18),
                 Slot<int32_t>(20), Slot<int32_t>(22), c);
      }
      Cast(closed.template ReinterpretCast<F>(), wide, RoundMode::CAST_RINT, c);
    }
  }

  __aicore__ inline void CopyOut(uint64_t off, uint32_t cnt) {
    LocalTensor<F> out = out_.template DeQue<F>();
    const uint32_t bytes = cnt * static_cast<uint32_t>(sizeof(F));
    if (bytes % kCopyBytes == 0) {
      DataCopy(dxGm_[off], out, cnt);
    } else {
      DataCopyPad(dxGm_[off], out, DataCopyExtParams(1, bytes, 0, 0, 0));
    }
    out_.FreeTensor(out);
  }

  ReluGradTilingData td_;
  GM_ADDR dy_ = nullptr;
  GM_ADDR s_ = nullptr;
  GM_ADDR dx_ = nullptr;
  uint64_t first_ = 0, stride_ = 1;
  uint32_t tileBytes_ = 0;
  TPipe pipe_;
  TQue<TPosition::VECIN, kBufferNum> inDy_, inS_;
  TQue<TPosition::VECOUT, kBufferNum> out_;
  TBuf<TPosition::VECCALC> calc_;
  GlobalTensor<F> dyGm_, sGm_, dxGm_;
};

// Runs K<F>, F the tiling's dtype, over this block's share of a plan: the
// one dtype switch of every kernel's entry (here and relu_v2_kernel.h).
template <template <typename> class K, typename Td>
__aicore__ inline void RunTyped(GM_ADDR a, GM_ADDR b, GM_ADDR c, const Td& td) {
  if (td.dtype == kRgF32) {
    K<float> op;
    op.Init(a, b, c, td);
    op.Process();
  } else if (td.dtype == kRgF16) {
    K<half> op;
    op.Init(a, b, c, td);
    op.Process();
  } else if (td.dtype == kRgBF16) {
    K<bfloat16_t> op;
    op.Init(a, b, c, td);
    op.Process();
  }
}

// Runs this block's share of the plan; the entry points (relu_grad here,
// relu_grad_custom in the CANN op package) only read the tiling and call it.
__aicore__ inline void RunReluGrad(GM_ADDR dy, GM_ADDR s, GM_ADDR dx,
                                   const ReluGradTilingData& td) {
  RunTyped<ReluGradKernel>(dy, s, dx, td);
}

}  // namespace relugrad_ascend

#endif  // RELUGRAD_ASCEND_KERNEL_RELU_GRAD_KERNEL_H_
