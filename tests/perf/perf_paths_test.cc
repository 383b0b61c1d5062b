// The paths only large or repeated calls take, forced on small inputs:
// - streaming stores (normally from the launch policy's AUTO threshold, no
//   aliasing; forced here with stores = STREAMING): every target, every configuration, ragged heads
//   and tails at every dx misalignment, sentinels around dx, one and two threads;
// - the per-thread KernelParams memo: more configurations in rotation than
//   it holds, each result still equal to the reference.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "cpu/relu_grad_backend.h"
#include "relugrad/relugrad.h"
#include "support/guarded.h"
#include "test_support.h"

namespace relugrad {
namespace testing {
namespace {

class StreamingTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { isa_ = std::make_unique<ScopedIsa>(GetParam()); }
  void TearDown() override { isa_.reset(); }
  std::unique_ptr<ScopedIsa> isa_;
};

void CheckPlaced(relugrad_dtype d, const relugrad_options& o, size_t n, size_t dx_off,
                 uint64_t seed) {
  const auto dy = Pack(d, RandomBits(d, n, seed));
  const auto s = Pack(d, RandomBits(d, n, seed + 1));
  Guarded dx(dy.size(), dx_off, 0x5A);
  ASSERT_EQ(relugrad_relu_grad(d, static_cast<int64_t>(n), dy.data(), s.data(), dx.data(), &o),
            RELUGRAD_OK)
      << relugrad_last_error();
  const auto expected = Reference(d, dy, s, o);
  ASSERT_EQ(CompareBits(d, expected.data(), dx.data(), n, dy.data(), s.data()), "")
      << "n=" << n << " dx_off=" << dx_off << " threads=" << o.threads;
  ASSERT_EQ(dx.CheckGuards(), "") << "dx, n=" << n;
}

TEST_P(StreamingTest, EveryConfigRaggedEndsAndMisalignments) {
  for (relugrad_dtype d : kAllDtypes) {
    const size_t es = relugrad_dtype_size(d);
    const auto configs = AllConfigs();
    for (size_t ci = 0; ci < configs.size(); ++ci) {
      relugrad_options o = configs[ci].options;
      o.threads = 1;
      o.stores = RELUGRAD_STORES_STREAMING;  // the streaming kernels at every size
      SCOPED_TRACE(configs[ci].name + " " + relugrad_dtype_name(d));
      for (size_t n :
           {size_t{1}, size_t{7}, size_t{63}, size_t{64}, size_t{65}, size_t{129}, size_t{1000}}) {
        for (size_t off = 0; off < 64; off += es * 3) {
          CheckPlaced(d, o, n, off, 17 + n + ci);
          if (HasFatalFailure()) return;
        }
      }
    }
  }
}

TEST_P(StreamingTest, TwoThreadsLargeArrays) {
  for (relugrad_dtype d : kAllDtypes) {
    for (const Config& c : {AllConfigs()[0], AllConfigs()[1], AllConfigs()[2]}) {
      relugrad_options o = c.options;
      o.threads = 2;
      o.stores = RELUGRAD_STORES_STREAMING;
      for (size_t off : {size_t{0}, size_t{8}}) {
        CheckPlaced(d, o, (size_t{1} << 20) + 3, off, 5);
        if (HasFatalFailure()) return;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Targets, StreamingTest, ::testing::ValuesIn(TargetsToTest()),
                         [](const auto& info) { return info.param; });

TEST(ParamsMemo, MoreConfigurationsThanEntriesStayExact) {
  // The memo holds a few entries per thread; cycling through every
  // configuration and dtype twice exercises misses, evictions and hits.
  const auto configs = AllConfigs();
  for (int pass = 0; pass < 2; ++pass) {
    for (const Config& c : configs) {
      for (relugrad_dtype d : kAllDtypes) {
        const size_t n = 333;
        const auto dy = Pack(d, RandomBits(d, n, 3));
        const auto s = Pack(d, RandomBits(d, n, 4));
        std::vector<unsigned char> dx(dy.size());
        ASSERT_EQ(relugrad_relu_grad(d, n, dy.data(), s.data(), dx.data(), &c.options),
                  RELUGRAD_OK);
        ASSERT_EQ(CompareBits(d, Reference(d, dy, s, c.options).data(), dx.data(), n), "")
            << c.name << " pass " << pass;
      }
    }
  }
}

TEST(ParamsMemo, SignedZeroThresholdsAreDistinctKeys) {
  // t = -0 and t = +0 compare equal as doubles; the memo keys on bits, so
  // each still gets the params the reference implies.
  for (double t : {0.0, -0.0, 0.0}) {
    relugrad_options o;
    relugrad_options_init(&o, RELUGRAD_PRESET_TORCH);
    o.threshold = t;
    const auto dy = Pack(RELUGRAD_F32, RandomBits(RELUGRAD_F32, 500, 8));
    const auto s = Pack(RELUGRAD_F32, SpecialValues(RELUGRAD_F32));
    const size_t n = s.size() / 4;
    std::vector<unsigned char> dy_n(dy.begin(), dy.begin() + n * 4), dx(n * 4);
    ASSERT_EQ(relugrad_relu_grad(RELUGRAD_F32, n, dy_n.data(), s.data(), dx.data(), &o),
              RELUGRAD_OK);
    ASSERT_EQ(CompareBits(RELUGRAD_F32, Reference(RELUGRAD_F32, dy_n, s, o).data(), dx.data(), n),
              "")
        << t;
  }
}

}  // namespace
}  // namespace testing
}  // namespace relugrad
