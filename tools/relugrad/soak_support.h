// Helpers for `relugrad soak` that are not about ReluGrad itself: durations
// ("10m", "24h", "1h30m"), the process's resident memory and the memory the
// machine has free, and an mmap-backed buffer.
//
// Why mmap for the soak's own operands: glibc keeps freed chunks below its
// (growing) mmap threshold in the heap, so buffers from malloc would make
// resident memory drift with the allocation history of the soak itself.
// Operands that are mapped and unmapped per call leave the resident set
// measured between calls to the library and the tool's small state, which is
// what the leak bound is about.
#ifndef RELUGRAD_TOOLS_SOAK_SUPPORT_H_
#define RELUGRAD_TOOLS_SOAK_SUPPORT_H_

#include <cstddef>
#include <cstdint>
#include <string>

namespace relugrad {
namespace cli {

// "90s", "10m", "24h", "1h30m", "0.5h", "2m30s" -> seconds. Every number
// needs a unit (s, m or h). Throws UsageError naming `what` otherwise.
double ParseDuration(const std::string& text, const std::string& what);

// "01:02:03" (hours may exceed 24: "30:00:00").
std::string FormatHms(double seconds);
// "812.0 MiB", "1.21 TiB".
std::string FormatBytes(double bytes);

// Resident set size of this process from /proc/self/statm (0 if unknown).
uint64_t ResidentBytes();
// MemAvailable from /proc/meminfo (0 if unknown).
uint64_t AvailableBytes();

// Anonymous private mapping; unmapped on destruction. Pages are touched by
// whoever writes them (the fill), so resident memory follows use.
class MappedBuffer {
 public:
  MappedBuffer() = default;
  explicit MappedBuffer(size_t bytes);  // throws std::bad_alloc on failure
  MappedBuffer(const MappedBuffer&) = delete;
  MappedBuffer& operator=(const MappedBuffer&) = delete;
  MappedBuffer(MappedBuffer&& other) noexcept;
  MappedBuffer& operator=(MappedBuffer&& other) noexcept;
  ~MappedBuffer();

  unsigned char* data() { return data_; }
  size_t size() const { return size_; }

 private:
  unsigned char* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace cli
}  // namespace relugrad

#endif  // RELUGRAD_TOOLS_SOAK_SUPPORT_H_
