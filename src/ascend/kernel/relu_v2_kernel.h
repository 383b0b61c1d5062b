// ReluV2 (forward: y = relu(x) and a 1-bit mask) and ReluGradV2 (backward:
// dx = bit ? dy : +0) as AscendC vector kernels for Ascend 910B, in the
// layout of relugrad's own mask and Ascend 950's ReluV2: bit i of the mask is
// element i of x, bit i % 8 of byte i / 8 (LSB first), ceil(n/8) bytes,
// padding bits 0. Same paradigm as relu_grad_kernel.h: per block, tiles
// stream CopyIn (MTE2) -> Compute (V) -> CopyOut (MTE3) through depth-2 queues.
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
    const LocalTensor<I> gate = Slot(0), t1 = Slot(1), t2 = Slot(2), keep = Slot(3);
    const LocalTensor<I> one = Slot(4), cmp = Slot(5);
    Member(gate, x, td_.gate, t1, t2, c);
    Member(keep, x, td_.keep, t1, t2, c);
    BitOr(t1, gate, keep, c);
    BitAnd(y, x, t1, c);
    BitAnd(cmp, gate, one, c);
    if (c256 > c) Duplicate(cmp[c], static_cast<I>(0), static_cast<int32_t>(c256 - c));
    Compares(m, cmp.template ReinterpretCast<C>(), C{}, CMPMODE::GT, c256);
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

}  // namespace relugrad_ascend

#endif  // RELUGRAD_ASCEND_KERNEL_RELU_V2_KERNEL_H_
