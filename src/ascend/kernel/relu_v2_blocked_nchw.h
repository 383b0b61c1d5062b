// ReluV2 and ReluGradV2 in the blocked layout (relu_v2_tiling.h:
// ReluV2BlockedTilingData) from an NCHW x, dy, dx.
// A tile is up to 16 channel planes of one group (n, c1), tileHw positions
// each, at a fixed plane pitch. The forward writes per plane a half marker
// (1.0 where the gate is open, +0 elsewhere and in padding channels and
// lanes) into a [c0][hw] matrix, transposes it to [hw][c0] with
// TransDataTo5HD (the NCHW -> NC1HWC0 instruction) and compares that, so the
// bits come out in blocked order. The backward expands the mask bits to half
// markers with Select, transposes back, and turns each plane's markers into
// lane masks with integer clamps: dx = dy & mask, dy's bits or +0.
#ifndef RELUGRAD_ASCEND_KERNEL_RELU_V2_BLOCKED_NCHW_H_
#define RELUGRAD_ASCEND_KERNEL_RELU_V2_BLOCKED_NCHW_H_

#include "kernel_operator.h"
#include "relu_grad_kernel.h"
#include "relu_v2_tile.h"
#include "relu_v2_tiling.h"

namespace relugrad_ascend {

using namespace AscendC;

constexpr int kTransRows = 16;  // TransDataTo5HD's address lists (NCHW_CONV_ADDR_LIST_SIZE)

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

// The r planes of tile t, cnt positions each at a pitch of T elements in UB,
// hw apart in GM: GM -> UB padded with `pad` to each plane's 32-byte
// boundary, and UB -> GM byte-exact.
template <typename I>
__aicore__ inline void CopyPlanesIn(const LocalTensor<I>& t, const GlobalTensor<I>& gm,
                                    const BlockedTile& tile, uint64_t hw, uint32_t T, I pad) {
  const PlaneCopy<I> pc = PlaneCopyOf<I>(tile.cnt, T);
  const uint8_t right = static_cast<uint8_t>((pc.padded - pc.bytes) / sizeof(I));
  DataCopyPad(t, gm,
              DataCopyExtParams(static_cast<uint16_t>(tile.r), pc.bytes,
                                static_cast<uint32_t>((hw - tile.cnt) * sizeof(I)), pc.gap, 0),
              DataCopyPadExtParams<I>(true, 0, right, pad));
}
template <typename I>
__aicore__ inline void CopyPlanesOut(const GlobalTensor<I>& gm, const LocalTensor<I>& t,
                                     const BlockedTile& tile, uint64_t hw, uint32_t T) {
  const PlaneCopy<I> pc = PlaneCopyOf<I>(tile.cnt, T);
  DataCopyPad(gm, t,
              DataCopyExtParams(static_cast<uint16_t>(tile.r), pc.bytes, pc.gap,
                                static_cast<uint32_t>((hw - tile.cnt) * sizeof(I)), 0));
}

// The GM offset of tile t's first element in an NCHW array.
__aicore__ inline uint64_t NchwOffset(const ReluV2BlockedTilingData& td, const BlockedTile& t) {
  return (t.n * td.c + t.c0) * td.hw + t.h0;
}

template <typename F>
class ReluV2BlockedKernel {
  using I = typename Layout<F>::I;

 public:
  __aicore__ inline ReluV2BlockedKernel() {}

  __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR mask,
                              const ReluV2BlockedTilingData& td) {
    td_ = td;
    cb_ = ThisCoresBlocks();
    if (cb_.first >= td.blocks) return;
    gm_.Bind(x, y, mask, td);
    T_ = td.tileHw;
    planeBytes_ = T_ * static_cast<uint32_t>(sizeof(I));
    q_.Init(pipe_, 16 * planeBytes_, 2 * T_);
    pipe_.InitBuffer(calc_, kRgReluV2Slots * planeBytes_);
    pipe_.InitBuffer(marks_, 2 * 16 * T_ * 2);  // [c0][hw] and [hw][c0] half matrices
    Duplicate(Slot(4), static_cast<I>(MaskLane<F>::kOne), static_cast<int32_t>(T_));
  }

  __aicore__ inline void Process() { ForEachBlockedTile(*this, td_, cb_); }

  // ---- The tile loop's steps (ForEachBlockedTile, RunForwardTile).
  __aicore__ inline void Tile(const BlockedTile& t) { RunForwardTile<I>(*this, q_, t); }
  __aicore__ inline void LoadX(const LocalTensor<I>& x, const BlockedTile& t) {
    CopyPlanesIn(x, gm_.in[NchwOffset(td_, t)], t, td_.hw, T_, static_cast<I>(td_.closedPad));
  }
  __aicore__ inline void Forward(const LocalTensor<I>& x, const LocalTensor<I>& y,
                                 const LocalTensor<uint8_t>& m, const BlockedTile& t) {
    const uint32_t r = t.r, cnt = t.cnt;
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
  }
  __aicore__ inline void StoreY(const LocalTensor<I>& y, const BlockedTile& t) {
    CopyPlanesOut(gm_.out[NchwOffset(td_, t)], y, t, td_.hw, T_);
  }
  __aicore__ inline void StoreMask(const LocalTensor<uint8_t>& m, const BlockedTile& t) {
    CopyMaskOut(gm_.mask[BlockedMaskOffset(td_, t)], m, 16 * t.cnt);
  }

 private:
  __aicore__ inline LocalTensor<I> Slot(uint32_t k) { return calc_.template Get<I>()[k * T_]; }

  ReluV2BlockedTilingData td_;
  CoreBlocks cb_{0, 1};
  uint32_t T_ = 0, planeBytes_ = 0;
  TPipe pipe_;
  ForwardQueues q_;
  TBuf<TPosition::VECCALC> calc_, marks_;
  BlockedArrays<I> gm_;
};

template <typename F>
class ReluGradV2BlockedKernel {
  using I = typename Layout<F>::I;

 public:
  __aicore__ inline ReluGradV2BlockedKernel() {}

  __aicore__ inline void Init(GM_ADDR dy, GM_ADDR mask, GM_ADDR dx,
                              const ReluV2BlockedTilingData& td) {
    td_ = td;
    cb_ = ThisCoresBlocks();
    if (cb_.first >= td.blocks) return;
    gm_.Bind(dy, dx, mask, td);
    T_ = td.tileHw;
    q_.Init(pipe_, 16 * T_ * static_cast<uint32_t>(sizeof(I)), 2 * T_);
    pipe_.InitBuffer(marks_, 3 * 16 * T_ * 2);  // [hw][c0], [c0][hw], the constant 1.0
    pipe_.InitBuffer(calc_, 2 * T_ * 4);        // a lane mask and the f32 widening
    Duplicate(marks_.template Get<int16_t>()[2 * 16 * T_], static_cast<int16_t>(0x3c00),
              static_cast<int32_t>(16 * T_));
  }

  __aicore__ inline void Process() { ForEachBlockedTile(*this, td_, cb_); }

  // ---- The tile loop's steps (ForEachBlockedTile, RunBackwardTile).
  __aicore__ inline void Tile(const BlockedTile& t) { RunBackwardTile<I>(*this, q_, t); }
  __aicore__ inline void LoadDy(const LocalTensor<I>& dy, const BlockedTile& t) {
    CopyPlanesIn(dy, gm_.in[NchwOffset(td_, t)], t, td_.hw, T_, static_cast<I>(0));
  }
  __aicore__ inline void LoadMask(const LocalTensor<uint8_t>& m, const BlockedTile& t) {
    CopyMaskIn(m, gm_.mask[BlockedMaskOffset(td_, t)], 16 * t.cnt);
  }
  __aicore__ inline void Backward(const LocalTensor<I>& dy, const LocalTensor<uint8_t>& m,
                                  const LocalTensor<I>& dx, const BlockedTile& t) {
    const uint32_t r = t.r, cnt = t.cnt;
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
  }
  __aicore__ inline void StoreDx(const LocalTensor<I>& dx, const BlockedTile& t) {
    CopyPlanesOut(gm_.out[NchwOffset(td_, t)], dx, t, td_.hw, T_);
  }

 private:
  ReluV2BlockedTilingData td_;
  CoreBlocks cb_{0, 1};
  uint32_t T_ = 0;
  TPipe pipe_;
  BackwardQueues q_;
  TBuf<TPosition::VECCALC> marks_, calc_;
  BlockedArrays<I> gm_;
};

}  // namespace relugrad_ascend

#endif  // RELUGRAD_ASCEND_KERNEL_RELU_V2_BLOCKED_NCHW_H_
