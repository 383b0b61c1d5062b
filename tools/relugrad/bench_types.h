// Shared vocabulary of `relugrad bench`: the configuration parsed from the
// flags, one measured row, and the pieces of the sweep (operands, timing,
// output) that live in their own bench_*.cc files.
#ifndef RELUGRAD_TOOLS_BENCH_TYPES_H_
#define RELUGRAD_TOOLS_BENCH_TYPES_H_

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "relugrad/relugrad.h"

namespace relugrad {
namespace cli {

enum class OutputFormat { kTable, kJson, kCsv };

struct BenchConfig {
  std::vector<relugrad_dtype> dtypes;
  std::vector<long long> sizes;
  std::vector<int> threads;
  std::vector<std::pair<std::string, relugrad_options>> presets;
  bool inplace = false;
  bool warm = false;                    // no rotation: operands stay in cache between calls
  long long rotate_bytes = 64LL << 20;  // cold mode: footprint rotated through (2x L3)
  double min_time = 0.2;                // seconds of samples per implementation per point
  bool alloc = false;                   // also the allocating path (fresh output per call)
  bool mask = false;                    // also backward from a 1-bit mask
  bool stream_ab = false;               // also streaming stores forced on and off
  OutputFormat format = OutputFormat::kTable;
  std::string isa;          // selected SIMD target
  std::string isa_flag;     // --isa as given (for repro lines)
  std::string stores_flag;  // --stores as given (for repro lines)
};

struct Row {
  std::string impl, dtype, semantics;
  long long n = 0;
  int threads = 0;
  double median_s = 0, best_s = 0, bytes_moved = 0, roofline_gbps = 0;
  // Median over rounds of (this candidate's GB/s / the better triad's GB/s
  // in the same round): robust when a neighbour's load comes and goes
  // between rounds (<0: not computed, then gbps / roofline_gbps is used).
  double paired_ratio = -1;
  // relugrad rows: the stores the launch policy chose for this point
  // ("cached" or "streaming"; empty for the triads), and the per-round
  // median ratio to the triad that stores the same way (like with like:
  // a cached dx is compared with the cached triad, a streamed one with
  // triad_nt). The two triads' GB/s are printed beside it.
  std::string stores;
  double same_store_ratio = -1;
  double triad_gbps = 0, triad_nt_gbps = 0;
  int samples = 0;
  int sets = 1;  // operand sets rotated through
  double Gbps() const { return median_s > 0 ? bytes_moved / median_s / 1e9 : 0; }
};

// One implementation measured at a point: call(set) runs it once on the
// operand set `set` (rotation is the caller's).
struct Candidate {
  std::string impl, semantics;
  double bytes_moved = 0;
  std::function<void(int set)> call;
};

// Interleaved timing: every candidate is calibrated, then samples are taken
// round-robin (triad, triad_nt, ours, ... , triad, ...) until each has
// min_time seconds and at least 5 samples, so drift on a shared machine
// hits all of them alike. Returns samples[candidate][round]: seconds per
// call, one sample per candidate per round.
std::vector<std::vector<double>> TimeInterleaved(const std::vector<Candidate>& candidates, int sets,
                                                 double min_time);

// Output: a table on a terminal, JSON lines or CSV; progress on stderr.
class Reporter {
 public:
  Reporter(const BenchConfig& config, int total_points);
  void Header();
  void Emit(const Row& row);
  void Progress(int done, const std::string& what);
  // The table's last line: relugrad's range against the same-store triad.
  void Finish();

 private:
  std::string Repro(const Row& row) const;
  const BenchConfig& config_;
  int total_;
  double start_;
  double last_progress_ = 0;
  bool tty_;
  bool progress_shown_ = false;
  double min_same_ = 0, max_same_ = 0;
  int same_points_ = 0;
};

}  // namespace cli
}  // namespace relugrad

#endif  // RELUGRAD_TOOLS_BENCH_TYPES_H_
