// The one-shot calls' per-thread plan (api/one_shot_plan.h): a call must
// behave exactly as if its options were resolved afresh, when one options
// object is changed in place between calls, when the dtype changes, when
// the options turn invalid and valid again, for NULL and older, shorter
// structs, and on several threads at once.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "relugrad/relugrad.h"
#include "test_support.h"

namespace relugrad {
namespace testing {
namespace {

constexpr relugrad_dtype kDtypes[] = {RELUGRAD_F32, RELUGRAD_F16, RELUGRAD_BF16, RELUGRAD_F64};

// Runs relugrad_relu_grad with `o` and returns "" when dx matches the
// reference bit for bit.
std::string RunAndCompare(relugrad_dtype d, const relugrad_options& o, uint64_t seed) {
  const size_t n = 333;  // full vectors and a tail
  const auto dy = Pack(d, RandomBits(d, n, seed));
  const auto s = Pack(d, RandomBits(d, n, seed + 1));
  std::vector<unsigned char> dx(dy.size(), 0xAB);
  const relugrad_status st =
      relugrad_relu_grad(d, static_cast<int64_t>(n), dy.data(), s.data(), dx.data(), &o);
  if (st != RELUGRAD_OK)
    return std::string("status ") + relugrad_status_name(st) + ": " + relugrad_last_error();
  const auto want = Reference(d, dy, s, o);
  return CompareBits(d, want.data(), dx.data(), n, dy.data(), s.data());
}

TEST(OneShotPlan, OneObjectChangedInPlaceFollowsEveryChange) {
  const std::vector<Config> configs = AllConfigs();
  relugrad_options o;  // one object: the memo sees the same address every call
  for (relugrad_dtype d : kDtypes) {
    // Forward, then backward through the configurations: every neighbour
    // pair differs in some field, in both orders.
    for (int pass = 0; pass < 2; ++pass) {
      for (size_t k = 0; k < configs.size(); ++k) {
        const Config& c = configs[pass == 0 ? k : configs.size() - 1 - k];
        o = c.options;
        o.threads = 1;
        EXPECT_EQ(RunAndCompare(d, o, 10 + k), "") << relugrad_dtype_name(d) << " " << c.name;
      }
    }
  }
}

// Cycles of 2 to 6 configurations, more than the thread keeps plans for:
// every hit, every miss and every replaced entry gives the reference's bits.
TEST(OneShotPlan, CyclesLongerThanTheCacheStayExact) {
  const std::vector<Config> configs = AllConfigs();
  ASSERT_GE(configs.size(), 6u);
  for (size_t cycle = 2; cycle <= 6; ++cycle) {
    for (int round = 0; round < 3; ++round) {
      for (size_t k = 0; k < cycle; ++k) {
        relugrad_options o = configs[k].options;
        o.threads = 1;
        const relugrad_dtype d = kDtypes[(k + round) % 4];
        EXPECT_EQ(RunAndCompare(d, o, 100 + k), "")
            << "cycle " << cycle << " " << relugrad_dtype_name(d) << " " << configs[k].name;
      }
    }
  }
}

TEST(OneShotPlan, EachFieldChangeTakesEffect) {
  relugrad_options o;
  relugrad_options_init(&o, RELUGRAD_PRESET_TORCH);
  o.threads = 1;
  for (relugrad_dtype d : kDtypes) {
    ASSERT_EQ(RunAndCompare(d, o, 1), "");
    // One field at a time, each a different rule than the one before.
    o.threshold = 0.75;
    EXPECT_EQ(RunAndCompare(d, o, 2), "") << "threshold";
    o.threshold_rounding = RELUGRAD_THRESHOLD_DTYPE;
    EXPECT_EQ(RunAndCompare(d, o, 3), "") << "threshold_rounding";
    o.gate = RELUGRAD_GATE_PASS_IF_GT;
    EXPECT_EQ(RunAndCompare(d, o, 4), "") << "gate";
    o.combine = RELUGRAD_COMBINE_MULTIPLY;
    EXPECT_EQ(RunAndCompare(d, o, 5), "") << "combine";
    o.denormals = RELUGRAD_DENORMALS_FTZ_DAZ;
    EXPECT_EQ(RunAndCompare(d, o, 6), "") << "denormals";
    o.alpha = 0.125;
    EXPECT_EQ(RunAndCompare(d, o, 7), "") << "alpha";
    o.clip = 1;
    o.clip_lo = -0.5;
    o.clip_hi = 0.5;
    EXPECT_EQ(RunAndCompare(d, o, 8), "") << "clip";
    o.clip_hi = 2.0;
    EXPECT_EQ(RunAndCompare(d, o, 9), "") << "clip_hi";
    o.stores = RELUGRAD_STORES_STREAMING;
    EXPECT_EQ(RunAndCompare(d, o, 10), "") << "stores";
    o.threshold = -0.0;  // -0 and +0 differ in bits, not in the rule
    EXPECT_EQ(RunAndCompare(d, o, 11), "") << "threshold -0";
    relugrad_options_init(&o, RELUGRAD_PRESET_TORCH);
    o.threads = 1;
    EXPECT_EQ(RunAndCompare(d, o, 12), "") << "back to torch";
  }
}

TEST(OneShotPlan, DtypeChangeWithTheSameOptions) {
  relugrad_options o;
  relugrad_options_init(&o, RELUGRAD_PRESET_ONEDNN);
  o.threads = 1;
  o.threshold = 0.1;  // rounds differently in every dtype
  for (int round = 0; round < 3; ++round) {
    for (relugrad_dtype d : kDtypes)
      EXPECT_EQ(RunAndCompare(d, o, 20 + round), "") << relugrad_dtype_name(d);
  }
}

TEST(OneShotPlan, InvalidAfterValidFailsAndValidAgainSucceeds) {
  relugrad_options o;
  relugrad_options_init(&o, RELUGRAD_PRESET_TORCH);
  o.threads = 1;
  float dy[4] = {1, 2, 3, 4}, s[4] = {1, -1, 1, -1}, dx[4];
  ASSERT_EQ(relugrad_relu_grad(RELUGRAD_F32, 4, dy, s, dx, &o), RELUGRAD_OK);
  o.threshold = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(relugrad_relu_grad(RELUGRAD_F32, 4, dy, s, dx, &o), RELUGRAD_INVALID_ARGUMENT);
  EXPECT_NE(std::string(relugrad_last_error()).find("threshold"), std::string::npos)
      << relugrad_last_error();
  o.threshold = 0;
  o.gate = static_cast<relugrad_gate>(7);
  EXPECT_EQ(relugrad_relu_grad(RELUGRAD_F32, 4, dy, s, dx, &o), RELUGRAD_INVALID_ARGUMENT);
  EXPECT_NE(std::string(relugrad_last_error()).find("gate"), std::string::npos)
      << relugrad_last_error();
  o.gate = RELUGRAD_GATE_ZERO_IF_LE;
  ASSERT_EQ(relugrad_relu_grad(RELUGRAD_F32, 4, dy, s, dx, &o), RELUGRAD_OK);
  EXPECT_STREQ(relugrad_last_error(), "");
  EXPECT_EQ(dx[0], 1.0f);
  EXPECT_EQ(dx[1], 0.0f);
  // A bad struct_size fails after a good call with the same bytes otherwise.
  o.struct_size = 3;
  EXPECT_EQ(relugrad_relu_grad(RELUGRAD_F32, 4, dy, s, dx, &o), RELUGRAD_INVALID_ARGUMENT);
}

TEST(OneShotPlan, NullAndShorterStructsAfterAFullOne) {
  relugrad_options o;
  relugrad_options_init(&o, RELUGRAD_PRESET_TENSORFLOW);
  o.threads = 1;
  o.threshold = 0.75;
  for (relugrad_dtype d : kDtypes) {
    ASSERT_EQ(RunAndCompare(d, o, 30), "");
    // NULL options: the torch preset, whatever the thread resolved before.
    const size_t n = 200;
    const auto dy = Pack(d, RandomBits(d, n, 31));
    const auto s = Pack(d, RandomBits(d, n, 32));
    std::vector<unsigned char> dx(dy.size());
    ASSERT_EQ(
        relugrad_relu_grad(d, static_cast<int64_t>(n), dy.data(), s.data(), dx.data(), nullptr),
        RELUGRAD_OK);
    relugrad_options torch;
    relugrad_options_init(&torch, RELUGRAD_PRESET_TORCH);
    const auto want = Reference(d, dy, s, torch);
    EXPECT_EQ(CompareBits(d, want.data(), dx.data(), n), "")
        << relugrad_dtype_name(d) << " NULL options";
    // An older struct without `stores`: the same rule (tensorflow, 0.75).
    relugrad_options old = o;
    old.struct_size = static_cast<uint32_t>(offsetof(relugrad_options, stores));
    EXPECT_EQ(RunAndCompare(d, old, 33), "") << relugrad_dtype_name(d) << " shorter struct";
    EXPECT_EQ(RunAndCompare(d, o, 34), "") << relugrad_dtype_name(d) << " full struct again";
  }
}

TEST(OneShotPlan, ThreadsKeepTheirOwn) {
  const std::vector<Config> configs = AllConfigs();
  std::vector<std::string> failures(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      relugrad_options o;
      for (int i = 0; i < 200 && failures[t].empty(); ++i) {
        const Config& c =
            configs[(static_cast<size_t>(i) * 7 + static_cast<size_t>(t) * 13) % configs.size()];
        o = c.options;
        o.threads = 1;
        const relugrad_dtype d = kDtypes[(i + t) % 4];
        const std::string r = RunAndCompare(d, o, static_cast<uint64_t>(100 * t + i));
        if (!r.empty()) failures[t] = c.name + ": " + r;
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(failures[t], "") << "thread " << t;
}

}  // namespace
}  // namespace testing
}  // namespace relugrad
