// The plan of a one-shot call (relugrad_relu_grad, relugrad_relu_forward,
// relugrad_relu_grad_mask). Building a plan costs the option checks and the
// gate-key searches (docs/design.md, "Resolve once, run many: the plan"),
// several times the whole call at n <= 1024, and callers repeat
// a few configurations (a training step: one or two dtypes, one preset, a
// store hint that follows the tensor size). So each one-shot entry point
// keeps, per thread, the last kOneShotPlans plans it built, keyed by the
// full options struct (compared byte for byte: -0 and +0 or two NaN
// payloads never share a plan) and the dtype; the last hit is tried first,
// a miss replaces the oldest build. This is the library's only cache of
// resolved options; a caller cycling through more configurations should
// hold plans (relugrad_plan_create) instead.
#ifndef RELUGRAD_API_ONE_SHOT_PLAN_H_
#define RELUGRAD_API_ONE_SHOT_PLAN_H_

#include <cstdint>
#include <cstring>

#include "core/plan.h"
#include "core/rules.h"
#include "relugrad/relugrad.h"

namespace relugrad {
namespace internal {

// memcmp(&a, &b, sizeof) == 0, inlined: glibc's memcmp is a call through
// the PLT, which a call at n = 16 feels.
inline bool SameBytes(const relugrad_options& a, const relugrad_options& b) {
  static_assert(sizeof(relugrad_options) % sizeof(uint64_t) == 0, "compared in 8-byte words");
  uint64_t diff = 0;
  for (size_t i = 0; i < sizeof(relugrad_options); i += sizeof(uint64_t)) {
    uint64_t wa, wb;
    std::memcpy(&wa, reinterpret_cast<const unsigned char*>(&a) + i, sizeof(wa));
    std::memcpy(&wb, reinterpret_cast<const unsigned char*>(&b) + i, sizeof(wb));
    diff |= wa ^ wb;
  }
  return diff == 0;
}

}  // namespace internal

// The calling thread's plan for op, dtype and options (dtype already
// validated), valid until the thread's next call of this op; or the
// status of the failed create, with the thread's last error set.
inline constexpr int kOneShotPlans = 4;

template <relugrad_plan_op Op>
relugrad_status OneShotPlan(relugrad_dtype dtype, const relugrad_options* options,
                            const relugrad_plan** plan) {
  struct Entry {
    relugrad_options key;  // full size: NULL and shorter structs are completed first
    relugrad_dtype dtype;
    bool valid;  // key and dtype describe plan
    relugrad_plan plan;
  };
  struct Cache {
    Entry entries[kOneShotPlans];
    int last_hit;    // tried first: a repeated configuration costs one compare
    int next_build;  // replaced on a miss (oldest build first)
  };
  // Constant-initialised (no dynamic initialiser) and trivially destructible:
  // reading it costs no guard and registers no destructor.
  thread_local Cache cache{};
  const relugrad_options* key = options;
  relugrad_options full;
  if (options == nullptr || options->struct_size != sizeof(relugrad_options)) {
    RELUGRAD_RETURN_IF_ERROR(FullOptions(options, &full));
    key = &full;
  }
  auto holds = [&](const Entry& e) {
    return e.valid && e.dtype == dtype && internal::SameBytes(e.key, *key);
  };
  if (holds(cache.entries[cache.last_hit])) {
    *plan = &cache.entries[cache.last_hit].plan;
    return RELUGRAD_OK;
  }
  for (int i = 0; i < kOneShotPlans; ++i) {
    if (i != cache.last_hit && holds(cache.entries[i])) {
      cache.last_hit = i;
      *plan = &cache.entries[i].plan;
      return RELUGRAD_OK;
    }
  }
  Entry& entry = cache.entries[cache.next_build];
  entry.valid = false;
  RELUGRAD_RETURN_IF_ERROR(BuildPlan(Op, dtype, key, &entry.plan));
  std::memcpy(&entry.key, key, sizeof(relugrad_options));
  entry.dtype = dtype;
  entry.valid = true;
  cache.last_hit = cache.next_build;
  cache.next_build = (cache.next_build + 1) % kOneShotPlans;
  *plan = &entry.plan;
  return RELUGRAD_OK;
}

}  // namespace relugrad

#endif  // RELUGRAD_API_ONE_SHOT_PLAN_H_
