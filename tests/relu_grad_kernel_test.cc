// The CPU backend against the scalar reference, bit for bit, on every SIMD
// target attainable here (Highway's per-target idiom: cap dispatch at each),
// every configuration and dtype: special-value cross products, every n from
// 0 to 1100, misalignments of each pointer within 64 bytes with sentinels
// around dx, in place on dy and on s.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "relugrad/relugrad.h"
#include "support/guarded.h"
#include "test_support.h"

namespace relugrad {
namespace testing {
namespace {

class KernelTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    isa_ = std::make_unique<ScopedIsa>(GetParam());
    ASSERT_EQ(std::string(relugrad_isa_selected()), GetParam())
        << "the ISA cap did not take effect";
  }
  void TearDown() override { isa_.reset(); }
  std::unique_ptr<ScopedIsa> isa_;
};

// Runs the library on copies placed at byte offsets (multiples of the
// element size) inside guarded buffers, and checks result and guards.
void RunPlaced(relugrad_dtype d, const relugrad_options& o, const std::vector<unsigned char>& dy,
               const std::vector<unsigned char>& s, size_t dy_off, size_t s_off, size_t dx_off,
               const std::string& what) {
  const size_t n = dy.size() / relugrad_dtype_size(d);
  Guarded a(dy, dy_off), b(s, s_off), c(dy.size(), dx_off, kSentinel);
  ASSERT_EQ(relugrad_relu_grad(d, static_cast<int64_t>(n), a.data(), b.data(), c.data(), &o),
            RELUGRAD_OK)
      << relugrad_last_error();
  const auto expected = Reference(d, dy, s, o);
  const std::string diff = CompareBits(d, expected.data(), c.data(), n, dy.data(), s.data());
  ASSERT_EQ(diff, "") << what;
  ASSERT_EQ(c.CheckGuards(), "") << what;
}

TEST_P(KernelTest, SpecialValueCrossProduct) {
  for (relugrad_dtype d : kAllDtypes) {
    const auto [dy_bits, s_bits] = SpecialValuePairs(d);
    const auto dy = Pack(d, dy_bits), s = Pack(d, s_bits);
    for (const Config& c : GradConfigs()) {
      SCOPED_TRACE(c.name + " " + relugrad_dtype_name(d));
      RunPlaced(d, c.options, dy, s, 0, 0, 0, "cross product");
    }
  }
}

TEST_P(KernelTest, EveryLengthUpTo1100) {
  const uint64_t seed = 1234;
  for (relugrad_dtype d : kAllDtypes) {
    const auto dy_all = Pack(d, RandomBits(d, 1100, seed));
    const auto s_all = Pack(d, RandomBits(d, 1100, seed + 1));
    const size_t es = relugrad_dtype_size(d);
    const auto configs = AllConfigs();
    for (size_t n = 0; n <= 1100; ++n) {
      // Rotate through configurations and offsets so every n sees a
      // different alignment and rule set without a cubic sweep.
      const Config& c = configs[n % configs.size()];
      std::vector<unsigned char> dy(dy_all.begin(), dy_all.begin() + n * es);
      std::vector<unsigned char> s(s_all.begin(), s_all.begin() + n * es);
      const size_t off = (n * es) % 64 / es * es;
      RunPlaced(d, c.options, dy, s, off, (64 - off) % 64, (n * 7 * es) % 64,
                c.name + " n=" + std::to_string(n) + " seed=" + std::to_string(seed));
      if (HasFatalFailure()) return;
    }
  }
}

TEST_P(KernelTest, EveryMisalignmentOfEachPointer) {
  const uint64_t seed = 99;
  for (relugrad_dtype d : kAllDtypes) {
    const size_t es = relugrad_dtype_size(d);
    for (size_t n : {size_t{67}, size_t{1000}}) {
      const auto dy = Pack(d, RandomBits(d, n, seed));
      const auto s = Pack(d, RandomBits(d, n, seed + 7));
      for (const Config& c : {AllConfigs()[0], AllConfigs()[1], AllConfigs()[10]}) {
        for (size_t off = 0; off < 64; off += es) {
          const std::string what =
              c.name + " n=" + std::to_string(n) + " offset=" + std::to_string(off);
          RunPlaced(d, c.options, dy, s, off, 0, 0, "dy " + what);
          RunPlaced(d, c.options, dy, s, 0, off, 0, "s " + what);
          RunPlaced(d, c.options, dy, s, 0, 0, off, "dx " + what);
          if (HasFatalFailure()) return;
        }
      }
    }
  }
}

TEST_P(KernelTest, InPlaceOnDyAndOnS) {
  for (relugrad_dtype d : kAllDtypes) {
    for (size_t n : {size_t{1}, size_t{31}, size_t{1029}, size_t{100000}}) {
      const auto dy = Pack(d, RandomBits(d, n, n));
      const auto s = Pack(d, RandomBits(d, n, n + 1));
      for (const Config& c : AllConfigs()) {
        const auto expected = Reference(d, dy, s, c.options);
        auto work_dy = dy;
        ASSERT_EQ(relugrad_relu_grad(d, static_cast<int64_t>(n), work_dy.data(), s.data(),
                                     work_dy.data(), &c.options),
                  RELUGRAD_OK);
        ASSERT_EQ(CompareBits(d, expected.data(), work_dy.data(), n), "")
            << c.name << " dx=dy n=" << n;
        auto work_s = s;
        ASSERT_EQ(relugrad_relu_grad(d, static_cast<int64_t>(n), dy.data(), work_s.data(),
                                     work_s.data(), &c.options),
                  RELUGRAD_OK);
        ASSERT_EQ(CompareBits(d, expected.data(), work_s.data(), n), "")
            << c.name << " dx=s n=" << n;
      }
    }
  }
}

TEST_P(KernelTest, LargeRandomArrays) {
  for (relugrad_dtype d : kAllDtypes) {
    for (size_t n : {size_t{1} << 16, (size_t{1} << 20) + 13}) {
      const auto dy = Pack(d, RandomBits(d, n, 7 * n));
      const auto s = Pack(d, RandomBits(d, n, 7 * n + 1));
      for (const Config& c : {AllConfigs()[0], AllConfigs()[1], AllConfigs()[8]}) {
        RunPlaced(d, c.options, dy, s, 0, 0, 0, c.name + " n=" + std::to_string(n));
        if (HasFatalFailure()) return;
      }
    }
  }
}

// The upper-bound gate (gate_max) has its own loops (RunBlock's bounded
// paths and the 16-bit alpha path): SpecialValueCrossProduct runs
// BoundedGateConfigs too (GradConfigs), and these lengths and placements.
TEST_P(KernelTest, BoundedGateEveryLengthUpTo300AndInPlace) {
  const uint64_t seed = 4321;
  const auto configs = BoundedGateConfigs();
  for (relugrad_dtype d : kAllDtypes) {
    const auto dy_all = Pack(d, RandomBits(d, 300, seed));
    const auto s_all = Pack(d, RandomBits(d, 300, seed + 1));
    const size_t es = relugrad_dtype_size(d);
    for (size_t n = 0; n <= 300; ++n) {
      const Config& c = configs[n % configs.size()];
      std::vector<unsigned char> dy(dy_all.begin(), dy_all.begin() + n * es);
      std::vector<unsigned char> s(s_all.begin(), s_all.begin() + n * es);
      const size_t off = (n * es) % 64 / es * es;
      RunPlaced(d, c.options, dy, s, off, (64 - off) % 64, (n * 7 * es) % 64,
                c.name + " n=" + std::to_string(n));
      if (HasFatalFailure()) return;
    }
    for (const Config& c : configs) {
      const size_t n = 1029;
      const auto dy = Pack(d, RandomBits(d, n, seed + 2));
      const auto s = Pack(d, RandomBits(d, n, seed + 3));
      const auto expected = Reference(d, dy, s, c.options);
      auto work = s;
      ASSERT_EQ(relugrad_relu_grad(d, static_cast<int64_t>(n), dy.data(), work.data(), work.data(),
                                   &c.options),
                RELUGRAD_OK);
      ASSERT_EQ(CompareBits(d, expected.data(), work.data(), n), "") << c.name << " dx=s";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Targets, KernelTest, ::testing::ValuesIn(TargetsToTest()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
}  // namespace testing
}  // namespace relugrad
