#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "bench_support/triad.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/cache_control.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace relugrad {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

HWY_NOINLINE void TriadBlock(float* HWY_RESTRICT a, const float* HWY_RESTRICT b,
                             const float* HWY_RESTRICT c, float q, int64_t begin, int64_t end,
                             bool streaming) {
  const hn::ScalableTag<float> d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  const auto vq = hn::Set(d, q);
  int64_t i = begin;
  if (streaming) {  // scalar head up to an aligned address, Stream the body
    for (; i < end && (reinterpret_cast<uintptr_t>(a + i) % (N * sizeof(float))) != 0; ++i)
      a[i] = b[i] + q * c[i];
    for (; i + N <= end; i += N)
      hn::Stream(hn::MulAdd(vq, hn::LoadU(d, c + i), hn::LoadU(d, b + i)), d, a + i);
  } else {
    for (; i + N <= end; i += N)
      hn::StoreU(hn::MulAdd(vq, hn::LoadU(d, c + i), hn::LoadU(d, b + i)), d, a + i);
  }
  for (; i < end; ++i) a[i] = b[i] + q * c[i];
  if (streaming) hwy::FlushStream();  // each writer fences its own streams
}

}  // namespace HWY_NAMESPACE
}  // namespace relugrad
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "core/work_plan.h"
#include "cpu/relu_grad_backend.h"
#include "cpu/launch.h"
#include "cpu/thread_pool.h"
#include "isa/isa.h"
#include "bench_support/triad.h"

namespace relugrad {
HWY_EXPORT(TriadBlock);

namespace {
struct TriadJob {
  float* a;
  const float* b;
  const float* c;
  float q;
  bool streaming;
  WorkPlan plan;
};
// Chunked and scheduled as relugrad's own calls (cpu/relu_grad_backend.cc), so the
// two stay comparable.
void RunTriadChunk(void* ctx, int block, int chunk) {
  const TriadJob& j = *static_cast<const TriadJob*>(ctx);
  const int64_t begin = j.plan.ChunkBegin(block, chunk), end = j.plan.ChunkEnd(block, chunk);
  if (begin < end) HWY_DYNAMIC_DISPATCH(TriadBlock)(j.a, j.b, j.c, j.q, begin, end, j.streaming);
}
}  // namespace

void Triad(float* a, const float* b, const float* c, float q, int64_t n, bool streaming,
           int threads) {
  ApplyIsaEnvironmentOnce();  // the same SIMD target as relugrad's kernels
  TriadJob job{a, b, c, q, streaming, {}};
  // relugrad_relu_grad's launch (three f32 arrays, `a` the output), with the
  // triad's own store choice.
  const LaunchPolicy& policy = LaunchPolicy::ForThisMachine();
  const LaunchDecision d = Decide(policy, LaunchOp::kReluGrad, n, 4, threads, RELUGRAD_STORES_AUTO,
                                  false, a, &ReadyWorkersNow);
  if (d.OneBlock()) {
    HWY_DYNAMIC_DISPATCH(TriadBlock)(a, b, c, q, 0, n, streaming);
    if (d.splittable) NoteSplittableCallEnd();
    return;
  }
  job.plan =
      PlanBlocks(policy, LaunchOp::kReluGrad, n, 4, reinterpret_cast<uintptr_t>(a), d.blocks);
  ThreadPool::Global().Run(job.plan.blocks, job.plan.chunks, &RunTriadChunk, &job);
  NoteSplittableCallEnd();
}

}  // namespace relugrad
#endif  // HWY_ONCE
