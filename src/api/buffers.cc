// C ABI over core/buffer_cache.h: output memory that keeps its pages.
#include "core/buffer_cache.h"
#include "core/error.h"
#include "relugrad/relugrad.h"

extern "C" {

void* relugrad_buffer_alloc(size_t bytes) {
  if (bytes == 0) {
    relugrad::Fail(RELUGRAD_INVALID_ARGUMENT, "relugrad_buffer_alloc: bytes is 0");
    return nullptr;
  }
  void* block = relugrad::BufferCache::Global().Allocate(bytes);
  if (block == nullptr) {
    relugrad::Fail(RELUGRAD_INTERNAL_ERROR, "relugrad_buffer_alloc: out of memory for %zu bytes",
                   bytes);
  }
  return block;
}

relugrad_status relugrad_buffer_free(void* block) {
  if (block == nullptr) return RELUGRAD_OK;
  if (!relugrad::BufferCache::Global().Release(block)) {
    return relugrad::Fail(
        RELUGRAD_INVALID_ARGUMENT,
        "relugrad_buffer_free: %p did not come from relugrad_buffer_alloc, or was freed already",
        block);
  }
  return RELUGRAD_OK;
}

size_t relugrad_buffer_cache_trim(void) { return relugrad::BufferCache::Global().Trim(); }

void relugrad_buffer_cache_stats(size_t* cached_bytes, size_t* live_bytes, uint64_t* hits,
                                 uint64_t* misses) {
  const relugrad::BufferCache::Stats stats = relugrad::BufferCache::Global().GetStats();
  if (cached_bytes != nullptr) *cached_bytes = stats.cached_bytes;
  if (live_bytes != nullptr) *live_bytes = stats.live_bytes;
  if (hits != nullptr) *hits = stats.hits;
  if (misses != nullptr) *misses = stats.misses;
}

}  // extern "C"
