// The AscendC ReluV2 / ReluGradV2 kernels' plans through the CPU twin: the
// tilings fill the unified buffer and give blocks whole mask granules (flat)
// or whole aligned image runs (blocked), the cost model counts the kernels'
// minimum traffic, and every seeded rule violation (a mask granule written by
// two cores, a UB overflow, a tail copied without its padding, a block ending
// mid-image, NHWC f32 row gaps left unwritten) raises its twin error. The
// kernels' results are ascend_mask_kernel_test.cc's.
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ascend/blocked_mask.h"
#include "ascend/cost_model.h"
#include "ascend/twin_launch.h"
#include "ascend_mask_test_util.h"
#include "ascend_test_util.h"
#include "core/mask_reference.h"
#include "gtest/gtest.h"
#include "kernel_operator.h"
#include "relu_v2_kernel.h"

namespace {

using ascend_twin::Violation;
using relugrad::Dtype;
using relugrad::ascend::MaskOp;
using relugrad::ascend::MaskTilingRequest;
using relugrad::ascend::MaskTwinRun;
using rg_ascend_test::BlockedF32;
using rg_ascend_test::kShapes;
using rg_ascend_test::MaskBytes;
using rg_ascend_test::Shape;

// ---- Tiling and cost model ----

TEST(AscendMaskTiling, TilesFillTheUnifiedBufferAndBlocksOwnWholeGranules) {
  for (MaskOp op : {MaskOp::kForward, MaskOp::kBackward}) {
    for (Dtype d : {Dtype::kF32, Dtype::kF16, Dtype::kBF16}) {
      relugrad_options o;
      relugrad_options_init(&o, RELUGRAD_PRESET_TORCH);
      relugrad::Rules sem;
      const auto params = rg_ascend_test::ParamsFor(d, o, &sem);
      for (int64_t n : {1, 300, 100000, 12345679}) {
        MaskTilingRequest req;
        req.op = op;
        req.dtype = d;
        req.n = n;
        req.cores = 40;
        ReluV2TilingData td;
        const char* why = "";
        ASSERT_TRUE(relugrad::ascend::MakeReluV2Tiling(req, params, &td, &why)) << why;
        EXPECT_EQ(td.tileElems % kRgMaskGranuleElems, 0u);
        EXPECT_EQ(td.blockElems % kRgMaskGranuleElems, 0u);
        EXPECT_LE(relugrad::ascend::ReluV2TileUbBytes(op, d, td.tileElems),
                  relugrad::ascend::kUbTPipeBytes);
        EXPECT_GT(relugrad::ascend::ReluV2TileUbBytes(op, d, td.tileElems + kRgMaskGranuleElems),
                  relugrad::ascend::kUbTPipeBytes);
        EXPECT_GE(td.blocks, 1u);
        EXPECT_LE(td.blocks, 40u);
        EXPECT_GE(static_cast<uint64_t>(td.blocks) * td.blockElems, td.n);
        EXPECT_LT(static_cast<uint64_t>(td.blocks - 1) * td.blockElems,
                  std::max<uint64_t>(td.n, 1));
      }
    }
  }
}

TEST(AscendMaskTiling, BlockedTilesFitAndBlocksOwnAlignedImageRuns) {
  for (MaskOp op : {MaskOp::kForward, MaskOp::kBackward}) {
    for (Dtype d : {Dtype::kF32, Dtype::kF16, Dtype::kBF16}) {
      for (relugrad_x_format f : {RELUGRAD_X_NCHW, RELUGRAD_X_NHWC}) {
        relugrad_options o;
        relugrad_options_init(&o, RELUGRAD_PRESET_TORCH);
        relugrad::Rules sem;
        const auto params = rg_ascend_test::ParamsFor(d, o, &sem);
        for (const Shape& s : kShapes) {
          relugrad::ascend::BlockedTilingRequest req = BlockedF32(s.n * 9, s.c, s.h, s.w, 7);
          req.op = op;
          req.dtype = d;
          req.format = f;
          ReluV2BlockedTilingData td;
          const char* why = "";
          ASSERT_TRUE(relugrad::ascend::MakeReluV2BlockedTiling(req, params, &td, &why)) << why;
          EXPECT_EQ(td.layout, f == RELUGRAD_X_NHWC ? kRgBlockedFromNhwc : kRgBlockedFromNchw);
          EXPECT_EQ(td.tileHw % 16, 0u);
          EXPECT_LE(td.tileHw, f == RELUGRAD_X_NHWC ? 2032u : 255u * 16);
          EXPECT_LE(relugrad::ascend::ReluV2BlockedTileUbBytes(op, d, f, td.tileHw),
                    relugrad::ascend::kUbTPipeBytes);
          const uint64_t c1 = (td.c + 15) / 16, images = td.groupsPerBlock / c1;
          EXPECT_EQ(td.groupsPerBlock % c1, 0u);
          if (td.blocks > 1) {
            EXPECT_EQ(images * td.c * td.hw * static_cast<uint64_t>(relugrad::DtypeSize(d)) % 32,
                      0u);
            EXPECT_EQ(images * c1 * td.hw * 2 % 32, 0u);
          }
          EXPECT_GE(td.blocks * images, td.n);
        }
        relugrad::ascend::BlockedTilingRequest bad = BlockedF32(1, 0, 2, 2, 1);
        bad.format = f;
        ReluV2BlockedTilingData td;
        const char* why = "";
        EXPECT_FALSE(relugrad::ascend::MakeReluV2BlockedTiling(bad, params, &td, &why));
        EXPECT_NE(std::string(why).find("c >= 1"), std::string::npos) << why;
      }
    }
  }
  relugrad_options o;
  relugrad_options_init(&o, RELUGRAD_PRESET_TORCH);
  relugrad::Rules sem;
  relugrad::ascend::BlockedTilingRequest bad = BlockedF32(1, 16, 2, 2, 1);
  bad.format = static_cast<relugrad_x_format>(3);
  ReluV2BlockedTilingData td;
  const char* why = "";
  EXPECT_FALSE(relugrad::ascend::MakeReluV2BlockedTiling(
      bad, rg_ascend_test::ParamsFor(Dtype::kF32, o, &sem), &td, &why));
  EXPECT_NE(std::string(why).find("NCHW or an NHWC"), std::string::npos) << why;
}

TEST(AscendMaskCostModel, CountedTrafficIsTheKernelsMinimum) {
  relugrad_options o;
  relugrad_options_init(&o, RELUGRAD_PRESET_TORCH);
  relugrad::Rules sem;
  const Dtype d = Dtype::kF16;
  const auto params = rg_ascend_test::ParamsFor(d, o, &sem);
  const int64_t n = 200003;
  const std::vector<uint8_t> x = rg_ascend_test::MakeBits(d, n, 1);
  std::vector<uint8_t> y(x.size()), mask(MaskBytes(n)), dx(x.size());
  MaskTilingRequest req;
  req.dtype = d;
  req.n = n;
  req.cores = 8;
  MaskTwinRun fwd, bwd;
  const char* why = "";
  ASSERT_TRUE(
      relugrad::ascend::RunReluV2OnTwin(req, params, x.data(), y.data(), mask.data(), &fwd, &why));
  ASSERT_TRUE(relugrad::ascend::RunReluGradV2OnTwin(req, params, x.data(), mask.data(), dx.data(),
                                                    &bwd, &why));
  const relugrad::ascend::Traffic f = relugrad::ascend::ReluV2Traffic(2, n);
  const relugrad::ascend::Traffic g = relugrad::ascend::ReluGradV2Traffic(2, n);
  uint64_t in = 0, out = 0;
  for (const auto& c : fwd.counters) in += c.mte2_bytes, out += c.mte3_bytes;
  EXPECT_EQ(in, f.in_bytes);
  EXPECT_EQ(out, f.out_bytes);
  in = out = 0;
  for (const auto& c : bwd.counters) in += c.mte2_bytes, out += c.mte3_bytes;
  EXPECT_EQ(in, g.in_bytes);
  EXPECT_EQ(out, g.out_bytes);
  // The mask pair moves 2 * elem + 1/8 bytes per element each way against ReluGrad's 3 * elem.
  const relugrad::ascend::Traffic r = relugrad::ascend::ReluGradTraffic(2, n);
  EXPECT_LT(g.in_bytes + g.out_bytes, r.in_bytes + r.out_bytes);
  const relugrad::ascend::PipeModel model;
  const auto est = relugrad::ascend::EstimateLaunch(bwd.counters, model);
  EXPECT_GT(est.total_us, model.launch_us);
  EXPECT_NE(est.bound, "V");  // a select per tile: the copies bound it
  const auto fest = relugrad::ascend::EstimateLaunch(fwd.counters, model);
  std::printf(
      "  model (assumed parameters, not measured): f16 n=%lld, %zu cores: ReluV2 %.1f us "
      "(%s bound), ReluGradV2 %.1f us (%s bound)\n",
      static_cast<long long>(n), bwd.counters.size(), fest.total_us, fest.bound.c_str(),
      est.total_us, est.bound.c_str());
}

// ---- Seeded rule violations ----

struct Seeded {
  std::vector<float> x, y, dx;
  std::vector<uint8_t> mask;
  ReluV2TilingData td;
};

Seeded PlanF32(int64_t n, int cores) {
  Seeded s;
  s.x.assign(static_cast<size_t>(n), 1.0f);
  s.y.assign(static_cast<size_t>(n), 0.0f);
  s.dx.assign(static_cast<size_t>(n), 0.0f);
  s.mask.assign(MaskBytes(n), 0);
  relugrad_options o;
  relugrad_options_init(&o, RELUGRAD_PRESET_TORCH);
  relugrad::Rules sem;
  const auto params = rg_ascend_test::ParamsFor(Dtype::kF32, o, &sem);
  MaskTilingRequest req;
  req.n = n;
  req.cores = cores;
  req.grain_bytes = 0;
  const char* why = "";
  EXPECT_TRUE(relugrad::ascend::MakeReluV2Tiling(req, params, &s.td, &why)) << why;
  return s;
}

Violation RunSeeded(Seeded& s, MaskOp op) {
  try {
    if (op == MaskOp::kForward) {
      relugrad::ascend::LaunchMaskWithTiling(op, s.td, s.x.data(), nullptr, s.y.data(),
                                             s.mask.data(), static_cast<int>(s.td.blocks));
    } else {
      relugrad::ascend::LaunchMaskWithTiling(op, s.td, s.x.data(), s.mask.data(), s.dx.data(),
                                             nullptr, static_cast<int>(s.td.blocks));
    }
  } catch (const ascend_twin::TwinViolation& e) {
    std::printf("  caught: %s\n", e.what());
    return e.kind();
  }
  ADD_FAILURE() << "no violation";
  return Violation::kBadArgument;
}

TEST(AscendMaskViolation, TheUnseededPlanRunsClean) {
  Seeded s = PlanF32(3000, 3);
  EXPECT_NO_THROW(relugrad::ascend::LaunchMaskWithTiling(MaskOp::kForward, s.td, s.x.data(),
                                                         nullptr, s.y.data(), s.mask.data(),
                                                         static_cast<int>(s.td.blocks)));
  EXPECT_EQ(s.mask[0], 0xff);
  EXPECT_EQ(s.mask.back(), 0xff);  // 3000 = 375 whole bytes
}

TEST(AscendMaskViolation, MaskGranuleWrittenByTwoCores) {
  Seeded s = PlanF32(3000, 3);
  s.td.blockElems = 100;  // not whole granules: cores 0 and 1 share mask byte 12
  s.td.blocks = 30;
  EXPECT_EQ(RunSeeded(s, MaskOp::kForward), Violation::kCrossBlockOverlap);
}

TEST(AscendMaskViolation, ForwardTileTooLargeForTheUnifiedBuffer) {
  Seeded s = PlanF32(100000, 2);
  s.td.tileElems = 8192;  // 10 tile-sized buffers of 32 KiB > 184 KiB
  EXPECT_EQ(RunSeeded(s, MaskOp::kForward), Violation::kUbOverAllocation);
}

TEST(AscendMaskViolation, BackwardTileTooLargeForTheUnifiedBuffer) {
  Seeded s = PlanF32(100000, 2);
  s.td.tileElems = 16384;  // 4 x 64 KiB of data tiles > 184 KiB
  EXPECT_EQ(RunSeeded(s, MaskOp::kBackward), Violation::kUbOverAllocation);
}

Violation RunBlockedSeeded(const ReluV2BlockedTilingData& td, int64_t count, size_t mask_bytes) {
  std::vector<float> x(static_cast<size_t>(count), 1.0f), y(x.size());
  std::vector<uint8_t> mask(mask_bytes);
  try {
    relugrad::ascend::LaunchBlockedWithTiling(MaskOp::kForward, td, x.data(), nullptr, y.data(),
                                              mask.data(), static_cast<int>(td.blocks));
  } catch (const ascend_twin::TwinViolation& e) {
    std::printf("  caught: %s\n", e.what());
    return e.kind();
  }
  ADD_FAILURE() << "no violation";
  return Violation::kBadArgument;
}

TEST(AscendMaskViolation, BlockedSplitInsideAnImage) {
  relugrad_options o;
  relugrad_options_init(&o, RELUGRAD_PRESET_TORCH);
  relugrad::Rules sem;
  const auto params = rg_ascend_test::ParamsFor(Dtype::kF32, o, &sem);
  ReluV2BlockedTilingData td;
  const char* why = "";
  ASSERT_TRUE(
      relugrad::ascend::MakeReluV2BlockedTiling(BlockedF32(4, 17, 3, 5, 4), params, &td, &why))
      << why;
  td.groupsPerBlock = 1;  // a block ends mid-image: its planes are not its share
  td.blocks = 8;
  EXPECT_EQ(RunBlockedSeeded(td, 4 * 17 * 15, static_cast<size_t>(4 * 2 * 15 * 2)),
            Violation::kGmOutsideShare);
}

TEST(AscendMaskViolation, BlockedNhwcSplitInsideAnImage) {
  relugrad_options o;
  relugrad_options_init(&o, RELUGRAD_PRESET_TORCH);
  relugrad::Rules sem;
  const auto params = rg_ascend_test::ParamsFor(Dtype::kF32, o, &sem);
  relugrad::ascend::BlockedTilingRequest req = BlockedF32(4, 17, 3, 5, 4);
  req.format = RELUGRAD_X_NHWC;
  ReluV2BlockedTilingData td;
  const char* why = "";
  ASSERT_TRUE(relugrad::ascend::MakeReluV2BlockedTiling(req, params, &td, &why)) << why;
  ASSERT_EQ(td.layout, kRgBlockedFromNhwc);
  td.groupsPerBlock = 1;  // a block ends mid-image: its rows share granules with the next group's
  td.blocks = 8;
  EXPECT_EQ(RunBlockedSeeded(td, 4 * 17 * 15, static_cast<size_t>(4 * 2 * 15 * 2)),
            Violation::kGmOutsideShare);
}

TEST(AscendMaskViolation, BlockedNhwcTileTooLargeForTheUnifiedBuffer) {
  relugrad_options o;
  relugrad_options_init(&o, RELUGRAD_PRESET_TORCH);
  relugrad::Rules sem;
  const auto params = rg_ascend_test::ParamsFor(Dtype::kF32, o, &sem);
  relugrad::ascend::BlockedTilingRequest req = BlockedF32(1, 16, 40, 40, 1);
  req.format = RELUGRAD_X_NHWC;
  ReluV2BlockedTilingData td;
  const char* why = "";
  ASSERT_TRUE(relugrad::ascend::MakeReluV2BlockedTiling(req, params, &td, &why)) << why;
  td.tileHw = 1024;  // 1024 rows x 64 bytes x 4 queue buffers alone exceed 184 KiB
  EXPECT_EQ(RunBlockedSeeded(td, 16 * 1600, 3200), Violation::kUbOverAllocation);
}

TEST(AscendMaskViolation, BlockedTileTooLargeForTheUnifiedBuffer) {
  relugrad_options o;
  relugrad_options_init(&o, RELUGRAD_PRESET_TORCH);
  relugrad::Rules sem;
  const auto params = rg_ascend_test::ParamsFor(Dtype::kF32, o, &sem);
  ReluV2BlockedTilingData td;
  const char* why = "";
  ASSERT_TRUE(
      relugrad::ascend::MakeReluV2BlockedTiling(BlockedF32(1, 16, 40, 40, 1), params, &td, &why))
      << why;
  td.tileHw = 1600;  // 16 planes x 6.25 KiB x 4 queue buffers alone exceed 184 KiB
  EXPECT_EQ(RunBlockedSeeded(td, 16 * 1600, 3200), Violation::kUbOverAllocation);
}

// The mask tail as the kernel copies it, with the padding left out (isPad
// false): the compare then reads lanes nothing wrote.
using namespace AscendC;
std::vector<float> g_x(300, 1.0f);
std::vector<uint8_t> g_mask(64, 0);

void TailWithoutPadding(GM_ADDR in, GM_ADDR, GM_ADDR out, GM_ADDR, GM_ADDR) {
  TPipe pipe;
  TQue<TPosition::VECIN, 2> qi;
  TQue<TPosition::VECOUT, 2> qm;
  pipe.InitBuffer(qi, 2, 1024);
  pipe.InitBuffer(qm, 2, 32);
  GlobalTensor<float> gx;
  GlobalTensor<uint8_t> gm;
  gx.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(in), 300);
  gm.SetGlobalBuffer(reinterpret_cast<__gm__ uint8_t*>(out), 64);
  LocalTensor<float> x = qi.AllocTensor<float>();
  DataCopyPad(x, gx[256], DataCopyExtParams(1, 44 * 4, 0, 0, 0),
              DataCopyPadExtParams<float>(false, 0, 0, 0.0f));  // the wrong pad
  qi.EnQue(x);
  LocalTensor<float> v = qi.DeQue<float>();
  LocalTensor<uint8_t> m = qm.AllocTensor<uint8_t>();
  Compares(m, v, 0.0f, CMPMODE::GT, 64);  // 44 lanes copied, 4 more in the granule unwritten
  qm.EnQue(m);
  qi.FreeTensor(v);
  LocalTensor<uint8_t> w = qm.DeQue<uint8_t>();
  DataCopyPad(gm[32], w, DataCopyExtParams(1, 6, 0, 0, 0));
  qm.FreeTensor(w);
}

void PaddingPastTheGranule(GM_ADDR in, GM_ADDR, GM_ADDR out, GM_ADDR, GM_ADDR) {
  (void)out;
  TPipe pipe;
  TQue<TPosition::VECIN, 2> qi;
  pipe.InitBuffer(qi, 2, 1024);
  GlobalTensor<float> gx;
  gx.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(in), 300);
  LocalTensor<float> x = qi.AllocTensor<float>();
  // 44 floats end 16 bytes into a granule: 4 padding lanes fit, 12 do not.
  DataCopyPad(x, gx[256], DataCopyExtParams(1, 44 * 4, 0, 0, 0),
              DataCopyPadExtParams<float>(true, 0, 12, 0.0f));
  qi.FreeTensor(x);
}

// The NHWC gather of f32 rows of 8 channels into rows of 16 lanes: the
// second 32-byte block of each row is reached by no copy. Without the
// block-strided Duplicate (FillRowGaps) the compare reads lanes nothing wrote.
template <bool kFill>
void RowGaps(GM_ADDR in, GM_ADDR, GM_ADDR, GM_ADDR, GM_ADDR) {
  TPipe pipe;
  TQue<TPosition::VECIN, 2> qi;
  TBuf<TPosition::VECCALC> bits;
  pipe.InitBuffer(qi, 2, 1024);
  pipe.InitBuffer(bits, 32);
  GlobalTensor<float> gx;
  gx.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(in), 300);
  LocalTensor<float> x = qi.AllocTensor<float>();
  // 16 rows: 8 floats each, 8 floats apart in GM, one 32-byte block apart in UB.
  DataCopyPad(x, gx, DataCopyExtParams(16, 32, 32, 1, 0),
              DataCopyPadExtParams<float>(true, 0, 0, 0.0f));
  qi.EnQue(x);
  LocalTensor<float> v = qi.DeQue<float>();
  if (kFill) relugrad_ascend::FillRowGaps(v.ReinterpretCast<int32_t>(), 16, int32_t{0});
  Compares(bits.Get<uint8_t>(), v, 0.0f, CMPMODE::GT, 256);
  qi.FreeTensor(v);
}

Violation RunHand(ascend_twin::KernelFn fn) {
  ascend_twin::GmSpace gm;
  gm.AddInput(g_x.data(), g_x.size() * 4, "x");
  gm.AddOutput(g_mask.data(), g_mask.size(), "mask", {{0, 64}});
  try {
    ascend_twin::Launch(fn, 1, gm, reinterpret_cast<uint8_t*>(g_x.data()), nullptr, g_mask.data(),
                        nullptr, nullptr);
  } catch (const ascend_twin::TwinViolation& e) {
    std::printf("  caught: %s\n", e.what());
    return e.kind();
  }
  ADD_FAILURE() << "no violation";
  return Violation::kBadArgument;
}

TEST(AscendMaskViolation, TailCopiedWithoutItsPadding) {
  EXPECT_EQ(RunHand(&TailWithoutPadding), Violation::kUninitializedRead);
}

TEST(AscendMaskViolation, NhwcRowGapsLeftUnwritten) {
  EXPECT_EQ(RunHand(&RowGaps<false>), Violation::kUninitializedRead);
  ascend_twin::GmSpace gm;
  gm.AddInput(g_x.data(), g_x.size() * 4, "x");
  EXPECT_NO_THROW(ascend_twin::Launch(&RowGaps<true>, 1, gm, reinterpret_cast<uint8_t*>(g_x.data()),
                                      nullptr, nullptr, nullptr, nullptr));
}

TEST(AscendMaskViolation, PaddingRunsPastTheGranule) {
  EXPECT_EQ(RunHand(&PaddingPastTheGranule), Violation::kCopyLength);
}

}  // namespace
