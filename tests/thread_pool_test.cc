// The pool's contract (cpu/thread_pool.h): every (block, chunk) runs exactly
// once; block 0 on the caller; a worker runs its own block's chunks in order
// from the front; the caller takes a late worker's chunks from the back and
// then waits only for chunks already running.
#include "cpu/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#if defined(__unix__)
#include <sys/wait.h>
#include <unistd.h>
#endif

namespace relugrad {
namespace {

struct Record {
  int blocks = 0, chunks = 0;
  std::thread::id caller;
  std::vector<std::atomic<int>> runs;
  std::vector<std::thread::id> who;
  std::chrono::milliseconds caller_delay{0};       // block 0's chunk 0 sleeps this long
  std::chrono::milliseconds first_chunk_delay{0};  // block 1's chunk 0 sleeps this long
  Record(int b, int c)
      : blocks(b), chunks(c), caller(std::this_thread::get_id()), runs(b * c), who(b * c) {}
};

void RecordChunk(void* context, int block, int chunk) {
  Record& r = *static_cast<Record*>(context);
  const int i = block * r.chunks + chunk;
  r.who[i] = std::this_thread::get_id();
  r.runs[i].fetch_add(1, std::memory_order_relaxed);
  if (block == 1 && chunk == 0 && r.first_chunk_delay.count() > 0)
    std::this_thread::sleep_for(r.first_chunk_delay);
  if (block == 0 && chunk == 0 && r.caller_delay.count() > 0)
    std::this_thread::sleep_for(r.caller_delay);
}

TEST(ThreadPool, EveryChunkRunsExactlyOnce) {
  for (int blocks : {1, 2, 3, 5}) {
    for (int chunks : {1, 2, 7, 64}) {
      for (int rep = 0; rep < 50; ++rep) {
        Record r(blocks, chunks);
        ASSERT_TRUE(ThreadPool::Global().Run(blocks, chunks, &RecordChunk, &r));
        for (int i = 0; i < blocks * chunks; ++i) {
          ASSERT_EQ(r.runs[i].load(), 1)
              << "blocks " << blocks << " chunks " << chunks << " chunk " << i;
        }
        for (int c = 0; c < chunks; ++c)
          ASSERT_EQ(r.who[c], r.caller) << "block 0 runs on the caller";
      }
    }
  }
}

// A worker stuck in its first chunk (as one descheduled, or sharing the
// caller's core, would be): the caller takes every other chunk of its block
// and the call returns once the stuck chunk ends, not after 64 more.
TEST(ThreadPool, TheCallerTakesALateWorkersChunksFromTheBack) {
  for (int attempt = 0; attempt < 20; ++attempt) {
    Record r(2, 64);
    r.caller_delay =
        std::chrono::milliseconds(20);  // time for the worker to wake and claim its block
    r.first_chunk_delay = std::chrono::milliseconds(200);
    ASSERT_TRUE(ThreadPool::Global().Run(2, 64, &RecordChunk, &r));
    for (int i = 0; i < 2 * 64; ++i) ASSERT_EQ(r.runs[i].load(), 1);
    if (r.who[64] == r.caller) continue;  // the caller claimed the whole block first: no worker ran
    // The worker ran chunk 0 of block 1 and slept in it; the caller took the rest.
    for (int c = 1; c < 64; ++c) EXPECT_EQ(r.who[64 + c], r.caller) << "chunk " << c;
    return;
  }
  GTEST_FAIL() << "the worker never started its block in 20 attempts";
}

// AwakeWorkers, the launch policy's view of the pool: a worker that ran a
// block spins 50 us, then sleeps, and is then not counted as awake. (The
// awake case is not checked here: on a loaded 2-core machine a poller may
// not run during the worker's 50 us spin; tests/launch_test.cc covers what
// the policy does with each answer.)
TEST(ThreadPool, WorkersIdleForMillisecondsAreNotAwake) {
  Record r(2, 1);
  ASSERT_TRUE(ThreadPool::Global().Run(2, 1, &RecordChunk, &r));
  int asleep = 0;
  for (int attempt = 0; attempt < 5; ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    asleep += ThreadPool::Global().AwakeWorkers() == 0;
  }
  EXPECT_GE(asleep, 4) << "idle workers should be asleep after 20 ms";
}

#if defined(__unix__) && !defined(__SANITIZE_THREAD__)
// A process that forks after the pool has run (workers spinning, then
// asleep) gets a working pool in the child: every chunk runs once, and
// workers of the child's own run blocks (the parent's workers do not exist
// there: a pool that still posted to them ran every block on the caller).
// A hang would be the child's SIGALRM, a wrong run its exit status. (Not
// under ThreadSanitizer, which does not support starting threads after a
// multi-threaded fork.)
TEST(ThreadPool, AForkedChildGetsAWorkingPool) {
  for (const int idle_ms : {0, 20}) {  // workers spinning, then asleep at the fork
    Record warm(2, 4);
    ASSERT_TRUE(ThreadPool::Global().Run(2, 4, &RecordChunk, &warm));
    std::this_thread::sleep_for(std::chrono::milliseconds(idle_ms));
    const pid_t pid = fork();
    ASSERT_GE(pid, 0) << "fork failed";
    if (pid == 0) {
      alarm(20);
      for (int call = 0; call < 50; ++call) {
        Record r(3, 8);
        if (!ThreadPool::Global().Run(3, 8, &RecordChunk, &r)) _exit(2);
        for (int i = 0; i < 3 * 8; ++i) {
          if (r.runs[i].load() != 1) _exit(3);
        }
      }
      // The caller sleeps 20 ms in its own block: time for a worker to
      // claim block 1 (retried: a loaded machine may not run it in time).
      for (int attempt = 0; attempt < 20; ++attempt) {
        Record r(2, 4);
        r.caller_delay = std::chrono::milliseconds(20);
        if (!ThreadPool::Global().Run(2, 4, &RecordChunk, &r)) _exit(2);
        if (r.who[4] != r.caller) _exit(0);
      }
      _exit(4);
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status))
        << "the child did not exit (signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0)
        << "; SIGALRM = a hang), idle " << idle_ms << " ms";
    EXPECT_EQ(WEXITSTATUS(status), 0)
        << "idle " << idle_ms << " ms (2: no workers, 3: a chunk ran other than once, "
        << "4: no worker ran a block in 20 attempts)";
    // The parent's pool is untouched.
    Record after(2, 4);
    ASSERT_TRUE(ThreadPool::Global().Run(2, 4, &RecordChunk, &after));
    for (int i = 0; i < 2 * 4; ++i) EXPECT_EQ(after.runs[i].load(), 1);
  }
}
#endif

}  // namespace
}  // namespace relugrad
