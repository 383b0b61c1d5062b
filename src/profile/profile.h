// Production profiling. RELUGRAD_PROFILE=1 keeps per-configuration
// counters and prints a summary table to stderr at exit;
// RELUGRAD_PROFILE=path.json writes a Chrome/Perfetto trace instead (one
// slice per call on the caller's thread and one per block on each worker
// thread). Unset or 0: off.
//
// Cost when off: one load of a global and a predictable branch per call and
// per block (docs/design.md, "Profiler cost"). The mode is read
// from the environment once, when the library loads.
#ifndef RELUGRAD_PROFILE_PROFILE_H_
#define RELUGRAD_PROFILE_PROFILE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/dtype_traits.h"

namespace relugrad {
namespace profile {

enum class Mode : int { kOff = 0, kSummary = 1, kTrace = 2 };

// Set at load from RELUGRAD_PROFILE; read on every call.
extern Mode g_mode;
inline bool Enabled() { return __builtin_expect(g_mode != Mode::kOff, 0); }

int64_t NowNs();

// What the CPU backend decided for the current call on this thread (blocks
// actually used, streaming stores), reported by the backend when profiling.
void NoteBackend(int blocks, bool streaming);

// The configuration's label in summaries and traces: "zero_if_le+select",
// "pass_if_gt+multiply", ... (gate + combine rule). Inline, so that a call
// with profiling off does not pay for it (CallScope only reads it when on).
inline const char* RuleLabel(bool pass_if_gt, bool multiply) {
  static constexpr const char* kLabels[2][2] = {{"zero_if_le+select", "zero_if_le+multiply"},
                                                {"pass_if_gt+select", "pass_if_gt+multiply"}};
  return kLabels[pass_if_gt][multiply];
}

// Times one API call: construct at entry (after validation), destroy at exit.
class CallScope {
 public:
  CallScope(const char* op, Dtype dtype, int64_t n, double bytes, const char* rule)
      : active_(Enabled()) {
    if (active_) Begin(op, dtype, n, bytes, rule);
  }
  ~CallScope() {
    if (active_) End();
  }
  CallScope(const CallScope&) = delete;
  CallScope& operator=(const CallScope&) = delete;

 private:
  void Begin(const char* op, Dtype dtype, int64_t n, double bytes, const char* rule);
  void End();
  bool active_;
  const char* op_ = nullptr;
  const char* rule_ = nullptr;
  Dtype dtype_ = Dtype::kF32;
  int64_t n_ = 0;
  double bytes_ = 0;
  int64_t start_ns_ = 0;
};

// A worker block's slice for the trace (no-op unless tracing).
void RecordBlock(int block, int64_t begin_ns, int64_t end_ns, int64_t elements);

// ---- For tests and tools.
struct ConfigStats {
  std::string op, dtype, rule, isa;
  int threads = 0;
  int64_t n_bucket = 0;  // calls with n in [n_bucket, 2 n_bucket)
  int64_t calls = 0, elements = 0;
  double bytes = 0, total_s = 0, median_s = 0;
  int streaming_calls = 0;
};
void SetModeForTest(Mode mode, const std::string& trace_path = "");
void ResetForTest();
std::vector<ConfigStats> Snapshot();
std::string SummaryTable();
// Writes the trace collected so far; false if the file cannot be written.
bool WriteTrace(const std::string& path);

}  // namespace profile
}  // namespace relugrad

#endif  // RELUGRAD_PROFILE_PROFILE_H_
