// Argument checks shared by every entry point (C API, mask path, bindings):
// dtype, n, null pointers, element alignment and aliasing. Each failure sets
// the thread's last error with a message naming the argument.
#ifndef RELUGRAD_CORE_VALIDATE_H_
#define RELUGRAD_CORE_VALIDATE_H_

#include <cstdint>

#include "core/dtype_traits.h"
#include "relugrad/relugrad.h"

namespace relugrad {

relugrad_status ValidateDtype(relugrad_dtype dtype);

// n >= 0, n * elem_bytes fits in the address space.
relugrad_status ValidateCount(int64_t n, int64_t elem_bytes);

// ptr non-null when n > 0 and aligned to `align` bytes.
relugrad_status ValidatePointer(const char* name, const void* ptr, int64_t n, int64_t align);

// An output may equal an input exactly (in place) or not overlap it at all.
relugrad_status ValidateAliasing(const char* out_name, const void* out, int64_t out_bytes,
                                 const char* in_name, const void* in, int64_t in_bytes);

}  // namespace relugrad

#endif  // RELUGRAD_CORE_VALIDATE_H_
