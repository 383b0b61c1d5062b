// ReluV2 (forward: y = relu(x) and a 1-bit mask) and ReluGradV2 (backward:
// dx = bit ? dy : +0) as AscendC vector kernels for Ascend 910B, in the
// layout of relugrad's own mask and Ascend 950's ReluV2: bit i of the mask is
// element i of x, bit i % 8 of byte i / 8 (LSB first), ceil(n/8) bytes,
// padding bits 0; and in 910B's blocked layout (below). Same paradigm as relu_grad_kernel.h: per
// block, tiles stream CopyIn (MTE2) -> Compute (V) -> CopyOut (MTE3) through depth-2 queues.
//
// Exactness:
//  - the gate is a membership test of x's raw bits in the host's interval
//    sets (Member, the integer clamps of relu_grad_kernel.h): no float
//    compare ever sees x, so NaN, -0 and subnormals follow the host's rules;
//  - y = x & (open | keep) bitwise: x's bits, or +0;
//  - the bits come from Compares(GT, 0) on lanes that hold exactly 1.0 or +0
//    (the lane mask ANDed with 1.0's pattern), the one input on which a
//    float compare has no NaN, -0 or denormal question. 16-bit data compares
//    as half whatever its type: only those two patterns reach the compare;
//  - the backward is Select(mask, dy, +0) in tensor-scalar mode: a lane move
//    that never interprets dy (bf16 is moved as half: the same 16 bits).
//
// Tails: x is padded (DataCopyPad) with a raw pattern outside the gate, and
// the compare lanes past the 32-byte boundary are set to +0, so the padding
// bits of the last mask byte are 0 and every compared lane was written.
#ifndef RELUGRAD_ASCEND_KERNEL_RELU_V2_KERNEL_H_
#define RELUGRAD_ASCEND_KERNEL_RELU_V2_KERNEL_H_

#include "kernel_operator.h"
#include "relu_grad_kernel.h"
#include "relu_v2_tiling.h"

namespace relugrad_ascend {

using namespace AscendC;

// The compare / select view of a data type and the bits of 1.0 in it.
template <typename F>
struct MaskLane {
  using C = half;
  static constexpr int32_t kOne = 0x3c00;  // half 1.0
};
template <>
struct MaskLane<float> {
  using C = float;
  static constexpr int32_t kOne = 0x3f800000;  // float 1.0
};

__aicore__ inline uint64_t MaskMin(uint64_t a, uint64_t b) { return a < b ? a : b; }
__aicore__ inline uint32_t RoundUp(uint32_t v, uint32_t unit) {
  return (v + unit - 1) / unit * unit;
}

// Copies cnt mask bits' bytes (ceil(cnt/8)) UB -> GM; a partial granule goes
// through DataCopyPad, byte-exact.
__aicore__ inline void CopyMaskOut(const GlobalTensor<uint8_t>& gm, const LocalTensor<uint8_t>& m,
                                   uint32_t cnt) {
  const uint32_t bytes = (cnt + 7) / 8;
  if (bytes % kCopyBytes == 0) {
    DataCopy(gm, m, bytes);
  } else {
    DataCopyPad(gm, m, DataCopyExtParams(1, bytes, 0, 0, 0));
  }
}

// Copies ceil(cnt/8) mask bytes GM -> UB, zero-padded to the 32-byte boundary.
__aicore__ inline void CopyMaskIn(const LocalTensor<uint8_t>& m, const GlobalTensor<uint8_t>& gm,
                                  uint32_t cnt) {
  const uint32_t bytes = (cnt + 7) / 8;
  if (bytes % kCopyBytes == 0) {
    DataCopy(m, gm, bytes);
  } else {
    const uint8_t pad = static_cast<uint8_t>(RoundUp(bytes, kCopyBytes) - bytes);
    DataCopyPad(m, gm, DataCopyExtParams(1, bytes, 0, 0, 0),
                DataCopyPadExtParams<uint8_t>(true, 0, pad, 0));
  }
}

// Copies cnt elements GM -> UB, padded to the 32-byte boundary with `pad`.
template <typename I>
__aicore__ inline void CopyDataIn(const LocalTensor<I>& t, const GlobalTensor<I>& gm, uint32_t cnt,
                                  I pad) {
  const uint32_t bytes = cnt * static_cast<uint32_t>(sizeof(I));
  if (bytes % kCopyBytes == 0) {
    DataCopy(t, gm, cnt);
  } else {
    const uint8_t right = static_cast<uint8_t>((RoundUp(bytes, kCopyBytes) - bytes) /
                                               static_cast<uint32_t>(sizeof(I)));
    DataCopyPad(t, gm, DataCopyExtParams(1, bytes, 0, 0, 0),
                DataCopyPadExtParams<I>(true, 0, right, pad));
  }
}

template <typename I>
__aicore__ inline void CopyDataOut(const GlobalTensor<I>& gm, const LocalTensor<I>& t,
                                   uint32_t cnt) {
  const uint32_t bytes = cnt * static_cast<uint32_t>(sizeof(I));
  if (bytes % kCopyBytes == 0) {
    DataCopy(gm, t, cnt);
  } else {
    DataCopyPad(gm, t, DataCopyExtParams(1, bytes, 0, 0, 0));
  }
}

// The block split both kernels share: block b owns elements
// [b * blockElems, min(n, (b + 1) * blockElems)), whole mask granules.
struct MaskSpan {
  uint64_t begin, len;
};
__aicore__ inline MaskSpan BlockSpan(const ReluV2TilingData& td, uint64_t b) {
  const uint64_t begin = MaskMin(td.n, b * td.blockElems);
  return {begin, MaskMin(td.n, begin + td.blockElems) - begin};
}

// The forward's vector sequence on c lanes of x, shared by the flat and the
// NHWC blocked kernels: gate and keep by raw-pattern membership, y = x &
// (gate | keep), and the bits from Compares(GT, 0) on lanes holding exactly
// 1.0 or +0 (lanes c..c256 set to +0, so every compared lane was written).
// calc holds tile slots `slot` elements apart: 0 gate  1-2 temporaries
// 3 keep  4 the constant 1.0  5 compare operand.
template <typename F, typename I = typename Layout<F>::I>
__aicore__ inline void ForwardLanes(const LocalTensor<I>& x, const LocalTensor<I>& y,
                                    const LocalTensor<uint8_t>& m, const RgRawSet& gateSet,
                                    const RgRawSet& keepSet, const LocalTensor<I>& calc,
                                    uint32_t slot, uint32_t c, uint32_t c256) {
  using C = typename MaskLane<F>::C;
  const LocalTensor<I> gate = calc[0], t1 = calc[slot], t2 = calc[2 * slot];
  const LocalTensor<I> keep = calc[3 * slot], one = calc[4 * slot], cmp = calc[5 * slot];
  Member(gate, x, gateSet, t1, t2, c);
  Member(keep, x, keepSet, t1, t2, c);
  BitOr(t1, gate, keep, c);
  BitAnd(y, x, t1, c);
  BitAnd(cmp, gate, one, c);
  if (c256 > c) Duplicate(cmp[c], static_cast<I>(0), static_cast<int32_t>(c256 - c));
  Compares(m, cmp.template ReinterpretCast<C>(), C{}, CMPMODE::GT, c256);
}

template <typename F>
class ReluV2Kernel {
  using I = typename Layout<F>::I;
  using C = typename MaskLane<F>::C;

 public:
  __aicore__ inline ReluV2Kernel() {}

  __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR mask, const ReluV2TilingData& td) {
    td_ = td;
    x_ = x;
    y_ = y;
    mask_ = mask;
    first_ = static_cast<uint64_t>(GetBlockIdx());
    stride_ = static_cast<uint64_t>(GetBlockNum());
    if (first_ >= td.blocks) return;
    tileBytes_ = td.tileElems * static_cast<uint32_t>(sizeof(I));
    pipe_.InitBuffer(inX_, kBufferNum, tileBytes_);
    pipe_.InitBuffer(outY_, kBufferNum, tileBytes_);
    pipe_.InitBuffer(outM_, kBufferNum, td.tileElems / 8);
    pipe_.InitBuffer(calc_, kRgReluV2Slots * tileBytes_);
    Duplicate(Slot(4), static_cast<I>(MaskLane<F>::kOne), static_cast<int32_t>(td.tileElems));
  }

  __aicore__ inline void Process() {
    for (uint64_t b = first_; b < td_.blocks; b += stride_) {
      const MaskSpan span = BlockSpan(td_, b);
      xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ I*>(x_) + span.begin, span.len);
      yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ I*>(y_) + span.begin, span.len);
      mGm_.SetGlobalBuffer(reinterpret_cast<__gm__ uint8_t*>(mask_) + span.begin / 8,
                           (span.len + 7) / 8);
      for (uint64_t off = 0; off < span.len; off += td_.tileElems) {
        const uint32_t cnt =
            static_cast<uint32_t>(MaskMin(static_cast<uint64_t>(td_.tileElems), span.len - off));
        LocalTensor<I> x = inX_.template AllocTensor<I>();
        CopyDataIn(x, xGm_[off], cnt, static_cast<I>(td_.closedPad));
        inX_.EnQue(x);
        Compute(cnt);
        LocalTensor<I> y = outY_.template DeQue<I>();
        CopyDataOut(yGm_[off], y, cnt);
        outY_.FreeTensor(y);
        LocalTensor<uint8_t> m = outM_.template DeQue<uint8_t>();
        CopyMaskOut(mGm_[off / 8], m, cnt);
        outM_.FreeTensor(m);
      }
    }
  }

 private:
  __aicore__ inline LocalTensor<I> Slot(uint32_t k) {
    return calc_.template Get<I>()[k * tileBytes_ / static_cast<uint32_t>(sizeof(I))];
  }

  // Slots: 0 gate  1-2 temporaries  3 keep  4 the constant 1.0  5 compare operand.
  __aicore__ inline void Compute(uint32_t cnt) {
    LocalTensor<I> x = inX_.template DeQue<I>();
    LocalTensor<I> y = outY_.template AllocTensor<I>();
    LocalTensor<uint8_t> m = outM_.template AllocTensor<uint8_t>();
    const uint32_t c = RoundUp(cnt, kCopyBytes / static_cast<uint32_t>(sizeof(I)));
    const uint32_t c256 = RoundUp(cnt, kRgMaskGranuleElems);  // whole 256-byte compare repeats
    const uint32_t slot = tileBytes_ / static_cast<uint32_t>(sizeof(I));
    ForwardLanes<F>(x, y, m, td_.gate, td_.keep, calc_.template Get<I>(), slot, c, c256);
    outY_.EnQue(y);
    outM_.EnQue(m);
    inX_.FreeTensor(x);
  }

  ReluV2TilingData td_;
  GM_ADDR x_ = nullptr;
  GM_ADDR y_ = nullptr;
  GM_ADDR mask_ = nullptr;
  uint64_t first_ = 0, stride_ = 1;
  uint32_t tileBytes_ = 0;
  TPipe pipe_;
  TQue<TPosition::VECIN, kBufferNum> inX_;
  TQue<TPosition::VECOUT, kBufferNum> outY_, outM_;
  TBuf<TPosition::VECCALC> calc_;
  GlobalTensor<I> xGm_, yGm_;
  GlobalTensor<uint8_t> mGm_;
};

template <typename F>
class ReluGradV2Kernel {
  using I = typename Layout<F>::I;
  using C = typename MaskLane<F>::C;

 public:
  __aicore__ inline ReluGradV2Kernel() {}

  __aicore__ inline void Init(GM_ADDR dy, GM_ADDR mask, GM_ADDR dx, const ReluV2TilingData& td) {
    td_ = td;
    dy_ = dy;
    mask_ = mask;
    dx_ = dx;
    first_ = static_cast<uint64_t>(GetBlockIdx());
    stride_ = static_cast<uint64_t>(GetBlockNum());
    if (first_ >= td.blocks) return;
    const uint32_t tileBytes = td.tileElems * static_cast<uint32_t>(sizeof(I));
    pipe_.InitBuffer(inDy_, kBufferNum, tileBytes);
    pipe_.InitBuffer(inM_, kBufferNum, td.tileElems / 8);
    pipe_.InitBuffer(outDx_, kBufferNum, tileBytes);
  }

  __aicore__ inline void Process() {
    for (uint64_t b = first_; b < td_.blocks; b += stride_) {
      const MaskSpan span = BlockSpan(td_, b);
      dyGm_.SetGlobalBuffer(reinterpret_cast<__gm__ I*>(dy_) + span.begin, span.len);
      dxGm_.SetGlobalBuffer(reinterpret_cast<__gm__ I*>(dx_) + span.begin, span.len);
      mGm_.SetGlobalBuffer(reinterpret_cast<__gm__ uint8_t*>(mask_) + span.begin / 8,
                           (span.len + 7) / 8);
      for (uint64_t off = 0; off < span.len; off += td_.tileElems) {
        const uint32_t cnt =
            static_cast<uint32_t>(MaskMin(static_cast<uint64_t>(td_.tileElems), span.len - off));
        LocalTensor<I> dy = inDy_.template AllocTensor<I>();
        LocalTensor<uint8_t> m = inM_.template AllocTensor<uint8_t>();
        CopyDataIn(dy, dyGm_[off], cnt, static_cast<I>(0));
        CopyMaskIn(m, mGm_[off / 8], cnt);
        inDy_.EnQue(dy);
        inM_.EnQue(m);
        Compute(cnt);
        LocalTensor<I> dx = outDx_.template DeQue<I>();
        CopyDataOut(dxGm_[off], dx, cnt);
        outDx_.FreeTensor(dx);
      }
    }
  }

 private:
  __aicore__ inline void Compute(uint32_t cnt) {
    LocalTensor<I> dy = inDy_.template DeQue<I>();
    LocalTensor<uint8_t> m = inM_.template DeQue<uint8_t>();
    LocalTensor<I> dx = outDx_.template AllocTensor<I>();
    const uint32_t c = RoundUp(cnt, kCopyBytes / static_cast<uint32_t>(sizeof(I)));
    Select(dx.template ReinterpretCast<C>(), m, dy.template ReinterpretCast<C>(), C{},
           SELMODE::VSEL_TENSOR_SCALAR_MODE, c);
    outDx_.EnQue(dx);
    inDy_.FreeTensor(dy);
    inM_.FreeTensor(m);
  }

  ReluV2TilingData td_;
  GM_ADDR dy_ = nullptr;
  GM_ADDR mask_ = nullptr;
  GM_ADDR dx_ = nullptr;
  uint64_t first_ = 0, stride_ = 1;
  TPipe pipe_;
  TQue<TPosition::VECIN, kBufferNum> inDy_, inM_;
  TQue<TPosition::VECOUT, kBufferNum> outDx_;
  GlobalTensor<I> dyGm_, dxGm_;
  GlobalTensor<uint8_t> mGm_;
};

// ---- The blocked layout (relu_v2_tiling.h: ReluV2BlockedTilingData) from NCHW x ----
// A tile is up to 16 channel planes of one group (n, c1), tileHw positions
// each, at a fixed plane pitch. The forward writes per plane a half marker
// (1.0 where the gate is open, +0 elsewhere and in padding channels and
// lanes) into a [c0][hw] matrix, transposes it to [hw][c0] with
// TransDataTo5HD (the NCHW -> NC1HWC0 instruction) and compares that, so the
// bits come out in blocked order. The backward expands the mask bits to half
// markers with Select, transposes back, and turns each plane's markers into
// lane masks with integer clamps: dx = dy & mask, dy's bits or +0.
constexpr int kTransRows = 16;  // TransDataTo5HD's address lists (NCHW_CONV_ADDR_LIST_SIZE)

__aicore__ inline uint64_t GroupsOf(const ReluV2BlockedTilingData& td) {
  return td.n * ((td.c + 15) / 16);
}

template <typename I>
struct PlaneCopy {
  uint32_t bytes, padded, gap;  // per plane: data bytes, with the 32-byte pad, pitch remainder
};
template <typename I>
__aicore__ inline PlaneCopy<I> PlaneCopyOf(uint32_t cnt, uint32_t tileHw) {
  const uint32_t bytes = cnt * static_cast<uint32_t>(sizeof(I));
  const uint32_t padded = RoundUp(bytes, kCopyBytes);
  return {bytes, padded, (tileHw * static_cast<uint32_t>(sizeof(I)) - padded) / kCopyBytes};
}

// 16 transpose operands, one per row of a [16][pitch] half matrix (pitch in elements).
__aicore__ inline void RowList(LocalTensor<half> (&list)[kTransRows], const LocalTensor<half>& m,
                               uint32_t pitch) {
  for (int i = 0; i < kTransRows; ++i) list[i] = m[static_cast<uint32_t>(i) * pitch];
}

template <typename F>
class ReluV2BlockedKernel {
  using I = typename Layout<F>::I;

 public:
  __aicore__ inline ReluV2BlockedKernel() {}

  __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR mask,
                              const ReluV2BlockedTilingData& td) {
    td_ = td;
    first_ = static_cast<uint64_t>(GetBlockIdx());
    stride_ = static_cast<uint64_t>(GetBlockNum());
    if (first_ >= td.blocks) return;
    const uint64_t total = td.n * td.c * td.hw;
    xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ I*>(x), total);
    yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ I*>(y), total);
    mGm_.SetGlobalBuffer(reinterpret_cast<__gm__ uint8_t*>(mask), GroupsOf(td) * td.hw * 2);
    T_ = td.tileHw;
    planeBytes_ = T_ * static_cast<uint32_t>(sizeof(I));
    pipe_.InitBuffer(inX_, kBufferNum, 16 * planeBytes_);
    pipe_.InitBuffer(outY_, kBufferNum, 16 * planeBytes_);
    pipe_.InitBuffer(outM_, kBufferNum, 2 * T_);
    pipe_.InitBuffer(calc_, kRgReluV2Slots * planeBytes_);
    pipe_.InitBuffer(marks_, 2 * 16 * T_ * 2);  // [c0][hw] and [hw][c0] half matrices
    Duplicate(Slot(4), static_cast<I>(MaskLane<F>::kOne), static_cast<int32_t>(T_));
  }

  __aicore__ inline void Process() {
    const uint64_t c1s = (td_.c + 15) / 16, groups = GroupsOf(td_);
    for (uint64_t b = first_; b < td_.blocks; b += stride_) {
      const uint64_t g1 = MaskMin(groups, (b + 1) * td_.groupsPerBlock);
      for (uint64_t g = b * td_.groupsPerBlock; g < g1; ++g) {
        const uint64_t c0 = (g % c1s) * 16;
        const uint32_t r = static_cast<uint32_t>(MaskMin(16, td_.c - c0));
        const uint64_t xbase = ((g / c1s) * td_.c + c0) * td_.hw;
        for (uint64_t h0 = 0; h0 < td_.hw; h0 += T_) {
          const uint32_t cnt = static_cast<uint32_t>(MaskMin(T_, td_.hw - h0));
          const PlaneCopy<I> pc = PlaneCopyOf<I>(cnt, T_);
          LocalTensor<I> x = inX_.template AllocTensor<I>();
          const uint8_t right = static_cast<uint8_t>((pc.padded - pc.bytes) / sizeof(I));
          DataCopyPad(
              x, xGm_[xbase + h0],
              DataCopyExtParams(static_cast<uint16_t>(r), pc.bytes,
                                static_cast<uint32_t>((td_.hw - cnt) * sizeof(I)), pc.gap, 0),
              DataCopyPadExtParams<I>(true, 0, right, static_cast<I>(td_.closedPad)));
          inX_.EnQue(x);
          Compute(r, cnt);
          LocalTensor<I> y = outY_.template DeQue<I>();
          DataCopyPad(yGm_[xbase + h0], y,
                      DataCopyExtParams(static_cast<uint16_t>(r), pc.bytes, pc.gap,
                                        static_cast<uint32_t>((td_.hw - cnt) * sizeof(I)), 0));
          outY_.FreeTensor(y);
          LocalTensor<uint8_t> m = outM_.template DeQue<uint8_t>();
          CopyMaskOut(mGm_[(g * td_.hw + h0) * 2], m, 16 * cnt);
          outM_.FreeTensor(m);
        }
      }
    }
  }

 private:
  __aicore__ inline LocalTensor<I> Slot(uint32_t k) { return calc_.template Get<I>()[k * T_]; }

  __aicore__ inline void Compute(uint32_t r, uint32_t cnt) {
    LocalTensor<I> x = inX_.template DeQue<I>();
    LocalTensor<I> y = outY_.template AllocTensor<I>();
    LocalTensor<uint8_t> m = outM_.template AllocTensor<uint8_t>();
    const uint32_t c = RoundUp(cnt, kCopyBytes / static_cast<uint32_t>(sizeof(I)));
    const uint32_t c16 = RoundUp(cnt, 16);  // whole transpose repeats
    const LocalTensor<I> gate = Slot(0), t1 = Slot(1), t2 = Slot(2), keep = Slot(3);
    const LocalTensor<I> one = Slot(4), cmp = Slot(5);
    const LocalTensor<half> mh = marks_.template Get<half>();
    const LocalTensor<half> mt = mh[16 * T_];
    // Padding channels and lanes stay +0.
    Duplicate(mh.template ReinterpretCast<int16_t>(), static_cast<int16_t>(0),
              static_cast<int32_t>(16 * T_));
    for (uint32_t k = 0; k < r; ++k) {
      const LocalTensor<I> plane = x[k * T_];
      Member(gate, plane, td_.gate, t1, t2, c);
      Member(keep, plane, td_.keep, t1, t2, c);
      BitOr(t1, gate, keep, c);
      BitAnd(y[k * T_], plane, t1, c);
      if constexpr (sizeof(I) == 4) {
        BitAnd(cmp, gate, one, c);  // f32 1.0 or +0, narrowed exactly to half
        Cast(mh[k * T_], cmp.template ReinterpretCast<float>(), RoundMode::CAST_RINT, c);
      } else {
        BitAnd(mh[k * T_].template ReinterpretCast<I>(), gate, one, c);
      }
    }
    LocalTensor<half> src[kTransRows], dst[kTransRows];
    RowList(src, mh, T_);
    RowList(dst, mt, 16);
    TransDataTo5HD(dst, src,
                   TransDataTo5HDParams(false, false, static_cast<uint8_t>(c16 / 16), 16, 1));
    Compares(m, mt, half{}, CMPMODE::GT, 16 * c16);
    outY_.EnQue(y);
    outM_.EnQue(m);
    inX_.FreeTensor(x);
  }

  ReluV2BlockedTilingData td_;
  uint64_t first_ = 0, stride_ = 1;
  uint32_t T_ = 0, planeBytes_ = 0;
  TPipe pipe_;
  TQue<TPosition::VECIN, kBufferNum> inX_;
  TQue<TPosition::VECOUT, kBufferNum> outY_, outM_;
  TBuf<TPosition::VECCALC> calc_, marks_;
  GlobalTensor<I> xGm_, yGm_;
  GlobalTensor<uint8_t> mGm_;
};

template <typename F>
class ReluGradV2BlockedKernel {
  using I = typename Layout<F>::I;

 public:
  __aicore__ inline ReluGradV2BlockedKernel() {}

  __aicore__ inline void Init(GM_ADDR dy, GM_ADDR mask, GM_ADDR dx,
                              const ReluV2BlockedTilingData& td) {
    td_ = td;
    first_ = static_cast<uint64_t>(GetBlockIdx());
    stride_ = static_cast<uint64_t>(GetBlockNum());
    if (first_ >= td.blocks) return;
    const uint64_t total = td.n * td.c * td.hw;
    dyGm_.SetGlobalBuffer(reinterpret_cast<__gm__ I*>(dy), total);
    dxGm_.SetGlobalBuffer(reinterpret_cast<__gm__ I*>(dx), total);
    mGm_.SetGlobalBuffer(reinterpret_cast<__gm__ uint8_t*>(mask), GroupsOf(td) * td.hw * 2);
    T_ = td.tileHw;
    const uint32_t planeBytes = T_ * static_cast<uint32_t>(sizeof(I));
    pipe_.InitBuffer(inDy_, kBufferNum, 16 * planeBytes);
    pipe_.InitBuffer(inM_, kBufferNum, 2 * T_);
    pipe_.InitBuffer(outDx_, kBufferNum, 16 * planeBytes);
    pipe_.InitBuffer(marks_, 3 * 16 * T_ * 2);  // [hw][c0], [c0][hw], the constant 1.0
    pipe_.InitBuffer(calc_, 2 * T_ * 4);        // a lane mask and the f32 widening
    Duplicate(marks_.template Get<int16_t>()[2 * 16 * T_], static_cast<int16_t>(0x3c00),
              static_cast<int32_t>(16 * T_));
  }

  __aicore__ inline void Process() {
    const uint64_t c1s = (td_.c + 15) / 16, groups = GroupsOf(td_);
    for (uint64_t b = first_; b < td_.blocks; b += stride_) {
      const uint64_t g1 = MaskMin(groups, (b + 1) * td_.groupsPerBlock);
      for (uint64_t g = b * td_.groupsPerBlock; g < g1; ++g) {
        const uint64_t c0 = (g % c1s) * 16;
        const uint32_t r = static_cast<uint32_t>(MaskMin(16, td_.c - c0));
        const uint64_t base = ((g / c1s) * td_.c + c0) * td_.hw;
        for (uint64_t h0 = 0; h0 < td_.hw; h0 += T_) {
          const uint32_t cnt = static_cast<uint32_t>(MaskMin(T_, td_.hw - h0));
          const PlaneCopy<I> pc = PlaneCopyOf<I>(cnt, T_);
          LocalTensor<I> dy = inDy_.template AllocTensor<I>();
          LocalTensor<uint8_t> m = inM_.template AllocTensor<uint8_t>();
          const uint8_t right = static_cast<uint8_t>((pc.padded - pc.bytes) / sizeof(I));
          DataCopyPad(
              dy, dyGm_[base + h0],
              DataCopyExtParams(static_cast<uint16_t>(r), pc.bytes,
                                static_cast<uint32_t>((td_.hw - cnt) * sizeof(I)), pc.gap, 0),
              DataCopyPadExtParams<I>(true, 0, right, static_cast<I>(0)));
          CopyMaskIn(m, mGm_[(g * td_.hw + h0) * 2], 16 * cnt);
          inDy_.EnQue(dy);
          inM_.EnQue(m);
          Compute(r, cnt);
          LocalTensor<I> dx = outDx_.template DeQue<I>();
          DataCopyPad(dxGm_[base + h0], dx,
                      DataCopyExtParams(static_cast<uint16_t>(r), pc.bytes, pc.gap,
                                        static_cast<uint32_t>((td_.hw - cnt) * sizeof(I)), 0));
          outDx_.FreeTensor(dx);
        }
      }
    }
  }

 private:
  __aicore__ inline void Compute(uint32_t r, uint32_t cnt) {
    LocalTensor<I> dy = inDy_.template DeQue<I>();
    LocalTensor<uint8_t> m = inM_.template DeQue<uint8_t>();
    LocalTensor<I> dx = outDx_.template AllocTensor<I>();
    const uint32_t c = RoundUp(cnt, kCopyBytes / static_cast<uint32_t>(sizeof(I)));
    const uint32_t c16 = RoundUp(cnt, 16);
    const LocalTensor<half> mt = marks_.template Get<half>();
    const LocalTensor<half> mh = mt[16 * T_], ones = mt[2 * 16 * T_];
    Select(mt, m, ones, half{}, SELMODE::VSEL_TENSOR_SCALAR_MODE, 16 * c16);  // [hw][c0] markers
    LocalTensor<half> src[kTransRows], dst[kTransRows];
    RowList(src, mt, 16);
    RowList(dst, mh, T_);
    TransDataTo5HD(dst, src,
                   TransDataTo5HDParams(false, false, static_cast<uint8_t>(c16 / 16), 1, 16));
    const LocalTensor<I> lane = calc_.template Get<I>();
    for (uint32_t k = 0; k < r; ++k) {
      // Marker 1.0 or +0 -> lane mask all ones or zero: min(bits, 1) - 1, inverted.
      LocalTensor<I> bits = mh[k * T_].template ReinterpretCast<I>();
      if constexpr (sizeof(I) == 4) {
        const LocalTensor<float> wide = calc_.template Get<float>()[T_];
        Cast(wide, mh[k * T_], RoundMode::CAST_NONE, c);
        bits = wide.template ReinterpretCast<I>();
      }
      Mins(lane, bits, static_cast<I>(1), static_cast<int32_t>(c));
      Adds(lane, lane, static_cast<I>(-1), static_cast<int32_t>(c));
      BitNot(lane, lane, c);
      BitAnd(dx[k * T_], dy[k * T_], lane, c);
    }
    outDx_.EnQue(dx);
    inDy_.FreeTensor(dy);
    inM_.FreeTensor(m);
  }

  ReluV2BlockedTilingData td_;
  uint64_t first_ = 0, stride_ = 1;
  uint32_t T_ = 0;
  TPipe pipe_;
  TQue<TPosition::VECIN, kBufferNum> inDy_, inM_;
  TQue<TPosition::VECOUT, kBufferNum> outDx_;
  TBuf<TPosition::VECCALC> marks_, calc_;
  GlobalTensor<I> dyGm_, dxGm_;
  GlobalTensor<uint8_t> mGm_;
};

// ---- The blocked layout from NHWC x ----
// The 16 channels of a group (n, c1) at one position are contiguous in an
// NHWC x, and the mask's element order is (n, c1, hw, c0). A tile gathers T
// positions of one group as T rows of 16 lanes ([hw][c0]: one strided
// DataCopyPad, r = min(16, C - 16*c1) channels a row, GM gap C - r channels),
// and that lane order is already the mask's: no transpose. The forward is
// the flat kernel's sequence on 16*T lanes (gate, y = x & (open | keep),
// bits by Compares on 1.0 / +0 lanes) and writes one contiguous mask run of
// 2*cnt bytes; the backward is the flat kernel's Select, each mask bit on
// its own lane. Padding channels: lanes r..15 of a row hold the closed
// pattern (the copy's right padding; the second 32-byte block of an f32 row
// with r <= 8, which no copy reaches, by a block-strided Duplicate after
// DeQue), so their forward bits are 0; the backward selects them but never
// copies them out, so a set padding bit changes no dx. y and dx are
// scattered back with the gather's strides (DataCopyPad, byte-exact rows).
// Blocks own whole aligned image runs as from NCHW (relu_v2_tiling.h): a
// block's positions cover every group, and a split inside an image would
// keep each group's mask run in whole granules only at 16-position
// boundaries with HW % 16 == 0 (not done: one image, one core). What the
// twin models rather than knows: the strided DataCopyPad (as the NCHW
// kernel's) and the level-0 Duplicate's block strides, from the AscendC docs.
template <typename I>
struct RowCopy {
  uint32_t bytes, gap;  // per row: data bytes, UB blocks between its padded end and the next row
  uint8_t right;        // padding elements up to the row's 32-byte boundary
};
template <typename I>
__aicore__ inline RowCopy<I> RowCopyOf(uint32_t r) {
  const uint32_t bytes = r * static_cast<uint32_t>(sizeof(I));
  const uint32_t padded = RoundUp(bytes, kCopyBytes);
  return {bytes, (16 * static_cast<uint32_t>(sizeof(I)) - padded) / kCopyBytes,
          static_cast<uint8_t>((padded - bytes) / static_cast<uint32_t>(sizeof(I)))};
}

// Rows 0..cnt-1 (and up to the next multiple of 8) of a [T][16] f32 tile
// whose second 32-byte block no copy wrote get `pad` there: one level-0
// Duplicate, 8 rows a repeat (every other block). 32-bit lanes only (a
// 16-bit row is one block, always reached by the copy).
template <typename I>
__aicore__ inline void FillRowGaps(const LocalTensor<I>& t, uint32_t cnt, I pad) {
  Duplicate(t[8], pad, 64, static_cast<uint8_t>((cnt + 7) / 8), 2, 16);
}

template <typename F>
class ReluV2BlockedNhwcKernel {
  using I = typename Layout<F>::I;
  using C = typename MaskLane<F>::C;

 public:
  __aicore__ inline ReluV2BlockedNhwcKernel() {}

  __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR mask,
                              const ReluV2BlockedTilingData& td) {
    td_ = td;
    first_ = static_cast<uint64_t>(GetBlockIdx());
    stride_ = static_cast<uint64_t>(GetBlockNum());
    if (first_ >= td.blocks) return;
    const uint64_t total = td.n * td.c * td.hw;
    xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ I*>(x), total);
    yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ I*>(y), total);
    mGm_.SetGlobalBuffer(reinterpret_cast<__gm__ uint8_t*>(mask), GroupsOf(td) * td.hw * 2);
    lanes_ = 16 * td.tileHw;
    tileBytes_ = lanes_ * static_cast<uint32_t>(sizeof(I));
    pipe_.InitBuffer(inX_, kBufferNum, tileBytes_);
    pipe_.InitBuffer(outY_, kBufferNum, tileBytes_);
    pipe_.InitBuffer(outM_, kBufferNum, lanes_ / 8);
    pipe_.InitBuffer(calc_, kRgReluV2Slots * tileBytes_);
    Duplicate(Slot(4), static_cast<I>(MaskLane<F>::kOne), static_cast<int32_t>(lanes_));
  }

  __aicore__ inline void Process() {
    const uint64_t c1s = (td_.c + 15) / 16, groups = GroupsOf(td_);
    const uint32_t elem = static_cast<uint32_t>(sizeof(I));
    for (uint64_t b = first_; b < td_.blocks; b += stride_) {
      const uint64_t g1 = MaskMin(groups, (b + 1) * td_.groupsPerBlock);
      for (uint64_t g = b * td_.groupsPerBlock; g < g1; ++g) {
        const uint64_t c0 = (g % c1s) * 16;
        const uint32_t r = static_cast<uint32_t>(MaskMin(16, td_.c - c0));
        const uint32_t skip = static_cast<uint32_t>(td_.c - r) * elem;  // GM gap between rows
        const uint64_t base = (g / c1s) * td_.hw * td_.c + c0;
        const RowCopy<I> rc = RowCopyOf<I>(r);
        for (uint64_t h0 = 0; h0 < td_.hw; h0 += td_.tileHw) {
          const uint32_t cnt = static_cast<uint32_t>(MaskMin(td_.tileHw, td_.hw - h0));
          LocalTensor<I> x = inX_.template AllocTensor<I>();
          DataCopyPad(x, xGm_[base + h0 * td_.c],
                      DataCopyExtParams(static_cast<uint16_t>(cnt), rc.bytes, skip, rc.gap, 0),
                      DataCopyPadExtParams<I>(true, 0, rc.right, static_cast<I>(td_.closedPad)));
          inX_.EnQue(x);
          Compute(rc, cnt);
          LocalTensor<I> y = outY_.template DeQue<I>();
          DataCopyPad(yGm_[base + h0 * td_.c], y,
                      DataCopyExtParams(static_cast<uint16_t>(cnt), rc.bytes, rc.gap, skip, 0));
          outY_.FreeTensor(y);
          LocalTensor<uint8_t> m = outM_.template DeQue<uint8_t>();
          CopyMaskOut(mGm_[(g * td_.hw + h0) * 2], m, 16 * cnt);
          outM_.FreeTensor(m);
        }
      }
    }
  }

 private:
  __aicore__ inline LocalTensor<I> Slot(uint32_t k) { return calc_.template Get<I>()[k * lanes_]; }

  // Slots as the flat kernel's: 0 gate  1-2 temporaries  3 keep  4 the constant 1.0  5 compare.
  __aicore__ inline void Compute(const RowCopy<I>& rc, uint32_t cnt) {
    LocalTensor<I> x = inX_.template DeQue<I>();
    LocalTensor<I> y = outY_.template AllocTensor<I>();
    LocalTensor<uint8_t> m = outM_.template AllocTensor<uint8_t>();
    if constexpr (sizeof(I) == 4) {
      if (rc.gap != 0) FillRowGaps(x, cnt, static_cast<I>(td_.closedPad));
    }
    const uint32_t c = 16 * cnt;  // whole rows: whole 32-byte blocks
    const uint32_t c256 =
        RoundUp(c, kRgMaskGranuleElems);  // whole compare repeats and mask granules
    const uint32_t slot = lanes_;
    ForwardLanes<F>(x, y, m, td_.gate, td_.keep, calc_.template Get<I>(), slot, c, c256);
    outY_.EnQue(y);
    outM_.EnQue(m);
    inX_.FreeTensor(x);
  }

  ReluV2BlockedTilingData td_;
  uint64_t first_ = 0, stride_ = 1;
  uint32_t lanes_ = 0, tileBytes_ = 0;
  TPipe pipe_;
  TQue<TPosition::VECIN, kBufferNum> inX_;
  TQue<TPosition::VECOUT, kBufferNum> outY_, outM_;
  TBuf<TPosition::VECCALC> calc_;
  GlobalTensor<I> xGm_, yGm_;
  GlobalTensor<uint8_t> mGm_;
};

template <typename F>
class ReluGradV2BlockedNhwcKernel {
  using I = typename Layout<F>::I;
  using C = typename MaskLane<F>::C;

 public:
  __aicore__ inline ReluGradV2BlockedNhwcKernel() {}

  __aicore__ inline void Init(GM_ADDR dy, GM_ADDR mask, GM_ADDR dx,
                              const ReluV2BlockedTilingData& td) {
    td_ = td;
    first_ = static_cast<uint64_t>(GetBlockIdx());
    stride_ = static_cast<uint64_t>(GetBlockNum());
    if (first_ >= td.blocks) return;
    const uint64_t total = td.n * td.c * td.hw;
    dyGm_.SetGlobalBuffer(reinterpret_cast<__gm__ I*>(dy), total);
    dxGm_.SetGlobalBuffer(reinterpret_cast<__gm__ I*>(dx), total);
    mGm_.SetGlobalBuffer(reinterpret_cast<__gm__ uint8_t*>(mask), GroupsOf(td) * td.hw * 2);
    const uint32_t lanes = 16 * td.tileHw;
    pipe_.InitBuffer(inDy_, kBufferNum, lanes * static_cast<uint32_t>(sizeof(I)));
    pipe_.InitBuffer(inM_, kBufferNum, lanes / 8);
    pipe_.InitBuffer(outDx_, kBufferNum, lanes * static_cast<uint32_t>(sizeof(I)));
  }

  __aicore__ inline void Process() {
    const uint64_t c1s = (td_.c + 15) / 16, groups = GroupsOf(td_);
    const uint32_t elem = static_cast<uint32_t>(sizeof(I));
    for (uint64_t b = first_; b < td_.blocks; b += stride_) {
      const uint64_t g1 = MaskMin(groups, (b + 1) * td_.groupsPerBlock);
      for (uint64_t g = b * td_.groupsPerBlock; g < g1; ++g) {
        const uint64_t c0 = (g % c1s) * 16;
        const uint32_t r = static_cast<uint32_t>(MaskMin(16, td_.c - c0));
        const uint32_t skip = static_cast<uint32_t>(td_.c - r) * elem;
        const uint64_t base = (g / c1s) * td_.hw * td_.c + c0;
        const RowCopy<I> rc = RowCopyOf<I>(r);
        for (uint64_t h0 = 0; h0 < td_.hw; h0 += td_.tileHw) {
          const uint32_t cnt = static_cast<uint32_t>(MaskMin(td_.tileHw, td_.hw - h0));
          LocalTensor<I> dy = inDy_.template AllocTensor<I>();
          LocalTensor<uint8_t> m = inM_.template AllocTensor<uint8_t>();
          DataCopyPad(dy, dyGm_[base + h0 * td_.c],
                      DataCopyExtParams(static_cast<uint16_t>(cnt), rc.bytes, skip, rc.gap, 0),
                      DataCopyPadExtParams<I>(true, 0, rc.right, static_cast<I>(0)));
          CopyMaskIn(m, mGm_[(g * td_.hw + h0) * 2], 16 * cnt);
          inDy_.EnQue(dy);
          inM_.EnQue(m);
          Compute(rc, cnt);
          LocalTensor<I> dx = outDx_.template DeQue<I>();
          DataCopyPad(dxGm_[base + h0 * td_.c], dx,
                      DataCopyExtParams(static_cast<uint16_t>(cnt), rc.bytes, rc.gap, skip, 0));
          outDx_.FreeTensor(dx);
        }
      }
    }
  }

 private:
  __aicore__ inline void Compute(const RowCopy<I>& rc, uint32_t cnt) {
    LocalTensor<I> dy = inDy_.template DeQue<I>();
    LocalTensor<uint8_t> m = inM_.template DeQue<uint8_t>();
    LocalTensor<I> dx = outDx_.template AllocTensor<I>();
    if constexpr (sizeof(I) == 4) {
      if (rc.gap != 0) FillRowGaps(dy, cnt, static_cast<I>(0));
    }
    Select(dx.template ReinterpretCast<C>(), m, dy.template ReinterpretCast<C>(), C{},
           SELMODE::VSEL_TENSOR_SCALAR_MODE, 16 * cnt);
    outDx_.EnQue(dx);
    inDy_.FreeTensor(dy);
    inM_.FreeTensor(m);
  }

  ReluV2BlockedTilingData td_;
  uint64_t first_ = 0, stride_ = 1;
  TPipe pipe_;
  TQue<TPosition::VECIN, kBufferNum> inDy_, inM_;
  TQue<TPosition::VECOUT, kBufferNum> outDx_;
  GlobalTensor<I> dyGm_, dxGm_;
  GlobalTensor<uint8_t> mGm_;
};

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

// This block's share of each plan; the entry points (relu_v2.cpp here, the
// CANN op package's) only read the tiling and call these.
__aicore__ inline void RunReluV2(GM_ADDR x, GM_ADDR y, GM_ADDR mask, const ReluV2TilingData& td) {
  if (td.dtype == kRgF32) {
    ReluV2Kernel<float> op;
    op.Init(x, y, mask, td);
    op.Process();
  } else if (td.dtype == kRgF16) {
    ReluV2Kernel<half> op;
    op.Init(x, y, mask, td);
    op.Process();
  } else if (td.dtype == kRgBF16) {
    ReluV2Kernel<bfloat16_t> op;
    op.Init(x, y, mask, td);
    op.Process();
  }
}

__aicore__ inline void RunReluGradV2(GM_ADDR dy, GM_ADDR mask, GM_ADDR dx,
                                     const ReluV2TilingData& td) {
  if (td.dtype == kRgF32) {
    ReluGradV2Kernel<float> op;
    op.Init(dy, mask, dx, td);
    op.Process();
  } else if (td.dtype == kRgF16) {
    ReluGradV2Kernel<half> op;
    op.Init(dy, mask, dx, td);
    op.Process();
  } else if (td.dtype == kRgBF16) {
    ReluGradV2Kernel<bfloat16_t> op;
    op.Init(dy, mask, dx, td);
    op.Process();
  }
}

__aicore__ inline void RunReluV2Blocked(GM_ADDR x, GM_ADDR y, GM_ADDR mask,
                                        const ReluV2BlockedTilingData& td) {
  if (td.layout == kRgBlockedFromNhwc) {
    RunTyped<ReluV2BlockedNhwcKernel>(x, y, mask, td);
  } else {
    RunTyped<ReluV2BlockedKernel>(x, y, mask, td);
  }
}

__aicore__ inline void RunReluGradV2Blocked(GM_ADDR dy, GM_ADDR mask, GM_ADDR dx,
                                            const ReluV2BlockedTilingData& td) {
  if (td.layout == kRgBlockedFromNhwc) {
    RunTyped<ReluGradV2BlockedNhwcKernel>(dy, mask, dx, td);
  } else {
    RunTyped<ReluGradV2BlockedKernel>(dy, mask, dx, td);
  }
}

}  // namespace relugrad_ascend

#endif  // RELUGRAD_ASCEND_KERNEL_RELU_V2_KERNEL_H_
