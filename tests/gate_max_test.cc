// The upper gate bound (options.gate_max: ReLU6, hardtanh) against values
// written out by hand, not against the reference: s == t and s == h closed,
// NaN gates by the gate predicate, signed zeros at the bound, rounding-
// boundary bounds for bf16/f16 under both threshold roundings, DAZ on a
// subnormal bound; validation, the older struct_size, and the mask forward,
// which answers UNSUPPORTED. Both relugrad_relu_grad and the reference are
// held to the same expectations.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "relugrad/relugrad.h"

namespace {

static_assert(offsetof(relugrad_options, gate_max) > offsetof(relugrad_options, stores),
              "gate_max is appended: the offsets of the older fields stay as they were");

constexpr double kInf = std::numeric_limits<double>::infinity();

uint32_t F32Bits(float v) {
  uint32_t b;
  std::memcpy(&b, &v, sizeof(b));
  return b;
}

relugrad_options Options(relugrad_preset preset, double t, double h) {
  relugrad_options o;
  EXPECT_EQ(relugrad_options_init(&o, preset), RELUGRAD_OK);
  o.threshold = t;
  o.gate_max = h;
  return o;
}

// Runs dy = 2.0 (every lane) against s; expects dx = open[i] ? dy : +0.
template <typename Bits>
void ExpectGates(relugrad_dtype d, const relugrad_options& o, const std::vector<Bits>& s,
                 const std::vector<bool>& open, Bits two, const std::string& what) {
  ASSERT_EQ(s.size(), open.size());
  const std::vector<Bits> dy(s.size(), two);
  for (int reference = 0; reference < 2; ++reference) {
    std::vector<Bits> dx(s.size(), Bits{0x5A});
    const auto n = static_cast<int64_t>(s.size());
    const relugrad_status st =
        reference ? relugrad_relu_grad_reference(d, n, dy.data(), s.data(), dx.data(), &o)
                  : relugrad_relu_grad(d, n, dy.data(), s.data(), dx.data(), &o);
    ASSERT_EQ(st, RELUGRAD_OK) << relugrad_last_error();
    for (size_t i = 0; i < s.size(); ++i) {
      EXPECT_EQ(dx[i], open[i] ? two : Bits{0})
          << what << (reference ? " (reference)" : " (relu_grad)") << ": s=0x" << std::hex
          << static_cast<uint64_t>(s[i]);
    }
  }
}

const uint32_t kNan = 0x7fc00000u, kNegNan = 0xffc00001u, kSNan = 0x7f800001u;
const uint32_t kPosInf = 0x7f800000u, kNegInf = 0xff800000u;
const uint32_t kMinSub = 0x00000001u, kNegMinSub = 0x80000001u;

TEST(GateMax, Relu6F32TorchClosesBothBoundsAndPassesNan) {
  const auto o = Options(RELUGRAD_PRESET_TORCH, 0.0, 6.0);
  const std::vector<uint32_t> s = {
      F32Bits(-1.0f), 0x80000000u,       0u,      kMinSub, F32Bits(3.0f), F32Bits(6.0f) - 1,
      F32Bits(6.0f),  F32Bits(6.0f) + 1, kPosInf, kNegInf, kNan,          kNegNan,
      kSNan,          kNegMinSub};
  const std::vector<bool> open = {false, false, false, true, true, true, false,
                                  false, false, false, true, true, true, false};
  ExpectGates<uint32_t>(RELUGRAD_F32, o, s, open, F32Bits(2.0f), "torch relu6");
}

TEST(GateMax, PassIfGtClosesNanGates) {
  const auto o = Options(RELUGRAD_PRESET_MINDSPORE, 0.0, 6.0);  // pass_if_gt + select, IEEE
  const std::vector<uint32_t> s = {F32Bits(3.0f), F32Bits(6.0f), 0u, kNan, kNegNan, kSNan, kPosInf};
  const std::vector<bool> open = {true, false, false, false, false, false, false};
  ExpectGates<uint32_t>(RELUGRAD_F32, o, s, open, F32Bits(2.0f), "pass_if_gt relu6");
}

TEST(GateMax, PlusInfinityIsNoBoundAndKeepsInfinityOpen) {
  const auto o = Options(RELUGRAD_PRESET_TORCH, 0.0, kInf);
  const std::vector<uint32_t> s = {kPosInf, F32Bits(3.4e38f), F32Bits(6.0f)};
  ExpectGates<uint32_t>(RELUGRAD_F32, o, s, {true, true, true}, F32Bits(2.0f), "no bound");
  // A finite bound beyond f32 rounds to +inf in f32 and closes s = +inf.
  const auto beyond = Options(RELUGRAD_PRESET_TORCH, 0.0, 1e39);
  ExpectGates<uint32_t>(RELUGRAD_F32, beyond, s, {false, true, true}, F32Bits(2.0f), "1e39");
}

TEST(GateMax, SignedZeroBoundClosesBothZeros) {
  for (double h : {0.0, -0.0}) {
    const auto o = Options(RELUGRAD_PRESET_TORCH, -1.0, h);
    const std::vector<uint32_t> s = {0u,      0x80000000u,    kNegMinSub,
                                     kMinSub, F32Bits(-0.5f), F32Bits(-1.0f)};
    ExpectGates<uint32_t>(RELUGRAD_F32, o, s, {false, false, true, false, true, false},
                          F32Bits(2.0f), "h=" + std::to_string(h));
  }
}

TEST(GateMax, SubnormalBoundUnderIeeeAndDaz) {
  auto o = Options(RELUGRAD_PRESET_TORCH, -1.0, 1e-40);  // f32 subnormal
  const std::vector<uint32_t> s = {0u, kMinSub, 0x000116c2u /* 1e-40 rounded */, F32Bits(1e-30f)};
  ExpectGates<uint32_t>(RELUGRAD_F32, o, s, {true, true, false, false}, F32Bits(2.0f), "ieee");
  o.denormals = RELUGRAD_DENORMALS_FTZ_DAZ;  // the bound flushes to 0: +0 and subnormals close
  ExpectGates<uint32_t>(RELUGRAD_F32, o, s, {false, false, false, false}, F32Bits(2.0f), "daz");
}

// 1 + 2^-8 + 2^-40: f32 keeps 1 + 2^-8, a bf16 tie that rounds to even, 1.0.
TEST(GateMax, Bf16RoundingBoundaryBound) {
  auto o = Options(RELUGRAD_PRESET_TORCH, -1.0, 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40));
  const std::vector<uint16_t> s = {0x3f80 /* 1.0 */, 0x3f81 /* 1 + 2^-7 */, 0x3f7f};
  const uint16_t two = 0x4000;
  ExpectGates<uint16_t>(RELUGRAD_BF16, o, s, {true, false, true}, two, "compute rounding");
  o.threshold_rounding = RELUGRAD_THRESHOLD_DTYPE;
  ExpectGates<uint16_t>(RELUGRAD_BF16, o, s, {false, false, true}, two, "dtype rounding");
}

// 1 + 2^-11 + 2^-40: f32 keeps 1 + 2^-11, an f16 tie that rounds to even, 1.0.
TEST(GateMax, F16RoundingBoundaryBound) {
  auto o = Options(RELUGRAD_PRESET_TORCH, -1.0, 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40));
  const std::vector<uint16_t> s = {0x3c00 /* 1.0 */, 0x3c01 /* 1 + 2^-10 */, 0x3bff, 0x7e00};
  const uint16_t two = 0x4000;
  ExpectGates<uint16_t>(RELUGRAD_F16, o, s, {true, false, true, true}, two, "compute rounding");
  o.threshold_rounding = RELUGRAD_THRESHOLD_DTYPE;
  ExpectGates<uint16_t>(RELUGRAD_F16, o, s, {false, false, true, true}, two, "dtype rounding");
}

TEST(GateMax, F64ComparesTheBoundExactly) {
  const double h = 1.0 + std::ldexp(1.0, -40);
  const auto o = Options(RELUGRAD_PRESET_TORCH, 0.0, h);
  auto bits = [](double v) {
    uint64_t b;
    std::memcpy(&b, &v, sizeof(b));
    return b;
  };
  const std::vector<uint64_t> s = {bits(1.0), bits(h), bits(h) - 1, bits(h) + 1};
  ExpectGates<uint64_t>(RELUGRAD_F64, o, s, {true, false, true, false}, bits(2.0), "f64");
}

relugrad_status RunTwo(const relugrad_options& o) {
  const float dy[2] = {1.0f, 2.0f}, s[2] = {1.0f, 7.0f};
  float dx[2];
  return relugrad_relu_grad(RELUGRAD_F32, 2, dy, s, dx, &o);
}

TEST(GateMax, InvalidBoundsAreTheCallersMistake) {
  const double nan = std::nan("");
  for (double h : {nan, 0.0, -1.0, -kInf}) {
    const auto o = Options(RELUGRAD_PRESET_TORCH, 0.0, h);
    EXPECT_EQ(RunTwo(o), RELUGRAD_INVALID_ARGUMENT) << "h=" << h;
    EXPECT_NE(std::string(relugrad_last_error()).find("gate_max"), std::string::npos)
        << relugrad_last_error();
  }
  // Without a bound any threshold stays valid, +inf included.
  EXPECT_EQ(RunTwo(Options(RELUGRAD_PRESET_TORCH, kInf, kInf)), RELUGRAD_OK);
}

TEST(GateMax, AnOlderStructWithoutTheFieldHasNoBound) {
  auto o = Options(RELUGRAD_PRESET_TORCH, 0.0, 6.0);
  o.struct_size = static_cast<uint32_t>(offsetof(relugrad_options, gate_max));
  const float dy[1] = {3.0f}, s[1] = {7.0f};
  float dx[1] = {0.0f};
  ASSERT_EQ(relugrad_relu_grad(RELUGRAD_F32, 1, dy, s, dx, &o), RELUGRAD_OK);
  EXPECT_EQ(dx[0], 3.0f) << "a struct that ends before gate_max must not read it";
}

TEST(GateMax, TheAscendTwinAppliesTheBound) {
  if (!relugrad_backend_available(RELUGRAD_BACKEND_ASCEND_TWIN)) {
    GTEST_SKIP() << "the Ascend twin is not built";
  }
  // Hardtanh(-1, 1), torch preset: the gate's bit-pattern set has four
  // intervals ((-1, -0], [+0, 1), both NaN signs).
  auto o = Options(RELUGRAD_PRESET_TORCH, -1.0, 1.0);
  o.backend = RELUGRAD_BACKEND_ASCEND_TWIN;
  const float s[8] = {-1.0f, -0.5f, -0.0f, 0.0f, 0.5f, 1.0f, NAN, -NAN};
  const float dy[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  float dx[8];
  ASSERT_EQ(relugrad_relu_grad(RELUGRAD_F32, 8, dy, s, dx, &o), RELUGRAD_OK)
      << relugrad_last_error();
  const float want[8] = {0, 2, 3, 4, 5, 0, 7, 8};
  for (int i = 0; i < 8; ++i) EXPECT_EQ(dx[i], want[i]) << "s = " << s[i];
}

// CUDA and the Ascend twin apply the bound: their rules are checked against
// the reference over check::BoundedGateConfigs (tests/cuda, tests/ascend).
TEST(GateMax, TheMaskForwardAnswersUnsupported) {
  const auto o = Options(RELUGRAD_PRESET_TORCH, 0.0, 6.0);
  const float x[3] = {-1.0f, 3.0f, 7.0f};
  float y[3];
  uint8_t mask[1] = {0};
  EXPECT_EQ(relugrad_relu_forward(RELUGRAD_F32, 3, x, y, mask, &o), RELUGRAD_UNSUPPORTED);
  EXPECT_NE(std::string(relugrad_last_error()).find("gate_max"), std::string::npos)
      << relugrad_last_error();
  // The backward from a mask reads only the bits: a bound changes nothing.
  const float dy[3] = {1.0f, 2.0f, 3.0f};
  float dx[3];
  mask[0] = 0x6;
  ASSERT_EQ(relugrad_relu_grad_mask(RELUGRAD_F32, 3, dy, mask, dx, &o), RELUGRAD_OK)
      << relugrad_last_error();
  EXPECT_EQ(dx[0], 0.0f);
  EXPECT_EQ(dx[1], 2.0f);
  EXPECT_EQ(dx[2], 3.0f);
}

}  // namespace
