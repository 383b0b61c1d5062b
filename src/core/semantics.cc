#include "core/semantics.h"

#include <cmath>
#include <cstddef>
#include <cstring>

#include "core/error.h"
#include "core/float_convert.h"
#include "core/gate_keys.h"

namespace relugrad {
namespace {

bool ValidEnum(int value, int count) { return value >= 0 && value < count; }

// reliability: the caller's enum fields may hold any int (C
// callers, zeroed or garbage structs); loading an out-of-range value through
// the enum type is undefined in C++ (UBSan -fsanitize=enum flagged it), so
// validation reads the raw bits.
template <typename E>
int RawEnum(const E& e) {
  static_assert(sizeof(E) == sizeof(int), "C enums are int-sized here");
  int v;
  std::memcpy(&v, &e, sizeof(v));
  return v;
}

}  // namespace

// Data-type rounding converts t as PyTorch converts a Python float for the
// tensor's type (through float for 16-bit data: ScalarToDtypeBits), which is
// what its 1.x CPU and CUDA threshold kernels compared against.
namespace {
double RoundedBound(Dtype dtype, relugrad_threshold_rounding rounding, double value) {
  if (rounding == RELUGRAD_THRESHOLD_DTYPE) {
    return BitsToDouble(dtype, ScalarToDtypeBits(dtype, value));
  }
  return dtype == Dtype::kF64 ? value : static_cast<double>(RoundToFloat(value));
}
}  // namespace

double ComparedThreshold(Dtype dtype, const Semantics& sem) {
  return RoundedBound(dtype, sem.threshold_rounding, sem.threshold);
}

// PyTorch's hardtanh_backward rounds both bounds alike (to float for
// 16-bit and f32 data, as it compares in float), so the upper bound follows
// the threshold's rounding rule.
double ComparedGateMax(Dtype dtype, const Semantics& sem) {
  return RoundedBound(dtype, sem.threshold_rounding, sem.gate_max);
}

relugrad_status ResolveOptions(const relugrad_options* options, Semantics* out) {
  relugrad_options full;
  if (options == nullptr || options->struct_size != sizeof(relugrad_options)) {
    // Defaults for the fields a shorter (older) struct lacks; a full-size
    // struct overwrites every byte below, so the common call skips this.
    relugrad_options_init(&full, RELUGRAD_PRESET_TORCH);
  }
  if (options != nullptr) {
    if (options->struct_size < offsetof(relugrad_options, threshold) ||
        options->struct_size > sizeof(relugrad_options)) {
      return Fail(RELUGRAD_INVALID_ARGUMENT,
                  "options.struct_size is %u; initialise options with relugrad_options_init()",
                  options->struct_size);
    }
    std::memcpy(&full, options, options->struct_size);
    full.struct_size = sizeof(full);
  }
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
  if (full.gate_max != Semantics::kNoGateMax && !(full.gate_max > full.threshold))
    return Fail(RELUGRAD_INVALID_ARGUMENT,
                "gate_max (%g) must be greater than threshold (%g): the gate is open for "
                "threshold < s < gate_max",
                full.gate_max, full.threshold);
  if (full.threads < 0)
    return Fail(RELUGRAD_INVALID_ARGUMENT, "threads must be >= 0 (0 = all cores), got %d",
                full.threads);

  out->gate = full.gate;
  out->combine = full.combine;
  out->denormals = full.denormals;
  out->threshold_rounding = full.threshold_rounding;
  out->threshold = full.threshold;
  out->alpha = full.alpha;
  out->clip = full.clip != 0;
  out->clip_lo = full.clip_lo;
  out->clip_hi = full.clip_hi;
  // reliability: the pool keeps one OS thread per block for the
  // life of the process, so an absurd request (threads = INT_MAX on a large
  // array) would start thousands of threads. Results do not depend on the
  // thread count, so capping it is invisible except in resources.
  constexpr int32_t kMaxThreadsPerCall = 256;
  out->threads = full.threads > kMaxThreadsPerCall ? kMaxThreadsPerCall : full.threads;
  out->backend = full.backend;
  out->stream = full.stream;
  out->stores = full.stores;
  out->gate_max = full.gate_max;
  return RELUGRAD_OK;
}

namespace {

KernelParams BuildKernelParams(Dtype dtype, const Semantics& sem);

// The fields MakeKernelParams reads, compared bitwise (so -0 and +0 or two
// NaN payloads never share an entry: a conservative key, never a wrong hit).
struct ParamsKey {
  Dtype dtype;
  relugrad_gate gate;
  relugrad_combine combine;
  relugrad_denormals denormals;
  relugrad_threshold_rounding rounding;
  bool clip;
  uint64_t threshold, alpha, clip_lo, clip_hi, gate_max;

  static uint64_t Bits(double v) {
    uint64_t b;
    std::memcpy(&b, &v, sizeof(b));
    return b;
  }
  ParamsKey(Dtype d, const Semantics& s)
      : dtype(d),
        gate(s.gate),
        combine(s.combine),
        denormals(s.denormals),
        rounding(s.threshold_rounding),
        clip(s.clip),
        threshold(Bits(s.threshold)),
        alpha(Bits(s.alpha)),
        clip_lo(s.clip ? Bits(s.clip_lo) : 0),
        clip_hi(s.clip ? Bits(s.clip_hi) : 0),
        gate_max(Bits(s.gate_max)) {}
  bool operator==(const ParamsKey& o) const {
    return dtype == o.dtype && gate == o.gate && combine == o.combine && denormals == o.denormals &&
           rounding == o.rounding && clip == o.clip && threshold == o.threshold &&
           alpha == o.alpha && clip_lo == o.clip_lo && clip_hi == o.clip_hi &&
           gate_max == o.gate_max;
  }
};

}  // namespace

// Building the params (the key derivation of gate_keys.cc, the clip keys,
// the rounded alpha) costs more than a memo hit (docs/performance-notes.md,
// "Fixed cost of a call"). Callers repeat the same few configurations (a
// training step: one dtype, one preset), so each thread keeps the last few
// results.
// Pure function of the key, hence a hit returns identical params.
KernelParams MakeKernelParams(Dtype dtype, const Semantics& sem) {
  struct Entry {
    ParamsKey key;
    KernelParams params;
  };
  constexpr int kEntries = 4;
  thread_local Entry cache[kEntries] = {
      {ParamsKey(Dtype::kF32, Semantics()), BuildKernelParams(Dtype::kF32, Semantics())},
      {ParamsKey(Dtype::kF16, Semantics()), BuildKernelParams(Dtype::kF16, Semantics())},
      {ParamsKey(Dtype::kBF16, Semantics()), BuildKernelParams(Dtype::kBF16, Semantics())},
      {ParamsKey(Dtype::kF64, Semantics()), BuildKernelParams(Dtype::kF64, Semantics())}};
  thread_local int next = 0;
  const ParamsKey key(dtype, sem);
  for (const Entry& e : cache) {
    if (e.key == key) return e.params;
  }
  Entry& slot = cache[next];
  next = (next + 1) % kEntries;
  slot.key = key;
  slot.params = BuildKernelParams(dtype, sem);
  return slot.params;
}

namespace {

// memcmp(&a, &b, sizeof) == 0, inlined: glibc's memcmp is a call through
// the PLT, 4 ns of a 50 ns call.
bool SameBytes(const relugrad_options& a, const relugrad_options& b) {
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

}  // namespace

const ResolvedCall* ResolveCall(const relugrad_options* options, Dtype dtype) {
  struct Memo {
    relugrad_options options;
    Dtype dtype;
    bool valid;  // options and dtype describe call
    ResolvedCall call;
  };
  // Constant-initialised (no dynamic initialiser): reading it costs no
  // per-access guard.
  thread_local Memo memo{};
  const bool full_size = options != nullptr && options->struct_size == sizeof(relugrad_options);
  if (full_size && memo.valid && memo.dtype == dtype && SameBytes(memo.options, *options)) {
    return &memo.call;
  }
  memo.valid = false;
  if (ResolveOptions(options, &memo.call.sem) != RELUGRAD_OK) return nullptr;
  memo.call.params = MakeKernelParams(dtype, memo.call.sem);
  if (full_size) {  // older, shorter structs are resolved every time
    std::memcpy(&memo.options, options, sizeof(relugrad_options));
    memo.dtype = dtype;
    memo.valid = true;
  }
  return &memo.call;
}

namespace {

KernelParams BuildKernelParams(Dtype dtype, const Semantics& sem) {
  KernelParams p;
  p.dtype = dtype;
  p.gate_nan_open = sem.gate == RELUGRAD_GATE_ZERO_IF_LE;
  p.open_multiply = sem.combine == RELUGRAD_COMBINE_MULTIPLY;
  // f16 data has no subnormals in its f32 compute type.
  p.flush_subnormals = sem.denormals == RELUGRAD_DENORMALS_FTZ_DAZ && dtype != Dtype::kF16;
  p.clip = sem.clip;
  p.gate_upper = sem.HasGateMax();
  // alpha is never rounded to the data type: it is a factor of the
  // compute-type multiply (float for 16-bit data, as oneDNN's float alpha
  // and PyTorch's opmath negative slope), whose product alone is rounded.
  p.alpha = dtype == Dtype::kF64 ? sem.alpha : static_cast<double>(RoundToFloat(sem.alpha));
  p.alpha_f32 = RoundToFloat(sem.alpha);
  if (p.alpha != 0.0) {
    p.closed = ClosedRule::kMulAlpha;
  } else {
    p.closed = p.open_multiply ? ClosedRule::kMulZero : ClosedRule::kZero;
  }
  FillKeys(&p, sem);
  return p;
}

}  // namespace
}  // namespace relugrad
