// What the CUDA device suites share: the skip without a device, an assertion
// on a CUDA call, and DeviceGuarded, support/guarded.h's placement in device
// memory (an array at a byte offset past kGuardBytes of kSentinel on both
// sides, checked after the copy back). Header only: the suites that include
// it link the CUDA runtime, relugrad_test_support does not.
#ifndef RELUGRAD_TESTS_SUPPORT_CUDA_DEVICE_H_
#define RELUGRAD_TESTS_SUPPORT_CUDA_DEVICE_H_

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <vector>

#include "support/guarded.h"

namespace relugrad {
namespace testing {

// "" when a device is usable, else the reason (for the skip message).
inline std::string NoDeviceReason() {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return std::string("cudaGetDeviceCount: ") + cudaGetErrorString(e);
  }
  return count == 0 ? "the CUDA runtime reports 0 devices" : "";
}

// Without a device the test reports SKIPPED (ctest counts it skipped, not passed).
#define SKIP_WITHOUT_DEVICE()                                                    \
  do {                                                                           \
    const std::string reason_ = ::relugrad::testing::NoDeviceReason();           \
    if (!reason_.empty())                                                        \
      GTEST_SKIP() << "no CUDA device (" << reason_ << "): device test skipped"; \
  } while (0)

#define CUDA_ASSERT(expr)                                                  \
  do {                                                                     \
    const cudaError_t e_ = (expr);                                         \
    ASSERT_EQ(e_, cudaSuccess) << #expr << ": " << cudaGetErrorString(e_); \
  } while (0)

// Device memory with RAII; get() is nullptr when cudaMalloc failed.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t bytes) {
    if (cudaMalloc(&ptr_, bytes == 0 ? 1 : bytes) != cudaSuccess) ptr_ = nullptr;
  }
  ~DeviceBuffer() {
    if (ptr_ != nullptr) cudaFree(ptr_);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  unsigned char* get() const { return static_cast<unsigned char*>(ptr_); }

 private:
  void* ptr_ = nullptr;
};

// One array of `bytes` bytes at `offset` bytes past kGuardBytes into a
// kSentinel-filled device buffer (cudaMalloc's 256-byte alignment, so the
// offset is the array's misalignment within a line). Constructors cannot
// assert: error() says what failed, "" when the buffer is ready.
class DeviceGuarded {
 public:
  // `bytes` bytes set to `fill`.
  DeviceGuarded(size_t bytes, size_t offset, unsigned char fill)
      : storage_(bytes + offset + 2 * kGuardBytes),
        size_(bytes + offset + 2 * kGuardBytes),
        begin_(kGuardBytes + offset),
        bytes_(bytes) {
    if (storage_.get() == nullptr) {
      error_ = "cudaMalloc of " + std::to_string(size_) + " bytes failed";
      return;
    }
    Note(cudaMemset(storage_.get(), kSentinel, size_), "cudaMemset");
    if (bytes > 0) Note(cudaMemset(data(), fill, bytes), "cudaMemset");
  }
  // A copy of `contents`.
  DeviceGuarded(const std::vector<unsigned char>& contents, size_t offset)
      : DeviceGuarded(contents.size(), offset, 0) {
    if (error_.empty() && !contents.empty())
      Note(cudaMemcpy(data(), contents.data(), contents.size(), cudaMemcpyHostToDevice),
           "cudaMemcpy to the device");
  }
  DeviceGuarded(const DeviceGuarded&) = delete;
  DeviceGuarded& operator=(const DeviceGuarded&) = delete;

  const std::string& error() const { return error_; }
  unsigned char* data() const { return storage_.get() + begin_; }
  size_t size() const { return bytes_; }

  // The whole buffer, guards included, copied back; empty when the copy failed.
  std::vector<unsigned char> Download() const {
    std::vector<unsigned char> host(size_);
    if (cudaMemcpy(host.data(), storage_.get(), size_, cudaMemcpyDeviceToHost) != cudaSuccess)
      host.clear();
    return host;
  }
  // "" when the array's bytes in `host` (a Download()) are surrounded by
  // intact guards, else how far outside the first write was.
  std::string CheckGuards(const std::vector<unsigned char>& host) const {
    if (host.size() != size_) return "the copy back from the device failed";
    return CheckSentinels(host.data(), host.size(), begin_, bytes_);
  }
  // The array's first byte within a Download() of this buffer.
  const unsigned char* Array(const std::vector<unsigned char>& host) const {
    return host.data() + begin_;
  }

 private:
  void Note(cudaError_t e, const char* what) {
    if (e != cudaSuccess && error_.empty())
      error_ = std::string(what) + ": " + cudaGetErrorString(e);
  }

  DeviceBuffer storage_;
  size_t size_, begin_, bytes_;
  std::string error_;
};

}  // namespace testing
}  // namespace relugrad

#endif  // RELUGRAD_TESTS_SUPPORT_CUDA_DEVICE_H_
