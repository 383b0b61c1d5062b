// One array placed at a byte offset past a 64-byte boundary, with sentinel
// guard bands on both sides: the placement every bit-level suite uses to
// catch a misaligned access or a write outside [p, p + bytes).
#ifndef RELUGRAD_TESTS_SUPPORT_GUARDED_H_
#define RELUGRAD_TESTS_SUPPORT_GUARDED_H_

#include <cstddef>
#include <string>
#include <vector>

namespace relugrad {
namespace testing {

constexpr unsigned char kSentinel = 0xA5;
// Guard bytes on each side (a whole line at least: one vector of the widest
// target, and the line a streaming store writes).
constexpr size_t kGuardBytes = 64;

// "" when every byte of storage[0, size) outside [begin, begin + bytes) is
// kSentinel, else how far outside the array the first stray write was. The
// check of Guarded and of copies of guarded buffers from elsewhere (device
// memory: support/cuda_device.h).
std::string CheckSentinels(const unsigned char* storage, size_t size, size_t begin, size_t bytes);

class Guarded {
 public:
  // `bytes` bytes set to `fill`, at `offset` bytes past a 64-byte boundary.
  Guarded(size_t bytes, size_t offset, unsigned char fill);
  // The same with a copy of `contents`.
  Guarded(const std::vector<unsigned char>& contents, size_t offset);
  unsigned char* data() { return p_; }
  const unsigned char* data() const { return p_; }
  size_t size() const { return bytes_; }
  // "" when both guards are intact, else how far outside the first write was.
  std::string CheckGuards() const;

 private:
  std::vector<unsigned char> storage_;
  unsigned char* p_;
  size_t bytes_;
};

}  // namespace testing
}  // namespace relugrad

#endif  // RELUGRAD_TESTS_SUPPORT_GUARDED_H_
