// ReluV2 and ReluGradV2 in the flat layout (relu_v2_kernel.h): x, y, dy, dx
// are n contiguous elements, bit i of the mask is element i. Block b owns a
// span of whole mask granules (BlockSpan); a tile is tileElems elements of it.
#ifndef RELUGRAD_ASCEND_KERNEL_RELU_V2_FLAT_H_
#define RELUGRAD_ASCEND_KERNEL_RELU_V2_FLAT_H_

#include "kernel_operator.h"
#include "relu_grad_kernel.h"
#include "relu_v2_tile.h"
#include "relu_v2_tiling.h"

namespace relugrad_ascend {

using namespace AscendC;

template <typename F>
class ReluV2Kernel {
  using I = typename Layout<F>::I;

 public:
  __aicore__ inline ReluV2Kernel() {}

  __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR mask, const ReluV2TilingData& td) {
    td_ = td;
    x_ = x;
    y_ = y;
    mask_ = mask;
    cb_ = ThisCoresBlocks();
    if (cb_.first >= td.blocks) return;
    tileBytes_ = td.tileElems * static_cast<uint32_t>(sizeof(I));
    q_.Init(pipe_, tileBytes_, td.tileElems / 8);
    pipe_.InitBuffer(calc_, kRgReluV2Slots * tileBytes_);
    Duplicate(Slot(4), static_cast<I>(MaskLane<F>::kOne), static_cast<int32_t>(td.tileElems));
  }

  __aicore__ inline void Process() { ForEachFlatTile(*this, td_, cb_); }

  // ---- The tile loop's steps (ForEachFlatTile, RunForwardTile).
  __aicore__ inline void BindSpan(const MaskSpan& span) {
    xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ I*>(x_) + span.begin, span.len);
    yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ I*>(y_) + span.begin, span.len);
    mGm_.SetGlobalBuffer(reinterpret_cast<__gm__ uint8_t*>(mask_) + span.begin / 8,
                         (span.len + 7) / 8);
  }
  __aicore__ inline void Tile(const FlatTile& t) { RunForwardTile<I>(*this, q_, t); }
  __aicore__ inline void LoadX(const LocalTensor<I>& x, const FlatTile& t) {
    CopyDataIn(x, xGm_[t.off], t.cnt, static_cast<I>(td_.closedPad));
  }
  // Slots: 0 gate  1-2 temporaries  3 keep  4 the constant 1.0  5 compare operand.
  __aicore__ inline void Forward(const LocalTensor<I>& x, const LocalTensor<I>& y,
                                 const LocalTensor<uint8_t>& m, const FlatTile& t) {
    const uint32_t c = RoundUp(t.cnt, kCopyBytes / static_cast<uint32_t>(sizeof(I)));
    const uint32_t c256 = RoundUp(t.cnt, kRgMaskGranuleElems);  // whole 256-byte compare repeats
    const uint32_t slot = tileBytes_ / static_cast<uint32_t>(sizeof(I));
    ForwardLanes<F>(x, y, m, td_.gate, td_.keep, calc_.template Get<I>(), slot, c, c256);
  }
  __aicore__ inline void StoreY(const LocalTensor<I>& y, const FlatTile& t) {
    CopyDataOut(yGm_[t.off], y, t.cnt);
  }
  __aicore__ inline void StoreMask(const LocalTensor<uint8_t>& m, const FlatTile& t) {
    CopyMaskOut(mGm_[t.off / 8], m, t.cnt);
  }

 private:
  __aicore__ inline LocalTensor<I> Slot(uint32_t k) {
    return calc_.template Get<I>()[k * tileBytes_ / static_cast<uint32_t>(sizeof(I))];
  }

  ReluV2TilingData td_;
  GM_ADDR x_ = nullptr;
  GM_ADDR y_ = nullptr;
  GM_ADDR mask_ = nullptr;
  CoreBlocks cb_{0, 1};
  uint32_t tileBytes_ = 0;
  TPipe pipe_;
  ForwardQueues q_;
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
    cb_ = ThisCoresBlocks();
    if (cb_.first >= td.blocks) return;
    q_.Init(pipe_, td.tileElems * static_cast<uint32_t>(sizeof(I)), td.tileElems / 8);
  }

  __aicore__ inline void Process() { ForEachFlatTile(*this, td_, cb_); }

  // ---- The tile loop's steps (ForEachFlatTile, RunBackwardTile).
  __aicore__ inline void BindSpan(const MaskSpan& span) {
    dyGm_.SetGlobalBuffer(reinterpret_cast<__gm__ I*>(dy_) + span.begin, span.len);
    dxGm_.SetGlobalBuffer(reinterpret_cast<__gm__ I*>(dx_) + span.begin, span.len);
    mGm_.SetGlobalBuffer(reinterpret_cast<__gm__ uint8_t*>(mask_) + span.begin / 8,
                         (span.len + 7) / 8);
  }
  __aicore__ inline void Tile(const FlatTile& t) { RunBackwardTile<I>(*this, q_, t); }
  __aicore__ inline void LoadDy(const LocalTensor<I>& dy, const FlatTile& t) {
    CopyDataIn(dy, dyGm_[t.off], t.cnt, static_cast<I>(0));
  }
  __aicore__ inline void LoadMask(const LocalTensor<uint8_t>& m, const FlatTile& t) {
    CopyMaskIn(m, mGm_[t.off / 8], t.cnt);
  }
  __aicore__ inline void Backward(const LocalTensor<I>& dy, const LocalTensor<uint8_t>& m,
                                  const LocalTensor<I>& dx, const FlatTile& t) {
    const uint32_t c = RoundUp(t.cnt, kCopyBytes / static_cast<uint32_t>(sizeof(I)));
    Select(dx.template ReinterpretCast<C>(), m, dy.template ReinterpretCast<C>(), C{},
           SELMODE::VSEL_TENSOR_SCALAR_MODE, c);
  }
  __aicore__ inline void StoreDx(const LocalTensor<I>& dx, const FlatTile& t) {
    CopyDataOut(dxGm_[t.off], dx, t.cnt);
  }

 private:
  ReluV2TilingData td_;
  GM_ADDR dy_ = nullptr;
  GM_ADDR mask_ = nullptr;
  GM_ADDR dx_ = nullptr;
  CoreBlocks cb_{0, 1};
  TPipe pipe_;
  BackwardQueues q_;
  GlobalTensor<I> dyGm_, dxGm_;
  GlobalTensor<uint8_t> mGm_;
};

}  // namespace relugrad_ascend

#endif  // RELUGRAD_ASCEND_KERNEL_RELU_V2_FLAT_H_
