// A small model of the three pipes one 910B vector core runs a tile through:
// MTE2 (GM -> UB), V (vector unit), MTE3 (UB -> GM). Fed with what the twin
// counted while executing the kernel (bytes moved, vector repeats issued),
// it estimates the steady-state time and names the pipe that bounds it, so
// a tile size or buffer count can be chosen by reasoning before a 910B is
// at hand. Every parameter is an assumption with a source in docs/ascend.md;
// nothing here was measured on hardware.
#ifndef RELUGRAD_ASCEND_COST_MODEL_H_
#define RELUGRAD_ASCEND_COST_MODEL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "ascend/twin/twin_runtime.h"

namespace relugrad {
namespace ascend {

struct PipeModel {
  double clock_ghz = 1.8;            // AI core clock (assumed)
  double hbm_gbps = 1600.0;          // HBM bandwidth of the chip, shared by active cores
  double core_copy_gbps = 100.0;     // one core's MTE peak when it has HBM to itself (assumed)
  double copy_latency_us = 0.1;      // fixed cost per DataCopy issue (assumed)
  double vec_bytes_per_cycle = 256;  // one repeat per cycle
  double vec_issue_cycles = 8;       // per instruction overhead (assumed)
  double launch_us = 5.0;            // kernel launch (assumed)
  int buffers = 2;                   // 2: the pipes overlap; 1: they run back to back
};

struct PipeEstimate {
  double mte2_us = 0, vec_us = 0, mte3_us = 0;
  double block_us = 0;  // this block's time
  std::string bound;    // "MTE2", "V" or "MTE3"
};

struct LaunchEstimate {
  std::vector<PipeEstimate> blocks;
  double total_us = 0;  // launch + slowest block
  std::string bound;    // of the slowest block
  double gbps = 0;      // bytes moved (both directions) / total time
};

// The bytes a kernel must move for n elements of elem bytes (GM -> UB in,
// UB -> GM out): what the twin's counters reach when no byte moves twice.
// The mask pair trades ReluGrad's second data array for one bit per element.
struct Traffic {
  uint64_t in_bytes = 0, out_bytes = 0;
};
Traffic ReluGradTraffic(int elem, int64_t n);    // dy, s -> dx
Traffic ReluV2Traffic(int elem, int64_t n);      // x -> y, mask
Traffic ReluGradV2Traffic(int elem, int64_t n);  // dy, mask -> dx

PipeEstimate EstimateBlock(const ascend_twin::PipeCounters& c, const PipeModel& m,
                           int active_blocks);
LaunchEstimate EstimateLaunch(const std::vector<ascend_twin::PipeCounters>& per_block,
                              const PipeModel& m);

}  // namespace ascend
}  // namespace relugrad

#endif  // RELUGRAD_ASCEND_COST_MODEL_H_
