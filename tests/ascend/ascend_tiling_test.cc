// Host tiling and the pipe cost model.
#include <cstdio>

#include "ascend/cost_model.h"
#include "ascend/twin_launch.h"
#include "ascend_test_util.h"
#include "core/dtype_traits.h"
#include "gtest/gtest.h"

namespace {

using relugrad::Dtype;

TEST(AscendTiling, TilesFitTheUnifiedBufferAndRepeats) {
  for (const auto& cfg : rg_ascend_test::Configs()) {
    for (Dtype d : {Dtype::kF32, Dtype::kF16, Dtype::kBF16}) {
      relugrad::Rules sem;
      const auto params = rg_ascend_test::ParamsFor(d, cfg.options, &sem);
      for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{1000}, int64_t{1} << 24}) {
        relugrad::ascend::TilingRequest req;
        req.dtype = d;
        req.n = n;
        req.dx_address = 4096 + 4;
        ReluGradTilingData td;
        relugrad::WorkPlan plan;
        const char* why = "";
        ASSERT_TRUE(relugrad::ascend::MakeTiling(req, params, &td, &plan, &why));
        const uint64_t tile_bytes = uint64_t{td.tileElems} * relugrad::DtypeSize(d);
        EXPECT_EQ(tile_bytes % 256, 0u) << cfg.name;
        EXPECT_LE((6 + td.scratchSlots) * tile_bytes, 184u * 1024) << cfg.name;
        EXPECT_GE(td.blocks, 1u);
        EXPECT_LE(td.blocks, 40u);
        EXPECT_EQ(td.blockElems * relugrad::DtypeSize(d) % 32, 0u);
      }
    }
  }
}

TEST(AscendTiling, F64Refused) {
  relugrad::ascend::TilingRequest req;
  req.dtype = Dtype::kF64;
  req.n = 10;
  ReluGradTilingData td;
  relugrad::WorkPlan plan;
  const char* why = "";
  EXPECT_FALSE(relugrad::ascend::MakeTiling(req, relugrad::KernelParams{}, &td, &plan, &why));
  EXPECT_NE(std::string(why).find("f64"), std::string::npos);
}

TEST(AscendTiling, KeyIntervalsMapToRawPatterns) {
  // f32: keys [1, key(+inf)] (pass_if_gt at 0) are the positive patterns.
  const int64_t lo[] = {1}, hi[] = {0x7f800000};
  RgRawSet set = relugrad::ascend::KeyIntervalsToRawSet(32, lo, hi, 1);
  ASSERT_EQ(set.count, 1u);
  EXPECT_EQ(set.lo[0], 1);
  EXPECT_EQ(set.hi[0], 0x7f800000);
  // Negative keys reverse: key -1 is -0 (0x80000000), key(-inf) is 0xff800000.
  const int64_t klo[] = {relugrad::OrderKey<Dtype::kF32>(0xff800000u)}, khi[] = {-1};
  set = relugrad::ascend::KeyIntervalsToRawSet(32, klo, khi, 1);
  ASSERT_EQ(set.count, 1u);
  EXPECT_EQ(static_cast<uint32_t>(set.lo[0]), 0x80000000u);
  EXPECT_EQ(static_cast<uint32_t>(set.hi[0]), 0xff800000u);
}

// The cost model on what the twin counted: which pipe bounds each path,
// and double buffering never loses to single buffering.
TEST(AscendCostModel, ReportsTheBoundingPipe) {
  std::printf("%-22s %-5s %9s %6s %7s %9s %9s %9s %10s %6s %8s %10s\n", "config", "dtype", "n",
              "tile", "blocks", "MTE2_us", "V_us", "MTE3_us", "total_us", "bound", "GB/s",
              "V_ins/tile");
  for (const char* name : {"torch", "tensorflow", "onednn+alpha0.1"}) {
    for (Dtype d : {Dtype::kF32, Dtype::kBF16}) {
      for (int cores : {8, 40}) {
        rg_ascend_test::Config cfg;
        for (const auto& c : rg_ascend_test::Configs()) {
          if (c.name == name) cfg = c;
        }
        relugrad::Rules sem;
        const auto params = rg_ascend_test::ParamsFor(d, cfg.options, &sem);
        const int64_t n = 1 << 20;
        const auto dy = rg_ascend_test::MakeBits(d, n, 1);
        const auto s = rg_ascend_test::MakeBits(d, n, 2);
        std::vector<uint8_t> dx(dy.size());
        relugrad::ascend::TilingRequest req;
        req.dtype = d;
        req.n = n;
        req.dx_address = reinterpret_cast<uintptr_t>(dx.data());
        req.cores = cores;  // the model divides HBM among the active cores
        relugrad::ascend::TwinRun run;
        const char* why = "";
        ASSERT_TRUE(
            relugrad::ascend::RunOnTwin(req, dy.data(), s.data(), dx.data(), params, &run, &why));
        relugrad::ascend::PipeModel model;
        const auto two = relugrad::ascend::EstimateLaunch(run.counters, model);
        model.buffers = 1;
        const auto one = relugrad::ascend::EstimateLaunch(run.counters, model);
        EXPECT_LE(two.total_us, one.total_us);
        EXPECT_FALSE(two.bound.empty());
        const auto& b0 = two.blocks.front();
        std::printf("%-22s %-5s %9lld %6u %7u %9.1f %9.1f %9.1f %10.1f %6s %8.1f %10.1f\n", name,
                    relugrad_dtype_name(static_cast<relugrad_dtype>(d)), static_cast<long long>(n),
                    run.tiling.tileElems, run.tiling.blocks, b0.mte2_us, b0.vec_us, b0.mte3_us,
                    two.total_us, two.bound.c_str(), two.gbps,
                    static_cast<double>(run.counters.front().vec_instrs) /
                        static_cast<double>(run.counters.front().tiles));
      }
    }
  }
}

}  // namespace
