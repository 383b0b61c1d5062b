#include "core/buffer_cache.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "io/aligned_buffer.h"

namespace relugrad {
namespace {

size_t LimitFromEnvironment() {
  constexpr size_t kDefaultMib = 1024;
  const char* env = std::getenv("RELUGRAD_BUFFER_CACHE_MIB");
  if (env == nullptr || *env == '\0') return kDefaultMib << 20;
  char* end = nullptr;
  const unsigned long long mib = std::strtoull(env, &end, 10);
  // Unparsable values fall back to the default rather than disabling it.
  if (end == env || *end != '\0' || mib > (~size_t{0} >> 20)) return kDefaultMib << 20;
  return static_cast<size_t>(mib) << 20;
}

bool Cacheable(size_t capacity) { return capacity >= BufferCache::kMinCachedBytes; }

}  // namespace

BufferCache& BufferCache::Global() {
  // Leaked on purpose: arrays owned by Python or other static objects may
  // release blocks during interpreter or process teardown.
  static BufferCache* cache = new BufferCache(LimitFromEnvironment());
  return *cache;
}

BufferCache::~BufferCache() {
  Trim();
  // Live blocks belong to their holders; Release after destruction is not
  // supported (Global() is never destroyed).
}

void* BufferCache::Allocate(size_t bytes) {
  if (bytes == 0) return nullptr;
  if (!Cacheable(bytes)) {
    void* p = nullptr;
    if (posix_memalign(&p, 64, (bytes + 63) / 64 * 64) != 0) return nullptr;
    std::lock_guard<std::mutex> lock(mutex_);
    live_.emplace(p, bytes);
    stats_.live_bytes += bytes;
    return p;
  }
  const size_t capacity = (bytes + kGranuleBytes - 1) / kGranuleBytes * kGranuleBytes;
  if (capacity < bytes) return nullptr;  // size_t overflow
  {
    std::lock_guard<std::mutex> lock(mutex_);
    // Best fit among blocks of [capacity, capacity * 5/4]; among equal
    // sizes the most recently released, whose lines are likeliest cached.
    auto best = free_.end();
    for (auto it = free_.begin(); it != free_.end(); ++it) {
      if (it->capacity >= capacity && it->capacity - capacity <= capacity / 4 &&
          (best == free_.end() || it->capacity < best->capacity ||
           (it->capacity == best->capacity && it->released_at > best->released_at))) {
        best = it;
      }
    }
    if (best != free_.end()) {
      void* block = best->block;
      const size_t cap = best->capacity;
      free_.erase(best);
      stats_.cached_bytes -= cap;
      live_.emplace(block, cap);
      stats_.live_bytes += cap;
      ++stats_.hits;
      return block;
    }
    ++stats_.misses;
  }
  void* block = AlignedBuffer::AllocateLargeAligned(capacity);
  if (block == nullptr) {
    // Memory is short: give the cached blocks back and try once more.
    if (Trim() == 0) return nullptr;
    block = AlignedBuffer::AllocateLargeAligned(capacity);
    if (block == nullptr) return nullptr;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  live_.emplace(block, capacity);
  stats_.live_bytes += capacity;
  return block;
}

bool BufferCache::Release(void* block) {
  if (block == nullptr) return false;
  std::vector<void*> to_free;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = live_.find(block);
    if (it == live_.end()) return false;
    const size_t capacity = it->second;
    live_.erase(it);
    stats_.live_bytes -= capacity;
    if (!Cacheable(capacity) || capacity > limit_bytes_) {
      to_free.push_back(block);
    } else {
      free_.push_back({block, capacity, ++clock_});
      stats_.cached_bytes += capacity;
      EvictOverLimitLocked(&to_free);
    }
  }
  for (void* p : to_free) std::free(p);  // outside the lock: munmap can take a while
  return true;
}

void BufferCache::EvictOverLimitLocked(std::vector<void*>* to_free) {
  while (stats_.cached_bytes > limit_bytes_ && !free_.empty()) {
    const auto oldest = std::min_element(
        free_.begin(), free_.end(),
        [](const FreeBlock& a, const FreeBlock& b) { return a.released_at < b.released_at; });
    stats_.cached_bytes -= oldest->capacity;
    to_free->push_back(oldest->block);
    free_.erase(oldest);
  }
}

size_t BufferCache::Trim() {
  std::vector<FreeBlock> blocks;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    blocks.swap(free_);
    stats_.cached_bytes = 0;
  }
  size_t freed = 0;
  for (const FreeBlock& b : blocks) {
    freed += b.capacity;
    std::free(b.block);
  }
  return freed;
}

BufferCache::Stats BufferCache::GetStats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

}  // namespace relugrad
