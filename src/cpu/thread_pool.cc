#include "cpu/thread_pool.h"

#include <bitset>
#include <chrono>
#include <system_error>

#if defined(__unix__) || defined(__APPLE__)
#include <pthread.h>
#endif

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define RG_CPU_RELAX() _mm_pause()
#else
#define RG_CPU_RELAX() std::this_thread::yield()
#endif

namespace relugrad {
namespace {
// How long a worker spins after a job before it sleeps: longer than the gap
// between back-to-back calls (a benchmark, a loop of calls), short enough
// that an idle library does not burn a core. Timed, since a yield's cost
// varies from 0.1 to several us.
constexpr std::chrono::microseconds kSpin{50};
// Blocks beyond this run on the caller (relugrad serves at most 256 threads).
constexpr int kMaxBlocks = 256;
}  // namespace

// A worker's slot holds (generation << 1) | claimed. The caller posts
// generation g unclaimed; whoever wins the CAS to claimed runs the block.
// Once a worker has claimed its block, `range` holds (back << 32) | front:
// the worker takes chunk `front` and the caller takes chunk `back - 1`, each
// with a CAS, until they meet.
struct ThreadPool::Worker {
  std::atomic<uint64_t> slot{0};
  std::atomic<uint64_t> finished{0};  // generation of the last block this worker ran
  std::atomic<uint64_t> range{0};
  std::atomic<bool> sleeping{false};  // waiting on `wake` (not spinning)
  ChunkFn fn = nullptr;               // written before the slot is posted
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

  static uint64_t Range(uint32_t front, uint32_t back) { return (uint64_t{back} << 32) | front; }

  // The next chunk from the front (the worker) or the back (the caller), or
  // -1 when the two ends have met.
  int TakeFront() {
    uint64_t r = range.load(std::memory_order_relaxed);
    for (;;) {
      const uint32_t front = static_cast<uint32_t>(r), back = static_cast<uint32_t>(r >> 32);
      if (front >= back) return -1;
      if (range.compare_exchange_weak(r, Range(front + 1, back), std::memory_order_relaxed))
        return static_cast<int>(front);
    }
  }
  int TakeBack() {
    uint64_t r = range.load(std::memory_order_relaxed);
    for (;;) {
      const uint32_t front = static_cast<uint32_t>(r), back = static_cast<uint32_t>(r >> 32);
      if (front >= back) return -1;
      if (range.compare_exchange_weak(r, Range(front, back - 1), std::memory_order_relaxed))
        return static_cast<int>(back - 1);
    }
  }

  void Loop() {
    uint64_t seen = 0;  // last generation looked at
    for (;;) {
      uint64_t now = slot.load(std::memory_order_acquire) >> 1;
      // Pause, and every 16th turn yield: a worker the scheduler placed on
      // the caller's core (both just woke) must not spin while the caller
      // waits to return (docs/design.md, "Threads between calls").
      const auto spin_until = std::chrono::steady_clock::now() + kSpin;
      for (int i = 1; now == seen; ++i) {
        if (i % 16 != 0) {
          RG_CPU_RELAX();
        } else {
          std::this_thread::yield();
          if (std::chrono::steady_clock::now() >= spin_until) break;
        }
        now = slot.load(std::memory_order_acquire) >> 1;
      }
      if (now == seen) {
        std::unique_lock<std::mutex> lock(mutex);
        sleeping.store(true, std::memory_order_relaxed);
        wake.wait(lock,
                  [&] { return stop || (slot.load(std::memory_order_acquire) >> 1) != seen; });
        sleeping.store(false, std::memory_order_relaxed);
        if (stop) return;
        now = slot.load(std::memory_order_acquire) >> 1;
      }
      seen = now;
      if (Claim(now)) {  // fn/context/block/range are read only after winning
        for (int c = TakeFront(); c >= 0; c = TakeFront()) fn(context, block, c);
        finished.store(now, std::memory_order_release);
      }
    }
  }
};

namespace {
std::atomic<ThreadPool*> g_pool{nullptr};

// fork() copies only the calling thread: in the child the global pool's
// workers are gone, while their slots, mutexes and condition variables still
// say they exist (a condition variable with waiters that vanished can block
// the next notify for ever; a sleeping worker never wakes). The child gets a
// fresh pool, which starts its own workers on first use; the old one is
// leaked, since nothing in it may be touched (Python's multiprocessing
// workers fork after the parent has run calls).
void FreshPoolInForkedChild() { g_pool.store(new ThreadPool(), std::memory_order_release); }
}  // namespace

ThreadPool& ThreadPool::Global() {
  // Leaked on purpose: workers must outlive static destructors of callers.
  static const bool installed = [] {
    g_pool.store(new ThreadPool(), std::memory_order_release);
#if defined(__unix__) || defined(__APPLE__)
    pthread_atfork(nullptr, nullptr, &FreshPoolInForkedChild);
#endif
    return true;
  }();
  (void)installed;
  return *g_pool.load(std::memory_order_acquire);
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

bool ThreadPool::Run(int blocks, int chunks, ChunkFn fn, void* context) {
  auto run_block = [&](int b) {
    for (int c = 0; c < chunks; ++c) fn(context, b, c);
  };
  if (blocks <= 1) {
    if (blocks == 1) run_block(0);
    return true;
  }
  std::unique_lock<std::mutex> busy(busy_, std::try_to_lock);
  bool created = busy.owns_lock() && EnsureWorkers(blocks - 1);
  if (!created) {
    for (int b = 0; b < blocks; ++b) run_block(b);
    return !busy.owns_lock();  // busy pool is not a failure
  }
  ++generation_;
  std::bitset<kMaxBlocks> posted;
  for (int b = 1; b < blocks; ++b) {
    Worker& w = *workers_[b - 1];
    if (b >= kMaxBlocks) continue;
    posted.set(b);
    {
      std::lock_guard<std::mutex> lock(w.mutex);
      w.fn = fn;
      w.context = context;
      w.block = b;
      w.range.store(Worker::Range(0, static_cast<uint32_t>(chunks)), std::memory_order_relaxed);
      w.slot.store(Worker::Posted(generation_), std::memory_order_release);
    }
    w.wake.notify_one();
  }
  run_block(0);
  // Take over every block no worker has started and the not yet started
  // chunks of the others, then wait for the chunks still running.
  for (int b = 1; b < blocks; ++b) {
    Worker& w = *workers_[b - 1];
    if (!posted.test(b) || w.Claim(generation_)) {
      run_block(b);
      continue;
    }
    for (int c = w.TakeBack(); c >= 0; c = w.TakeBack()) fn(context, b, c);
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

int ThreadPool::AwakeWorkers() {
  std::unique_lock<std::mutex> busy(busy_, std::try_to_lock);
  if (!busy.owns_lock()) return 0;  // another caller has them: Run would run alone
  int awake = 0;
  while (awake < static_cast<int>(workers_.size()) &&
         !workers_[awake]->sleeping.load(std::memory_order_relaxed)) {
    ++awake;
  }
  return awake;
}

}  // namespace relugrad
