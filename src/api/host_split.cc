// relugrad_cpu_host_split: the launch policy's answer for a caller that
// splits one call over its own threads (cpu/launch.h, DecideHostSplit).
#include "core/error.h"
#include "core/dtype_traits.h"
#include "core/validate.h"
#include "cpu/launch.h"
#include "relugrad/relugrad.h"

extern "C" relugrad_status relugrad_cpu_host_split(relugrad_dtype dtype, int64_t n, int32_t threads,
                                                   int32_t host_threads, int64_t host_grain_elems,
                                                   const void* output, relugrad_host_split* out) {
  using namespace relugrad;
  RELUGRAD_RETURN_IF_ERROR(ValidateDtypeAndCount(dtype, n));
  if (out == nullptr) return Fail(RELUGRAD_INVALID_ARGUMENT, "out is NULL");
  if (threads < 0) return Fail(RELUGRAD_INVALID_ARGUMENT, "threads is %d (0 or more)", threads);
  if (host_threads < 1) {
    return Fail(RELUGRAD_INVALID_ARGUMENT, "host_threads is %d (1 or more)", host_threads);
  }
  if (host_grain_elems < 0) {
    return Fail(RELUGRAD_INVALID_ARGUMENT, "host_grain_elems is %lld (0 or more)",
                static_cast<long long>(host_grain_elems));
  }
  const HostSplit h = DecideHostSplit(LaunchPolicy::ForThisMachine(), n,
                                      static_cast<int>(DtypeSize(ToDtype(dtype))), threads,
                                      host_threads, host_grain_elems, output);
  out->split = h.split ? 1 : 0;
  out->threads = h.threads;
  out->stores = h.stores;
  out->part_unit_elems = h.part_unit_elems;
  return RELUGRAD_OK;
}
