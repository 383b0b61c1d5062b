// A move-only byte buffer for large operands: 64-byte aligned, and for
// sizes of 2 MiB and more 2 MiB aligned with MADV_HUGEPAGE (this machine's
// THP mode is `madvise`), which cuts first-touch page faults 512-fold for
// fresh outputs. Allocation failure is reported, never thrown.
#ifndef RELUGRAD_IO_ALIGNED_BUFFER_H_
#define RELUGRAD_IO_ALIGNED_BUFFER_H_

#include <cstddef>
#include <cstdlib>
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
    constexpr size_t kHuge = size_t{2} << 20;
    const size_t align = bytes >= kHuge ? kHuge : 64;
    const size_t rounded = (bytes + align - 1) / align * align;
    void* p = nullptr;
    if (posix_memalign(&p, align, rounded) != 0) return false;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (align == kHuge) madvise(p, rounded, MADV_HUGEPAGE);
#endif
    data_ = static_cast<unsigned char*>(p);
    size_ = bytes;
    return true;
  }

  unsigned char* data() { return data_; }
  const unsigned char* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  unsigned char* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace relugrad

#endif  // RELUGRAD_IO_ALIGNED_BUFFER_H_
