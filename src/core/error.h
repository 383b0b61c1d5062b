// The thread-local "last error" behind relugrad_last_error(), and helpers
// that set it and return the matching status in one expression.
#ifndef RELUGRAD_CORE_ERROR_H_
#define RELUGRAD_CORE_ERROR_H_

#include "relugrad/relugrad.h"

namespace relugrad {

void ClearLastError();
const char* LastError();

// printf-style; returns the status so callers can `return Fail(...)`.
relugrad_status Fail(relugrad_status status, const char* format, ...)
    __attribute__((format(printf, 2, 3)));

#define RELUGRAD_RETURN_IF_ERROR(expr)                \
  do {                                                \
    const relugrad_status rg_status_ = (expr);        \
    if (rg_status_ != RELUGRAD_OK) return rg_status_; \
  } while (0)

}  // namespace relugrad

#endif  // RELUGRAD_CORE_ERROR_H_
