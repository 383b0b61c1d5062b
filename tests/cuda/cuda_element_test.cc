// The CUDA kernels' element rule (src/cuda/element.h) compiled for the host
// and compared bit for bit with the scalar reference. This runs everywhere,
// GPU or not: the kernels execute exactly these functions (with __fmul_rn /
// __dmul_rn in place of the host's IEEE multiply), so a wrong rule is caught
// here before any device is involved. The device suite (cuda_backend_test)
// then checks launch, vector/scalar split, alignment and streams.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/float_convert.h"
#include "core/reference.h"
#include "core/semantics.h"
#include "cuda/device_params.h"
#include "cuda/element.h"
#include "relugrad/relugrad.h"
#include "test_support.h"

namespace relugrad {
namespace testing {
namespace {

using cuda::DeviceParams;
using cuda::Mode;

Rules Resolve(const relugrad_options& o) {
  Rules sem;
  EXPECT_EQ(ResolveOptions(&o, &sem), RELUGRAD_OK) << relugrad_last_error();
  return sem;
}

template <Dtype D>
uint64_t RunElement(Mode mode, const DeviceParams& p, uint64_t dy, uint64_t s) {
  using Bits = typename DtypeTraits<D>::Bits;
  const Bits a = static_cast<Bits>(dy), b = static_cast<Bits>(s);
  switch (mode) {
    case Mode::kSelectNanOpen:
      return cuda::Element<D, Mode::kSelectNanOpen>(p, a, b);
    case Mode::kSelectNanClosed:
      return cuda::Element<D, Mode::kSelectNanClosed>(p, a, b);
    case Mode::kGeneral:
      return cuda::Element<D, Mode::kGeneral>(p, a, b);
  }
  return ~uint64_t{0};
}

uint64_t DeviceRule(Dtype d, Mode mode, const DeviceParams& p, uint64_t dy, uint64_t s) {
  switch (d) {
    case Dtype::kF32:
      return RunElement<Dtype::kF32>(mode, p, dy, s);
    case Dtype::kF16:
      return RunElement<Dtype::kF16>(mode, p, dy, s);
    case Dtype::kBF16:
      return RunElement<Dtype::kBF16>(mode, p, dy, s);
    case Dtype::kF64:
      return RunElement<Dtype::kF64>(mode, p, dy, s);
  }
  return ~uint64_t{0};
}

// Every mode the rule can take (the kernels pick ModeFor(params)); the
// general mode must agree with the select modes wherever those apply.
void ExpectSameAsReference(relugrad_dtype dt, const relugrad_options& o,
                           const std::vector<uint64_t>& dy, const std::vector<uint64_t>& s,
                           const std::string& what) {
  const Dtype d = ToDtype(dt);
  const Rules sem = Resolve(o);
  const KernelParams kp = MakeKernelParams(d, sem);
  const DeviceParams p = cuda::ToDeviceParams(kp);
  const Mode mode = cuda::ModeFor(kp);
  for (size_t i = 0; i < dy.size(); ++i) {
    const uint64_t expected = ReferenceElement(d, dy[i], s[i], sem);
    const uint64_t got = DeviceRule(d, mode, p, dy[i], s[i]);
    ASSERT_EQ(Hex(expected), Hex(got))
        << what << " " << relugrad_dtype_name(dt) << " dy " << Hex(dy[i]) << " s " << Hex(s[i])
        << " mode " << static_cast<int>(mode);
    if (mode != Mode::kGeneral) {
      ASSERT_EQ(Hex(expected), Hex(DeviceRule(d, Mode::kGeneral, p, dy[i], s[i])))
          << what << " general mode, dy " << Hex(dy[i]) << " s " << Hex(s[i]);
    }
  }
}

TEST(CudaElementTest, SpecialValueCrossProductEveryConfig) {
  for (relugrad_dtype d : kAllDtypes) {
    const auto [dy, s] = SpecialValuePairs(d);
    for (const Config& c : GradConfigs()) ExpectSameAsReference(d, c.options, dy, s, c.name);
  }
}

TEST(CudaElementTest, RandomBitsEveryConfig) {
  for (relugrad_dtype d : kAllDtypes) {
    const auto dy = RandomBits(d, 20000, 99), s = RandomBits(d, 20000, 100);
    for (const Config& c : GradConfigs()) ExpectSameAsReference(d, c.options, dy, s, c.name);
  }
}

// The closed-gate multiply for every 16-bit dy (the only place the kernels
// round), with alphas that overflow, underflow into f32 subnormals (with and
// without FTZ/DAZ) and hit ties, and with every gate closed (s = -inf).
TEST(CudaElementTest, Exhaustive16BitAlpha) {
  for (relugrad_dtype d : {RELUGRAD_F16, RELUGRAD_BF16}) {
    const uint64_t ninf = d == RELUGRAD_F16 ? 0xfc00 : 0xff80;
    std::vector<uint64_t> dy(65536), s(65536, ninf);
    for (uint64_t i = 0; i < 65536; ++i) dy[i] = i;
    for (double alpha : {0.25, -3.1, 1e-30, -0.5, 3.0, 1e-7, 65504.0, 1.0 / 3.0, 1e30}) {
      for (relugrad_denormals den : {RELUGRAD_DENORMALS_IEEE, RELUGRAD_DENORMALS_FTZ_DAZ}) {
        for (relugrad_combine comb : {RELUGRAD_COMBINE_SELECT, RELUGRAD_COMBINE_MULTIPLY}) {
          relugrad_options o;
          relugrad_options_init(&o, RELUGRAD_PRESET_ONEDNN);
          o.alpha = alpha;
          o.denormals = den;
          o.combine = comb;
          ExpectSameAsReference(d, o, dy, s, "alpha " + std::to_string(alpha));
        }
      }
    }
  }
}

// Exhaustive 16-bit open-lane rules (multiply + FTZ + clip), s = +1.
TEST(CudaElementTest, Exhaustive16BitOpenLanes) {
  for (relugrad_dtype d : {RELUGRAD_F16, RELUGRAD_BF16}) {
    const uint64_t one = d == RELUGRAD_F16 ? 0x3c00 : 0x3f80;
    std::vector<uint64_t> dy(65536), s(65536, one);
    for (uint64_t i = 0; i < 65536; ++i) dy[i] = i;
    for (const Config& c : GradConfigs()) ExpectSameAsReference(d, c.options, dy, s, c.name);
  }
}

// Exhaustive 16-bit gates for every config (dy = a fixed NaN-free value).
TEST(CudaElementTest, Exhaustive16BitGates) {
  for (relugrad_dtype d : {RELUGRAD_F16, RELUGRAD_BF16}) {
    const uint64_t dyv = d == RELUGRAD_F16 ? 0xc500 : 0xc0a0;
    std::vector<uint64_t> dy(65536, dyv), s(65536);
    for (uint64_t i = 0; i < 65536; ++i) s[i] = i;
    for (const Config& c : GradConfigs()) ExpectSameAsReference(d, c.options, dy, s, c.name);
  }
}

TEST(CudaElementTest, F16WideningIsExact) {
  for (uint32_t h = 0; h < 65536; ++h) {
    if ((h & 0x7fff) > 0x7c00) continue;  // NaN: never widened by the kernels
    const double expected = BitsToDouble(Dtype::kF16, h);
    const float got = cuda::FloatFromBits(cuda::F16ToF32Bits(static_cast<uint16_t>(h)));
    ASSERT_EQ(static_cast<double>(got), expected) << Hex(h);
    ASSERT_EQ(std::signbit(got), std::signbit(expected)) << Hex(h);
  }
}

// f32 -> 16-bit rounding against the reference's DoubleToBitsRne: every
// 16-bit value, the midpoints to its neighbours and one f32 ulp either side
// of each (the tie and near-tie cases), then random f32 patterns.
void CheckNarrowing(Dtype d) {
  auto narrow = [d](uint32_t f) {
    return d == Dtype::kF16 ? cuda::F32BitsToF16Rne(f) : cuda::F32BitsToBF16Rne(f);
  };
  auto check = [&](float v) {
    if (std::isnan(v)) return;
    const uint32_t f = cuda::BitsFromFloat(v);
    ASSERT_EQ(Hex(DoubleToBitsRne(d, v)), Hex(narrow(f))) << "f32 " << Hex(f);
  };
  const uint32_t inf = d == Dtype::kF16 ? 0x7c00 : 0x7f80;
  for (uint32_t h = 0; h < inf; ++h) {
    for (uint32_t sign : {0u, 0x8000u}) {
      const double a = BitsToDouble(d, h | sign);
      const double b = h + 1 == inf ? std::copysign(d == Dtype::kF16 ? 65536.0 : 0x1p128, a)
                                    : BitsToDouble(d, (h + 1) | sign);
      const float mid = static_cast<float>((a + b) / 2);  // exact for these formats' midpoints
      ASSERT_NO_FATAL_FAILURE(check(static_cast<float>(a)));
      ASSERT_NO_FATAL_FAILURE(check(mid));
      ASSERT_NO_FATAL_FAILURE(check(std::nextafter(mid, 0.0f)));
      ASSERT_NO_FATAL_FAILURE(check(std::nextafter(mid, 2.0f * mid)));
    }
  }
  std::mt19937 rng(7);
  for (int i = 0; i < 1000000; ++i) ASSERT_NO_FATAL_FAILURE(check(cuda::FloatFromBits(rng())));
  for (float v : {0.0f, -0.0f, 1e-45f, -1e-45f, 1e-38f, 3e38f, -3e38f, INFINITY, -INFINITY})
    ASSERT_NO_FATAL_FAILURE(check(v));
}

TEST(CudaElementTest, F32ToF16RoundsToNearestEven) { CheckNarrowing(Dtype::kF16); }
TEST(CudaElementTest, F32ToBF16RoundsToNearestEven) { CheckNarrowing(Dtype::kBF16); }

TEST(CudaElementTest, DeviceParamsCarryKernelParams) {
  for (relugrad_dtype dt : kAllDtypes) {
    for (const Config& c : GradConfigs()) {
      const KernelParams kp = MakeKernelParams(ToDtype(dt), Resolve(c.options));
      const DeviceParams p = cuda::ToDeviceParams(kp);
      EXPECT_EQ(p.gate_key_lo_minus_1, kp.gate_key_lo - 1) << c.name;
      EXPECT_EQ(p.gate_nan_open != 0, kp.gate_nan_open) << c.name;
      EXPECT_EQ(p.open_multiply != 0, kp.open_multiply) << c.name;
      EXPECT_EQ(p.flush_subnormals != 0, kp.flush_subnormals) << c.name;
      EXPECT_EQ(p.clip != 0, kp.clip) << c.name;
      EXPECT_EQ(p.closed, static_cast<uint8_t>(kp.closed)) << c.name;
      EXPECT_EQ(cuda::ModeFor(kp) == Mode::kGeneral, !kp.IsPlainSelect()) << c.name;
    }
  }
}

// alpha beyond FLT_MAX rounds to inf in the f32 compute type, so a zero dy
// on a closed lane computes 0*inf = NaN, which the kernels write as the
// default NaN of the data type (IEEE: a NaN stays NaN when narrowed), as
// the reference does for every dtype.
TEST(CudaElementTest, AlphaOverflowTimesZeroIsDefaultNan) {
  relugrad_options o;
  relugrad_options_init(&o, RELUGRAD_PRESET_ONEDNN);
  o.alpha = 1e39;
  const Rules sem = Resolve(o);
  auto rule = [&](Dtype d, uint64_t dy, uint64_t s) {
    const KernelParams kp = MakeKernelParams(d, sem);
    return DeviceRule(d, cuda::ModeFor(kp), cuda::ToDeviceParams(kp), dy, s);
  };
  EXPECT_EQ(Hex(rule(Dtype::kF32, 0, 0xff800000u)), Hex(DefaultNan<Dtype::kF32>()));
  EXPECT_EQ(Hex(rule(Dtype::kF32, 0, 0xff800000u)),
            Hex(ReferenceElement(Dtype::kF32, 0, 0xff800000u, sem)));
  EXPECT_EQ(Hex(rule(Dtype::kF16, 0x8000, 0xfc00)), Hex(DefaultNan<Dtype::kF16>()));
  EXPECT_EQ(Hex(rule(Dtype::kF16, 0x8000, 0xfc00)),
            Hex(ReferenceElement(Dtype::kF16, 0x8000, 0xfc00, sem)));
  EXPECT_EQ(Hex(rule(Dtype::kBF16, 0, 0xff80)), Hex(DefaultNan<Dtype::kBF16>()));
  EXPECT_EQ(Hex(rule(Dtype::kBF16, 0, 0xff80)),
            Hex(ReferenceElement(Dtype::kBF16, 0, 0xff80, sem)));
  EXPECT_EQ(Hex(rule(Dtype::kBF16, 0x3f80, 0xff80)), Hex(0x7f80u));  // 1 * inf = inf
}

}  // namespace
}  // namespace testing
}  // namespace relugrad
