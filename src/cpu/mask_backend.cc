#include "cpu/mask_backend.h"

#include <cstdint>

#include "cpu/launch.h"
#include "cpu/mask_kernels.h"
#include "cpu/relu_grad_backend.h"
#include "cpu/scoped_ieee_float.h"
#include "cpu/thread_pool.h"
#include "isa/isa.h"
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
  int64_t n;
  int elem_bytes;
  int64_t prefault_piece_elems;  // 0: the outputs' pages are not prefaulted
};

struct GradJob {
  GradMaskKernel kernel;
  const KernelParams* params;
  const void* dy;
  const uint8_t* mask;
  void* dx;
  WorkPlan plan;
  bool stream;
  int64_t n;
  int elem_bytes;
  int64_t prefault_piece_elems;
};

// The forward over [begin, end): y's and the mask's pages prefaulted piece by
// piece when prefault_piece_elems > 0 (LaunchDecision::prefault).
void RunForwardRange(const ForwardJob& job, int64_t begin, int64_t end) {
  const int64_t eb = job.elem_bytes;
  RunPrefaulted(
      begin, end, job.prefault_piece_elems,
      [&](int64_t b, int64_t e) {
        PrefaultForWrite(job.y, job.n * eb, b * eb, e * eb);
        PrefaultForWrite(job.mask, (job.n + 7) / 8, b / 8, (e + 7) / 8);
      },
      [&](int64_t b, int64_t e) {
        job.kernel(*job.params, job.x, job.y, job.mask, b, e, job.stream);
      });
}

// The backward from the mask over [begin, end), dx prefaulted as above.
void RunGradRange(const GradJob& job, int64_t begin, int64_t end) {
  const int64_t eb = job.elem_bytes;
  RunPrefaulted(
      begin, end, job.prefault_piece_elems,
      [&](int64_t b, int64_t e) { PrefaultForWrite(job.dx, job.n * eb, b * eb, e * eb); },
      [&](int64_t b, int64_t e) {
        job.kernel(*job.params, job.dy, job.mask, job.dx, b, e, job.stream);
      });
}

void RunForwardChunk(void* context, int block, int chunk) {
  const ForwardJob& job = *static_cast<const ForwardJob*>(context);
  const int64_t begin = job.plan.ChunkBegin(block, chunk), end = job.plan.ChunkEnd(block, chunk);
  if (begin >= end) return;
  ScopedIeeeFloat ieee(KernelMxcsr(*job.params));
  if (profile::Enabled()) {  // a per-worker slice for RELUGRAD_PROFILE traces
    const int64_t t0 = profile::NowNs();
    RunForwardRange(job, begin, end);
    profile::RecordBlock(block, t0, profile::NowNs(), end - begin);
    return;
  }
  RunForwardRange(job, begin, end);
}

void RunGradChunk(void* context, int block, int chunk) {
  const GradJob& job = *static_cast<const GradJob*>(context);
  const int64_t begin = job.plan.ChunkBegin(block, chunk), end = job.plan.ChunkEnd(block, chunk);
  if (begin >= end) return;
  ScopedIeeeFloat ieee(KernelMxcsr(*job.params));
  if (profile::Enabled()) {
    const int64_t t0 = profile::NowNs();
    RunGradRange(job, begin, end);
    profile::RecordBlock(block, t0, profile::NowNs(), end - begin);
    return;
  }
  RunGradRange(job, begin, end);
}

}  // namespace

relugrad_status CpuReluForward(Dtype dtype, int64_t n, const void* x, void* y, uint8_t* mask,
                               const KernelParams& params, int threads, relugrad_stores stores) {
  return CpuReluForward(dtype, n, x, y, mask, params, threads, stores,
                        LaunchPolicy::ForThisMachine());
}

relugrad_status CpuReluGradMask(Dtype dtype, int64_t n, const void* dy, const uint8_t* mask,
                                void* dx, const KernelParams& params, int threads,
                                relugrad_stores stores) {
  return CpuReluGradMask(dtype, n, dy, mask, dx, params, threads, stores,
                         LaunchPolicy::ForThisMachine());
}

relugrad_status CpuReluForward(Dtype dtype, int64_t n, const void* x, void* y, uint8_t* mask,
                               const KernelParams& params, int threads, relugrad_stores stores,
                               const LaunchPolicy& policy) {
  if (n == 0) return RELUGRAD_OK;
  ApplyIsaEnvironmentOnce();
  const int elem_bytes = DtypeSize(dtype);
  const LaunchDecision d = Decide(policy, LaunchOp::kForwardMask, n, elem_bytes, threads, stores,
                                  y == x, y, &ReadyWorkersNow);
  const int64_t prefault_piece_elems = PrefaultPieceElems(policy, d, elem_bytes);
  if (d.OneBlock()) {  // no plan, no pool (docs/design.md, "Mask path fixed cost")
    if (prefault_piece_elems == 0) {
      ScopedIeeeFloat ieee(KernelMxcsr(params));
      DispatchForwardKernel(dtype)(params, x, y, mask, 0, n, d.stream);
    } else {
      const ForwardJob job{
          DispatchForwardKernel(dtype), &params, x, y, mask, WorkPlan{}, d.stream, n, elem_bytes,
          prefault_piece_elems};
      ScopedIeeeFloat ieee(KernelMxcsr(params));
      RunForwardRange(job, 0, n);
    }
    if (d.splittable) NoteSplittableCallEnd();
    if (profile::Enabled()) profile::NoteBackend(1, d.stream);
    return RELUGRAD_OK;
  }
  ForwardJob job{DispatchForwardKernel(dtype),
                 &params,
                 x,
                 y,
                 mask,
                 PlanBlocks(policy, LaunchOp::kForwardMask, n, elem_bytes,
                            reinterpret_cast<uintptr_t>(y), d.blocks),
                 d.stream,
                 n,
                 elem_bytes,
                 prefault_piece_elems};
  if (profile::Enabled()) profile::NoteBackend(job.plan.blocks, job.stream);
  // false only when no worker could be created: every block then ran here.
  ThreadPool::Global().Run(job.plan.blocks, job.plan.chunks, &RunForwardChunk, &job);
  NoteSplittableCallEnd();
  return RELUGRAD_OK;
}

relugrad_status CpuReluGradMask(Dtype dtype, int64_t n, const void* dy, const uint8_t* mask,
                                void* dx, const KernelParams& params, int threads,
                                relugrad_stores stores, const LaunchPolicy& policy) {
  if (n == 0) return RELUGRAD_OK;
  ApplyIsaEnvironmentOnce();
  const int elem_bytes = DtypeSize(dtype);
  const LaunchDecision d = Decide(policy, LaunchOp::kGradMask, n, elem_bytes, threads, stores,
                                  dx == dy, dx, &ReadyWorkersNow);
  const int64_t prefault_piece_elems = PrefaultPieceElems(policy, d, elem_bytes);
  if (d.OneBlock()) {
    if (prefault_piece_elems == 0) {
      ScopedIeeeFloat ieee(KernelMxcsr(params));
      DispatchGradMaskKernel(dtype)(params, dy, mask, dx, 0, n, d.stream);
    } else {
      const GradJob job{
          DispatchGradMaskKernel(dtype), &params, dy, mask, dx, WorkPlan{}, d.stream, n, elem_bytes,
          prefault_piece_elems};
      ScopedIeeeFloat ieee(KernelMxcsr(params));
      RunGradRange(job, 0, n);
    }
    if (d.splittable) NoteSplittableCallEnd();
    if (profile::Enabled()) profile::NoteBackend(1, d.stream);
    return RELUGRAD_OK;
  }
  GradJob job{DispatchGradMaskKernel(dtype),
              &params,
              dy,
              mask,
              dx,
              PlanBlocks(policy, LaunchOp::kGradMask, n, elem_bytes,
                         reinterpret_cast<uintptr_t>(dx), d.blocks),
              d.stream,
              n,
              elem_bytes,
              prefault_piece_elems};
  if (profile::Enabled()) profile::NoteBackend(job.plan.blocks, job.stream);
  ThreadPool::Global().Run(job.plan.blocks, job.plan.chunks, &RunGradChunk, &job);
  NoteSplittableCallEnd();
  return RELUGRAD_OK;
}

}  // namespace relugrad
