#include "core/validate.h"

#include <limits>

#include "core/error.h"

namespace relugrad {

relugrad_status ValidateDtype(relugrad_dtype dtype) {
  if (dtype < RELUGRAD_F32 || dtype > RELUGRAD_F64) {
    return Fail(RELUGRAD_INVALID_ARGUMENT, "dtype %d is not a relugrad_dtype", static_cast<int>(dtype));
  }
  return RELUGRAD_OK;
}

relugrad_status ValidateCount(int64_t n, int64_t elem_bytes) {
  if (n < 0) return Fail(RELUGRAD_INVALID_ARGUMENT, "n must be >= 0, got %lld", static_cast<long long>(n));
  const int64_t limit = static_cast<int64_t>(std::numeric_limits<intptr_t>::max() / 2);
  if (elem_bytes > 0 && n > limit / elem_bytes) {
    return Fail(RELUGRAD_INVALID_ARGUMENT, "n = %lld elements does not fit in memory", static_cast<long long>(n));
  }
  return RELUGRAD_OK;
}

relugrad_status ValidatePointer(const char* name, const void* ptr, int64_t n, int64_t align) {
  if (n == 0) return RELUGRAD_OK;
  if (ptr == nullptr) return Fail(RELUGRAD_INVALID_ARGUMENT, "%s is NULL with n = %lld", name, static_cast<long long>(n));
  if (align > 1 && reinterpret_cast<uintptr_t>(ptr) % static_cast<uintptr_t>(align) != 0) {
    return Fail(RELUGRAD_INVALID_ARGUMENT, "%s (%p) is not aligned to its %lld-byte element", name, ptr,
                static_cast<long long>(align));
  }
  const uintptr_t start = reinterpret_cast<uintptr_t>(ptr);
  if (start + static_cast<uintptr_t>(n) * static_cast<uintptr_t>(align) < start) {
    return Fail(RELUGRAD_INVALID_ARGUMENT, "%s + n wraps around the address space", name);
  }
  return RELUGRAD_OK;
}

relugrad_status ValidateAliasing(const char* out_name, const void* out, int64_t out_bytes,
                                 const char* in_name, const void* in, int64_t in_bytes) {
  if (out_bytes == 0 || in_bytes == 0 || out == in) return RELUGRAD_OK;
  const uintptr_t o = reinterpret_cast<uintptr_t>(out);
  const uintptr_t i = reinterpret_cast<uintptr_t>(in);
  const bool disjoint = o + static_cast<uintptr_t>(out_bytes) <= i || i + static_cast<uintptr_t>(in_bytes) <= o;
  if (!disjoint) {
    return Fail(RELUGRAD_INVALID_ARGUMENT,
                "%s partially overlaps %s (in place needs the same pointer; otherwise no overlap)",
                out_name, in_name);
  }
  return RELUGRAD_OK;
}

}  // namespace relugrad
