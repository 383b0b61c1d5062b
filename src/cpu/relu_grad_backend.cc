#include "cpu/relu_grad_backend.h"

#include <cstdint>
#include <thread>

#include "core/error.h"
#include "core/work_plan.h"
#include "cpu/launch.h"
#include "cpu/relu_grad_kernels.h"
#include "cpu/scoped_ieee_float.h"
#include "cpu/thread_pool.h"
#include "cpu/variants.h"
#include "isa/isa.h"
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
  int64_t n;
  int elem_bytes;
  int64_t prefault_piece_elems;  // 0: dx's pages are not prefaulted
};

// kernel over [begin, end), prefaulting dx's pages piece by piece when
// prefault_piece_elems > 0 (LaunchDecision::prefault).
inline void RunRange(BlockKernel kernel, const KernelParams& params, const void* dy, const void* s,
                     void* dx, int64_t n, int elem_bytes, int64_t prefault_piece_elems,
                     int64_t begin, int64_t end) {
  RunPrefaulted(
      begin, end, prefault_piece_elems,
      [&](int64_t b, int64_t e) {
        PrefaultForWrite(dx, n * elem_bytes, b * elem_bytes, e * elem_bytes);
      },
      [&](int64_t b, int64_t e) { kernel(params, dy, s, dx, b, e); });
}

void RunOneChunk(void* context, int block, int chunk) {
  const Job& job = *static_cast<const Job*>(context);
  const int64_t begin = job.plan.ChunkBegin(block, chunk), end = job.plan.ChunkEnd(block, chunk);
  if (begin >= end) return;  // a short last block's trailing chunks
  ScopedIeeeFloat ieee(KernelMxcsr(*job.params));
  if (profile::Enabled()) {  // a per-worker slice for RELUGRAD_PROFILE traces
    const int64_t t0 = profile::NowNs();
    RunRange(job.kernel, *job.params, job.dy, job.s, job.dx, job.n, job.elem_bytes,
             job.prefault_piece_elems, begin, end);
    profile::RecordBlock(block, t0, profile::NowNs(), end - begin);
    return;
  }
  RunRange(job.kernel, *job.params, job.dy, job.s, job.dx, job.n, job.elem_bytes,
           job.prefault_piece_elems, begin, end);
}

}  // namespace

int DefaultThreads() {
  // hardware_concurrency() is a system call in glibc: ask once per process.
  static const int count = [] {
    const unsigned hw = std::thread::hardware_concurrency();
    return hw == 0 ? 1 : static_cast<int>(hw);
  }();
  return count;
}

namespace {

// Both entry points' body, inlined into each.
inline relugrad_status RunReluGrad(Dtype dtype, int64_t n, const void* dy, const void* s, void* dx,
                                   const KernelParams& params, int threads, relugrad_stores stores,
                                   CpuVariantId variant, const LaunchPolicy& policy) {
  if (n == 0) return RELUGRAD_OK;
  ApplyIsaEnvironmentOnce();
  const int elem_bytes = DtypeSize(dtype);
  const LaunchDecision d = Decide(policy, LaunchOp::kReluGrad, n, elem_bytes, threads, stores,
                                  dx == dy || dx == s, dx, &ReadyWorkersNow);
  // The variant row's own kernel (cpu/variants.inc; the 16-bit alpha row never streams).
  const BlockKernel kernel = CpuVariantKernel(variant, dtype, d.stream);
  const int64_t prefault_piece_elems = PrefaultPieceElems(policy, d, elem_bytes);
  if (d.OneBlock()) {
    // One direct kernel call: no plan's divisions, no pool.
    {
      ScopedIeeeFloat ieee(KernelMxcsr(params));
      RunRange(kernel, params, dy, s, dx, n, elem_bytes, prefault_piece_elems, 0, n);
    }
    if (d.splittable) NoteSplittableCallEnd();  // a loop of such calls wakes the workers
    if (profile::Enabled()) profile::NoteBackend(1, d.stream);
    return RELUGRAD_OK;
  }
  Job job{kernel,
          &params,
          dy,
          s,
          dx,
          PlanBlocks(policy, LaunchOp::kReluGrad, n, elem_bytes, reinterpret_cast<uintptr_t>(dx),
                     d.blocks),
          n,
          elem_bytes,
          prefault_piece_elems};
  if (profile::Enabled()) profile::NoteBackend(job.plan.blocks, d.stream);
  // false only when no worker could be created: every block then ran here.
  ThreadPool::Global().Run(job.plan.blocks, job.plan.chunks, &RunOneChunk, &job);
  NoteSplittableCallEnd();
  return RELUGRAD_OK;
}

}  // namespace

relugrad_status CpuReluGrad(Dtype dtype, int64_t n, const void* dy, const void* s, void* dx,
                            const KernelParams& params, int threads, relugrad_stores stores,
                            CpuVariantId variant) {
  return RunReluGrad(dtype, n, dy, s, dx, params, threads, stores, variant,
                     LaunchPolicy::ForThisMachine());
}

relugrad_status CpuReluGrad(Dtype dtype, int64_t n, const void* dy, const void* s, void* dx,
                            const KernelParams& params, int threads, relugrad_stores stores,
                            CpuVariantId variant, const LaunchPolicy& policy) {
  return RunReluGrad(dtype, n, dy, s, dx, params, threads, stores, variant, policy);
}

}  // namespace relugrad
