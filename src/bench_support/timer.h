// relugrad::Timer and the median-of-batches timing loop used by
// `relugrad bench` and the peer drivers' C++ side, so that every published
// number is measured the same way. A benchmark utility, not installed:
// header-only, a monotonic clock, batch calibration, samples, and the median.
//
//   relugrad::timing::Options opt;  opt.min_time = 0.2;
//   double s = relugrad::timing::median_seconds([&] { call(); }, opt);
#ifndef RELUGRAD_BENCH_SUPPORT_TIMER_H_
#define RELUGRAD_BENCH_SUPPORT_TIMER_H_

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

namespace relugrad {

// A monotonic stopwatch (steady_clock: immune to wall-clock changes).
class Timer {
 public:
  using Clock = std::chrono::steady_clock;
  Timer() : start_(Clock::now()) {}
  void reset() { start_ = Clock::now(); }
  double seconds() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }
  // Nanoseconds since an arbitrary fixed origin (for traces).
  static int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
        .count();
  }

 private:
  Clock::time_point start_;
};

namespace timing {

struct Options {
  double min_time = 0.2;             // seconds of samples per measurement
  int min_samples = 5;               // at least this many samples
  int max_samples = 100000;          // and at most this many
  double min_batch_seconds = 20e-6;  // a sample times a batch at least this long (clock resolution)
};

// Calls per sample so that one sample lasts at least min_batch_seconds.
// The first call is a warm-up (page faults, pool wake-up, dispatch).
template <class F>
int calibrate_batch(F&& call, const Options& o = Options()) {
  call();
  int batch = 1;
  for (;;) {
    Timer t;
    for (int i = 0; i < batch; ++i) call();
    if (t.seconds() >= o.min_batch_seconds || batch >= (1 << 22)) return batch;
    batch *= 4;
  }
}

// One sample: seconds per call over a batch.
template <class F>
double sample(F&& call, int batch) {
  Timer t;
  for (int i = 0; i < batch; ++i) call();
  return t.seconds() / batch;
}

// The median (upper median for an even count); 0 for no samples.
inline double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

// Warm-up, calibration, then samples until min_time and min_samples: the
// median seconds per call.
template <class F>
double median_seconds(F&& call, const Options& o = Options()) {
  const int batch = calibrate_batch(call, o);
  std::vector<double> samples;
  Timer total;
  while (static_cast<int>(samples.size()) < o.max_samples &&
         (static_cast<int>(samples.size()) < o.min_samples || total.seconds() < o.min_time)) {
    samples.push_back(sample(call, batch));
  }
  return median(std::move(samples));
}

}  // namespace timing
}  // namespace relugrad

#endif  // RELUGRAD_BENCH_SUPPORT_TIMER_H_
