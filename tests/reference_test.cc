// The oracle itself, checked against expectations written by hand from the
// frameworks' documented and measured behaviour (docs/semantics.md, "Presets"),
// so that the kernel suites are not just comparing the code with itself.
#include <gtest/gtest.h>

#include <cstring>

#include "relugrad/relugrad.h"
#include "test_support.h"

namespace relugrad {
namespace testing {
namespace {

uint64_t One(relugrad_dtype d, const relugrad_options& o, uint64_t dy, uint64_t s) {
  const auto dyv = Pack(d, {dy}), sv = Pack(d, {s});
  return BitsAt(d, Reference(d, dyv, sv, o).data(), 0);
}

relugrad_options Preset(relugrad_preset p) {
  relugrad_options o;
  EXPECT_EQ(relugrad_options_init(&o, p), RELUGRAD_OK);
  return o;
}

// f32 bit patterns used below.
constexpr uint64_t kPos0 = 0x00000000, kNeg0 = 0x80000000;
constexpr uint64_t kOne = 0x3f800000, kMinus3 = 0xc0400000, kTwo = 0x40000000;
constexpr uint64_t kInf = 0x7f800000, kNegInf = 0xff800000;
constexpr uint64_t kQNaN = 0x7fc00000, kQNaNPayload = 0x7fc00123, kNegQNaN = 0xffc00007;
constexpr uint64_t kSNaN = 0x7f800001, kNegSNaN = 0xff800042;
constexpr uint64_t kSub = 0x00000001, kNegSub = 0x80000005;
constexpr uint64_t kDefaultNaN = 0xffc00000;  // x86 "indefinite"

TEST(ReferenceF32, TorchIsSelectWithZeroIfLessOrEqual) {
  const auto o = Preset(RELUGRAD_PRESET_TORCH);
  const auto d = RELUGRAD_F32;
  EXPECT_EQ(One(d, o, kMinus3, kOne), kMinus3);  // open: dy bits
  EXPECT_EQ(One(d, o, kMinus3, kPos0), kPos0);   // s == 0 closes, +0
  EXPECT_EQ(One(d, o, kMinus3, kNeg0), kPos0);   // -0 == 0 closes
  EXPECT_EQ(One(d, o, kInf, kMinus3), kPos0);    // closed inf -> +0
  EXPECT_EQ(One(d, o, kSNaN, kMinus3), kPos0);   // closed NaN -> +0
  EXPECT_EQ(One(d, o, kSNaN, kOne), kSNaN);      // open sNaN copied verbatim
  EXPECT_EQ(One(d, o, kNegQNaN, kTwo), kNegQNaN);
  EXPECT_EQ(One(d, o, kMinus3, kQNaN), kMinus3);  // NaN gate is open
  EXPECT_EQ(One(d, o, kMinus3, kNegSNaN), kMinus3);
  EXPECT_EQ(One(d, o, kMinus3, kSub), kMinus3);  // subnormal > 0 (IEEE)
  EXPECT_EQ(One(d, o, kMinus3, kNegSub), kPos0);
  EXPECT_EQ(One(d, o, kSub, kInf), kSub);    // subnormal dy passes
  EXPECT_EQ(One(d, o, kNeg0, kOne), kNeg0);  // -0 dy passes as -0
}

TEST(ReferenceF32, TensorflowIsMultiplyWithPassIfGreaterAndFtz) {
  const auto o = Preset(RELUGRAD_PRESET_TENSORFLOW);
  const auto d = RELUGRAD_F32;
  EXPECT_EQ(One(d, o, kMinus3, kOne), kMinus3);
  EXPECT_EQ(One(d, o, kMinus3, kPos0), kNeg0);  // -3 * 0 = -0
  EXPECT_EQ(One(d, o, kTwo, kNegInf), kPos0);
  EXPECT_EQ(One(d, o, kInf, kMinus3), kDefaultNaN);  // inf * 0
  EXPECT_EQ(One(d, o, kNegInf, kMinus3), kDefaultNaN);
  EXPECT_EQ(One(d, o, kSNaN, kMinus3), kSNaN | 0x00400000);  // NaN * 0 quiets
  EXPECT_EQ(One(d, o, kQNaNPayload, kPos0), kQNaNPayload);
  EXPECT_EQ(One(d, o, kSNaN, kOne), kSNaN | 0x00400000);  // NaN * 1 quiets
  EXPECT_EQ(One(d, o, kMinus3, kQNaN), kNeg0);            // NaN gate closed
  EXPECT_EQ(One(d, o, kInf, kQNaN), kDefaultNaN);
  EXPECT_EQ(One(d, o, kMinus3, kSub), kNeg0);  // DAZ: subnormal gate is 0
  EXPECT_EQ(One(d, o, kSub, kOne), kPos0);     // FTZ: subnormal dy * 1 -> 0
  EXPECT_EQ(One(d, o, kNegSub, kOne), kNeg0);
}

TEST(ReferenceF32, JaxIsSelectWithPassIfGreaterAndDazGate) {
  const auto o = Preset(RELUGRAD_PRESET_JAX);
  const auto d = RELUGRAD_F32;
  EXPECT_EQ(One(d, o, kMinus3, kOne), kMinus3);
  EXPECT_EQ(One(d, o, kMinus3, kPos0), kPos0);
  EXPECT_EQ(One(d, o, kMinus3, kQNaN), kPos0);  // NaN gate closed, +0
  EXPECT_EQ(One(d, o, kInf, kMinus3), kPos0);
  EXPECT_EQ(One(d, o, kSNaN, kOne), kSNaN);  // bits copied
  // Measured on JAX 0.10.2 CPU (docs/semantics.md): XLA compares a subnormal
  // gate as 0, but the selected dy bits are never flushed.
  EXPECT_EQ(One(d, o, kMinus3, kSub), kPos0);
  EXPECT_EQ(One(d, o, kSub, kOne), kSub);
}

TEST(ReferenceF32, OnednnMultipliesByAlphaWithZeroIfLessOrEqual) {
  auto o = Preset(RELUGRAD_PRESET_ONEDNN);
  const auto d = RELUGRAD_F32;
  EXPECT_EQ(One(d, o, kMinus3, kNegInf), kNeg0);
  // Measured on oneDNN 2.6.3's JIT (tests/onednn): a NaN gate passes dy.
  EXPECT_EQ(One(d, o, kMinus3, kQNaN), kMinus3);
  EXPECT_EQ(One(d, o, kSNaN, kQNaN), kSNaN | 0x00400000);  // dy * 1 quiets
  o.alpha = 0.5;
  EXPECT_EQ(One(d, o, kMinus3, kNegInf), 0xbfc00000u);  // -1.5
  EXPECT_EQ(One(d, o, kInf, kNeg0), kInf);              // inf * 0.5
  EXPECT_EQ(One(d, o, kNegSNaN, kNeg0), kNegSNaN | 0x00400000);
  EXPECT_EQ(One(d, o, kTwo, kTwo), kTwo);          // open: dy * 1
  o.alpha = 0.1;                                   // rounded to float: 0x3dcccccd
  EXPECT_EQ(One(d, o, kTwo, kNeg0), 0x3e4ccccdu);  // 2 * 0.1f
}

TEST(ReferenceF32, MindsporeIsSelectWithPassIfGreaterIeee) {
  const auto o = Preset(RELUGRAD_PRESET_MINDSPORE);
  const auto d = RELUGRAD_F32;
  EXPECT_EQ(One(d, o, kMinus3, kQNaN), kPos0);   // NaN gate closed
  EXPECT_EQ(One(d, o, kMinus3, kSub), kMinus3);  // subnormal gate > 0 (IEEE)
  EXPECT_EQ(One(d, o, kSNaN, kOne), kSNaN);      // bits copied
  EXPECT_EQ(One(d, o, kInf, kNeg0), kPos0);
}

TEST(ReferenceF32, ThresholdsCompareInTheComputeType) {
  auto o = Preset(RELUGRAD_PRESET_TORCH);
  o.threshold = 0.75;
  const auto d = RELUGRAD_F32;
  EXPECT_EQ(One(d, o, kMinus3, 0x3f400000), kPos0);    // s == 0.75: closed
  EXPECT_EQ(One(d, o, kMinus3, 0x3f400001), kMinus3);  // next float: open
  o.threshold = -1.5;
  EXPECT_EQ(One(d, o, kMinus3, 0xbfc00000), kPos0);    // s == -1.5
  EXPECT_EQ(One(d, o, kMinus3, 0xbfbfffff), kMinus3);  // just above -1.5
  EXPECT_EQ(One(d, o, kMinus3, kNeg0), kMinus3);
}

TEST(ReferenceBF16, ThresholdRoundingModes) {
  // PyTorch 1.13 rounded t = 0.1 to bf16 (0x3dcd = 0.10009765625) before
  // comparing; with t kept in f32 the same gate is above 0.1 and opens.
  auto o = Preset(RELUGRAD_PRESET_TORCH);
  o.threshold = 0.1;
  const auto d = RELUGRAD_BF16;
  const uint64_t dy = 0xc040;  // -3
  EXPECT_EQ(One(d, o, dy, 0x3dcd), dy);
  EXPECT_EQ(One(d, o, dy, 0x3dcc), 0u);  // 0.0999755859375 <= 0.1
  o.threshold_rounding = RELUGRAD_THRESHOLD_DTYPE;
  EXPECT_EQ(One(d, o, dy, 0x3dcd), 0u);
  EXPECT_EQ(One(d, o, dy, 0x3dce), dy);
}

TEST(ReferenceF16, SpecialValuesAndTensorflowRules) {
  const auto d = RELUGRAD_F16;
  auto o = Preset(RELUGRAD_PRESET_TENSORFLOW);
  EXPECT_EQ(One(d, o, 0xc200, 0x0000), 0x8000u);  // -3 * 0 = -0
  EXPECT_EQ(One(d, o, 0x7c00, 0x8000), 0xfe00u);  // inf * 0: default NaN
  EXPECT_EQ(One(d, o, 0x7c01, 0x3c00), 0x7e01u);  // sNaN * 1 quiets
  EXPECT_EQ(One(d, o, 0x0001, 0x3c00), 0x0001u);  // f16 subnormals are f32 normals: no flush
  EXPECT_EQ(One(d, o, 0xc200, 0x0001), 0xc200u);  // ... nor in the gate
  o = Preset(RELUGRAD_PRESET_TORCH);
  EXPECT_EQ(One(d, o, 0xc200, 0x7e00), 0xc200u);  // NaN gate open
  EXPECT_EQ(One(d, o, 0xc200, 0x8001), 0x0000u);
}

TEST(ReferenceBF16, FlushesSubnormalsUnderTensorflow) {
  const auto d = RELUGRAD_BF16;
  const auto o = Preset(RELUGRAD_PRESET_TENSORFLOW);
  EXPECT_EQ(One(d, o, 0xc040, 0x0001), 0x8000u);  // subnormal gate counts as 0
  EXPECT_EQ(One(d, o, 0x8001, 0x3f80), 0x8000u);  // subnormal dy flushed, sign kept
  EXPECT_EQ(One(d, o, 0x7f81, 0x3f80), 0x7fc1u);  // sNaN quieted
}

TEST(ReferenceF16, AlphaRoundsToNearestEven) {
  auto o = Preset(RELUGRAD_PRESET_ONEDNN);
  o.alpha = 0.1;  // 0.1f = 0x3dcccccd
  const auto d = RELUGRAD_F16;
  // dy = 1 -> 0.1f rounds to f16 0x2e66 (0.0999755859375).
  EXPECT_EQ(One(d, o, 0x3c00, 0xbc00), 0x2e66u);
  // dy = 65504 * 0.1f = 6550.4 -> 0x6e66.
  EXPECT_EQ(One(d, o, 0x7bff, 0xbc00), 0x6e66u);
  o.alpha = 3.0;  // 65504 * 3 overflows to inf
  EXPECT_EQ(One(d, o, 0x7bff, 0xbc00), 0x7c00u);
}

TEST(Reference16, AlphaBeyondFloatRangeGivesDefaultNanForZeroDy) {
  // alpha = 1e39 rounds to +inf in f32: a closed zero dy gives 0 * inf, the
  // default NaN (not a bit pattern made up by rounding NaN to 16 bits).
  auto o = Preset(RELUGRAD_PRESET_ONEDNN);
  o.alpha = 1e39;
  EXPECT_EQ(One(RELUGRAD_F16, o, 0x0000, 0xbc00), 0xfe00u);
  EXPECT_EQ(One(RELUGRAD_BF16, o, 0x8000, 0xbf80), 0xffc0u);
  EXPECT_EQ(One(RELUGRAD_F32, o, kPos0, kNegInf), kDefaultNaN);
  EXPECT_EQ(One(RELUGRAD_BF16, o, 0x3f80, 0xbf80), 0x7f80u);  // 1 * inf
}

TEST(ReferenceF64, TorchAndTensorflow) {
  const auto d = RELUGRAD_F64;
  const uint64_t minus3 = 0xc008000000000000ull, one = 0x3ff0000000000000ull;
  const uint64_t sub = 1, inf = 0x7ff0000000000000ull;
  auto o = Preset(RELUGRAD_PRESET_TORCH);
  EXPECT_EQ(One(d, o, minus3, one), minus3);
  EXPECT_EQ(One(d, o, minus3, sub), minus3);
  EXPECT_EQ(One(d, o, minus3, 0), 0u);
  o = Preset(RELUGRAD_PRESET_TENSORFLOW);
  EXPECT_EQ(One(d, o, inf, 0), 0xfff8000000000000ull);
  EXPECT_EQ(One(d, o, minus3, sub), 0x8000000000000000ull);
}

TEST(ReferenceF32, ClipClampsPassedGradientsOnly) {
  auto o = Preset(RELUGRAD_PRESET_TORCH);
  o.clip = 1;
  o.clip_lo = -1.0;
  o.clip_hi = 2.0;
  const auto d = RELUGRAD_F32;
  EXPECT_EQ(One(d, o, kMinus3, kOne), 0xbf800000u);        // -3 -> -1
  EXPECT_EQ(One(d, o, kInf, kOne), kTwo);                  // inf -> 2
  EXPECT_EQ(One(d, o, kQNaNPayload, kOne), kQNaNPayload);  // NaN stays
  EXPECT_EQ(One(d, o, kMinus3, kNegInf), kPos0);           // closed: not clipped
  o.clip_lo = 0.0;
  o.clip_hi = 0.0;
  EXPECT_EQ(One(d, o, kNeg0, kOne), kNeg0);  // -0 is not below +0
  EXPECT_EQ(One(d, o, kMinus3, kOne), kPos0);
}

TEST(ReferenceF32, CannPresetsFollowTheirKernels) {
  const auto d = RELUGRAD_F32;
  // ReluGrad: dy * (s <= 0 ? 0 : 1): a NaN gate is open (LE is false), dy*1
  // quiets a signalling NaN, a closed gate gives dy*0.
  auto o = Preset(RELUGRAD_PRESET_CANN_RELUGRAD);
  EXPECT_EQ(One(d, o, kMinus3, kQNaN), kMinus3);
  EXPECT_EQ(One(d, o, kSNaN, kOne), kSNaN | 0x00400000u);
  EXPECT_EQ(One(d, o, kMinus3, kNeg0), kNeg0);
  EXPECT_EQ(One(d, o, kInf, kNegInf), kDefaultNaN);
  // ReluGradV2: mask (x > 0) ? dy : +0.
  o = Preset(RELUGRAD_PRESET_CANN_RELUGRAD_V2);
  EXPECT_EQ(One(d, o, kMinus3, kQNaN), kPos0);
  EXPECT_EQ(One(d, o, kSNaN, kOne), kSNaN);
  EXPECT_EQ(One(d, o, kInf, kNeg0), kPos0);
  // ThresholdGradV2D: s <= t ? 0 : dy, t in f32.
  o = Preset(RELUGRAD_PRESET_CANN_THRESHOLD_GRAD);
  o.threshold = 0.75;
  EXPECT_EQ(One(d, o, kMinus3, 0x3f400000), kPos0);
  EXPECT_EQ(One(d, o, kMinus3, 0x3f400001), kMinus3);
  EXPECT_EQ(One(d, o, kNegQNaN, kQNaN), kNegQNaN);
  // Legacy TBE ReluGradV2, f32 high-performance: dy * (mask ? 1 : 0).
  o = Preset(RELUGRAD_PRESET_CANN_RELUGRAD_V2_HP);
  EXPECT_EQ(One(d, o, kMinus3, kQNaN), kNeg0);
  EXPECT_EQ(One(d, o, kQNaNPayload, kNegInf), kQNaNPayload);
  EXPECT_EQ(One(d, o, kInf, kNeg0), kDefaultNaN);
}

TEST(ReferenceAll, TensorflowAndJaxFlushASubnormalThreshold) {
  // t subnormal in the compute type (f32; f64 for f64) compares as -0 under
  // FTZ/DAZ: s = +-0 is then not above it. torch and mindspore (IEEE) keep
  // t and open the gate. The flush applies to f16 data too: its threshold is
  // an f32 value.
  struct Case {
    relugrad_dtype d;
    double t;
    uint64_t one, pos0, neg0;
  };
  for (const Case& c : {Case{RELUGRAD_F32, -1e-40, kOne, kPos0, kNeg0},
                        Case{RELUGRAD_BF16, -1e-40, 0x3f80, 0, 0x8000},
                        Case{RELUGRAD_F16, -1e-40, 0x3c00, 0, 0x8000},
                        Case{RELUGRAD_F64, -1e-310, 0x3ff0000000000000, 0, 1ull << 63}}) {
    for (relugrad_preset p : {RELUGRAD_PRESET_TENSORFLOW, RELUGRAD_PRESET_JAX,
                              RELUGRAD_PRESET_TORCH, RELUGRAD_PRESET_MINDSPORE}) {
      auto o = Preset(p);
      o.threshold = c.t;
      const bool daz = p == RELUGRAD_PRESET_TENSORFLOW || p == RELUGRAD_PRESET_JAX;
      const uint64_t want = daz ? 0 : c.one;
      EXPECT_EQ(Hex(One(c.d, o, c.one, c.pos0)), Hex(want))
          << relugrad_preset_name(p) << " " << relugrad_dtype_name(c.d);
      EXPECT_EQ(Hex(One(c.d, o, c.one, c.neg0)), Hex(want))
          << relugrad_preset_name(p) << " " << relugrad_dtype_name(c.d);
    }
  }
}

}  // namespace
}  // namespace testing
}  // namespace relugrad
