// Interleaved medians for `relugrad bench` (see bench_types.h), built on the
// timing helpers (bench_support/timer.h) so applications and the
// profiler time the same way.
#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "bench_types.h"
#include "bench_support/timer.h"

namespace relugrad {
namespace cli {

std::vector<std::vector<double>> TimeInterleaved(const std::vector<Candidate>& candidates, int sets,
                                                 double min_time) {
  const size_t k = candidates.size();
  std::vector<int> batch(k);
  std::vector<int> next_set(k, 0);
  std::vector<std::vector<double>> samples(k);
  // Each call moves to the next operand set, so consecutive calls never find
  // their operands in cache (cold mode); with one set they always do (warm).
  auto runner = [&](size_t c) {
    return [&, c] {
      candidates[c].call(next_set[c]);
      next_set[c] = next_set[c] + 1 == sets ? 0 : next_set[c] + 1;
    };
  };
  timing::Options opt;
  // Batches of at least 50 us, or one pass over every rotated set when that
  // is longer, so a sample averages over the whole footprint.
  opt.min_batch_seconds = 50e-6;
  for (size_t c = 0; c < k; ++c) {
    auto call = runner(c);
    for (int s = 0; s < sets; ++s) call();  // warm-up: touch every set once
    batch[c] = std::max(timing::calibrate_batch(call, opt), std::min(sets, 1 << 16));
  }
  std::vector<size_t> order(k);
  std::iota(order.begin(), order.end(), size_t{0});
  std::mt19937 shuffle_rng(20261129);
  Timer total;
  const double budget = min_time * static_cast<double>(k);
  for (int round = 0; round < 100000; ++round) {
    double slowest = 0;
    // A fresh order every round (fixed seed: runs repeat). Beyond the L3 the
    // candidate that runs right after another on shared lines is timed
    // differently, and with a fixed order that is always the same one;
    // rotating the order keeps every predecessor, so it is shuffled
    // (docs/design.md, "Who ran just before").
    std::shuffle(order.begin(), order.end(), shuffle_rng);
    for (size_t c : order) {
      // Warm mode: the other candidates' calls since this one's last sample
      // touched their own arrays and evicted these; one untimed call puts
      // them back, or calls of 50 us and more (batches of one call: 1M f32)
      // would be timed cold (docs/design.md, "Measurement flaws").
      if (sets == 1) runner(c)();
      samples[c].push_back(timing::sample(runner(c), batch[c]));
      slowest = std::max(slowest, samples[c].back() * batch[c]);
    }
    // Calls of a tenth of a second and more (n >= 64M) are stable enough
    // with 3 samples; 5 of them would make a full sweep take half an hour.
    const int needed = slowest >= 0.1 ? 3 : opt.min_samples;
    if (round + 1 >= needed && total.seconds() >= budget) break;
  }
  return samples;
}

}  // namespace cli
}  // namespace relugrad
