// Scalars in the data type: a threshold under threshold_rounding = dtype and
// the clip bounds reach a 16-bit type through float (double -> f32 -> 16-bit,
// as PyTorch's c10::Scalar::to<T>), never rounded straight from double. The
// cases sit on rounding boundaries: exact 16-bit midpoints (ties to even both
// ways) and values within 2^-40 of one, which one rounding and two roundings
// send to different neighbours. Every path must give the same bits: the
// reference, each SIMD target on 1 and 2 threads, misaligned and in-place
// calls, the forward mask, and the Ascend twin where built. The frameworks'
// own answers for these cases are golden vectors (tests/golden, rows
// "torch.threshold_rounding.*").
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "core/float_convert.h"
#include "relugrad/relugrad.h"
#include "test_support.h"

namespace relugrad {
namespace testing {
namespace {

struct Rounded {
  Dtype dtype;
  double value;
  uint64_t via_float;  // ScalarToDtypeBits: what PyTorch makes of the scalar
  uint64_t direct;     // DoubleToBitsRne: one rounding
};

// 2^-40 is far below half an f32 ulp at 1 (2^-24) and far above the f32
// rounding error at the 16-bit midpoints, which are f32 values.
const double kNudge = std::ldexp(1.0, -40);

const Rounded kCases[] = {
    // bf16 around 1: neighbours 0x3f80 (1), 0x3f81 (1 + 2^-7), 0x3f82.
    {Dtype::kBF16, 1 + 0x1p-8, 0x3f80, 0x3f80},               // midpoint, tie to even (down)
    {Dtype::kBF16, 1 + 3 * 0x1p-8, 0x3f82, 0x3f82},           // midpoint, tie to even (up)
    {Dtype::kBF16, 1 + 0x1p-8 + kNudge, 0x3f80, 0x3f81},      // the double rounding moves it down
    {Dtype::kBF16, 1 + 3 * 0x1p-8 - kNudge, 0x3f82, 0x3f81},  // ... and up
    {Dtype::kBF16, -(1 + 0x1p-8 + kNudge), 0xbf80, 0xbf81},   // sign symmetric
    {Dtype::kBF16, 1 + 0x1p-8 - kNudge, 0x3f80, 0x3f80},      // below the midpoint: one answer
    {Dtype::kBF16, 0.1, 0x3dcd, 0x3dcd},
    {Dtype::kBF16, 1e300, 0x7f80, 0x7f80},  // overflow to inf either way
    // f16 around 1: neighbours 0x3c00, 0x3c01 (1 + 2^-10), 0x3c02.
    {Dtype::kF16, 1 + 0x1p-11, 0x3c00, 0x3c00},
    {Dtype::kF16, 1 + 3 * 0x1p-11, 0x3c02, 0x3c02},
    {Dtype::kF16, 1 + 0x1p-11 + kNudge, 0x3c00, 0x3c01},
    {Dtype::kF16, 1 + 3 * 0x1p-11 - kNudge, 0x3c02, 0x3c01},
    {Dtype::kF16, -(1 + 3 * 0x1p-11 - kNudge), 0xbc02, 0xbc01},
    {Dtype::kF16, 65520.0, 0x7c00, 0x7c00},                     // max + half ulp: tie to even = inf
    {Dtype::kF16, 65520.0 - kNudge * 0x1p16, 0x7c00, 0x7bff},   // f32 rounds it up to the tie
    {Dtype::kF16, 0x1p-25 + kNudge * 0x1p-30, 0x0000, 0x0001},  // subnormal f16 midpoint
    // f32 and f64: one rounding, the same as before.
    {Dtype::kF32, 1 + 0x1p-24 + kNudge, 0x3f800001, 0x3f800001},
    {Dtype::kF64, 1 + kNudge, 0x3ff0000000001000, 0x3ff0000000001000},
};

TEST(ScalarToDtypeBits, RoundsThroughFloatForSixteenBitTypes) {
  for (const Rounded& c : kCases) {
    EXPECT_EQ(Hex(ScalarToDtypeBits(c.dtype, c.value)), Hex(c.via_float)) << c.value;
    EXPECT_EQ(Hex(DoubleToBitsRne(c.dtype, c.value)), Hex(c.direct))
        << c.value << " (one rounding)";
  }
}

relugrad_dtype Public(Dtype d) {
  switch (d) {
    case Dtype::kF16:
      return RELUGRAD_F16;
    case Dtype::kBF16:
      return RELUGRAD_BF16;
    case Dtype::kF32:
      return RELUGRAD_F32;
    case Dtype::kF64:
      return RELUGRAD_F64;
  }
  return RELUGRAD_F32;
}

// Runs one (dy, s) pair, repeated n times, through every path and expects
// `want` in every element.
void ExpectEveryPath(relugrad_dtype d, relugrad_options o, uint64_t dy, uint64_t s, uint64_t want,
                     const std::string& what) {
  const size_t size = relugrad_dtype_size(d);
  for (size_t n : {size_t{1}, size_t{1000}}) {
    const auto dyv = Pack(d, std::vector<uint64_t>(n, dy));
    const auto sv = Pack(d, std::vector<uint64_t>(n, s));
    const auto wantv = Pack(d, std::vector<uint64_t>(n, want));
    const int64_t count = static_cast<int64_t>(n);
    std::vector<unsigned char> dx(dyv.size());
    o.threads = 1;
    ASSERT_EQ(relugrad_relu_grad_reference(d, count, dyv.data(), sv.data(), dx.data(), &o),
              RELUGRAD_OK);
    ASSERT_EQ(CompareBits(d, wantv.data(), dx.data(), n, dyv.data(), sv.data()), "")
        << what << " reference n=" << n;
    for (const std::string& isa : TargetsToTest()) {
      ScopedIsa cap(isa);
      for (int threads : {1, 2}) {
        o.threads = threads;
        const std::string how =
            what + " " + isa + " threads=" + std::to_string(threads) + " n=" + std::to_string(n);
        std::fill(dx.begin(), dx.end(), 0x5a);
        ASSERT_EQ(relugrad_relu_grad(d, count, dyv.data(), sv.data(), dx.data(), &o), RELUGRAD_OK)
            << relugrad_last_error();
        ASSERT_EQ(CompareBits(d, wantv.data(), dx.data(), n), "") << how;
        // Misaligned by one element (not a multiple of any vector).
        std::vector<unsigned char> a(dyv.size() + size), b(sv.size() + size), c(dx.size() + size);
        std::memcpy(a.data() + size, dyv.data(), dyv.size());
        std::memcpy(b.data() + size, sv.data(), sv.size());
        ASSERT_EQ(
            relugrad_relu_grad(d, count, a.data() + size, b.data() + size, c.data() + size, &o),
            RELUGRAD_OK);
        ASSERT_EQ(CompareBits(d, wantv.data(), c.data() + size, n), "") << how << " misaligned";
        // In place on dy.
        std::vector<unsigned char> inplace = dyv;
        ASSERT_EQ(relugrad_relu_grad(d, count, inplace.data(), sv.data(), inplace.data(), &o),
                  RELUGRAD_OK);
        ASSERT_EQ(CompareBits(d, wantv.data(), inplace.data(), n), "") << how << " in place";
      }
    }
    if (relugrad_backend_available(RELUGRAD_BACKEND_ASCEND_TWIN)) {
      relugrad_options t = o;
      t.backend = RELUGRAD_BACKEND_ASCEND_TWIN;
      std::fill(dx.begin(), dx.end(), 0x5a);
      ASSERT_EQ(relugrad_relu_grad(d, count, dyv.data(), sv.data(), dx.data(), &t), RELUGRAD_OK)
          << relugrad_last_error();
      ASSERT_EQ(CompareBits(d, wantv.data(), dx.data(), n), "") << what << " ascend-twin n=" << n;
    }
  }
}

// The gate s in the forward mask: bit set iff the gate is open.
bool MaskBit(relugrad_dtype d, const relugrad_options& o, uint64_t s) {
  const auto x = Pack(d, {s});
  std::vector<unsigned char> y(x.size());
  uint8_t mask = 0xff;
  EXPECT_EQ(relugrad_relu_forward(d, 1, x.data(), y.data(), &mask, &o), RELUGRAD_OK)
      << relugrad_last_error();
  return (mask & 1) != 0;
}

TEST(ThresholdRoundingDtype, GateUsesTheThresholdAsPytorchConvertsIt) {
  for (const Rounded& c : kCases) {
    if (c.dtype != Dtype::kBF16 && c.dtype != Dtype::kF16) continue;
    if (!std::isfinite(BitsToDouble(c.dtype, c.via_float))) continue;
    const relugrad_dtype d = Public(c.dtype);
    relugrad_options o;
    ASSERT_EQ(relugrad_options_init(&o, RELUGRAD_PRESET_TORCH), RELUGRAD_OK);
    o.threshold = c.value;
    o.threshold_rounding = RELUGRAD_THRESHOLD_DTYPE;
    const uint64_t dy = c.dtype == Dtype::kBF16 ? 0xc040 : 0xc200;  // -3
    const uint64_t t = c.via_float;
    // The 16-bit neighbours of t (t is finite; +0's lower neighbour is -min subnormal).
    const uint64_t above = (t & 0x8000) ? t - 1 : t + 1;
    const uint64_t below = t == 0 ? 0x8001 : (t & 0x8000) ? t + 1 : t - 1;
    const std::string what = "t=" + std::to_string(c.value) + " " + Hex(t);
    ExpectEveryPath(d, o, dy, t, 0, what + " s == t");
    ExpectEveryPath(d, o, dy, above, dy, what + " s above t");
    ExpectEveryPath(d, o, dy, below, 0, what + " s below t");
    EXPECT_FALSE(MaskBit(d, o, t)) << what;
    EXPECT_TRUE(MaskBit(d, o, above)) << what;
  }
}

TEST(ThresholdRoundingDtype, IssueReproducerGivesPytorchBits) {
  // PyTorch 1.13.1 aten::threshold_backward(dy = 1.0, s = 1.0078125,
  // t = 1 + 2^-8 + 2^-40) on bf16 gives 1.0 (0x3f80): t becomes 1.0.
  relugrad_options o;
  ASSERT_EQ(relugrad_options_init(&o, RELUGRAD_PRESET_TORCH), RELUGRAD_OK);
  o.threshold = 1 + 0x1p-8 + kNudge;
  o.threshold_rounding = RELUGRAD_THRESHOLD_DTYPE;
  ExpectEveryPath(RELUGRAD_BF16, o, 0x3f80, 0x3f81, 0x3f80, "bf16 reproducer");
  o.threshold = 1 + 0x1p-11 + kNudge;
  ExpectEveryPath(RELUGRAD_F16, o, 0x3c00, 0x3c01, 0x3c00, "f16 reproducer");
  // The default (compute) rounding keeps t in f32 (1 + 2^-8): s is above it.
  o.threshold_rounding = RELUGRAD_THRESHOLD_COMPUTE;
  o.threshold = 1 + 0x1p-8 + kNudge;
  ExpectEveryPath(RELUGRAD_BF16, o, 0x3f80, 0x3f81, 0x3f80, "bf16 compute rounding");
}

TEST(ClipBounds, RoundThroughFloatAsTorchClamp) {
  // torch 2.15: torch.clamp(bf16 1.0078125, max=1 + 2^-8 + 2^-40) is 1.0
  // (0x3f80); clamp(f16 1.0009765625, max=1 + 2^-11 + 2^-40) is 1.0.
  relugrad_options o;
  ASSERT_EQ(relugrad_options_init(&o, RELUGRAD_PRESET_TORCH), RELUGRAD_OK);
  o.clip = 1;
  o.clip_lo = -10.0;
  o.clip_hi = 1 + 0x1p-8 + kNudge;
  ExpectEveryPath(RELUGRAD_BF16, o, 0x3f81, 0x3f80, 0x3f80, "bf16 clip_hi");
  o.clip_hi = 1 + 0x1p-11 + kNudge;
  ExpectEveryPath(RELUGRAD_F16, o, 0x3c01, 0x3c00, 0x3c00, "f16 clip_hi");
  // A lower bound that two roundings move up: dy = 1.0078125 is below 1.015625.
  o.clip_lo = 1 + 3 * 0x1p-8 - kNudge;
  o.clip_hi = 10.0;
  ExpectEveryPath(RELUGRAD_BF16, o, 0x3f81, 0x3f80, 0x3f82, "bf16 clip_lo");
}

}  // namespace
}  // namespace testing
}  // namespace relugrad
