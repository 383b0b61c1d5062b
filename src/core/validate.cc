#include "core/validate.h"

#include "core/error.h"

namespace relugrad {

relugrad_status FailDtype(relugrad_dtype dtype) {
  return Fail(RELUGRAD_INVALID_ARGUMENT, "dtype %d is not a relugrad_dtype",
              static_cast<int>(dtype));
}

relugrad_status FailCount(int64_t n) {
  if (n < 0)
    return Fail(RELUGRAD_INVALID_ARGUMENT, "n must be >= 0, got %lld", static_cast<long long>(n));
  return Fail(RELUGRAD_INVALID_ARGUMENT, "n = %lld elements does not fit in memory",
              static_cast<long long>(n));
}

relugrad_status FailPointer(const char* name, const void* ptr, int64_t n, int64_t align) {
  if (ptr == nullptr)
    return Fail(RELUGRAD_INVALID_ARGUMENT, "%s is NULL with n = %lld", name,
                static_cast<long long>(n));
  if (align > 1 && reinterpret_cast<uintptr_t>(ptr) % static_cast<uintptr_t>(align) != 0) {
    return Fail(RELUGRAD_INVALID_ARGUMENT, "%s (%p) is not aligned to its %lld-byte element", name,
                ptr, static_cast<long long>(align));
  }
  return Fail(RELUGRAD_INVALID_ARGUMENT, "%s + n wraps around the address space", name);
}

relugrad_status FailAliasing(const char* out_name, const char* in_name) {
  return Fail(RELUGRAD_INVALID_ARGUMENT,
              "%s partially overlaps %s (in place needs the same pointer; otherwise no overlap)",
              out_name, in_name);
}

}  // namespace relugrad
