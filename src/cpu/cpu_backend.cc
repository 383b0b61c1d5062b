#include "cpu/cpu_backend.h"

#include <cstdint>
#include <thread>

#include "core/error.h"
#include "core/work_plan.h"
#include "cpu/cpu_kernels.h"
#include "cpu/launch.h"
#include "cpu/scalar_alpha16.h"
#include "cpu/scoped_ieee_float.h"
#include "cpu/thread_pool.h"
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

}  // namespace

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
  return CpuReluGrad(dtype, n, dy, s, dx, params, threads, stores, LaunchPolicy::ForThisMachine());
}

relugrad_status CpuReluGrad(Dtype dtype, int64_t n, const void* dy, const void* s, void* dx,
                            const KernelParams& params, int threads, relugrad_stores stores,
                            const LaunchPolicy& policy) {
  if (n == 0) return RELUGRAD_OK;
  ApplyIsaEnvironmentOnce();
  LaunchRequest request;
  request.op = LaunchOp::kReluGrad;
  request.n = n;
  request.elem_bytes = DtypeSize(dtype);
  request.out_address = reinterpret_cast<uintptr_t>(dx);
  request.threads = threads;
  request.stores = stores;
  request.aliases_input = dx == dy || dx == s;
  Job job;
  const LaunchDecision decision = Decide(policy, request, &ReadyWorkersNow);
  const bool alpha16 = params.closed == ClosedRule::kMulAlpha && DtypeSize(dtype) == 2;
  job.kernel = alpha16 ? &RunBlockAlpha16
                       : (decision.stream ? DispatchStreamingBlockKernel(dtype)
                                          : DispatchBlockKernel(dtype));
  job.params = &params;
  job.dy = dy;
  job.s = s;
  job.dx = dx;
  if (decision.OneBlock()) {
    // One direct kernel call: no plan's divisions, no pool.
    {
      ScopedIeeeFloat ieee(KernelMxcsr(params));
      job.kernel(params, dy, s, dx, 0, n);
    }
    if (decision.splittable) NoteSplittableCallEnd();  // a loop of such calls wakes the workers
    if (profile::Enabled()) profile::NoteBackend(1, decision.stream);
    return RELUGRAD_OK;
  }
  job.plan = decision.plan;
  if (profile::Enabled()) profile::NoteBackend(job.plan.blocks, decision.stream);
  // false only when no worker could be created: every block then ran here.
  ThreadPool::Global().Run(job.plan.blocks, job.plan.chunks, &RunOneChunk, &job);
  NoteSplittableCallEnd();
  return RELUGRAD_OK;
}

}  // namespace relugrad
