// What the ReluV2 / ReluGradV2 kernels of every layout share
// (relu_v2_kernel.h): the copies of data and mask bits between GM and UB, the
// forward's vector sequence, and the tile loop. Every kernel runs the same
// pipeline per tile, CopyIn (MTE2) -> Compute (V) -> CopyOut (MTE3) through
// depth-2 queues (RunForwardTile, RunBackwardTile), over the tiles its
// layout's loop hands it (ForEachFlatTile, ForEachBlockedTile); a layout's
// kernel (relu_v2_flat.h, relu_v2_blocked_nchw.h, relu_v2_blocked_nhwc.h)
// supplies only its copies and its Compute.
#ifndef RELUGRAD_ASCEND_KERNEL_RELU_V2_TILE_H_
#define RELUGRAD_ASCEND_KERNEL_RELU_V2_TILE_H_

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

// ---- The tile pipeline ----
// The queues of a forward tile (x in; y and its mask bits out) and of a
// backward tile (dy and the mask bits in; dx out).
struct ForwardQueues {
  TQue<TPosition::VECIN, kBufferNum> inX;
  TQue<TPosition::VECOUT, kBufferNum> outY, outM;

  // x and y tiles of dataBytes, mask tiles of maskBytes.
  __aicore__ inline void Init(TPipe& pipe, uint32_t dataBytes, uint32_t maskBytes) {
    pipe.InitBuffer(inX, kBufferNum, dataBytes);
    pipe.InitBuffer(outY, kBufferNum, dataBytes);
    pipe.InitBuffer(outM, kBufferNum, maskBytes);
  }
};

struct BackwardQueues {
  TQue<TPosition::VECIN, kBufferNum> inDy, inM;
  TQue<TPosition::VECOUT, kBufferNum> outDx;

  // dy and dx tiles of dataBytes, mask tiles of maskBytes.
  __aicore__ inline void Init(TPipe& pipe, uint32_t dataBytes, uint32_t maskBytes) {
    pipe.InitBuffer(inDy, kBufferNum, dataBytes);
    pipe.InitBuffer(inM, kBufferNum, maskBytes);
    pipe.InitBuffer(outDx, kBufferNum, dataBytes);
  }
};

// One forward tile t: k.LoadX(x, t) copies x in, k.Forward(x, y, m, t)
// computes y and the mask bits, k.StoreY(y, t) and k.StoreMask(m, t) copy
// them out.
template <typename I, typename K, typename T>
__aicore__ inline void RunForwardTile(K& k, ForwardQueues& q, const T& t) {
  LocalTensor<I> xIn = q.inX.template AllocTensor<I>();
  k.LoadX(xIn, t);
  q.inX.EnQue(xIn);
  {
    LocalTensor<I> x = q.inX.template DeQue<I>();
    LocalTensor<I> y = q.outY.template AllocTensor<I>();
    LocalTensor<uint8_t> m = q.outM.template AllocTensor<uint8_t>();
    k.Forward(x, y, m, t);
    q.outY.EnQue(y);
    q.outM.EnQue(m);
    q.inX.FreeTensor(x);
  }
  LocalTensor<I> y = q.outY.template DeQue<I>();
  k.StoreY(y, t);
  q.outY.FreeTensor(y);
  LocalTensor<uint8_t> m = q.outM.template DeQue<uint8_t>();
  k.StoreMask(m, t);
  q.outM.FreeTensor(m);
}

// One backward tile t: k.LoadDy(dy, t) and k.LoadMask(m, t) copy dy and the
// mask bits in, k.Backward(dy, m, dx, t) computes dx, k.StoreDx(dx, t) copies
// it out.
template <typename I, typename K, typename T>
__aicore__ inline void RunBackwardTile(K& k, BackwardQueues& q, const T& t) {
  LocalTensor<I> dyIn = q.inDy.template AllocTensor<I>();
  LocalTensor<uint8_t> mIn = q.inM.template AllocTensor<uint8_t>();
  k.LoadDy(dyIn, t);
  k.LoadMask(mIn, t);
  q.inDy.EnQue(dyIn);
  q.inM.EnQue(mIn);
  {
    LocalTensor<I> dy = q.inDy.template DeQue<I>();
    LocalTensor<uint8_t> m = q.inM.template DeQue<uint8_t>();
    LocalTensor<I> dx = q.outDx.template AllocTensor<I>();
    k.Backward(dy, m, dx, t);
    q.outDx.EnQue(dx);
    q.inDy.FreeTensor(dy);
    q.inM.FreeTensor(m);
  }
  LocalTensor<I> dx = q.outDx.template DeQue<I>();
  k.StoreDx(dx, t);
  q.outDx.FreeTensor(dx);
}

// ---- The tile loops ----
// This core's blocks of a plan are first, first + stride, ... (GetBlockIdx,
// GetBlockNum); a core past the plan's blocks has none.
struct CoreBlocks {
  uint64_t first, stride;
};
__aicore__ inline CoreBlocks ThisCoresBlocks() {
  return {static_cast<uint64_t>(GetBlockIdx()), static_cast<uint64_t>(GetBlockNum())};
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

// A flat tile: cnt elements at offset off of its block's span.
struct FlatTile {
  uint64_t off;
  uint32_t cnt;
};

// k.BindSpan(span) for each of this core's blocks, then k.Tile(t) for each of
// the span's tiles of td.tileElems elements (the last one partial).
template <typename K>
__aicore__ inline void ForEachFlatTile(K& k, const ReluV2TilingData& td, const CoreBlocks& cb) {
  for (uint64_t b = cb.first; b < td.blocks; b += cb.stride) {
    const MaskSpan span = BlockSpan(td, b);
    k.BindSpan(span);
    for (uint64_t off = 0; off < span.len; off += td.tileElems) {
      const uint32_t cnt =
          static_cast<uint32_t>(MaskMin(static_cast<uint64_t>(td.tileElems), span.len - off));
      k.Tile(FlatTile{off, cnt});
    }
  }
}

// The blocked layout (relu_v2_tiling.h: ReluV2BlockedTilingData): groups
// (n, c1) of 16 channels, N * ceil(C/16) of them, each a run of hw * 16 mask
// bits in the mask's element order (n, c1, hw, c0).
__aicore__ inline uint64_t GroupsOf(const ReluV2BlockedTilingData& td) {
  return td.n * ((td.c + 15) / 16);
}

// A blocked kernel's GM: the array it reads (x or dy) and the one it writes
// (y or dx), N*C*HW elements each, and the mask, 2 bytes a position of each
// group.
template <typename I>
struct BlockedArrays {
  GlobalTensor<I> in, out;
  GlobalTensor<uint8_t> mask;

  __aicore__ inline void Bind(GM_ADDR inGm, GM_ADDR outGm, GM_ADDR maskGm,
                              const ReluV2BlockedTilingData& td) {
    const uint64_t total = td.n * td.c * td.hw;
    in.SetGlobalBuffer(reinterpret_cast<__gm__ I*>(inGm), total);
    out.SetGlobalBuffer(reinterpret_cast<__gm__ I*>(outGm), total);
    mask.SetGlobalBuffer(reinterpret_cast<__gm__ uint8_t*>(maskGm), GroupsOf(td) * td.hw * 2);
  }
};

// A blocked tile: positions [h0, h0 + cnt) of group g = (n, c1), whose
// channels are c0 .. c0 + r - 1 (r = min(16, C - c0)).
struct BlockedTile {
  uint64_t g, n, c0;
  uint32_t r;
  uint64_t h0;
  uint32_t cnt;
};

// The GM offset of a blocked tile's mask bits (2 bytes, 16 bits, a position).
__aicore__ inline uint64_t BlockedMaskOffset(const ReluV2BlockedTilingData& td,
                                             const BlockedTile& t) {
  return (t.g * td.hw + t.h0) * 2;
}

// k.Tile(t) for each tile of td.tileHw positions (the last one partial) of
// each group of this core's blocks (td.groupsPerBlock groups a block).
template <typename K>
__aicore__ inline void ForEachBlockedTile(K& k, const ReluV2BlockedTilingData& td,
                                          const CoreBlocks& cb) {
  const uint64_t c1s = (td.c + 15) / 16, groups = GroupsOf(td);
  for (uint64_t b = cb.first; b < td.blocks; b += cb.stride) {
    const uint64_t g1 = MaskMin(groups, (b + 1) * td.groupsPerBlock);
    for (uint64_t g = b * td.groupsPerBlock; g < g1; ++g) {
      const uint64_t c0 = (g % c1s) * 16;
      const uint32_t r = static_cast<uint32_t>(MaskMin(16, td.c - c0));
      for (uint64_t h0 = 0; h0 < td.hw; h0 += td.tileHw) {
        const uint32_t cnt = static_cast<uint32_t>(MaskMin(td.tileHw, td.hw - h0));
        k.Tile(BlockedTile{g, g / c1s, c0, r, h0, cnt});
      }
    }
  }
}

}  // namespace relugrad_ascend

#endif  // RELUGRAD_ASCEND_KERNEL_RELU_V2_TILE_H_
