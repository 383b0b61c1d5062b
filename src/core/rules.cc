#include "core/rules.h"

#include <cmath>
#include <cstddef>
#include <cstring>

#include "core/error.h"

namespace relugrad {
namespace {

bool ValidEnum(int value, int count) { return value >= 0 && value < count; }

// The caller's enum fields may hold any int (C callers, zeroed or garbage
// structs); loading an out-of-range value through the enum type is
// undefined in C++ (UBSan's -fsanitize=enum flags it), so validation reads
// the raw bits.
template <typename E>
int RawEnum(const E& e) {
  static_assert(sizeof(E) == sizeof(int), "C enums are int-sized here");
  int v;
  std::memcpy(&v, &e, sizeof(v));
  return v;
}

}  // namespace

relugrad_status FullOptions(const relugrad_options* options, relugrad_options* full) {
  if (options == nullptr || options->struct_size != sizeof(relugrad_options)) {
    // Defaults for the fields a shorter (older) struct lacks; a full-size
    // struct overwrites every byte below, so the common call skips this.
    relugrad_options_init(full, RELUGRAD_PRESET_TORCH);
  }
  if (options != nullptr) {
    if (options->struct_size < offsetof(relugrad_options, threshold) ||
        options->struct_size > sizeof(relugrad_options)) {
      return Fail(RELUGRAD_INVALID_ARGUMENT,
                  "options.struct_size is %u; initialise options with relugrad_options_init()",
                  options->struct_size);
    }
    std::memcpy(full, options, options->struct_size);
    full->struct_size = sizeof(*full);
  }
  return RELUGRAD_OK;
}

relugrad_status ResolveOptions(const relugrad_options* options, Rules* rules,
                               Execution* execution) {
  relugrad_options full;
  RELUGRAD_RETURN_IF_ERROR(FullOptions(options, &full));
  if (!ValidEnum(RawEnum(full.gate), 2))
    return Fail(RELUGRAD_INVALID_ARGUMENT, "options.gate %d is not a relugrad_gate",
                RawEnum(full.gate));
  if (!ValidEnum(RawEnum(full.combine), 2))
    return Fail(RELUGRAD_INVALID_ARGUMENT, "options.combine %d is not a relugrad_combine",
                RawEnum(full.combine));
  if (!ValidEnum(RawEnum(full.denormals), 2))
    return Fail(RELUGRAD_INVALID_ARGUMENT, "options.denormals %d is not a relugrad_denormals",
                RawEnum(full.denormals));
  if (!ValidEnum(RawEnum(full.threshold_rounding), 2))
    return Fail(RELUGRAD_INVALID_ARGUMENT,
                "options.threshold_rounding %d is not a relugrad_threshold_rounding",
                RawEnum(full.threshold_rounding));
  if (!ValidEnum(RawEnum(full.stores), 3))
    return Fail(RELUGRAD_INVALID_ARGUMENT, "options.stores %d is not a relugrad_stores",
                RawEnum(full.stores));
  if (!ValidEnum(RawEnum(full.backend), 3))
    return Fail(RELUGRAD_INVALID_ARGUMENT, "options.backend %d is not a relugrad_backend",
                RawEnum(full.backend));
  if (std::isnan(full.threshold)) return Fail(RELUGRAD_INVALID_ARGUMENT, "threshold is NaN");
  if (!std::isfinite(full.alpha))
    return Fail(RELUGRAD_INVALID_ARGUMENT, "alpha must be finite (got %g)", full.alpha);
  if (full.clip) {
    if (std::isnan(full.clip_lo) || std::isnan(full.clip_hi))
      return Fail(RELUGRAD_INVALID_ARGUMENT, "clip bounds must not be NaN");
    if (full.clip_lo > full.clip_hi)
      return Fail(RELUGRAD_INVALID_ARGUMENT, "clip range [%g, %g] is empty (lo > hi)", full.clip_lo,
                  full.clip_hi);
  }
  // A struct_size that ends before gate_max got the default (+inf) above.
  if (std::isnan(full.gate_max)) return Fail(RELUGRAD_INVALID_ARGUMENT, "gate_max is NaN");
  if (full.gate_max != Rules::kNoGateMax && !(full.gate_max > full.threshold))
    return Fail(RELUGRAD_INVALID_ARGUMENT,
                "gate_max (%g) must be greater than threshold (%g): the gate is open for "
                "threshold < s < gate_max",
                full.gate_max, full.threshold);
  if (full.threads < 0)
    return Fail(RELUGRAD_INVALID_ARGUMENT, "threads must be >= 0 (0 = all cores), got %d",
                full.threads);

  if (rules != nullptr) {
    rules->gate = full.gate;
    rules->combine = full.combine;
    rules->denormals = full.denormals;
    rules->threshold_rounding = full.threshold_rounding;
    rules->threshold = full.threshold;
    rules->alpha = full.alpha;
    rules->clip = full.clip != 0;
    rules->clip_lo = full.clip_lo;
    rules->clip_hi = full.clip_hi;
    rules->gate_max = full.gate_max;
    rules->keep_negative_zero = full.keep_negative_zero != 0;
  }
  if (execution != nullptr) {
    execution->threads =
        full.threads > Execution::kMaxThreadsPerCall ? Execution::kMaxThreadsPerCall : full.threads;
    execution->backend = full.backend;
    execution->stream = full.stream;
    execution->stores = full.stores;
  }
  return RELUGRAD_OK;
}

}  // namespace relugrad
