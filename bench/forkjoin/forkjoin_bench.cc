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
// About 1 us of work per block, so that a worker really runs its block
// (with no work the caller claims the idle worker's block itself).
static void Spin() {
  volatile int x = 0;
  for (int i = 0; i < 1000; ++i) x = x + i;
}
static void Work(void*, int b, int) {
  Spin();
  sink.fetch_add(b, std::memory_order_relaxed);
}
template <class F>
double Median(F f) {
  std::vector<double> v;
  for (int r = 0; r < 31; ++r) {
    auto t0 = Clock::now();
    for (int i = 0; i < 2000; ++i) f();
    v.push_back(std::chrono::duration<double>(Clock::now() - t0).count() / 2000 * 1e9);
  }
  std::sort(v.begin(), v.end());
  return v[15];
}
int main() {
  for (int k = 0; k < 3; ++k) {
    double pool = Median([] { relugrad::ThreadPool::Global().Run(2, 1, &Work, nullptr); });
    double omp = Median([] {
#pragma omp parallel num_threads(2)
      {
        Spin();
        sink.fetch_add(1, std::memory_order_relaxed);
      }
    });
    const double serial = Median([] { Spin(); });
    std::printf("2 blocks of %.0f ns work, median ns per fork/join: pool %.0f, libgomp %.0f\n",
                serial, pool, omp);
  }
}
