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
//    InferShapeMaskNHWC), ragged C, odd N, H, W, set padding bits ignored;
//  - every seeded rule violation (a mask granule written by two cores, a UB
//    overflow, a tail copied without its padding, a block ending mid-image,
//    NHWC f32 row gaps left unwritten) raises its twin error.
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ascend/blocked_mask.h"
#include "ascend/cost_model.h"
#include "ascend/twin_launch.h"
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

size_t MaskBytes(int64_t n) { return static_cast<size_t>((n + 7) / 8); }

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

struct Shape {
  int64_t n, c, h, w;
};

// Ragged C (below, at, across multiples of 16), odd N, H, W, planes wider than a tile, and
// enough images for several blocks (12 x 16 x 4 x 4: one image per run; 16 x 17 x 3 x 5: 8).
const Shape kShapes[] = {{1, 1, 1, 1},   {1, 16, 1, 1}, {2, 17, 3, 5},   {3, 15, 1, 7},
                         {1, 33, 2, 3},  {2, 32, 3, 3}, {1, 5, 7, 9},    {4, 47, 1, 1},
                         {5, 20, 5, 1},  {3, 64, 2, 1}, {2, 18, 37, 31}, {7, 3, 3, 3},
                         {12, 16, 4, 4}, {16, 17, 3, 5}};

relugrad::ascend::BlockedTilingRequest BlockedF32(int64_t n, int64_t c, int64_t h, int64_t w,
                                                  int cores) {
  relugrad::ascend::BlockedTilingRequest r;
  r.n = n;
  r.c = c;
  r.h = h;
  r.w = w;
  r.cores = cores;
  r.grain_bytes = 0;
  return r;
}

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
