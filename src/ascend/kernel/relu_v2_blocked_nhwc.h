// ReluV2 and ReluGradV2 in the blocked layout (relu_v2_tiling.h:
// ReluV2BlockedTilingData) from an NHWC x, dy, dx.
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
#ifndef RELUGRAD_ASCEND_KERNEL_RELU_V2_BLOCKED_NHWC_H_
#define RELUGRAD_ASCEND_KERNEL_RELU_V2_BLOCKED_NHWC_H_

#include "kernel_operator.h"
#include "relu_grad_kernel.h"
#include "relu_v2_tile.h"
#include "relu_v2_tiling.h"

namespace relugrad_ascend {

using namespace AscendC;

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

// The cnt rows of tile t, r channels each, 16 lanes apart in UB and C
// channels apart in GM: GM -> UB padded with `pad` to each row's 32-byte
// boundary, and UB -> GM byte-exact.
template <typename I>
__aicore__ inline void CopyRowsIn(const LocalTensor<I>& t, const GlobalTensor<I>& gm,
                                  const BlockedTile& tile, uint64_t c, I pad) {
  const RowCopy<I> rc = RowCopyOf<I>(tile.r);
  const uint32_t skip = static_cast<uint32_t>(c - tile.r) * static_cast<uint32_t>(sizeof(I));
  DataCopyPad(t, gm, DataCopyExtParams(static_cast<uint16_t>(tile.cnt), rc.bytes, skip, rc.gap, 0),
              DataCopyPadExtParams<I>(true, 0, rc.right, pad));
}
template <typename I>
__aicore__ inline void CopyRowsOut(const GlobalTensor<I>& gm, const LocalTensor<I>& t,
                                   const BlockedTile& tile, uint64_t c) {
  const RowCopy<I> rc = RowCopyOf<I>(tile.r);
  const uint32_t skip = static_cast<uint32_t>(c - tile.r) * static_cast<uint32_t>(sizeof(I));
  DataCopyPad(gm, t, DataCopyExtParams(static_cast<uint16_t>(tile.cnt), rc.bytes, rc.gap, skip, 0));
}

// The GM offset of tile t's first element in an NHWC array.
__aicore__ inline uint64_t NhwcOffset(const ReluV2BlockedTilingData& td, const BlockedTile& t) {
  return t.n * td.hw * td.c + t.c0 + t.h0 * td.c;
}

template <typename F>
class ReluV2BlockedNhwcKernel {
  using I = typename Layout<F>::I;

 public:
  __aicore__ inline ReluV2BlockedNhwcKernel() {}

  __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR mask,
                              const ReluV2BlockedTilingData& td) {
    td_ = td;
    cb_ = ThisCoresBlocks();
    if (cb_.first >= td.blocks) return;
    gm_.Bind(x, y, mask, td);
    lanes_ = 16 * td.tileHw;
    tileBytes_ = lanes_ * static_cast<uint32_t>(sizeof(I));
    q_.Init(pipe_, tileBytes_, lanes_ / 8);
    pipe_.InitBuffer(calc_, kRgReluV2Slots * tileBytes_);
    Duplicate(Slot(4), static_cast<I>(MaskLane<F>::kOne), static_cast<int32_t>(lanes_));
  }

  __aicore__ inline void Process() { ForEachBlockedTile(*this, td_, cb_); }

  // ---- The tile loop's steps (ForEachBlockedTile, RunForwardTile).
  __aicore__ inline void Tile(const BlockedTile& t) { RunForwardTile<I>(*this, q_, t); }
  __aicore__ inline void LoadX(const LocalTensor<I>& x, const BlockedTile& t) {
    CopyRowsIn(x, gm_.in[NhwcOffset(td_, t)], t, td_.c, static_cast<I>(td_.closedPad));
  }
  // Slots as the flat kernel's: 0 gate  1-2 temporaries  3 keep  4 the constant 1.0  5 compare.
  __aicore__ inline void Forward(const LocalTensor<I>& x, const LocalTensor<I>& y,
                                 const LocalTensor<uint8_t>& m, const BlockedTile& t) {
    const uint32_t cnt = t.cnt;
    if constexpr (sizeof(I) == 4) {
      if (RowCopyOf<I>(t.r).gap != 0) FillRowGaps(x, cnt, static_cast<I>(td_.closedPad));
    }
    const uint32_t c = 16 * cnt;  // whole rows: whole 32-byte blocks
    const uint32_t c256 =
        RoundUp(c, kRgMaskGranuleElems);  // whole compare repeats and mask granules
    const uint32_t slot = lanes_;
    ForwardLanes<F>(x, y, m, td_.gate, td_.keep, calc_.template Get<I>(), slot, c, c256);
  }
  __aicore__ inline void StoreY(const LocalTensor<I>& y, const BlockedTile& t) {
    CopyRowsOut(gm_.out[NhwcOffset(td_, t)], y, t, td_.c);
  }
  __aicore__ inline void StoreMask(const LocalTensor<uint8_t>& m, const BlockedTile& t) {
    CopyMaskOut(gm_.mask[BlockedMaskOffset(td_, t)], m, 16 * t.cnt);
  }

 private:
  __aicore__ inline LocalTensor<I> Slot(uint32_t k) { return calc_.template Get<I>()[k * lanes_]; }

  ReluV2BlockedTilingData td_;
  CoreBlocks cb_{0, 1};
  uint32_t lanes_ = 0, tileBytes_ = 0;
  TPipe pipe_;
  ForwardQueues q_;
  TBuf<TPosition::VECCALC> calc_;
  BlockedArrays<I> gm_;
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
    cb_ = ThisCoresBlocks();
    if (cb_.first >= td.blocks) return;
    gm_.Bind(dy, dx, mask, td);
    const uint32_t lanes = 16 * td.tileHw;
    q_.Init(pipe_, lanes * static_cast<uint32_t>(sizeof(I)), lanes / 8);
  }

  __aicore__ inline void Process() { ForEachBlockedTile(*this, td_, cb_); }

  // ---- The tile loop's steps (ForEachBlockedTile, RunBackwardTile).
  __aicore__ inline void Tile(const BlockedTile& t) { RunBackwardTile<I>(*this, q_, t); }
  __aicore__ inline void LoadDy(const LocalTensor<I>& dy, const BlockedTile& t) {
    CopyRowsIn(dy, gm_.in[NhwcOffset(td_, t)], t, td_.c, static_cast<I>(0));
  }
  __aicore__ inline void LoadMask(const LocalTensor<uint8_t>& m, const BlockedTile& t) {
    CopyMaskIn(m, gm_.mask[BlockedMaskOffset(td_, t)], 16 * t.cnt);
  }
  __aicore__ inline void Backward(const LocalTensor<I>& dy, const LocalTensor<uint8_t>& m,
                                  const LocalTensor<I>& dx, const BlockedTile& t) {
    if constexpr (sizeof(I) == 4) {
      if (RowCopyOf<I>(t.r).gap != 0) FillRowGaps(dy, t.cnt, static_cast<I>(0));
    }
    Select(dx.template ReinterpretCast<C>(), m, dy.template ReinterpretCast<C>(), C{},
           SELMODE::VSEL_TENSOR_SCALAR_MODE, 16 * t.cnt);
  }
  __aicore__ inline void StoreDx(const LocalTensor<I>& dx, const BlockedTile& t) {
    CopyRowsOut(gm_.out[NhwcOffset(td_, t)], dx, t, td_.c);
  }

 private:
  ReluV2BlockedTilingData td_;
  CoreBlocks cb_{0, 1};
  TPipe pipe_;
  BackwardQueues q_;
  BlockedArrays<I> gm_;
};

}  // namespace relugrad_ascend

#endif  // RELUGRAD_ASCEND_KERNEL_RELU_V2_BLOCKED_NHWC_H_
