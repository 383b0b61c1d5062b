// Thread counts 1..8 give identical bits (and equal the reference), and
// many callers at once with different options share the pool safely.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "relugrad/relugrad.h"
#include "test_support.h"

namespace relugrad {
namespace testing {
namespace {

TEST(Threads, EveryThreadCountGivesTheSameBits) {
  for (relugrad_dtype d : kAllDtypes) {
    for (size_t n : {size_t{1000}, size_t{65536 + 3}, size_t{3'000'001}}) {
      const auto dy = Pack(d, RandomBits(d, n, 5 + n));
      const auto s = Pack(d, RandomBits(d, n, 6 + n));
      for (const Config& c : {AllConfigs()[0], AllConfigs()[1], AllConfigs()[9]}) {
        const auto expected = Reference(d, dy, s, c.options);
        for (int threads = 0; threads <= 8; ++threads) {
          auto o = c.options;
          o.threads = threads;
          std::vector<unsigned char> dx(dy.size());
          ASSERT_EQ(
              relugrad_relu_grad(d, static_cast<int64_t>(n), dy.data(), s.data(), dx.data(), &o),
              RELUGRAD_OK);
          ASSERT_EQ(CompareBits(d, expected.data(), dx.data(), n), "")
              << c.name << " threads=" << threads << " n=" << n;
        }
      }
    }
  }
}

TEST(Threads, ConcurrentCallersWithDifferentOptions) {
  const auto configs = AllConfigs();
  std::vector<std::thread> callers;
  std::vector<std::string> failures(8);
  for (int t = 0; t < 8; ++t) {
    callers.emplace_back([&, t] {
      const relugrad_dtype d = kAllDtypes[t % 4];
      for (int iter = 0; iter < 20; ++iter) {
        const size_t n = 1000 + 40000 * ((t + iter) % 5);
        const auto dy = Pack(d, RandomBits(d, n, t * 100 + iter));
        const auto s = Pack(d, RandomBits(d, n, t * 100 + iter + 50));
        auto o = configs[(t + iter) % configs.size()].options;
        o.threads = 1 + (t + iter) % 4;
        const auto expected = Reference(d, dy, s, o);
        std::vector<unsigned char> dx(dy.size());
        if (relugrad_relu_grad(d, static_cast<int64_t>(n), dy.data(), s.data(), dx.data(), &o) !=
            RELUGRAD_OK) {
          failures[t] = relugrad_last_error();
          return;
        }
        const std::string diff = CompareBits(d, expected.data(), dx.data(), n);
        if (!diff.empty()) {
          failures[t] = diff;
          return;
        }
      }
    });
  }
  for (auto& c : callers) c.join();
  for (int t = 0; t < 8; ++t) EXPECT_EQ(failures[t], "") << "caller " << t;
}

}  // namespace
}  // namespace testing
}  // namespace relugrad
