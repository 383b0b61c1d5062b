// The CPU backend: splits the work with the shared WorkPlan, runs the
// dispatched Highway block kernel on the worker pool.
#ifndef RELUGRAD_CPU_CPU_BACKEND_H_
#define RELUGRAD_CPU_CPU_BACKEND_H_

#include <cstdint>

#include "core/semantics.h"

namespace relugrad {

// Below this many bytes of dx per block, fewer blocks are used: waking a
// thread costs about as much as computing 16 KiB in L1, so two threads lose
// at 4K f32 elements and win from 64K (docs/performance-notes.md,
// "Grain size and thread split").
constexpr int64_t kCpuGrainBytes = 64 * 1024;
// Block boundaries fall on cache lines of dx: no two threads write one line.
constexpr int64_t kCpuUnitBytes = 64;
// Least bytes of dx per chunk: the pool's unit of taking over a late
// worker's block (thread_pool.h), so about the longest the caller waits for
// a running chunk (64 KiB of dx: 2-5 us at memory speed). Blocks split
// into at most 64 chunks (WorkPlanRequest::max_chunks), so claiming them
// costs nothing measurable (512 KiB chunks at 16M f32 on two threads).
constexpr int64_t kCpuChunkBytes = 64 * 1024;
// Below this many bytes of dx a call does not wake sleeping workers (those
// awake, spinning after a recent call, still take their blocks): a sleeping
// worker can take tens to hundreds of microseconds to wake, more than a
// second core saves on a call this small (evidence: docs/performance-notes.md,
// "Threads between calls").
constexpr int64_t kCpuWakeBytes = 16 << 20;

// Outputs of at least this many bytes that alias no input are written with
// non-temporal stores (whole aligned lines) under stores = AUTO: on one
// thread a dx this large does not stay in the core's L2 anyway, and
// streaming saves the read-for-ownership of every line, cold or warm
// (evidence: docs/performance-notes.md, "Streaming stores").
constexpr int64_t kCpuStreamBytes = 1 << 20;
// The same for calls split over two or more blocks: there the cores' L2s
// and the L3 together keep a warm output of a few MiB, which cached stores
// write at cache speed and streaming stores at memory speed (evidence:
// docs/performance-notes.md, "Streaming threshold for split calls").
constexpr int64_t kCpuStreamBytesMultiBlock = 8 << 20;

// For the benchmark's A/B runs only: overrides both thresholds process-wide
// (0 restores the defaults, a negative value disables streaming). Results
// are bit-identical either way.
void SetCpuStreamBytesForBenchmark(int64_t bytes);
// The override, or 0 when none is set.
int64_t CpuStreamBytesOverride();

// For tests that check how a call splits: overrides kCpuWakeBytes
// process-wide (0 restores it; 1: every split call wakes the workers, so
// the split no longer depends on whether they slept). Results are
// bit-identical either way.
void SetCpuWakeBytesForTest(int64_t bytes);
// kCpuWakeBytes or its override.
int64_t CpuWakeBytes();

// Whether an output of out_bytes is written with streaming stores, given
// the caller's hint and the AUTO threshold (<= 0: AUTO never streams). An
// output that aliases an input never is (the kernels read and write it as
// one restrict-free stream).
inline bool UseStreamingStores(relugrad_stores stores, int64_t out_bytes, int64_t auto_threshold,
                               bool aliases_input) {
  if (aliases_input || stores == RELUGRAD_STORES_CACHED) return false;
  if (stores == RELUGRAD_STORES_STREAMING) return true;
  return auto_threshold > 0 && out_bytes >= auto_threshold;
}

// threads: 0 = all cores. Arguments already validated.
relugrad_status CpuReluGrad(Dtype dtype, int64_t n, const void* dy, const void* s, void* dx,
                            const KernelParams& params, int threads,
                            relugrad_stores stores = RELUGRAD_STORES_AUTO);

// Worker count for threads == 0.
int DefaultThreads();

// Whether a call writing out_bytes may split over blocks at all: more than
// one thread allowed and at least two grains of output (the work plan's own
// rule). When it may not, a backend runs it as one block without a plan or
// the pool (a third of the fixed cost of a call at n <= 1024).
inline bool CpuCallSplittable(int64_t out_bytes, int threads) {
  const int max_blocks = threads == 0 ? DefaultThreads() : threads;
  return max_blocks > 1 && out_bytes >= 2 * kCpuGrainBytes;
}

}  // namespace relugrad

#endif  // RELUGRAD_CPU_CPU_BACKEND_H_
