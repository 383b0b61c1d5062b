#include "ascend/cost_model.h"

#include <algorithm>

namespace relugrad {
namespace ascend {

Traffic ReluGradTraffic(int elem, int64_t n) {
  const uint64_t data = static_cast<uint64_t>(n) * static_cast<uint64_t>(elem);
  return {2 * data, data};
}

Traffic ReluV2Traffic(int elem, int64_t n) {
  const uint64_t data = static_cast<uint64_t>(n) * static_cast<uint64_t>(elem);
  return {data, data + static_cast<uint64_t>((n + 7) / 8)};
}

Traffic ReluGradV2Traffic(int elem, int64_t n) {
  const uint64_t data = static_cast<uint64_t>(n) * static_cast<uint64_t>(elem);
  return {data + static_cast<uint64_t>((n + 7) / 8), data};
}

PipeEstimate EstimateBlock(const ascend_twin::PipeCounters& c, const PipeModel& m,
                           int active_blocks) {
  PipeEstimate e;
  // HBM is shared: each active core gets its share, capped by its own peak.
  const double gbps = std::min(m.core_copy_gbps, m.hbm_gbps / std::max(1, active_blocks));
  const double bytes_per_us = gbps * 1e3;  // GB/s -> bytes/us
  e.mte2_us = static_cast<double>(c.mte2_bytes) / bytes_per_us +
              static_cast<double>(c.mte2_copies) * m.copy_latency_us;
  e.mte3_us = static_cast<double>(c.mte3_bytes) / bytes_per_us +
              static_cast<double>(c.mte3_copies) * m.copy_latency_us;
  const double cycles = static_cast<double>(c.vec_repeats) * (256.0 / m.vec_bytes_per_cycle) +
                        static_cast<double>(c.vec_instrs) * m.vec_issue_cycles;
  e.vec_us = cycles / (m.clock_ghz * 1e3);
  const double sum = e.mte2_us + e.vec_us + e.mte3_us;
  const double peak = std::max({e.mte2_us, e.vec_us, e.mte3_us});
  e.bound = peak == e.mte2_us ? "MTE2" : peak == e.vec_us ? "V" : "MTE3";
  if (m.buffers >= 2 && c.tiles > 0) {
    // Double buffering: the slowest pipe sets the pace; the others show only
    // while the pipeline fills (first tile) and drains (last tile).
    e.block_us = peak + (sum - peak) / static_cast<double>(c.tiles);
  } else {
    e.block_us = sum;
  }
  return e;
}

LaunchEstimate EstimateLaunch(const std::vector<ascend_twin::PipeCounters>& per_block,
                              const PipeModel& m) {
  LaunchEstimate out;
  int active = 0;
  uint64_t bytes = 0;
  for (const auto& c : per_block) {
    if (c.tiles > 0) ++active;
    bytes += c.mte2_bytes + c.mte3_bytes;
  }
  double slowest = 0;
  for (const auto& c : per_block) {
    out.blocks.push_back(EstimateBlock(c, m, active));
    if (out.blocks.back().block_us >= slowest) {
      slowest = out.blocks.back().block_us;
      out.bound = out.blocks.back().bound;
    }
  }
  out.total_us = m.launch_us + slowest;
  out.gbps = out.total_us > 0 ? static_cast<double>(bytes) / (out.total_us * 1e3) : 0;
  return out;
}

}  // namespace ascend
}  // namespace relugrad
