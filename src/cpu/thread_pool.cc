#include "cpu/thread_pool.h"

#include <system_error>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define RG_CPU_RELAX() _mm_pause()
#else
#define RG_CPU_RELAX() std::this_thread::yield()
#endif

namespace relugrad {
namespace {
// About 20-50 us of spinning on this machine: longer than the gap between
// back-to-back calls in a benchmark or training step, short enough that an
// idle process does not burn a core.
constexpr int kSpinIterations = 4000;
}  // namespace

struct ThreadPool::Worker {
  std::atomic<uint64_t> posted{0};    // generation of the job posted
  std::atomic<uint64_t> finished{0};  // generation of the last job done
  BlockFn fn = nullptr;
  void* context = nullptr;
  int block = 0;
  bool stop = false;
  std::mutex mutex;
  std::condition_variable wake;
  std::thread thread;

  void Loop() {
    uint64_t seen = 0;
    for (;;) {
      uint64_t now = posted.load(std::memory_order_acquire);
      for (int i = 0; now == seen && i < kSpinIterations; ++i) {
        RG_CPU_RELAX();
        now = posted.load(std::memory_order_acquire);
      }
      if (now == seen) {
        std::unique_lock<std::mutex> lock(mutex);
        wake.wait(lock, [&] { return stop || posted.load(std::memory_order_acquire) != seen; });
        if (stop) return;
        now = posted.load(std::memory_order_acquire);
      }
      seen = now;
      fn(context, block);
      finished.store(seen, std::memory_order_release);
    }
  }
};

ThreadPool& ThreadPool::Global() {
  // Leaked on purpose: workers must outlive static destructors of callers.
  static ThreadPool* pool = new ThreadPool();
  return *pool;
}

ThreadPool::~ThreadPool() {
  for (auto& w : workers_) {
    {
      std::lock_guard<std::mutex> lock(w->mutex);
      w->stop = true;
    }
    w->wake.notify_one();
    if (w->thread.joinable()) w->thread.join();
  }
}

bool ThreadPool::EnsureWorkers(int count) {
  while (static_cast<int>(workers_.size()) < count) {
    auto w = std::make_unique<Worker>();
    try {
      Worker* raw = w.get();
      w->thread = std::thread([raw] { raw->Loop(); });
    } catch (const std::system_error&) {
      return false;
    }
    workers_.push_back(std::move(w));
  }
  return true;
}

bool ThreadPool::Run(int blocks, BlockFn fn, void* context) {
  if (blocks <= 1) {
    if (blocks == 1) fn(context, 0);
    return true;
  }
  std::unique_lock<std::mutex> busy(busy_, std::try_to_lock);
  bool created = busy.owns_lock() && EnsureWorkers(blocks - 1);
  if (!created) {
    for (int b = 0; b < blocks; ++b) fn(context, b);
    return !busy.owns_lock();  // busy pool is not a failure
  }
  std::vector<uint64_t> generation(blocks - 1);
  for (int b = 1; b < blocks; ++b) {
    Worker& w = *workers_[b - 1];
    {
      std::lock_guard<std::mutex> lock(w.mutex);
      w.fn = fn;
      w.context = context;
      w.block = b;
      generation[b - 1] = w.posted.load(std::memory_order_relaxed) + 1;
      w.posted.store(generation[b - 1], std::memory_order_release);
    }
    w.wake.notify_one();
  }
  fn(context, 0);
  for (int b = 1; b < blocks; ++b) {
    Worker& w = *workers_[b - 1];
    while (w.finished.load(std::memory_order_acquire) != generation[b - 1]) RG_CPU_RELAX();
  }
  return true;
}

}  // namespace relugrad
