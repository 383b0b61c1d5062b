// A small persistent worker pool for fork/join over a WorkPlan's blocks
// and their chunks.
//
// Why not OpenMP: fork/join of 2 threads costs this pool a third of
// libgomp's (bench/forkjoin; docs/design.md, "Threads between calls"),
// libgomp is invisible to ThreadSanitizer (false reports in the TSan
// preset), and a
// block should map to the same thread from call to call, so that its cache
// lines stay in one core's caches; OpenMP's static schedule does that but
// cannot hand a late thread's work to another, its dynamic one the reverse.
// Workers spin briefly after a job (back to back calls find them awake),
// then sleep on a condition variable so an idle library costs no CPU.
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
  using ChunkFn = void (*)(void* context, int block, int chunk);

  static ThreadPool& Global();

  // Runs fn(context, b, c) for every block b in [0, blocks) and chunk c in
  // [0, chunks): block 0 on the caller, block b offered to worker b-1, which
  // runs its chunks in order. Each chunk runs exactly once, on one thread.
  // A worker claims its block with a compare-and-swap; the caller, once its
  // own block is done, takes every block whose worker has not started, and
  // takes the chunks of a started worker from the back (two-ended: the
  // worker takes from the front, one CAS per chunk), so it only ever waits
  // for chunks already running. A worker that wakes late (a sleeping
  // thread can take tens to hundreds of microseconds) or shares a core with
  // the caller then costs about nothing instead of up to twice the
  // single-thread time (docs/design.md, "Threads between calls").
  // With a worker awake,
  // each thread runs its own block, as a static split would: its cache
  // lines stay in its core's caches from call to call. If another caller
  // holds the pool, every chunk runs on this caller (same results).
  // Every worker with a block is woken if it sleeps: whether a call is worth
  // a wake-up is the launch policy's decision (cpu/launch.h), made before.
  // Returns false only if worker threads could not be created (then all
  // chunks have run on the caller).
  bool Run(int blocks, int chunks, ChunkFn fn, void* context);

  // How many workers, from worker 0 on, are awake (spinning after a recent
  // job) and would take a block without a wake-up; 0 when another caller
  // holds the pool. A read-only hint for the launch policy: the state may
  // change right after.
  int AwakeWorkers();

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
