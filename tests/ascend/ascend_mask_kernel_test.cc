// The AscendC ReluV2 (y and the flat 1-bit mask) and ReluGradV2 (dx from the
// mask) kernels through the CPU twin, f32/f16/bf16:
//  - bit for bit against relugrad's mask reference (core/mask_reference.h)
//    for every option set the kernels serve, and against the public API on
//    the cpu backend, for odd n, partial last bytes, several tiles x several
//    cores, in place;
//  - against CANN's golden formulas, re-derived here on raw bits:
//    ReluV2 (ops-nn activation/relu_v2/tests/assets/golden.py): y = max(x, 0)
//    with -0 made +0 (a NaN x stays), mask = np.packbits(x > 0,
//    bitorder="little"); ReluGradV2 (activation/relu_grad_v2/tests/assets/
//    golden.py): dx[i] = dy[i] where bit i % 8 of mask byte i / 8 is set, else 0;
//  - the blocked layout (N, C1, H, W, 16) from NCHW and from NHWC x: the
//    blocked kernels' y and dx equal the flat kernels' on the same bytes,
//    their mask is relugrad_mask_to_blocked (of x's format) of the flat
//    kernel's mask and the blocked golden (x > 0 at bit
//    ((n*C1 + c/16)*H*W + hw)*16 + c%16, padding channels 0; ops-nn
//    activation/relu_v2/op_host/relu_v2_infershape.cpp, InferShapeMaskNCHW /
//    InferShapeMaskNHWC), ragged C, odd N, H, W, set padding bits ignored.
// The tilings, the cost model and the seeded rule violations are
// ascend_mask_plan_test.cc's.
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

// Storage with 0xcd sentinels before and after the array's bytes; the array
// starts on a 64-byte boundary (plus `shift` bytes), as device allocations do.
struct Guarded {
  std::vector<uint8_t> store;
  size_t bytes, at;
  explicit Guarded(size_t b, size_t shift = 0) : store(b + 192 + shift, 0xcd), bytes(b) {
    const uintptr_t p = reinterpret_cast<uintptr_t>(store.data());
    at = 64 + (64 - p % 64) % 64 + shift;
  }
  uint8_t* data() { return store.data() + at; }
  std::vector<uint8_t> Get() { return std::vector<uint8_t>(data(), data() + bytes); }
  bool SentinelsIntact() const {
    for (size_t i = 0; i < at; ++i) {
      if (store[i] != 0xcd) return false;
    }
    for (size_t i = at + bytes; i < store.size(); ++i) {
      if (store[i] != 0xcd) return false;
    }
    return true;
  }
};

// Forward and backward of one case on the twin against the mask reference.
void CheckCase(Dtype dtype, const rg_ascend_test::Config& cfg, int64_t n, int cores,
               uint32_t seed) {
  relugrad::Rules sem;
  const relugrad::KernelParams params = rg_ascend_test::ParamsFor(dtype, cfg.options, &sem);
  const size_t elem = static_cast<size_t>(relugrad::DtypeSize(dtype));
  const std::vector<uint8_t> x = rg_ascend_test::MakeBits(dtype, n, seed);
  const std::vector<uint8_t> dy = rg_ascend_test::MakeBits(dtype, n, seed * 3 + 1);
  std::vector<uint8_t> want_y(x.size()), want_mask(MaskBytes(n)), want_dx(x.size());
  relugrad::ReferenceForwardRun(dtype, n, x.data(), want_y.data(), want_mask.data(), sem);
  relugrad::ReferenceGradMaskRun(dtype, n, dy.data(), want_mask.data(), want_dx.data(), sem);

  MaskTilingRequest req;
  req.dtype = dtype;
  req.n = n;
  req.cores = cores;
  req.grain_bytes = 0;  // every core the test asks for
  const std::string what = cfg.name + " " +
                           relugrad_dtype_name(static_cast<relugrad_dtype>(dtype)) +
                           " n=" + std::to_string(n) + " cores=" + std::to_string(cores);
  Guarded y(x.size()), mask(MaskBytes(n)), dx(x.size());
  MaskTwinRun run;
  const char* why = "";
  try {
    ASSERT_TRUE(
        relugrad::ascend::RunReluV2OnTwin(req, params, x.data(), y.data(), mask.data(), &run, &why))
        << what << ": " << why;
    ASSERT_TRUE(relugrad::ascend::RunReluGradV2OnTwin(req, params, dy.data(), want_mask.data(),
                                                      dx.data(), &run, &why))
        << what << ": " << why;
  } catch (const std::exception& e) {
    FAIL() << what << ": " << e.what();
  }
  const int64_t iy = rg_ascend_test::FirstDiff(y.Get(), want_y, static_cast<int>(elem));
  EXPECT_EQ(iy, -1) << what << ": y element " << iy;
  const int64_t im = rg_ascend_test::FirstDiff(mask.Get(), want_mask, 1);
  EXPECT_EQ(im, -1) << what << ": mask byte " << im;
  const int64_t ix = rg_ascend_test::FirstDiff(dx.Get(), want_dx, static_cast<int>(elem));
  EXPECT_EQ(ix, -1) << what << ": dx element " << ix;
  EXPECT_TRUE(y.SentinelsIntact() && mask.SentinelsIntact() && dx.SentinelsIntact()) << what;
}

bool Served(Dtype dtype, const relugrad_options& options) {
  relugrad::Rules sem;
  const relugrad::KernelParams params = rg_ascend_test::ParamsFor(dtype, options, &sem);
  MaskTilingRequest req;
  req.dtype = dtype;
  ReluV2TilingData td;
  const char* why = "";
  return relugrad::ascend::MakeReluV2Tiling(req, params, &td, &why);
}

class AscendMaskKernel : public ::testing::TestWithParam<Dtype> {};

TEST_P(AscendMaskKernel, EveryServedConfigAgainstReference) {
  int served = 0;
  for (const auto& cfg : rg_ascend_test::Configs()) {
    if (!Served(GetParam(), cfg.options)) continue;
    ++served;
    for (int64_t n : {1, 7, 8, 9, 255, 256, 257, 1001}) {
      CheckCase(GetParam(), cfg, n, 3, static_cast<uint32_t>(n * 31 + served));
      if (HasFailure()) return;
    }
  }
  EXPECT_GE(served, 6);  // torch, jax and their thresholds at least
  // torch.relu's -0 (keep_negative_zero) and the CANN ReluV2 rules.
  rg_ascend_test::Config keep{"torch+keep_negative_zero", {}};
  relugrad_options_init(&keep.options, RELUGRAD_PRESET_TORCH);
  keep.options.keep_negative_zero = 1;
  rg_ascend_test::Config v2{"cann_relugrad_v2", {}};
  relugrad_options_init(&v2.options, RELUGRAD_PRESET_CANN_RELUGRAD_V2);
  for (const auto& cfg : {keep, v2}) CheckCase(GetParam(), cfg, 777, 2, 5);
}

TEST_P(AscendMaskKernel, SeveralTilesTimesSeveralCores) {
  rg_ascend_test::Config torch{"torch", {}};
  relugrad_options_init(&torch.options, RELUGRAD_PRESET_TORCH);
  relugrad::Rules sem;
  const auto params = rg_ascend_test::ParamsFor(GetParam(), torch.options, &sem);
  MaskTilingRequest req;
  req.dtype = GetParam();
  ReluV2TilingData td;
  const char* why = "";
  ASSERT_TRUE(relugrad::ascend::MakeReluV2Tiling(req, params, &td, &why)) << why;
  const int64_t tile = td.tileElems;
  // Uneven: the last core gets a partial tile and a partial mask byte.
  CheckCase(GetParam(), torch, 4 * tile + tile / 2 + 13, 3, 11);
  CheckCase(GetParam(), torch, 2 * tile + 5, 7, 12);
}

// Raw bits of a value of dtype: sign, NaN, zero.
struct Bits {
  uint64_t sign, mag_mask, inf;
};
Bits BitsOf(Dtype d) {
  if (d == Dtype::kF32) return {0x80000000u, 0x7fffffffu, 0x7f800000u};
  if (d == Dtype::kF16) return {0x8000u, 0x7fffu, 0x7c00u};
  return {0x8000u, 0x7fffu, 0x7f80u};
}

TEST_P(AscendMaskKernel, CannGoldenFormulas) {
  const Dtype d = GetParam();
  const Bits b = BitsOf(d);
  const size_t elem = static_cast<size_t>(relugrad::DtypeSize(d));
  relugrad_options o;
  relugrad_options_init(&o, RELUGRAD_PRESET_CANN_RELUGRAD_V2);
  relugrad::Rules sem;
  const auto params = rg_ascend_test::ParamsFor(d, o, &sem);
  for (int64_t n : {1, 13, 64, 1003, 6007}) {
    const std::vector<uint8_t> x = rg_ascend_test::MakeBits(d, n, static_cast<uint32_t>(n));
    const std::vector<uint8_t> dy = rg_ascend_test::MakeBits(d, n, static_cast<uint32_t>(n + 9));
    // The goldens, element by element on raw bits.
    std::vector<uint8_t> gy(x.size()), gmask(MaskBytes(n), 0), gdx(x.size(), 0);
    for (int64_t i = 0; i < n; ++i) {
      uint64_t v = 0;
      std::memcpy(&v, &x[static_cast<size_t>(i) * elem], elem);
      const bool nan = (v & b.mag_mask) > b.inf;
      const bool gt0 = !nan && (v & b.sign) == 0 && v != 0;  // x > 0 (a NaN compares false)
      const uint64_t y = gt0 || nan ? v : 0;                 // max(x, 0), -0 -> +0, NaN stays
      std::memcpy(&gy[static_cast<size_t>(i) * elem], &y, elem);
      if (gt0) gmask[static_cast<size_t>(i / 8)] |= static_cast<uint8_t>(1u << (i % 8));
      if (gt0)
        std::memcpy(&gdx[static_cast<size_t>(i) * elem], &dy[static_cast<size_t>(i) * elem], elem);
    }
    MaskTilingRequest req;
    req.dtype = d;
    req.n = n;
    req.cores = 4;
    req.grain_bytes = 0;
    Guarded y(x.size()), mask(MaskBytes(n)), dx(x.size());
    MaskTwinRun run;
    const char* why = "";
    ASSERT_TRUE(
        relugrad::ascend::RunReluV2OnTwin(req, params, x.data(), y.data(), mask.data(), &run, &why))
        << why;
    EXPECT_EQ(y.Get(), gy) << "n=" << n;
    EXPECT_EQ(mask.Get(), gmask) << "n=" << n;
    // The backward reads the golden mask; padding bits set past n change nothing.
    std::vector<uint8_t> m = gmask;
    if (n % 8 != 0) m.back() = static_cast<uint8_t>(m.back() | (0xffu << (n % 8)));
    ASSERT_TRUE(relugrad::ascend::RunReluGradV2OnTwin(req, params, dy.data(), m.data(), dx.data(),
                                                      &run, &why))
        << why;
    EXPECT_EQ(dx.Get(), gdx) << "n=" << n;
    EXPECT_EQ(run.tiling.blocks, n > 256 ? 4u : 1u) << "n=" << n;  // aligned: every core
  }
}

// The C API with options.backend = ascend_twin against the cpu backend, in place too.
TEST_P(AscendMaskKernel, PublicApiMatchesTheCpuBackend) {
  const Dtype d = GetParam();
  const relugrad_dtype rd = static_cast<relugrad_dtype>(d);
  const int64_t n = 5003;
  const std::vector<uint8_t> x = rg_ascend_test::MakeBits(d, n, 77);
  const std::vector<uint8_t> dy = rg_ascend_test::MakeBits(d, n, 78);
  relugrad_options cpu, twin;
  relugrad_options_init(&cpu, RELUGRAD_PRESET_TORCH);
  twin = cpu;
  twin.backend = RELUGRAD_BACKEND_ASCEND_TWIN;
  std::vector<uint8_t> y0(x.size()), y1 = x, m0(MaskBytes(n)), m1(MaskBytes(n));
  ASSERT_EQ(relugrad_relu_forward(rd, n, x.data(), y0.data(), m0.data(), &cpu), RELUGRAD_OK);
  ASSERT_EQ(relugrad_relu_forward(rd, n, y1.data(), y1.data(), m1.data(), &twin), RELUGRAD_OK)
      << relugrad_last_error();
  EXPECT_EQ(y1, y0);
  EXPECT_EQ(m1, m0);
  std::vector<uint8_t> dx0(dy.size()), dx1 = dy;
  ASSERT_EQ(relugrad_relu_grad_mask(rd, n, dy.data(), m0.data(), dx0.data(), &cpu), RELUGRAD_OK);
  ASSERT_EQ(relugrad_relu_grad_mask(rd, n, dx1.data(), m0.data(), dx1.data(), &twin), RELUGRAD_OK)
      << relugrad_last_error();
  EXPECT_EQ(dx1, dx0);
  EXPECT_EQ(relugrad_relu_forward(rd, 0, x.data(), y0.data(), m0.data(), &twin), RELUGRAD_OK);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, AscendMaskKernel,
                         ::testing::Values(Dtype::kF32, Dtype::kF16, Dtype::kBF16),
                         [](const ::testing::TestParamInfo<Dtype>& info) {
                           return std::string(
                               relugrad_dtype_name(static_cast<relugrad_dtype>(info.param)));
                         });

TEST(AscendMaskBackend, RefusesWhatTheKernelsDoNotServe) {
  std::vector<double> x(16, 1.0), y(16);
  std::vector<uint8_t> m(2);
  relugrad_options o;
  relugrad_options_init(&o, RELUGRAD_PRESET_TORCH);
  o.backend = RELUGRAD_BACKEND_ASCEND_TWIN;
  EXPECT_EQ(relugrad_relu_forward(RELUGRAD_F64, 16, x.data(), y.data(), m.data(), &o),
            RELUGRAD_UNSUPPORTED);
  EXPECT_NE(std::string(relugrad_last_error()).find("f64"), std::string::npos)
      << relugrad_last_error();
  std::vector<float> xf(16, 1.0f), dxf(16);
  relugrad_options_init(&o, RELUGRAD_PRESET_TENSORFLOW);  // multiply
  o.backend = RELUGRAD_BACKEND_ASCEND_TWIN;
  EXPECT_EQ(relugrad_relu_grad_mask(RELUGRAD_F32, 16, xf.data(), m.data(), dxf.data(), &o),
            RELUGRAD_UNSUPPORTED);
  EXPECT_NE(std::string(relugrad_last_error()).find("multiply"), std::string::npos)
      << relugrad_last_error();
}

// The twin's blocked entry points (the CLI's --mask-layout blocked): the C API's checks, the
// kernels' refusals, and the bits of the flat kernels converted.
TEST(AscendMaskBackend, BlockedEntryPointsCheckAndRun) {
  const relugrad::BlockedShape shape{2, 19, 3, 5};
  const int64_t count = 2 * 19 * 3 * 5;
  const std::vector<uint8_t> x = rg_ascend_test::MakeBits(Dtype::kF16, count, 9);
  std::vector<uint8_t> y(x.size()),
      mask(static_cast<size_t>(relugrad_mask_blocked_bytes(2, 19, 3, 5)));
  std::vector<uint8_t> flat(MaskBytes(count)), want(mask.size()), y0(x.size());
  relugrad_options o;
  relugrad_options_init(&o, RELUGRAD_PRESET_TORCH);
  ASSERT_EQ(relugrad_relu_forward(RELUGRAD_F16, count, x.data(), y0.data(), flat.data(), &o),
            RELUGRAD_OK);
  ASSERT_EQ(relugrad_mask_to_blocked(RELUGRAD_X_NHWC, 2, 19, 3, 5, flat.data(), want.data()),
            RELUGRAD_OK);
  // The cpu backend does not write the blocked mask.
  EXPECT_EQ(relugrad::AscendTwinReluForwardBlocked(RELUGRAD_F16, RELUGRAD_X_NHWC, shape, x.data(),
                                                   y.data(), mask.data(), &o),
            RELUGRAD_INVALID_ARGUMENT);
  EXPECT_NE(std::string(relugrad_last_error()).find("ascend_twin backend only"), std::string::npos)
      << relugrad_last_error();
  o.backend = RELUGRAD_BACKEND_ASCEND_TWIN;
  EXPECT_EQ(relugrad::AscendTwinReluForwardBlocked(RELUGRAD_F16, static_cast<relugrad_x_format>(3),
                                                   shape, x.data(), y.data(), mask.data(), &o),
            RELUGRAD_INVALID_ARGUMENT);
  EXPECT_EQ(relugrad::AscendTwinReluForwardBlocked(RELUGRAD_F16, RELUGRAD_X_NHWC, {2, -19, 3, 5},
                                                   x.data(), y.data(), mask.data(), &o),
            RELUGRAD_INVALID_ARGUMENT);
  EXPECT_EQ(relugrad::AscendTwinReluForwardBlocked(RELUGRAD_F16, RELUGRAD_X_NHWC, shape, x.data(),
                                                   y.data(), nullptr, &o),
            RELUGRAD_INVALID_ARGUMENT);
  EXPECT_EQ(relugrad::AscendTwinReluForwardBlocked(RELUGRAD_F64, RELUGRAD_X_NHWC, {1, 1, 1, 1},
                                                   x.data(), y.data(), mask.data(), &o),
            RELUGRAD_UNSUPPORTED);
  EXPECT_NE(std::string(relugrad_last_error()).find("f64"), std::string::npos)
      << relugrad_last_error();
  ASSERT_EQ(relugrad::AscendTwinReluForwardBlocked(RELUGRAD_F16, RELUGRAD_X_NHWC, shape, x.data(),
                                                   y.data(), mask.data(), &o),
            RELUGRAD_OK)
      << relugrad_last_error();
  EXPECT_EQ(y, y0);
  EXPECT_EQ(mask, want);
  std::vector<uint8_t> dx = x, dx0(x.size());  // in place on dy
  relugrad_options cpu;
  relugrad_options_init(&cpu, RELUGRAD_PRESET_TORCH);
  ASSERT_EQ(relugrad_relu_grad_mask(RELUGRAD_F16, count, x.data(), flat.data(), dx0.data(), &cpu),
            RELUGRAD_OK);
  ASSERT_EQ(relugrad::AscendTwinReluGradMaskBlocked(RELUGRAD_F16, RELUGRAD_X_NHWC, shape, dx.data(),
                                                    mask.data(), dx.data(), &o),
            RELUGRAD_OK)
      << relugrad_last_error();
  EXPECT_EQ(dx, dx0);
}

// ---- The blocked layout ----

// NHWC only: f32 rows of exactly 8 and 9 channels (one 32-byte block with no padding, two
// blocks), a second group of 8, and an image wider than every tile.
const Shape kNhwcShapes[] = {{3, 8, 5, 7}, {2, 24, 3, 3}, {1, 9, 41, 41}};

// x (and y, dy, dx) in `format`; the blocked kernels against the flat ones on the same bytes.
void CheckBlocked(Dtype d, relugrad_x_format format, const relugrad_options& options,
                  const Shape& s, int cores, uint32_t seed, bool golden) {
  relugrad::Rules sem;
  const auto params = rg_ascend_test::ParamsFor(d, options, &sem);
  const int64_t count = s.n * s.c * s.h * s.w;
  const size_t elem = static_cast<size_t>(relugrad::DtypeSize(d));
  const std::vector<uint8_t> x = rg_ascend_test::MakeBits(d, count, seed);
  const std::vector<uint8_t> dy = rg_ascend_test::MakeBits(d, count, seed + 1);
  const std::string what = std::string(relugrad_dtype_name(static_cast<relugrad_dtype>(d))) +
                           " shape " + std::to_string(s.n) + "," + std::to_string(s.c) + "," +
                           std::to_string(s.h) + "," + std::to_string(s.w) +
                           (format == RELUGRAD_X_NHWC ? " nhwc" : " nchw") +
                           " cores=" + std::to_string(cores);
  // The flat kernels.
  MaskTilingRequest freq;
  freq.dtype = d;
  freq.n = count;
  freq.cores = cores;
  freq.grain_bytes = 0;
  std::vector<uint8_t> y(x.size()), mask(MaskBytes(count)), dx(x.size());
  MaskTwinRun frun;
  const char* why = "";
  ASSERT_TRUE(
      relugrad::ascend::RunReluV2OnTwin(freq, params, x.data(), y.data(), mask.data(), &frun, &why))
      << why;
  ASSERT_TRUE(relugrad::ascend::RunReluGradV2OnTwin(freq, params, dy.data(), mask.data(), dx.data(),
                                                    &frun, &why))
      << why;
  std::vector<uint8_t> want_blocked(
      static_cast<size_t>(relugrad_mask_blocked_bytes(s.n, s.c, s.h, s.w)));
  ASSERT_EQ(relugrad_mask_to_blocked(format, s.n, s.c, s.h, s.w, mask.data(), want_blocked.data()),
            RELUGRAD_OK);
  // The blocked kernels, outputs guarded.
  relugrad::ascend::BlockedTilingRequest breq;
  breq.dtype = d;
  breq.format = format;
  breq.n = s.n;
  breq.c = s.c;
  breq.h = s.h;
  breq.w = s.w;
  breq.cores = cores;
  breq.grain_bytes = 0;
  Guarded by(x.size()), bmask(want_blocked.size()), bdx(x.size());
  relugrad::ascend::BlockedTwinRun brun;
  try {
    ASSERT_TRUE(relugrad::ascend::RunBlockedOnTwin(breq, params, x.data(), nullptr, by.data(),
                                                   bmask.data(), &brun, &why))
        << why;
    breq.op = MaskOp::kBackward;
    // The backward reads only the channels of x: padding-channel bits set change nothing.
    std::vector<uint8_t> with_pad = want_blocked;
    const int64_t hw = s.h * s.w, c1 = (s.c + 15) / 16, r = s.c - (c1 - 1) * 16;
    for (int64_t n = 0; n < s.n && r < 16; ++n) {
      for (int64_t p = 0; p < hw; ++p) {
        const int64_t word = ((n * c1 + c1 - 1) * hw + p) * 2;
        const uint32_t pad = 0xffffu & ~((1u << r) - 1);
        with_pad[static_cast<size_t>(word)] |= static_cast<uint8_t>(pad);
        with_pad[static_cast<size_t>(word + 1)] |= static_cast<uint8_t>(pad >> 8);
      }
    }
    ASSERT_TRUE(relugrad::ascend::RunBlockedOnTwin(breq, params, dy.data(), with_pad.data(),
                                                   bdx.data(), nullptr, &brun, &why))
        << why;
  } catch (const std::exception& e) {
    FAIL() << what << ": " << e.what();
  }
  EXPECT_EQ(by.Get(), y) << what;
  EXPECT_EQ(bmask.Get(), want_blocked) << what;
  EXPECT_EQ(bdx.Get(), dx) << what;
  EXPECT_TRUE(by.SentinelsIntact() && bmask.SentinelsIntact() && bdx.SentinelsIntact()) << what;
  if (!golden) return;
  // CANN's rule written out: bit ((n*C1 + c/16)*HW + hw)*16 + c%16 is x > 0.
  const Bits b = BitsOf(d);
  const int64_t c1 = (s.c + 15) / 16, hw = s.h * s.w;
  std::vector<uint8_t> g(want_blocked.size(), 0);
  for (int64_t i = 0; i < count; ++i) {
    uint64_t v = 0;
    std::memcpy(&v, &x[static_cast<size_t>(i) * elem], elem);
    const bool gt0 = (v & b.mag_mask) <= b.inf && (v & b.sign) == 0 && v != 0;
    const bool nhwc = format == RELUGRAD_X_NHWC;
    const int64_t n = i / (s.c * hw);
    const int64_t c = nhwc ? i % s.c : i / hw % s.c, p = nhwc ? i / s.c % hw : i % hw;
    const int64_t bit = ((n * c1 + c / 16) * hw + p) * 16 + c % 16;
    if (gt0) g[static_cast<size_t>(bit / 8)] |= static_cast<uint8_t>(1u << (bit % 8));
  }
  EXPECT_EQ(bmask.Get(), g) << what << " (golden)";
}

TEST_P(AscendMaskKernel, BlockedLayoutIsTheFlatKernelsConverted) {
  relugrad_options torch, v2, jax;
  relugrad_options_init(&torch, RELUGRAD_PRESET_TORCH);
  relugrad_options_init(&v2, RELUGRAD_PRESET_CANN_RELUGRAD_V2);
  relugrad_options_init(&jax, RELUGRAD_PRESET_JAX);
  jax.threshold = -1.25;
  uint32_t seed = 1;
  for (const Shape& s : kShapes) {
    for (int cores : {1, 3}) {
      CheckBlocked(GetParam(), RELUGRAD_X_NCHW, torch, s, cores, ++seed, false);
      CheckBlocked(GetParam(), RELUGRAD_X_NCHW, v2, s, cores, ++seed, true);
      if (HasFailure()) return;
    }
    CheckBlocked(GetParam(), RELUGRAD_X_NCHW, jax, s, 5, ++seed, false);
  }
}

// The same from NHWC x: bit ((n*C1 + c/16)*H*W + hw)*16 + c%16 of element (n, hw, c).
TEST_P(AscendMaskKernel, BlockedFromNhwcIsTheFlatKernelsConverted) {
  relugrad_options torch, v2, jax;
  relugrad_options_init(&torch, RELUGRAD_PRESET_TORCH);
  relugrad_options_init(&v2, RELUGRAD_PRESET_CANN_RELUGRAD_V2);
  relugrad_options_init(&jax, RELUGRAD_PRESET_JAX);
  jax.threshold = -1.25;
  std::vector<Shape> shapes(std::begin(kShapes), std::end(kShapes));
  shapes.insert(shapes.end(), std::begin(kNhwcShapes), std::end(kNhwcShapes));
  uint32_t seed = 101;
  for (const Shape& s : shapes) {
    for (int cores : {1, 3}) {
      CheckBlocked(GetParam(), RELUGRAD_X_NHWC, torch, s, cores, ++seed, false);
      CheckBlocked(GetParam(), RELUGRAD_X_NHWC, v2, s, cores, ++seed, true);
      if (HasFailure()) return;
    }
    CheckBlocked(GetParam(), RELUGRAD_X_NHWC, jax, s, 5, ++seed, false);
  }
}

// Outputs off a 32-byte boundary: one block writes them (no shared granule), same bits.
TEST(AscendMaskKernelAlignment, MisalignedOutputsRunOnOneBlock) {
  relugrad_options o;
  relugrad_options_init(&o, RELUGRAD_PRESET_TORCH);
  relugrad::Rules sem;
  const auto params = rg_ascend_test::ParamsFor(Dtype::kF16, o, &sem);
  const int64_t n = 5001;
  const std::vector<uint8_t> x = rg_ascend_test::MakeBits(Dtype::kF16, n, 3);
  std::vector<uint8_t> want_y(x.size()), want_mask(MaskBytes(n));
  relugrad::ReferenceForwardRun(Dtype::kF16, n, x.data(), want_y.data(), want_mask.data(), sem);
  MaskTilingRequest req;
  req.dtype = Dtype::kF16;
  req.n = n;
  req.cores = 4;
  req.grain_bytes = 0;
  for (size_t y_shift : {0, 2, 16}) {
    for (size_t m_shift : {0, 1}) {
      Guarded y(x.size(), y_shift), mask(MaskBytes(n), m_shift);
      MaskTwinRun run;
      const char* why = "";
      ASSERT_TRUE(relugrad::ascend::RunReluV2OnTwin(req, params, x.data(), y.data(), mask.data(),
                                                    &run, &why))
          << why;
      EXPECT_EQ(run.tiling.blocks, y_shift == 0 && m_shift == 0 ? 4u : 1u);
      EXPECT_EQ(y.Get(), want_y);
      EXPECT_EQ(mask.Get(), want_mask);
      EXPECT_TRUE(y.SentinelsIntact() && mask.SentinelsIntact());
    }
  }
}

}  // namespace
