#include "core/error.h"

#include <cstdarg>
#include <cstdio>

namespace relugrad {
namespace {
thread_local char g_last_error[512] = "";
}  // namespace

void ClearLastError() { g_last_error[0] = '\0'; }

const char* LastError() { return g_last_error; }

relugrad_status Fail(relugrad_status status, const char* format, ...) {
  va_list args;
  va_start(args, format);
  std::vsnprintf(g_last_error, sizeof(g_last_error), format, args);
  va_end(args);
  return status;
}

}  // namespace relugrad
