// The CPU backend of the fused ReLU + dropout planes.
//
// Both ops are scalar loops over core/dropout_rule.h (one rule for every
// backend) split over the worker pool the way the mask backward is: the
// backward reads the same arrays as the mask backward plus one more bit
// plane, so its launch decision is that op's (LaunchOp::kGradMask). They
// serve the C API, the CLI and the tests; relugrad.torch's CPU ReLUDropout
// keeps its own fused kernels, and the planes' hot path is the CUDA one
// (cuda/dropout_kernels.cu), so no Highway kernel is written for them.
#include "cpu/dropout_backend.h"

#include <cstring>

#include "core/dropout_rule.h"
#include "core/dtype_traits.h"
#include "cpu/launch.h"
#include "cpu/scoped_ieee_float.h"
#include "cpu/thread_pool.h"

namespace relugrad {

namespace {

// Output bytes [b, e) of the packed plane.
void PackRange(int64_t n, const uint8_t* bytes, uint8_t* bits, int64_t b, int64_t e) {
  const int64_t full = n / 8;
  for (int64_t i = b; i < e; ++i) {
    if (i < full) {
      uint64_t word;
      std::memcpy(&word, bytes + i * 8, 8);
      if constexpr (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__) word = __builtin_bswap64(word);
      bits[i] = element::PackEightBytes(word);
    } else {  // the partial last byte: padding bits 0
      uint32_t v = 0;
      for (int64_t j = i * 8; j < n; ++j) v |= static_cast<uint32_t>(bytes[j] != 0) << (j - i * 8);
      bits[i] = static_cast<uint8_t>(v);
    }
  }
}

template <Dtype D>
void GradRange(const void* dy_v, const uint8_t* gate, const uint8_t* keep, double scale, void* dx_v,
               int64_t b, int64_t e) {
  using Bits = typename DtypeTraits<D>::Bits;
  const Bits* dy = static_cast<const Bits*>(dy_v);
  Bits* dx = static_cast<Bits*>(dx_v);
  const float scale_f = static_cast<float>(scale);
  for (int64_t i = b; i < e; ++i) {
    const bool g = (gate[i >> 3] >> (i & 7)) & 1u;
    const bool k = (keep[i >> 3] >> (i & 7)) & 1u;
    dx[i] = element::DropoutGrad<D, /*kDeviceNan=*/false>(dy[i], g, k, scale_f, scale);
  }
}

using GradRangeFn = void (*)(const void*, const uint8_t*, const uint8_t*, double, void*, int64_t,
                             int64_t);

GradRangeFn GradRangeFor(Dtype dtype) {
  switch (dtype) {
    case Dtype::kF16:
      return &GradRange<Dtype::kF16>;
    case Dtype::kBF16:
      return &GradRange<Dtype::kBF16>;
    case Dtype::kF64:
      return &GradRange<Dtype::kF64>;
    case Dtype::kF32:
      break;
  }
  return &GradRange<Dtype::kF32>;
}

// The rule's two multiplies are IEEE: no DAZ/FTZ from the host thread.
constexpr MxcsrNeed kIeee{kMxcsrIeee, kMxcsrControl};

struct PackJob {
  int64_t n;
  const uint8_t* bytes;
  uint8_t* bits;
  WorkPlan plan;  // over the bytes of `bits`
};

struct GradJob {
  GradRangeFn fn;
  const void* dy;
  const uint8_t* gate;
  const uint8_t* keep;
  double scale;
  void* dx;
  WorkPlan plan;  // over the elements of dx
};

void PackChunk(void* context, int block, int chunk) {
  const PackJob& job = *static_cast<const PackJob*>(context);
  PackRange(job.n, job.bytes, job.bits, job.plan.ChunkBegin(block, chunk),
            job.plan.ChunkEnd(block, chunk));
}

void GradChunk(void* context, int block, int chunk) {
  const GradJob& job = *static_cast<const GradJob*>(context);
  const int64_t b = job.plan.ChunkBegin(block, chunk), e = job.plan.ChunkEnd(block, chunk);
  if (b >= e) return;
  ScopedIeeeFloat ieee(kIeee);
  job.fn(job.dy, job.gate, job.keep, job.scale, job.dx, b, e);
}

}  // namespace

relugrad_status CpuPackBits(int64_t n, const uint8_t* bytes, uint8_t* bits, int threads) {
  if (n == 0) return RELUGRAD_OK;
  const LaunchPolicy& policy = LaunchPolicy::ForThisMachine();
  const int64_t out = (n + 7) / 8;
  // Blocks of whole output bytes: no two threads write one byte.
  const LaunchDecision d = Decide(policy, LaunchOp::kGradMask, out, 1, threads,
                                  RELUGRAD_STORES_CACHED, false, bits, &ReadyWorkersNow);
  if (d.OneBlock()) {
    PackRange(n, bytes, bits, 0, out);
    if (d.splittable) NoteSplittableCallEnd();
    return RELUGRAD_OK;
  }
  PackJob job{
      n, bytes, bits,
      PlanBlocks(policy, LaunchOp::kGradMask, out, 1, reinterpret_cast<uintptr_t>(bits), d.blocks)};
  ThreadPool::Global().Run(job.plan.blocks, job.plan.chunks, &PackChunk, &job);
  NoteSplittableCallEnd();
  return RELUGRAD_OK;
}

relugrad_status CpuReluDropoutGrad(Dtype dtype, int64_t n, const void* dy, const uint8_t* gate,
                                   const uint8_t* keep, double scale, void* dx, int threads) {
  if (n == 0) return RELUGRAD_OK;
  const LaunchPolicy& policy = LaunchPolicy::ForThisMachine();
  const int elem_bytes = DtypeSize(dtype);
  const LaunchDecision d = Decide(policy, LaunchOp::kGradMask, n, elem_bytes, threads,
                                  RELUGRAD_STORES_CACHED, dx == dy, dx, &ReadyWorkersNow);
  GradJob job{GradRangeFor(dtype), dy, gate, keep, scale, dx, WorkPlan{}};
  if (d.OneBlock()) {
    ScopedIeeeFloat ieee(kIeee);
    job.fn(dy, gate, keep, scale, dx, 0, n);
    if (d.splittable) NoteSplittableCallEnd();
    return RELUGRAD_OK;
  }
  job.plan = PlanBlocks(policy, LaunchOp::kGradMask, n, elem_bytes, reinterpret_cast<uintptr_t>(dx),
                        d.blocks);
  ThreadPool::Global().Run(job.plan.blocks, job.plan.chunks, &GradChunk, &job);
  NoteSplittableCallEnd();
  return RELUGRAD_OK;
}

}  // namespace relugrad
