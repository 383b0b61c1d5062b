// The output buffer cache (core/buffer_cache.h) and its C/C++ API: reuse,
// size matching, the byte limit, misuse reported without harm, threads.
#include "core/buffer_cache.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "relugrad/relugrad.h"
#include "relugrad/relugrad.hpp"

namespace relugrad {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

TEST(BufferCache, ReleasedBlockIsReusedForTheSameSize) {
  BufferCache cache(64 * kMiB);
  void* a = cache.Allocate(3 * kMiB + 5);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % 64, 0u);
  std::memset(a, 0x5a, 3 * kMiB + 5);  // the whole request is writable
  ASSERT_TRUE(cache.Release(a));
  EXPECT_EQ(cache.GetStats().cached_bytes, 3 * kMiB + BufferCache::kGranuleBytes);
  void* b = cache.Allocate(3 * kMiB + 5);
  EXPECT_EQ(b, a);
  const BufferCache::Stats stats = cache.GetStats();
  EXPECT_EQ(stats.hits, 1u);
  EXPECT_EQ(stats.misses, 1u);
  EXPECT_EQ(stats.cached_bytes, 0u);
  EXPECT_EQ(stats.live_bytes, 3 * kMiB + BufferCache::kGranuleBytes);
  ASSERT_TRUE(cache.Release(b));
}

TEST(BufferCache, ServesSlightlySmallerRequestsButNotMuchSmallerOnes) {
  BufferCache cache(64 * kMiB);
  void* big = cache.Allocate(8 * kMiB);
  ASSERT_TRUE(cache.Release(big));
  void* small = cache.Allocate(4 * kMiB);  // 8 MiB is more than 5/4 of 4 MiB
  EXPECT_NE(small, big);
  void* near = cache.Allocate(7 * kMiB);  // 8 MiB is within 5/4 of 7 MiB
  EXPECT_EQ(near, big);
  EXPECT_TRUE(cache.Release(small));
  EXPECT_TRUE(cache.Release(near));
}

TEST(BufferCache, AmongEqualSizesTheMostRecentlyReleasedIsReused) {
  BufferCache cache(64 * kMiB);
  void* a = cache.Allocate(2 * kMiB);
  void* b = cache.Allocate(2 * kMiB);
  ASSERT_TRUE(cache.Release(a));
  ASSERT_TRUE(cache.Release(b));
  EXPECT_EQ(cache.Allocate(2 * kMiB), b);
  EXPECT_EQ(cache.Allocate(2 * kMiB), a);
  cache.Release(a);
  cache.Release(b);
}

TEST(BufferCache, SmallBlocksAreNotCached) {
  BufferCache cache(64 * kMiB);
  void* p = cache.Allocate(BufferCache::kMinCachedBytes - 1);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
  ASSERT_TRUE(cache.Release(p));
  EXPECT_EQ(cache.GetStats().cached_bytes, 0u);
  EXPECT_EQ(cache.GetStats().live_bytes, 0u);
}

TEST(BufferCache, LimitEvictsTheOldestReleasedBlock) {
  BufferCache cache(5 * kMiB);
  void* a = cache.Allocate(2 * kMiB);
  void* b = cache.Allocate(2 * kMiB);
  void* c = cache.Allocate(2 * kMiB);
  ASSERT_TRUE(cache.Release(a));
  ASSERT_TRUE(cache.Release(b));
  ASSERT_TRUE(cache.Release(c));  // 6 MiB > 5 MiB: a goes
  EXPECT_EQ(cache.GetStats().cached_bytes, 4 * kMiB);
  void* x = cache.Allocate(2 * kMiB);
  void* y = cache.Allocate(2 * kMiB);
  EXPECT_TRUE((x == b && y == c) || (x == c && y == b));
  EXPECT_EQ(cache.GetStats().hits, 2u);
  cache.Release(x);
  cache.Release(y);
}

TEST(BufferCache, ZeroLimitCachesNothingAndTrimEmptiesTheCache) {
  BufferCache off(0);
  void* p = off.Allocate(4 * kMiB);
  ASSERT_TRUE(off.Release(p));
  EXPECT_EQ(off.GetStats().cached_bytes, 0u);

  BufferCache cache(64 * kMiB);
  ASSERT_TRUE(cache.Release(cache.Allocate(4 * kMiB)));
  EXPECT_EQ(cache.Trim(), 4 * kMiB);
  EXPECT_EQ(cache.GetStats().cached_bytes, 0u);
  EXPECT_EQ(cache.Trim(), 0u);
}

TEST(BufferCache, ForeignAndDoubleReleasesAreRefused) {
  BufferCache cache(64 * kMiB);
  int local = 0;
  EXPECT_FALSE(cache.Release(&local));
  EXPECT_FALSE(cache.Release(nullptr));
  void* p = cache.Allocate(kMiB);
  EXPECT_TRUE(cache.Release(p));
  EXPECT_FALSE(cache.Release(p));
  EXPECT_EQ(cache.GetStats().cached_bytes, kMiB);  // the refused release changed nothing
}

TEST(BufferCache, ThreadsAllocateWriteAndReleaseWithoutSharingABlock) {
  BufferCache cache(16 * kMiB);
  std::vector<std::thread> threads;
  std::vector<int> failures(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&cache, &failures, t] {
      std::mt19937 rng(t);
      for (int i = 0; i < 200; ++i) {
        const size_t bytes = (size_t{1} << (16 + rng() % 6)) + rng() % 4096;  // 64 KiB .. 2 MiB
        auto* p = static_cast<unsigned char*>(cache.Allocate(bytes));
        if (p == nullptr) {
          ++failures[t];
          continue;
        }
        const unsigned char tag = static_cast<unsigned char>(t * 50 + i % 50);
        std::memset(p, tag, bytes);
        std::this_thread::yield();
        if (p[0] != tag || p[bytes / 2] != tag || p[bytes - 1] != tag) ++failures[t];
        if (!cache.Release(p)) ++failures[t];
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(failures[t], 0) << "thread " << t;
  EXPECT_EQ(cache.GetStats().live_bytes, 0u);
  EXPECT_LE(cache.GetStats().cached_bytes, 16 * kMiB);
}

TEST(BufferCacheCApi, ReportsMisuseWithoutHarm) {
  EXPECT_EQ(relugrad_buffer_alloc(0), nullptr);
  EXPECT_NE(std::strstr(relugrad_last_error(), "bytes is 0"), nullptr);
  EXPECT_EQ(relugrad_buffer_free(nullptr), RELUGRAD_OK);
  int local = 0;
  EXPECT_EQ(relugrad_buffer_free(&local), RELUGRAD_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(relugrad_last_error(), "did not come from relugrad_buffer_alloc"), nullptr);
  void* p = relugrad_buffer_alloc(2 * kMiB);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(relugrad_buffer_free(p), RELUGRAD_OK);
  EXPECT_EQ(relugrad_buffer_free(p), RELUGRAD_INVALID_ARGUMENT);
  size_t cached = 0, live = 0;
  uint64_t hits = 0, misses = 0;
  relugrad_buffer_cache_stats(&cached, &live, &hits, &misses);
  EXPECT_GE(cached, 2 * kMiB);
  relugrad_buffer_cache_stats(nullptr, nullptr, nullptr, nullptr);
  EXPECT_GE(relugrad_buffer_cache_trim(), 2 * kMiB);
  relugrad_buffer_cache_stats(&cached, nullptr, nullptr, nullptr);
  EXPECT_EQ(cached, 0u);
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define RELUGRAD_SANITIZER_ALLOCATOR 1
#else
#define RELUGRAD_SANITIZER_ALLOCATOR 0
#endif

TEST(BufferCacheCApi, ImpossibleSizesFailCleanly) {
  if (RELUGRAD_SANITIZER_ALLOCATOR) {
    // ASan/TSan's allocator reports an impossible size as an error and exits
    // (allocator_may_return_null=0 in the presets) instead of returning NULL.
    GTEST_SKIP() << "sanitizer allocator aborts on impossible sizes; covered by the release build";
  }
  for (size_t huge : {SIZE_MAX, SIZE_MAX - 63, size_t{1} << 62}) {
    EXPECT_EQ(relugrad_buffer_alloc(huge), nullptr) << huge;
    EXPECT_NE(std::strstr(relugrad_last_error(), "out of memory"), nullptr)
        << relugrad_last_error();
  }
}

TEST(BufferCacheCppApi, AllocatingReluGradMatchesTheCallIntoACallerBuffer) {
  const size_t n = 300000;  // above the caching threshold
  std::vector<float> dy(n), x(n), expected(n);
  std::mt19937 rng(7);
  for (size_t i = 0; i < n; ++i) {
    const uint32_t a = rng(), b = rng();
    std::memcpy(&dy[i], &a, 4);
    std::memcpy(&x[i], &b, 4);
  }
  const Options tf(Preset::kTensorflow);
  relu_grad<float>(dy, x, expected, tf);
  for (int round = 0; round < 2; ++round) {  // the second round reuses the cached block
    Buffer<float> dx = relu_grad<float>(dy, x, tf);
    ASSERT_EQ(dx.size(), n);
    EXPECT_EQ(std::memcmp(dx.data(), expected.data(), n * 4), 0) << "round " << round;
  }
  Buffer<float> moved(4);
  Buffer<float> target = std::move(moved);
  EXPECT_EQ(target.size(), 4u);
  EXPECT_EQ(moved.size(), 0u);
  EXPECT_EQ(moved.data(), nullptr);
}

}  // namespace
}  // namespace relugrad
