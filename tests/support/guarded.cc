#include "support/guarded.h"

#include <cstdint>
#include <cstring>

namespace relugrad {
namespace testing {

Guarded::Guarded(size_t bytes, size_t offset, unsigned char fill) : bytes_(bytes) {
  storage_.assign(bytes + offset + 2 * kGuardBytes + 64, kSentinel);
  const uintptr_t a = reinterpret_cast<uintptr_t>(storage_.data());
  p_ = storage_.data() + ((64 - a % 64) % 64) + kGuardBytes + offset;
  if (bytes > 0) std::memset(p_, fill, bytes);
}

Guarded::Guarded(const std::vector<unsigned char>& contents, size_t offset)
    : Guarded(contents.size(), offset, 0) {
  // memcpy from an empty vector's NULL data() is undefined (UBSan).
  if (!contents.empty()) std::memcpy(p_, contents.data(), contents.size());
}

std::string Guarded::CheckGuards() const {
  for (const unsigned char* q = storage_.data(); q < p_; ++q) {
    if (*q != kSentinel) return "write " + std::to_string(p_ - q) + " bytes before the array";
  }
  for (const unsigned char* q = p_ + bytes_; q < storage_.data() + storage_.size(); ++q) {
    if (*q != kSentinel)
      return "write " + std::to_string(q - (p_ + bytes_)) + " bytes after the array";
  }
  return "";
}

}  // namespace testing
}  // namespace relugrad
