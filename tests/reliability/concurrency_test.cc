// Many threads calling the API at once: mixed dtypes, sizes, presets,
// thread counts (so callers contend for the one shared worker pool),
// misaligned operands and in-place calls; every result bitwise equal to the
// reference computed beforehand. Also per-thread error messages under
// contention, and SIMD-target changes between (never during) concurrent
// phases, as the header prescribes. Sizes are chosen so the suite stays
// quick under ThreadSanitizer (build/tsan), where it matters most.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "relugrad/relugrad.h"
#include "support/guarded.h"
#include "test_support.h"

namespace relugrad {
namespace testing {
namespace {

// Scale iterations down under sanitizers (they are 5-20x slower).
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
constexpr int kScale = 1;
#else
constexpr int kScale = 4;
#endif

struct Job {
  relugrad_dtype dtype;
  size_t n;
  relugrad_options options;
  size_t dy_off, s_off, dx_off;  // elements past a 64-byte boundary (guarded placement)
  int alias;                     // 0 none, 1 dx=dy, 2 dx=s
  std::vector<unsigned char> dy, s, expected;
};

Job MakeJob(std::mt19937_64& rng, const std::vector<Config>& configs) {
  Job j;
  j.dtype = kAllDtypes[rng() % 4];
  const size_t sizes[] = {0, 1, 7, 63, 64, 65, 1000, 4099, 65536 + 17, 300000};
  j.n = sizes[rng() % 10];
  j.options = configs[rng() % configs.size()].options;
  j.options.threads = static_cast<int>(rng() % 9);  // 0 = all cores
  const size_t es = relugrad_dtype_size(j.dtype);
  j.dy_off = rng() % (64 / es);
  j.s_off = rng() % (64 / es);
  j.dx_off = rng() % (64 / es);
  j.alias = static_cast<int>(rng() % 4) % 3;
  j.dy = Pack(j.dtype, RandomBits(j.dtype, j.n, rng()));
  j.s = Pack(j.dtype, RandomBits(j.dtype, j.n, rng()));
  j.expected = Reference(j.dtype, j.dy, j.s, j.options);
  return j;
}

// Runs a job in freshly laid out buffers; "" or the failure.
std::string RunJob(const Job& j) {
  const size_t es = relugrad_dtype_size(j.dtype), bytes = j.n * es;
  Guarded a(j.dy, j.dy_off * es), b(j.s, j.s_off * es), c(bytes, j.dx_off * es, 0x5c);
  Guarded& out = j.alias == 1 ? a : j.alias == 2 ? b : c;
  unsigned char* dy = a.data();
  unsigned char* s = b.data();
  unsigned char* dx = out.data();
  const relugrad_status st =
      relugrad_relu_grad(j.dtype, static_cast<int64_t>(j.n), dy, s, dx, &j.options);
  if (st != RELUGRAD_OK)
    return std::string(relugrad_status_name(st)) + ": " + relugrad_last_error();
  if (std::string(relugrad_last_error()) != "") return "OK call left an error message";
  std::string diff = CompareBits(j.dtype, j.expected.data(), dx, j.n);
  if (!diff.empty()) {
    return diff + " (threads=" + std::to_string(j.options.threads) +
           " alias=" + std::to_string(j.alias) + ")";
  }
  const std::string guards = out.CheckGuards();
  return guards.empty() ? "" : guards + " (alias=" + std::to_string(j.alias) + ")";
}

// Callers x iterations, each caller with its own random jobs.
void Hammer(int callers, int iterations, uint64_t seed) {
  const auto configs = AllConfigs();
  std::vector<std::vector<Job>> jobs(callers);
  for (int t = 0; t < callers; ++t) {
    std::mt19937_64 rng(seed + t);
    for (int i = 0; i < iterations; ++i) jobs[t].push_back(MakeJob(rng, configs));
  }
  std::atomic<int> ready{0};
  std::vector<std::string> failures(callers);
  std::vector<std::thread> threads;
  for (int t = 0; t < callers; ++t) {
    threads.emplace_back([&, t] {
      ready.fetch_add(1);
      while (ready.load() < callers) std::this_thread::yield();  // start together
      for (const Job& j : jobs[t]) {
        std::string f = RunJob(j);
        if (!f.empty()) {
          failures[t] = f;
          return;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < callers; ++t) EXPECT_EQ(failures[t], "") << "caller " << t;
}

TEST(Concurrency, ManyCallersMixedDtypesSizesPresetsAndPools) { Hammer(12, 6 * kScale, 1000); }

TEST(Concurrency, EveryCallerAsksForAllCores) {
  // Every caller wants the whole pool (threads = 0) on arrays above the
  // grain: at most one wins it, the others must run inline with equal bits.
  const auto configs = AllConfigs();
  const int callers = 6;
  std::vector<std::string> failures(callers);
  std::vector<std::thread> threads;
  for (int t = 0; t < callers; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(77 + t);
      for (int i = 0; i < 2 * kScale; ++i) {
        Job j = MakeJob(rng, configs);
        if (j.n < 65536) {
          j.n = 200000 + t;
          j.dy = Pack(j.dtype, RandomBits(j.dtype, j.n, rng()));
          j.s = Pack(j.dtype, RandomBits(j.dtype, j.n, rng()));
          j.expected = Reference(j.dtype, j.dy, j.s, j.options);
        }
        j.options.threads = 0;
        std::string f = RunJob(j);
        if (!f.empty()) {
          failures[t] = f;
          return;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < callers; ++t) EXPECT_EQ(failures[t], "") << "caller " << t;
}

TEST(Concurrency, LastErrorStaysWithItsThread) {
  // Half the callers make distinct invalid calls, half valid ones; each
  // sees only its own message (or none) right after its own call.
  const int callers = 8;
  std::vector<std::string> failures(callers);
  std::vector<std::thread> threads;
  for (int t = 0; t < callers; ++t) {
    threads.emplace_back([&, t] {
      alignas(64) float a[256] = {}, b[256] = {}, c[256];
      for (int i = 0; i < 50 * kScale; ++i) {
        if (t % 2 == 0) {
          const int64_t bad_n = -1 - t * 1000 - i;
          if (relugrad_relu_grad(RELUGRAD_F32, bad_n, a, b, c, nullptr) !=
              RELUGRAD_INVALID_ARGUMENT) {
            failures[t] = "invalid call accepted";
            return;
          }
          const std::string want = "got " + std::to_string(bad_n);
          if (std::string(relugrad_last_error()).find(want) == std::string::npos) {
            failures[t] = std::string("message from another thread? ") + relugrad_last_error();
            return;
          }
        } else {
          relugrad_options o;
          relugrad_options_init(&o, RELUGRAD_PRESET_TORCH);
          o.threads = 1 + i % 3;
          if (relugrad_relu_grad(RELUGRAD_F32, 256, a, b, c, &o) != RELUGRAD_OK ||
              relugrad_last_error()[0] != '\0') {
            failures[t] = std::string("valid call: ") + relugrad_last_error();
            return;
          }
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < callers; ++t) EXPECT_EQ(failures[t], "") << "caller " << t;
}

TEST(Concurrency, TargetChangesBetweenConcurrentPhases) {
  // relugrad_set_max_isa is not for concurrent use: change it on one thread
  // while no call is in flight, then hammer again under the new target.
  for (const std::string& target : TargetsToTest()) {
    ScopedIsa cap(target);
    Hammer(4, 2 * kScale, 5000 + target.size());
  }
}

TEST(Concurrency, ReferenceAndKernelConcurrently) {
  // The reference entry point is also callable from many threads.
  const auto configs = AllConfigs();
  std::vector<std::string> failures(6);
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      const relugrad_dtype d = kAllDtypes[t % 4];
      const size_t n = 5000 + 17 * t;
      const auto dy = Pack(d, RandomBits(d, n, 900 + t)), s = Pack(d, RandomBits(d, n, 950 + t));
      for (int i = 0; i < 3 * kScale; ++i) {
        auto o = configs[(t + i) % configs.size()].options;
        o.threads = i % 3;
        std::vector<unsigned char> r(dy.size()), k(dy.size());
        if (relugrad_relu_grad_reference(d, static_cast<int64_t>(n), dy.data(), s.data(), r.data(),
                                         &o) != RELUGRAD_OK ||
            relugrad_relu_grad(d, static_cast<int64_t>(n), dy.data(), s.data(), k.data(), &o) !=
                RELUGRAD_OK) {
          failures[t] = relugrad_last_error();
          return;
        }
        const std::string diff = CompareBits(d, r.data(), k.data(), n);
        if (!diff.empty()) {
          failures[t] = diff;
          return;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 6; ++t) EXPECT_EQ(failures[t], "") << "caller " << t;
}

}  // namespace
}  // namespace testing
}  // namespace relugrad
