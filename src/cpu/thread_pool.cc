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

// A worker's slot holds (generation << 1) | claimed. The caller posts
// generation g unclaimed; whoever wins the CAS to claimed runs the block.
struct ThreadPool::Worker {
  std::atomic<uint64_t> slot{0};
  std::atomic<uint64_t> finished{0};  // generation of the last block this worker ran
  BlockFn fn = nullptr;               // written before the slot is posted
  void* context = nullptr;
  int block = 0;
  bool stop = false;
  std::mutex mutex;
  std::condition_variable wake;
  std::thread thread;

  static uint64_t Posted(uint64_t generation) { return generation << 1; }
  static uint64_t Claimed(uint64_t generation) { return (generation << 1) | 1; }

  // True if this thread won the block of `generation`.
  bool Claim(uint64_t generation) {
    uint64_t expected = Posted(generation);
    return slot.compare_exchange_strong(expected, Claimed(generation), std::memory_order_acq_rel);
  }

  void Loop() {
    uint64_t seen = 0;  // last generation looked at
    for (;;) {
      uint64_t now = slot.load(std::memory_order_acquire) >> 1;
      for (int i = 0; now == seen && i < kSpinIterations; ++i) {
        RG_CPU_RELAX();
        now = slot.load(std::memory_order_acquire) >> 1;
      }
      if (now == seen) {
        std::unique_lock<std::mutex> lock(mutex);
        wake.wait(lock, [&] { return stop || (slot.load(std::memory_order_acquire) >> 1) != seen; });
        if (stop) return;
        now = slot.load(std::memory_order_acquire) >> 1;
      }
      seen = now;
      if (Claim(now)) {  // fn/context/block are read only after winning
        fn(context, block);
        finished.store(now, std::memory_order_release);
      }
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
  ++generation_;
  for (int b = 1; b < blocks; ++b) {
    Worker& w = *workers_[b - 1];
    {
      std::lock_guard<std::mutex> lock(w.mutex);
      w.fn = fn;
      w.context = context;
      w.block = b;
      w.slot.store(Worker::Posted(generation_), std::memory_order_release);
    }
    w.wake.notify_one();
  }
  fn(context, 0);
  // Take over every block no worker has started, then wait for the rest.
  for (int b = 1; b < blocks; ++b) {
    Worker& w = *workers_[b - 1];
    if (w.Claim(generation_)) {
      fn(context, b);
      continue;
    }
    for (int spins = 0; w.finished.load(std::memory_order_acquire) != generation_; ++spins) {
      if (spins < 2000) {
        RG_CPU_RELAX();
      } else {
        std::this_thread::yield();  // the worker may share our core
      }
    }
  }
  return true;
}

}  // namespace relugrad
