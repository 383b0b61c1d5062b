// What a call computes apart from how it runs. relugrad_options carries
// both; ResolveOptions validates every field once and splits them:
//   Rules      the operator's semantics (gate, combine, threshold, ...): the
//              input of MakeKernelParams and of the scalar reference;
//   Execution  threads, backend, stream, store hint: read by the backend
//              that runs the call, never by a rule.
#ifndef RELUGRAD_CORE_RULES_H_
#define RELUGRAD_CORE_RULES_H_

#include <limits>

#include "relugrad/relugrad.h"

namespace relugrad {

// Validated rules (every enum in range, threshold not NaN, alpha finite,
// clip_lo <= clip_hi, gate_max not NaN and > threshold).
struct Rules {
  relugrad_gate gate = RELUGRAD_GATE_ZERO_IF_LE;
  relugrad_combine combine = RELUGRAD_COMBINE_SELECT;
  relugrad_denormals denormals = RELUGRAD_DENORMALS_IEEE;
  relugrad_threshold_rounding threshold_rounding = RELUGRAD_THRESHOLD_COMPUTE;
  double threshold = 0.0;
  double alpha = 0.0;
  bool clip = false;
  double clip_lo = 0.0;
  double clip_hi = 0.0;
  // Upper gate bound; +inf is none.
  double gate_max = kNoGateMax;
  // The mask forward's y for x = -0 at a closed gate (alpha = 0): -0 kept
  // (torch.relu) instead of +0.
  bool keep_negative_zero = false;

  static constexpr double kNoGateMax = std::numeric_limits<double>::infinity();
  bool HasGateMax() const { return gate_max != kNoGateMax; }
};

// Validated execution settings. No setting here changes a bit of a result.
struct Execution {
  int threads = 0;  // 0: all cores; capped at kMaxThreadsPerCall
  relugrad_backend backend = RELUGRAD_BACKEND_CPU;
  void* stream = nullptr;  // CUDA: a cudaStream_t (nullptr: the default stream)
  relugrad_stores stores = RELUGRAD_STORES_AUTO;

  // The pool keeps one OS thread per block for the life of the process, so
  // an absurd request (threads = INT_MAX on a large array) would start
  // thousands of threads. Results do not depend on the thread count, so the
  // cap is invisible except in resources.
  static constexpr int kMaxThreadsPerCall = 256;
};

// Copies the fields that fit in options->struct_size into *full (defaults
// for the rest; NULL means the torch preset), with struct_size set to the
// full size. Fails (INVALID_ARGUMENT, the thread's last error set) only for
// a struct_size that is too small or too large.
relugrad_status FullOptions(const relugrad_options* options, relugrad_options* full);

// FullOptions, then every field validated and split into rules and
// execution (either may be nullptr when the caller needs only the other).
// On failure sets the thread's last error and returns
// RELUGRAD_INVALID_ARGUMENT; the outputs are then unspecified.
relugrad_status ResolveOptions(const relugrad_options* options, Rules* rules,
                               Execution* execution = nullptr);

}  // namespace relugrad

#endif  // RELUGRAD_CORE_RULES_H_
