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

std::string CheckSentinels(const unsigned char* storage, size_t size, size_t begin, size_t bytes) {
  for (size_t i = 0; i < begin; ++i) {
    if (storage[i] != kSentinel)
      return "write " + std::to_string(begin - i) + " bytes before the array";
  }
  for (size_t i = begin + bytes; i < size; ++i) {
    if (storage[i] != kSentinel)
      return "write " + std::to_string(i - (begin + bytes)) + " bytes after the array";
  }
  return "";
}

std::string Guarded::CheckGuards() const {
  return CheckSentinels(storage_.data(), storage_.size(), static_cast<size_t>(p_ - storage_.data()),
                        bytes_);
}

}  // namespace testing
}  // namespace relugrad
