// A move-only byte buffer for large operands: 64-byte aligned, and for
// sizes of 2 MiB and more 2 MiB aligned. Transparent huge pages are opt-in
// (RELUGRAD_HUGEPAGES=1 -> MADV_HUGEPAGE): where the kernel must compact
// memory to find huge pages (THP defrag = madvise), the first touch of a
// madvised buffer can take several times longer than with 4 KiB pages
// (docs/design.md, "Huge pages opt-in"). Allocation
// failure is reported, never thrown.
#ifndef RELUGRAD_IO_ALIGNED_BUFFER_H_
#define RELUGRAD_IO_ALIGNED_BUFFER_H_

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <utility>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace relugrad {

class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  AlignedBuffer(AlignedBuffer&& other) noexcept { *this = std::move(other); }
  AlignedBuffer& operator=(AlignedBuffer&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
    return *this;
  }
  ~AlignedBuffer() { std::free(data_); }

  // Returns false when memory is not available.
  bool Allocate(size_t bytes) {
    std::free(data_);
    data_ = nullptr;
    size_ = 0;
    if (bytes == 0) return true;
    data_ = static_cast<unsigned char*>(AllocateLargeAligned(bytes));
    if (data_ == nullptr) return false;
    size_ = bytes;
    return true;
  }

  // The allocation policy above as a function, for owners of raw blocks
  // (core/buffer_cache.cc): release with std::free. nullptr when memory is
  // not available or bytes == 0.
  static void* AllocateLargeAligned(size_t bytes) {
    if (bytes == 0) return nullptr;
    constexpr size_t kHuge = size_t{2} << 20;
    const size_t align = bytes >= kHuge ? kHuge : 64;
    const size_t rounded = (bytes + align - 1) / align * align;
    if (rounded < bytes) return nullptr;  // size_t overflow
    void* p = nullptr;
    if (posix_memalign(&p, align, rounded) != 0) return nullptr;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (align == kHuge && HugePagesRequested()) madvise(p, rounded, MADV_HUGEPAGE);
#endif
    return p;
  }

  unsigned char* data() { return data_; }
  const unsigned char* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  static bool HugePagesRequested() {
    static const bool requested = [] {
      const char* env = std::getenv("RELUGRAD_HUGEPAGES");
      return env != nullptr && std::strcmp(env, "1") == 0;
    }();
    return requested;
  }

  unsigned char* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace relugrad

#endif  // RELUGRAD_IO_ALIGNED_BUFFER_H_
