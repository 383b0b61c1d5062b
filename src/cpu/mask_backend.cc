#include "cpu/mask_backend.h"

#include <atomic>
#include <cstdint>

#include "cpu/cpu_backend.h"
#include "cpu/cpu_kernels.h"
#include "cpu/mask_kernels.h"
#include "cpu/scoped_ieee_float.h"
#include "cpu/thread_pool.h"
#include "profile/profile.h"

namespace relugrad {
namespace {

struct ForwardJob {
  ForwardKernel kernel;
  const KernelParams* params;
  const void* x;
  void* y;
  uint8_t* mask;
  WorkPlan plan;
  bool stream;
};

struct GradJob {
  GradMaskKernel kernel;
  const KernelParams* params;
  const void* dy;
  const uint8_t* mask;
  void* dx;
  WorkPlan plan;
  bool stream;
};

void RunForwardChunk(void* context, int block, int chunk) {
  const ForwardJob& job = *static_cast<const ForwardJob*>(context);
  const int64_t begin = job.plan.ChunkBegin(block, chunk), end = job.plan.ChunkEnd(block, chunk);
  if (begin >= end) return;
  ScopedIeeeFloat ieee(KernelMxcsr(*job.params));
  if (profile::Enabled()) {  // a per-worker slice for RELUGRAD_PROFILE traces
    const int64_t t0 = profile::NowNs();
    job.kernel(*job.params, job.x, job.y, job.mask, begin, end, job.stream);
    profile::RecordBlock(block, t0, profile::NowNs(), end - begin);
    return;
  }
  job.kernel(*job.params, job.x, job.y, job.mask, begin, end, job.stream);
}

void RunGradChunk(void* context, int block, int chunk) {
  const GradJob& job = *static_cast<const GradJob*>(context);
  const int64_t begin = job.plan.ChunkBegin(block, chunk), end = job.plan.ChunkEnd(block, chunk);
  if (begin >= end) return;
  ScopedIeeeFloat ieee(KernelMxcsr(*job.params));
  if (profile::Enabled()) {
    const int64_t t0 = profile::NowNs();
    job.kernel(*job.params, job.dy, job.mask, job.dx, begin, end, job.stream);
    profile::RecordBlock(block, t0, profile::NowNs(), end - begin);
    return;
  }
  job.kernel(*job.params, job.dy, job.mask, job.dx, begin, end, job.stream);
}

std::atomic<int64_t> g_mask_stream_bytes{kMaskStreamBytes};

}  // namespace

void SetMaskStreamBytesForBenchmark(int64_t bytes) {
  g_mask_stream_bytes.store(bytes == 0 ? kMaskStreamBytes : (bytes < 0 ? INT64_MAX : bytes),
                            std::memory_order_relaxed);
}

WorkPlan MakeMaskWorkPlan(int64_t n, int elem_bytes, uintptr_t out_address, int threads) {
  WorkPlanRequest request;
  request.n = n;
  request.elem_bytes = elem_bytes;
  request.unit_bytes = kCpuUnitBytes;  // 64 bytes >= 8 elements of every dtype
  request.max_blocks = threads == 0 ? DefaultThreads() : threads;
  request.grain_bytes = kCpuGrainBytes;
  request.chunk_bytes = kCpuChunkBytes;  // chunks of whole units: multiples of 8 elements
  // The head (elements before the output's first line boundary) must be a
  // multiple of 8; units are already 8..32 elements. Shift the address the
  // plan sees so the head shrinks to the multiple of 8 below it.
  const int64_t unit = kCpuUnitBytes;
  const int64_t misalign = static_cast<int64_t>(out_address % static_cast<uintptr_t>(unit));
  const int64_t head = misalign == 0 ? 0 : (unit - misalign) / elem_bytes;
  request.dx_address = out_address + static_cast<uintptr_t>((head % 8) * elem_bytes);
  return MakeWorkPlan(request);
}

relugrad_status CpuReluForward(Dtype dtype, int64_t n, const void* x, void* y, uint8_t* mask,
                               const KernelParams& params, int threads, relugrad_stores stores) {
  if (n == 0) return RELUGRAD_OK;
  ApplyIsaEnvironmentOnce();
  const int64_t out_bytes = n * DtypeSize(dtype);
  const bool stream = UseStreamingStores(
      stores, out_bytes, g_mask_stream_bytes.load(std::memory_order_relaxed), y == x);
  if (!CpuCallSplittable(out_bytes,
                         threads)) {  // one block: no plan, no pool (60 -> 48 ns at n = 16)
    {
      ScopedIeeeFloat ieee(KernelMxcsr(params));
      DispatchForwardKernel(dtype)(params, x, y, mask, 0, n, stream);
    }
    if (profile::Enabled()) profile::NoteBackend(1, stream);
    return RELUGRAD_OK;
  }
  ForwardJob job{DispatchForwardKernel(dtype),
                 &params,
                 x,
                 y,
                 mask,
                 MakeMaskWorkPlan(n, DtypeSize(dtype), reinterpret_cast<uintptr_t>(y), threads),
                 stream};
  if (profile::Enabled()) profile::NoteBackend(job.plan.blocks, job.stream);
  // false only when no worker could be created: every block then ran here.
  ThreadPool::Global().Run(job.plan.blocks, job.plan.chunks, &RunForwardChunk, &job,
                           out_bytes >= CpuWakeBytes());
  return RELUGRAD_OK;
}

relugrad_status CpuReluGradMask(Dtype dtype, int64_t n, const void* dy, const uint8_t* mask,
                                void* dx, const KernelParams& params, int threads,
                                relugrad_stores stores) {
  if (n == 0) return RELUGRAD_OK;
  ApplyIsaEnvironmentOnce();
  const int64_t out_bytes = n * DtypeSize(dtype);
  const bool stream = UseStreamingStores(
      stores, out_bytes, g_mask_stream_bytes.load(std::memory_order_relaxed), dx == dy);
  if (!CpuCallSplittable(out_bytes, threads)) {
    {
      ScopedIeeeFloat ieee(KernelMxcsr(params));
      DispatchGradMaskKernel(dtype)(params, dy, mask, dx, 0, n, stream);
    }
    if (profile::Enabled()) profile::NoteBackend(1, stream);
    return RELUGRAD_OK;
  }
  GradJob job{DispatchGradMaskKernel(dtype),
              &params,
              dy,
              mask,
              dx,
              MakeMaskWorkPlan(n, DtypeSize(dtype), reinterpret_cast<uintptr_t>(dx), threads),
              stream};
  if (profile::Enabled()) profile::NoteBackend(job.plan.blocks, job.stream);
  ThreadPool::Global().Run(job.plan.blocks, job.plan.chunks, &RunGradChunk, &job,
                           out_bytes >= CpuWakeBytes());
  return RELUGRAD_OK;
}

}  // namespace relugrad
