// The profiler: counters per configuration, the summary table, a trace that
// is valid JSON in Chrome's trace-event format with one slice per call and
// per worker block, and RELUGRAD_PROFILE read from the environment at load
// (checked by running this binary again as a child with the variable set).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cpu/launch.h"
#include "policy_calls.h"
#include "profile/profile.h"
#include "relugrad/relugrad.h"
#include "test_support.h"

namespace relugrad {
namespace testing {
namespace {

// A strict little JSON parser: true iff `text` is one valid JSON value.
class Json {
 public:
  explicit Json(const std::string& t) : t_(t) {}
  bool Valid() {
    Ws();
    if (!Value()) return false;
    Ws();
    return i_ == t_.size();
  }

 private:
  void Ws() {
    while (i_ < t_.size() && std::isspace(static_cast<unsigned char>(t_[i_]))) ++i_;
  }
  bool Lit(const char* w) {
    const std::string s(w);
    if (t_.compare(i_, s.size(), s) != 0) return false;
    i_ += s.size();
    return true;
  }
  bool String() {
    if (t_[i_] != '"') return false;
    for (++i_; i_ < t_.size(); ++i_) {
      if (t_[i_] == '\\') {
        ++i_;
      } else if (t_[i_] == '"') {
        ++i_;
        return true;
      } else if (static_cast<unsigned char>(t_[i_]) < 0x20) {
        return false;
      }
    }
    return false;
  }
  bool Number() {
    const size_t start = i_;
    if (t_[i_] == '-') ++i_;
    while (i_ < t_.size() && (std::isdigit(static_cast<unsigned char>(t_[i_])) || t_[i_] == '.' ||
                              t_[i_] == 'e' || t_[i_] == 'E' || t_[i_] == '+' || t_[i_] == '-')) {
      ++i_;
    }
    return i_ > start && std::isdigit(static_cast<unsigned char>(t_[i_ - 1]));
  }
  bool Value() {
    if (i_ >= t_.size()) return false;
    const char c = t_[i_];
    if (c == '{') return Container('}', true);
    if (c == '[') return Container(']', false);
    if (c == '"') return String();
    if (c == 't') return Lit("true");
    if (c == 'f') return Lit("false");
    if (c == 'n') return Lit("null");
    return Number();
  }
  bool Container(char close, bool object) {
    ++i_;
    Ws();
    if (i_ < t_.size() && t_[i_] == close) return ++i_, true;
    for (;;) {
      Ws();
      if (object) {
        if (i_ >= t_.size() || !String()) return false;
        Ws();
        if (i_ >= t_.size() || t_[i_++] != ':') return false;
        Ws();
      }
      if (!Value()) return false;
      Ws();
      if (i_ >= t_.size()) return false;
      if (t_[i_] == ',') {
        ++i_;
        continue;
      }
      if (t_[i_] == close) return ++i_, true;
      return false;
    }
  }
  const std::string& t_;
  size_t i_ = 0;
};

std::string ReadFile(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

size_t Count(const std::string& text, const std::string& what) {
  size_t count = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++count;
  return count;
}

// One relu_grad call under AlwaysSplitPolicy: every call that may split
// does, so the splits below do not depend on whether the workers slept.
void Call(relugrad_dtype d, size_t n, int threads, relugrad_preset preset = RELUGRAD_PRESET_TORCH) {
  const auto dy = Pack(d, RandomBits(d, n, 1));
  const auto s = Pack(d, RandomBits(d, n, 2));
  std::vector<unsigned char> dx(dy.size());
  relugrad_options o;
  relugrad_options_init(&o, preset);
  o.threads = threads;
  ASSERT_EQ(ReluGradUnderPolicy(d, static_cast<int64_t>(n), dy.data(), s.data(), dx.data(), o,
                                AlwaysSplitPolicy()),
            RELUGRAD_OK);
}

class ProfileTest : public ::testing::Test {
 protected:
  void SetUp() override { profile::ResetForTest(); }
  void TearDown() override {
    profile::SetModeForTest(profile::Mode::kOff);
    profile::ResetForTest();
  }
};

TEST_F(ProfileTest, OffRecordsNothing) {
  profile::SetModeForTest(profile::Mode::kOff);
  Call(RELUGRAD_F32, 1000, 1);
  EXPECT_TRUE(profile::Snapshot().empty());
}

TEST_F(ProfileTest, CountersPerConfiguration) {
  profile::SetModeForTest(profile::Mode::kSummary);
  for (int i = 0; i < 3; ++i) Call(RELUGRAD_F32, 1000, 1);
  Call(RELUGRAD_BF16, 1000, 1);
  Call(RELUGRAD_F32, 1000, 1, RELUGRAD_PRESET_TENSORFLOW);
  const auto stats = profile::Snapshot();
  ASSERT_EQ(stats.size(), 3u);
  int seen = 0;
  for (const auto& c : stats) {
    EXPECT_EQ(c.op, "relu_grad");
    EXPECT_EQ(c.n_bucket, 512);  // n = 1000 lies in [512, 1024)
    EXPECT_EQ(c.isa, std::string(relugrad_isa_selected()));
    EXPECT_EQ(c.threads, 1);
    EXPECT_GT(c.total_s, 0);
    EXPECT_GT(c.median_s, 0);
    EXPECT_LE(c.median_s, c.total_s);
    if (c.dtype == "f32" && c.rule == "zero_if_le+select") {
      EXPECT_EQ(c.calls, 3);
      EXPECT_EQ(c.elements, 3000);
      EXPECT_DOUBLE_EQ(c.bytes, 3 * 3 * 1000 * 4.0);
      ++seen;
    } else if (c.dtype == "bf16") {
      EXPECT_EQ(c.calls, 1);
      EXPECT_DOUBLE_EQ(c.bytes, 3 * 1000 * 2.0);
      ++seen;
    } else if (c.rule == "pass_if_gt+multiply") {
      EXPECT_EQ(c.calls, 1);
      ++seen;
    }
  }
  EXPECT_EQ(seen, 3);
  const std::string table = profile::SummaryTable();
  EXPECT_NE(table.find("relu_grad"), std::string::npos);
  EXPECT_NE(table.find("bf16"), std::string::npos);
  EXPECT_NE(table.find("GB/s"), std::string::npos);
}

TEST_F(ProfileTest, ThreadsUsedAreTheBlocksOfThePlan) {
  profile::SetModeForTest(profile::Mode::kSummary);
  Call(RELUGRAD_F32, 1 << 20, 2);  // 4 MiB of dx: two blocks
  Call(RELUGRAD_F32, 64, 2);       // far below the grain: one block
  const auto stats = profile::Snapshot();
  ASSERT_EQ(stats.size(), 2u);
  for (const auto& c : stats) EXPECT_EQ(c.threads, c.n_bucket >= (1 << 20) ? 2 : 1) << c.n_bucket;
}

// The launch policy's wake_bytes, through the C entry point: a 4 MiB call on
// two threads finds the workers asleep after an idle 20 ms and runs alone; a
// loop of calls (the burst rule) wakes them, and from then on calls split.
TEST_F(ProfileTest, MidSizeCallsLeaveSleepingWorkersAloneUntilABurst) {
  const size_t n = 1 << 20;  // 4 MiB of f32 dx: below wake_bytes
  ASSERT_LT(static_cast<int64_t>(n * 4), LaunchPolicy::ForThisMachine().wake_bytes);
  const auto dy = Pack(RELUGRAD_F32, RandomBits(RELUGRAD_F32, n, 1));
  std::vector<unsigned char> dx(dy.size());
  relugrad_options o;
  relugrad_options_init(&o, RELUGRAD_PRESET_TORCH);
  o.threads = 2;
  auto threads_of_one_call = [&] {
    profile::ResetForTest();
    profile::SetModeForTest(profile::Mode::kSummary);
    EXPECT_EQ(relugrad_relu_grad(RELUGRAD_F32, n, dy.data(), dy.data() + 0, dx.data(), &o),
              RELUGRAD_OK);
    const auto stats = profile::Snapshot();
    profile::SetModeForTest(profile::Mode::kOff);
    return stats.size() == 1 ? stats[0].threads : -1;
  };
  int alone = 0;
  for (int attempt = 0; attempt < 5; ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // workers spin 50 us, then sleep
    alone += threads_of_one_call() == 1;
  }
  EXPECT_GE(alone, 4) << "calls after an idle gap should not wake sleeping workers";
  int split = 0;
  for (int i = 0; i < 20; ++i) split += threads_of_one_call() == 2;
  EXPECT_GE(split, 10) << "a loop of calls should wake the workers and split";
}

// The mask path's two calls are profiled like relu_grad: counted per
// configuration with their bytes (two arrays and the ceil(n/8)-byte mask),
// and traced with a slice per call and per block.
TEST_F(ProfileTest, MaskCallsAreCountedAndTraced) {
  const size_t n = 1000;
  const auto x = Pack(RELUGRAD_F32, RandomBits(RELUGRAD_F32, n, 1));
  std::vector<unsigned char> y(x.size()), dx(x.size()),
      mask(static_cast<size_t>(relugrad_mask_bytes(n)));
  relugrad_options o;
  relugrad_options_init(&o, RELUGRAD_PRESET_TENSORFLOW);
  o.threads = 1;
  profile::SetModeForTest(profile::Mode::kSummary);
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(relugrad_relu_forward(RELUGRAD_F32, n, x.data(), y.data(), mask.data(), &o),
              RELUGRAD_OK);
  }
  ASSERT_EQ(relugrad_relu_grad_mask(RELUGRAD_F32, n, x.data(), mask.data(), dx.data(), &o),
            RELUGRAD_OK);
  const auto stats = profile::Snapshot();
  ASSERT_EQ(stats.size(), 2u);
  for (const auto& c : stats) {
    EXPECT_EQ(c.rule, "pass_if_gt+multiply");
    EXPECT_EQ(c.threads, 1);
    const int64_t calls = c.op == "relu_forward" ? 2 : 1;
    EXPECT_TRUE(c.op == "relu_forward" || c.op == "relu_grad_mask") << c.op;
    EXPECT_EQ(c.calls, calls);
    EXPECT_DOUBLE_EQ(c.bytes, calls * (2 * 1000 * 4.0 + 125));
  }

  profile::ResetForTest();
  const std::string path = ::testing::TempDir() + "relugrad_profile_mask_trace.json";
  profile::SetModeForTest(profile::Mode::kTrace, path);
  const size_t big = 1 << 20;  // 4 MiB of f32 y: two blocks
  const auto xb = Pack(RELUGRAD_F32, RandomBits(RELUGRAD_F32, big, 3));
  std::vector<unsigned char> yb(xb.size()), mb(static_cast<size_t>(relugrad_mask_bytes(big)));
  o.threads = 2;
  ASSERT_EQ(ReluForwardUnderPolicy(RELUGRAD_F32, big, xb.data(), yb.data(), mb.data(), o,
                                   AlwaysSplitPolicy()),
            RELUGRAD_OK);
  ASSERT_TRUE(profile::WriteTrace(path));
  const std::string text = ReadFile(path);
  EXPECT_TRUE(Json(text).Valid()) << text.substr(0, 2000);
  EXPECT_EQ(Count(text, "\"name\":\"relu_forward "), 1u);
  EXPECT_GE(Count(text, "block 1\""), 1u);
  std::remove(path.c_str());
}

TEST_F(ProfileTest, TraceIsValidChromeJsonWithCallAndBlockSlices) {
  const std::string path = ::testing::TempDir() + "relugrad_profile_trace.json";
  profile::SetModeForTest(profile::Mode::kTrace, path);
  Call(RELUGRAD_F32, 1 << 20, 2);
  Call(RELUGRAD_F16, 100, 1);
  ASSERT_TRUE(profile::WriteTrace(path));
  const std::string text = ReadFile(path);
  EXPECT_TRUE(Json(text).Valid()) << text.substr(0, 2000);
  EXPECT_NE(text.find("\"traceEvents\""), std::string::npos);
  // Two calls, and the first's two blocks: a slice per run of a block's
  // chunks on one thread (more than one where the caller took over chunks
  // of a late worker's block, thread_pool.h).
  const size_t blocks = Count(text, "\"name\":\"block ");
  EXPECT_GE(blocks, 2u);
  EXPECT_GE(Count(text, "block 0\""), 1u);
  EXPECT_GE(Count(text, "block 1\""), 1u);
  EXPECT_EQ(Count(text, "\"ph\":\"X\""), 2u + blocks);
  EXPECT_EQ(Count(text, "\"name\":\"relu_grad "), 2u);
  std::remove(path.c_str());
}

TEST(ProfileJson, TheValidatorRejectsBrokenJson) {
  EXPECT_TRUE(Json("{\"a\":[1,2.5e3,-3],\"b\":{\"c\":\"x\"}}").Valid());
  EXPECT_FALSE(Json("{\"a\":[1,2,]}").Valid());
  EXPECT_FALSE(Json("{\"a\":1").Valid());
  EXPECT_FALSE(Json("{\"a\":1}}").Valid());
}

// The environment path: RELUGRAD_PROFILE is read at load and the report is
// written at exit, so run this binary again with the variable set.
std::string RunChild(const std::string& env_value, const std::string& stderr_path) {
  const std::string cmd =
      "RELUGRAD_PROFILE='" + env_value + "' /proc/" + std::to_string(getpid()) +
      "/exe --gtest_also_run_disabled_tests --gtest_filter=ProfileChild.DISABLED_MakeCalls 2>" +
      stderr_path + " >/dev/null";
  const int rc = std::system(cmd.c_str());
  EXPECT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 0) << cmd;
  return ReadFile(stderr_path);
}

TEST(ProfileEnvironment, SummaryToStderrAtExit) {
  const std::string err = RunChild("1", ::testing::TempDir() + "relugrad_profile_child.err");
  EXPECT_NE(err.find("relugrad profile"), std::string::npos) << err;
  EXPECT_NE(err.find("relu_grad"), std::string::npos) << err;
  EXPECT_NE(err.find("f32"), std::string::npos) << err;
}

TEST(ProfileEnvironment, TraceFileAtExit) {
  const std::string path = ::testing::TempDir() + "relugrad_profile_env_trace.json";
  std::remove(path.c_str());
  RunChild(path, ::testing::TempDir() + "relugrad_profile_child2.err");
  const std::string text = ReadFile(path);
  ASSERT_FALSE(text.empty()) << "no trace written to " << path;
  EXPECT_TRUE(Json(text).Valid());
  EXPECT_GE(Count(text, "\"name\":\"relu_grad "), 5u);
  std::remove(path.c_str());
}

TEST(ProfileChild, DISABLED_MakeCalls) {
  for (int i = 0; i < 5; ++i) Call(RELUGRAD_F32, 4096, 1);
  Call(RELUGRAD_F32, 1 << 20, 2);
}

}  // namespace
}  // namespace testing
}  // namespace relugrad
