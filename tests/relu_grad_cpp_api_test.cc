// The C++ API: typed spans, option builders, exceptions of the right kind.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "relugrad/relugrad.hpp"

namespace {

TEST(CppApi, TypedCallsAndPresets) {
  std::vector<float> dy = {1, -2, 3, -4}, x = {1, 0, -1, NAN}, dx(4);
  relugrad::relu_grad<float>(dy, x, dx);
  EXPECT_EQ(dx, (std::vector<float>{1, 0, 0, -4}));  // torch: NaN gate passes
  relugrad::relu_grad<float>(dy, x, dx, relugrad::Options(relugrad::Preset::kJax));
  EXPECT_EQ(dx[3], 0.0f);
  relugrad::relu_grad<float>(dy, x, dx, relugrad::Options::from_name("onednn").alpha(0.5));
  EXPECT_EQ(dx[2], 1.5f);
  std::vector<double> d64 = {2, -2}, s64 = {1, 1};
  relugrad::relu_grad<double>(d64, s64, d64);  // in place
  EXPECT_EQ(d64, (std::vector<double>{2, -2}));
  std::vector<relugrad::bf16> b = {{0x3f80}, {0xbf80}}, bs = {{0x3f80}, {0x0000}}, bo(2);
  relugrad::relu_grad<relugrad::bf16>(b, bs, bo);
  EXPECT_EQ(bo[0].bits, 0x3f80);
  EXPECT_EQ(bo[1].bits, 0x0000);
}

TEST(CppApi, GateMaxBoundsTheGate) {
  std::vector<float> dy = {1, 1, 1}, s = {3, 6, 7}, dx(3);
  relugrad::relu_grad<float>(dy, s, dx, relugrad::Options().gate_max(6));
  EXPECT_EQ(dx, (std::vector<float>{1, 0, 0}));
  EXPECT_THROW(relugrad::relu_grad<float>(dy, s, dx, relugrad::Options().gate_max(0)),
               relugrad::InvalidArgument);
}

TEST(CppApi, ErrorsAreTypedExceptions) {
  std::vector<float> a(4), b(3), c(4);
  EXPECT_THROW(relugrad::relu_grad<float>(a, b, c), relugrad::InvalidArgument);
  EXPECT_THROW(relugrad::Options::from_name("nope"), relugrad::InvalidArgument);
  std::vector<float> d(4);
  EXPECT_THROW(relugrad::relu_grad<float>(a, d, c, relugrad::Options().clip(1, 0)),
               relugrad::InvalidArgument);
  if (!relugrad_backend_available(RELUGRAD_BACKEND_CUDA)) {
    EXPECT_THROW(
        relugrad::relu_grad<float>(a, d, c, relugrad::Options().backend(RELUGRAD_BACKEND_CUDA)),
        relugrad::Unsupported);
  }
  try {
    relugrad::set_max_isa("bogus");
    FAIL() << "no exception";
  } catch (const relugrad::Error& e) {
    EXPECT_EQ(e.status(), RELUGRAD_INVALID_ARGUMENT);
  }
}

TEST(CppApi, IsaListingAndDefaultSelection) {
  const auto isas = relugrad::isa_available();
  ASSERT_FALSE(isas.empty());
  // The default is the best target unless build info names a default cap
  // (AVX2 on AMD Zen 4), which must then be what is selected.
  const std::string info = relugrad_build_info();
  const bool capped = info.find("simd_default_cap: none") == std::string::npos;
  ASSERT_NE(info.find("simd_default_cap: "), std::string::npos) << info;
  relugrad::set_max_isa("best");
  if (!capped) {
    EXPECT_EQ(relugrad::isa_selected(), isas.front());
  } else {
    EXPECT_NE(info.find("simd_default_cap: " + relugrad::isa_selected() + " "), std::string::npos)
        << info;
    // An explicit cap at the best target still selects it.
    relugrad::set_max_isa(isas.front());
    EXPECT_EQ(relugrad::isa_selected(), isas.front());
    relugrad::set_max_isa("best");
  }
}

}  // namespace

TEST(CppApiPresets, CannPresetsMatchTheirNames) {
  struct Row {
    relugrad::Preset preset;
    const char* name;
  };
  for (const Row& r : {Row{relugrad::Preset::kCannRelugrad, "cann_relugrad"},
                       Row{relugrad::Preset::kCannRelugradV2, "cann_relugrad_v2"},
                       Row{relugrad::Preset::kCannThresholdGrad, "cann_threshold_grad"},
                       Row{relugrad::Preset::kCannRelugradV2Hp, "cann_relugrad_v2_hp"}}) {
    const relugrad_options a = relugrad::Options(r.preset).raw();
    const relugrad_options b = relugrad::Options::from_name(r.name).raw();
    EXPECT_EQ(std::memcmp(&a, &b, sizeof(a)), 0) << r.name;
    EXPECT_STREQ(relugrad_preset_name(static_cast<relugrad_preset>(r.preset)), r.name);
  }
  const relugrad_options v2hp = relugrad::Options(relugrad::Preset::kCannRelugradV2Hp).raw();
  EXPECT_EQ(v2hp.gate, RELUGRAD_GATE_PASS_IF_GT);
  EXPECT_EQ(v2hp.combine, RELUGRAD_COMBINE_MULTIPLY);
}
