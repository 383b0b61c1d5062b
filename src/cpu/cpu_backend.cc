#include "cpu/cpu_backend.h"

#include <atomic>
#include <cstdint>
#include <thread>

#include "core/error.h"
#include "core/work_plan.h"
#include "cpu/cpu_kernels.h"
#include "cpu/scoped_ieee_float.h"
#include "cpu/thread_pool.h"
#include "cpu/variants.h"
#include "profile/profile.h"

namespace relugrad {
namespace {

struct Job {
  BlockKernel kernel;
  const KernelParams* params;
  const void* dy;
  const void* s;
  void* dx;
  WorkPlan plan;
};

void RunOneChunk(void* context, int block, int chunk) {
  const Job& job = *static_cast<const Job*>(context);
  const int64_t begin = job.plan.ChunkBegin(block, chunk), end = job.plan.ChunkEnd(block, chunk);
  if (begin >= end) return;  // a short last block's trailing chunks
  ScopedIeeeFloat ieee(KernelMxcsr(*job.params));
  if (profile::Enabled()) {  // a per-worker slice for RELUGRAD_PROFILE traces
    const int64_t t0 = profile::NowNs();
    job.kernel(*job.params, job.dy, job.s, job.dx, begin, end);
    profile::RecordBlock(block, t0, profile::NowNs(), end - begin);
    return;
  }
  job.kernel(*job.params, job.dy, job.s, job.dx, begin, end);
}

std::atomic<int64_t> g_stream_bytes_override{0};
std::atomic<int64_t> g_wake_bytes_override{0};

}  // namespace

void SetCpuWakeBytesForTest(int64_t bytes) {
  g_wake_bytes_override.store(bytes, std::memory_order_relaxed);
}

int64_t CpuWakeBytes() {
  const int64_t o = g_wake_bytes_override.load(std::memory_order_relaxed);
  return o != 0 ? o : kCpuWakeBytes;
}

void SetCpuStreamBytesForBenchmark(int64_t bytes) {
  g_stream_bytes_override.store(bytes, std::memory_order_relaxed);
}

int64_t CpuStreamBytesOverride() { return g_stream_bytes_override.load(std::memory_order_relaxed); }

int DefaultThreads() {
  // hardware_concurrency() is a system call in glibc: ask once per process.
  static const int count = [] {
    const unsigned hw = std::thread::hardware_concurrency();
    return hw == 0 ? 1 : static_cast<int>(hw);
  }();
  return count;
}

relugrad_status CpuReluGrad(Dtype dtype, int64_t n, const void* dy, const void* s, void* dx,
                            const KernelParams& params, int threads, relugrad_stores stores) {
  if (n == 0) return RELUGRAD_OK;
  ApplyIsaEnvironmentOnce();
  Job job;
  const int max_blocks = threads == 0 ? DefaultThreads() : threads;
  const bool splittable = CpuCallSplittable(n * DtypeSize(dtype), threads);
  // Small enough not to wake sleeping workers, and they sleep: plan for one
  // thread (its store choice, a direct call) rather than run every block alone.
  const bool solo =
      splittable && n * DtypeSize(dtype) < CpuWakeBytes() && !ThreadPool::Global().WorkersReady();
  const bool one_block = !splittable || solo;
  const int64_t override_bytes = CpuStreamBytesOverride();
  const int64_t auto_bytes = override_bytes != 0
                                 ? override_bytes
                                 : (one_block ? kCpuStreamBytes : kCpuStreamBytesMultiBlock);
  const bool stream =
      UseStreamingStores(stores, n * DtypeSize(dtype), auto_bytes, dx == dy || dx == s);
  // The variant row's own kernel (cpu/variants.inc; the 16-bit alpha row never streams).
  job.kernel = CpuVariantKernel(SelectCpuVariant(dtype, params), dtype, stream);
  job.params = &params;
  job.dy = dy;
  job.s = s;
  job.dx = dx;
  if (one_block) {
    // One block whatever the plan: skip the plan's divisions and the pool
    // (a third of the fixed cost of a call at n <= 1024, docs/performance-notes.md).
    {
      ScopedIeeeFloat ieee(KernelMxcsr(params));
      job.kernel(params, dy, s, dx, 0, n);
    }
    if (solo) ThreadPool::Global().NoteSoloRun();  // a loop of such calls wakes the workers
    if (profile::Enabled()) profile::NoteBackend(1, stream);
    return RELUGRAD_OK;
  }
  WorkPlanRequest request;
  request.n = n;
  request.elem_bytes = DtypeSize(dtype);
  request.dx_address = reinterpret_cast<uintptr_t>(dx);
  request.unit_bytes = kCpuUnitBytes;
  request.max_blocks = max_blocks;
  request.grain_bytes = kCpuGrainBytes;
  request.chunk_bytes = kCpuChunkBytes;
  job.plan = MakeWorkPlan(request);
  if (profile::Enabled()) profile::NoteBackend(job.plan.blocks, stream);
  if (!ThreadPool::Global().Run(job.plan.blocks, job.plan.chunks, &RunOneChunk, &job,
                                n * DtypeSize(dtype) >= CpuWakeBytes())) {
    // All blocks ran on the caller; the result is complete and correct.
  }
  return RELUGRAD_OK;
}

}  // namespace relugrad
