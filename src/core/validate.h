// Argument checks shared by every entry point (C API, mask path, bindings):
// dtype, n, null pointers, element alignment and aliasing. Each failure sets
// the thread's last error with a message naming the argument.
#ifndef RELUGRAD_CORE_VALIDATE_H_
#define RELUGRAD_CORE_VALIDATE_H_

#include <cstdint>
#include <limits>

#include "core/dtype_traits.h"
#include "core/error.h"
#include "relugrad/relugrad.h"

namespace relugrad {

// Each check is inline (every call runs five of them; out of line they show
// in a call at n = 16) and reports through an out-of-line Fail*.

relugrad_status FailDtype(relugrad_dtype dtype);
relugrad_status FailCount(int64_t n);
relugrad_status FailPointer(const char* name, const void* ptr, int64_t n, int64_t align);
relugrad_status FailAliasing(const char* out_name, const char* in_name);

inline relugrad_status ValidateDtype(relugrad_dtype dtype) {
  if (dtype < RELUGRAD_F32 || dtype > RELUGRAD_F64) return FailDtype(dtype);
  return RELUGRAD_OK;
}

// n >= 0, n * elem_bytes fits in the address space.
inline relugrad_status ValidateCount(int64_t n, int64_t elem_bytes) {
  constexpr int64_t kLimit = static_cast<int64_t>(std::numeric_limits<intptr_t>::max() / 2);
  if (n < 0 || (elem_bytes > 0 && n > kLimit / elem_bytes)) return FailCount(n);
  return RELUGRAD_OK;
}

// ptr non-null when n > 0, aligned to `align` bytes, and ptr + n * align
// does not wrap around the address space.
inline relugrad_status ValidatePointer(const char* name, const void* ptr, int64_t n,
                                       int64_t align) {
  if (n == 0) return RELUGRAD_OK;
  const uintptr_t start = reinterpret_cast<uintptr_t>(ptr);
  if (ptr == nullptr || (align > 1 && start % static_cast<uintptr_t>(align) != 0) ||
      start + static_cast<uintptr_t>(n) * static_cast<uintptr_t>(align) < start) {
    return FailPointer(name, ptr, n, align);
  }
  return RELUGRAD_OK;
}

// The checks every entry point starts with: the thread's last error
// cleared (a call that succeeds leaves none), then the dtype and n.
inline relugrad_status ValidateDtypeAndCount(relugrad_dtype dtype, int64_t n) {
  ClearLastError();
  RELUGRAD_RETURN_IF_ERROR(ValidateDtype(dtype));
  return ValidateCount(n, static_cast<int64_t>(relugrad_dtype_size(dtype)));
}

// An output may equal an input exactly (in place) or not overlap it at all.
inline relugrad_status ValidateAliasing(const char* out_name, const void* out, int64_t out_bytes,
                                        const char* in_name, const void* in, int64_t in_bytes) {
  if (out_bytes == 0 || in_bytes == 0 || out == in) return RELUGRAD_OK;
  const uintptr_t o = reinterpret_cast<uintptr_t>(out);
  const uintptr_t i = reinterpret_cast<uintptr_t>(in);
  const bool disjoint =
      o + static_cast<uintptr_t>(out_bytes) <= i || i + static_cast<uintptr_t>(in_bytes) <= o;
  if (!disjoint) return FailAliasing(out_name, in_name);
  return RELUGRAD_OK;
}

}  // namespace relugrad

#endif  // RELUGRAD_CORE_VALIDATE_H_
