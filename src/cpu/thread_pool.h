// A small persistent worker pool for fork/join over a WorkPlan's blocks.
//
// Why not OpenMP: measured fork/join of 2 threads, median of 31 x 2000
// (bench/forkjoin): this pool 180-190 ns, libgomp 540 ns on this machine
// (REFERENCE.md reports 1-2 us for OpenMP on others). libgomp is also invisible to ThreadSanitizer (false reports in the TSan preset), and
// blocks must map to threads statically so that a block's cache lines are
// only ever written by one thread. Workers spin briefly after a job (back
// to back calls in a training step find them awake), then sleep on a
// condition variable so an idle library costs no CPU.
#ifndef RELUGRAD_CPU_THREAD_POOL_H_
#define RELUGRAD_CPU_THREAD_POOL_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace relugrad {

class ThreadPool {
 public:
  using BlockFn = void (*)(void* context, int block);

  static ThreadPool& Global();

  // Runs fn(context, b) for b in [0, blocks): block 0 on the caller, block b
  // offered to worker b-1. Each block runs exactly once, on one thread: a
  // worker claims its block with a compare-and-swap, and the caller, once
  // its own block is done, claims every block whose worker has not started
  // (a descheduled worker on an oversubscribed machine then costs nothing
  // instead of the caller spinning through its time slice). If another
  // caller holds the pool, every block runs on this caller (same results).
  // Returns false only if worker threads could not be created (then all
  // blocks have run on the caller).
  bool Run(int blocks, BlockFn fn, void* context);

  ~ThreadPool();

 private:
  struct Worker;
  bool EnsureWorkers(int count);

  std::mutex busy_;
  uint64_t generation_ = 0;  // jobs posted; guarded by busy_
  std::vector<std::unique_ptr<Worker>> workers_;
};

}  // namespace relugrad

#endif  // RELUGRAD_CPU_THREAD_POOL_H_
