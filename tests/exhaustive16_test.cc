// f16 and bf16: every one of the 65536 gate bit patterns against a set of
// dy values, for every configuration, on every attainable SIMD target.
#include <gtest/gtest.h>

#include <string>

#include "relugrad/relugrad.h"
#include "test_support.h"

namespace relugrad {
namespace testing {
namespace {

class Exhaustive16 : public ::testing::TestWithParam<std::string> {};

TEST_P(Exhaustive16, EveryGatePattern) {
  ScopedIsa isa(GetParam());
  ASSERT_EQ(std::string(relugrad_isa_selected()), GetParam());
  for (relugrad_dtype d : {RELUGRAD_F16, RELUGRAD_BF16}) {
    // dy values: special ones plus a few ordinary ones, cycled against the gates.
    const auto dy_values = SpecialValues(d);
    std::vector<uint64_t> s_bits(65536), dy_bits(65536);
    for (size_t round = 0; round < 4; ++round) {
      for (uint64_t g = 0; g < 65536; ++g) {
        s_bits[g] = g;
        dy_bits[g] = dy_values[(g * 7 + round * 13) % dy_values.size()];
      }
      const auto dy = Pack(d, dy_bits), s = Pack(d, s_bits);
      for (const Config& c : AllConfigs()) {
        const auto expected = Reference(d, dy, s, c.options);
        std::vector<unsigned char> dx(dy.size());
        ASSERT_EQ(relugrad_relu_grad(d, 65536, dy.data(), s.data(), dx.data(), &c.options),
                  RELUGRAD_OK);
        ASSERT_EQ(CompareBits(d, expected.data(), dx.data(), 65536, dy.data(), s.data()), "")
            << c.name << " round " << round;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Targets, Exhaustive16, ::testing::ValuesIn(TargetsToTest()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
}  // namespace testing
}  // namespace relugrad
