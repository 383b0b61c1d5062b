// A process-wide cache of large output buffers that keeps their pages.
//
// Why: an allocating call (Python without out=) on fresh memory pays a page
// fault per 4 KiB of output, and glibc returns blocks above its mmap
// threshold (at most 32 MiB) to the kernel on free, so every such call gets
// fresh pages again, and writing fresh memory runs at a fraction of the
// speed of writing memory touched before (docs/design.md, "Output buffer
// cache"). A freed block parked here is handed to the next request of a
// similar size with its pages still mapped, which is what training loops
// do (the same shapes every step). Framework allocators do the same on GPUs
// (PyTorch's CUDA caching allocator); CPU malloc does not, so we write it.
//
// Policy: blocks below kMinCachedBytes go straight to malloc/free (malloc
// already recycles those). Larger blocks are rounded up to kGranuleBytes;
// a request is served by the smallest free block of at most 5/4 of its
// rounded size (the most recently released among equals). Free blocks are kept up to a byte limit
// (RELUGRAD_BUFFER_CACHE_MIB, default 1024; 0 disables caching), oldest
// released first evicted. Thread-safe (one mutex; a call is microseconds
// against the milliseconds of a call that needs a cached block).
#ifndef RELUGRAD_CORE_BUFFER_CACHE_H_
#define RELUGRAD_CORE_BUFFER_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace relugrad {

class BufferCache {
 public:
  static constexpr size_t kMinCachedBytes = size_t{256} << 10;
  static constexpr size_t kGranuleBytes = size_t{64} << 10;

  // The process-wide cache (limit from RELUGRAD_BUFFER_CACHE_MIB).
  static BufferCache& Global();

  explicit BufferCache(size_t limit_bytes) : limit_bytes_(limit_bytes) {}
  ~BufferCache();
  BufferCache(const BufferCache&) = delete;
  BufferCache& operator=(const BufferCache&) = delete;

  // 64-byte aligned memory for `bytes` (> 0), or nullptr if none is available.
  void* Allocate(size_t bytes);
  // Returns a block from Allocate; false (nothing done) for any other pointer.
  bool Release(void* block);
  // Frees every cached (released) block; returns the bytes freed.
  size_t Trim();

  struct Stats {
    size_t cached_bytes = 0;  // released blocks held for reuse
    size_t live_bytes = 0;    // blocks handed out and not yet released
    uint64_t hits = 0;        // requests served from the cache
    uint64_t misses = 0;      // cacheable requests that allocated fresh memory
  };
  Stats GetStats() const;

 private:
  struct FreeBlock {
    void* block;
    size_t capacity;
    uint64_t released_at;  // eviction order
  };
  void EvictOverLimitLocked(std::vector<void*>* to_free);

  const size_t limit_bytes_;
  mutable std::mutex mutex_;
  std::unordered_map<void*, size_t> live_;  // block -> capacity (0: below kMinCachedBytes)
  std::vector<FreeBlock> free_;
  Stats stats_;
  uint64_t clock_ = 0;
};

}  // namespace relugrad

#endif  // RELUGRAD_CORE_BUFFER_CACHE_H_
