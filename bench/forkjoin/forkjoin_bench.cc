#include <chrono>
#include <cstdio>
#include <atomic>
#include <algorithm>
#include <vector>
#include "cpu/thread_pool.h"

// Fork/join cost of the persistent pool vs libgomp, the measurement behind
// the choice in src/cpu/thread_pool.h. Build: -DRELUGRAD_BUILD_BENCH=ON.
using Clock = std::chrono::steady_clock;
std::atomic<int> sink{0};
static void Work(void*, int b) { sink.fetch_add(b, std::memory_order_relaxed); }
template <class F> double Median(F f) {
  std::vector<double> v;
  for (int r = 0; r < 31; ++r) { auto t0 = Clock::now(); for (int i = 0; i < 2000; ++i) f(); v.push_back(std::chrono::duration<double>(Clock::now() - t0).count() / 2000 * 1e9); }
  std::sort(v.begin(), v.end()); return v[15];
}
int main() {
  for (int k = 0; k < 3; ++k) {
  double pool = Median([] { relugrad::ThreadPool::Global().Run(2, &Work, nullptr); });
  double omp = Median([] {
#pragma omp parallel num_threads(2)
    { sink.fetch_add(1, std::memory_order_relaxed); }
  });
  std::printf("fork/join of 2 threads, median ns: pool %.0f, libgomp %.0f\n", pool, omp);
  }
}
