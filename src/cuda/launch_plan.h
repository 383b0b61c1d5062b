// The host-side split of a CUDA call into launches, blocks and threads, and
// the geometries the kernel bodies run in (relu_grad_body.h, mask_body.h,
// dropout_body.h). Host-and-device code: relu_grad_kernels.cuh, mask_kernels.cu
// and dropout_kernels.cu wrap each body in a __global__ function (block and
// thread from blockIdx/threadIdx) and launch it as the ForEach*Launch planners
// below say; tests/cuda runs the very same bodies and planners on the CPU for
// every (block, thread) of a simulated grid, so indexing, peeling, splitting
// and bounds are tested without a GPU.
//
// Launch geometries (Geometry; RELUGRAD_CUDA_GEOMETRY selects one per process,
// relu_grad_kernels.h):
//   one-shot     the default, PyTorch's elementwise geometry: 128-thread
//                blocks, 8 elements per thread (16-byte vectors: two per input
//                for f32, one for 16-bit, four for f64), a grid of
//                ceil(n / 1024) blocks that covers the call once (no loop),
//                every load of a thread issued before anything is computed or
//                stored, a bounds-checked partial last block, 32-bit indices
//                (calls over kMaxLaunchBytes per array are split into several
//                launches). Every thread has all of its loads in flight at
//                once, and the grid is as large as the data, so the bytes in
//                flight grow with the GPU's occupancy instead of a loop's
//                unroll.
//   grid-stride  256-thread blocks, the grid capped at a multiple of the SM
//                count, a 64-bit grid-stride loop with kUnroll vectors loaded
//                per turn (1 or 2, RELUGRAD_CUDA_UNROLL).
//   pipelined    the grid-stride loop with the next turn's loads issued
//                before this turn's stores (software pipelining), so a thread
//                never waits for its own stores before loading again.
//
// Aliasing: dx may be dy or s (y may be x, dx may be dy) exactly, never a
// partial overlap (the plan rejects those). So each element is read, then
// written, by one thread only, and loading element j before storing a
// different element i of the same thread is safe; that is what lets every
// geometry hoist loads above stores, which the compiler cannot prove itself
// (no pointer is __restrict__, and no load uses the read-only path
// ld.global.nc, whose data may be stale once the same kernel writes it).
#ifndef RELUGRAD_CUDA_LAUNCH_PLAN_H_
#define RELUGRAD_CUDA_LAUNCH_PLAN_H_

#include <cstdint>

#include "core/dtype_traits.h"
#include "cuda/lanes.h"

namespace relugrad {
namespace cuda {

enum class Geometry : int { kOneShot = 0, kGridStride = 1, kPipelined = 2 };

// One-shot geometry: threads per block and elements per thread.
constexpr int kOneShotThreads = 128;
constexpr int kElementsPerThread = 8;
// Threads per block of the loop geometries (grid-stride and pipelined).
constexpr int kThreadsPerBlock = 256;
// The most bytes of one array that a one-shot launch covers: its element
// and vector indices then fit 32 bits with room for a block's overshoot. A
// multiple of 64, so every later launch starts 16-byte aligned and on a mask
// byte (8 elements of up to 8 bytes).
constexpr int64_t kMaxLaunchBytes = int64_t{1} << 31;

// 16-byte vectors per thread in the one-shot geometry: 2 (f32), 1 (16-bit), 4 (f64).
template <Dtype D>
constexpr int kOneShotVectors = static_cast<int>(kElementsPerThread *
                                                 sizeof(typename DtypeTraits<D>::Bits) /
                                                 kVectorBytes);
inline int OneShotVectors(Dtype d) {
  return static_cast<int>(kElementsPerThread * DtypeSize(d) / kVectorBytes);
}

// How a call is split between the 16-byte vector body and scalar elements.
// Vectors are used when dy, s and dx sit at the same offset within 16 bytes
// (then `head` scalar elements bring all three to a 16-byte boundary);
// otherwise every element goes through the scalar kernel.
struct VectorPlan {
  bool vector;      // false: scalar kernel for all n elements
  int64_t head;     // scalar elements before the first aligned vector
  int64_t vectors;  // 16-byte vectors in the body
  int64_t tail;     // scalar elements after the body
};

inline VectorPlan PlanVectors(Dtype dtype, int64_t n, const void* dy, const void* s,
                              const void* dx) {
  const int64_t es = DtypeSize(dtype);
  const uintptr_t offset = reinterpret_cast<uintptr_t>(dy) % kVectorBytes;
  VectorPlan plan{false, 0, 0, 0};
  if (reinterpret_cast<uintptr_t>(s) % kVectorBytes != offset ||
      reinterpret_cast<uintptr_t>(dx) % kVectorBytes != offset) {
    return plan;  // no common 16-byte phase: scalar kernel
  }
  const int64_t lanes = kVectorBytes / es;
  // Pointers are element-aligned (validated), so the gap is whole elements.
  int64_t head = static_cast<int64_t>((kVectorBytes - offset) % kVectorBytes) / es;
  if (head > n) head = n;
  plan.vector = true;
  plan.head = head;
  plan.vectors = (n - head) / lanes;
  plan.tail = n - head - plan.vectors * lanes;
  return plan;
}

inline bool Aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % kVectorBytes == 0; }

// ---- launch planning (host) ----

// Loop geometries: blocks for `work_items` threads' worth of work, capped
// (the loop covers the rest). The vector kernel's scalar edges need
// head + tail <= 14 threads, always within the first block.
inline int BlocksFor(int64_t work_items, int max_blocks) {
  const int64_t needed = (work_items + kThreadsPerBlock - 1) / kThreadsPerBlock;
  const int64_t cap = max_blocks > 0 ? max_blocks : 1;
  return static_cast<int>(needed < 1 ? 1 : (needed < cap ? needed : cap));
}

inline int64_t VectorWorkItems(const VectorPlan& plan) {
  return plan.vectors > plan.head + plan.tail ? plan.vectors : plan.head + plan.tail;
}

inline uint32_t CeilBlocks(int64_t items, int64_t per_block) {
  const int64_t b = (items + per_block - 1) / per_block;
  return static_cast<uint32_t>(b < 1 ? 1 : b);
}

// One-shot vector path: calls launch(first_vector, vectors, head, tail,
// blocks) once per launch, in order. Launch k covers vectors
// [first_vector, first_vector + vectors) of the body; the first launch also
// does the head's scalar elements and the last the tail's (one launch does
// both when the body fits one). max_launch_bytes: kMaxLaunchBytes (tests pass
// smaller multiples of 64 to exercise the split).
template <typename F>
void ForEachVectorLaunch(Dtype d, const VectorPlan& plan, int64_t max_launch_bytes, F&& launch) {
  const int64_t per_launch = max_launch_bytes / kVectorBytes;
  const int64_t per_block = int64_t{kOneShotThreads} * OneShotVectors(d);
  const int64_t launches = plan.vectors == 0 ? 1 : (plan.vectors + per_launch - 1) / per_launch;
  for (int64_t k = 0; k < launches; ++k) {
    const int64_t first = k * per_launch;
    const int64_t count = plan.vectors - first < per_launch ? plan.vectors - first : per_launch;
    launch(first, count, static_cast<int>(k == 0 ? plan.head : 0),
           static_cast<int>(k == launches - 1 ? plan.tail : 0), CeilBlocks(count, per_block));
  }
}

// One-shot scalar path (no common 16-byte phase) and the one-shot mask
// kernels: calls launch(first_element, elements, blocks) per launch of at
// most max_launch_bytes per array, elements_per_block apart.
template <typename F>
void ForEachElementLaunch(Dtype d, int64_t n, int64_t max_launch_bytes, int64_t elements_per_block,
                          F&& launch) {
  const int64_t per_launch = max_launch_bytes / DtypeSize(d);
  for (int64_t first = 0; first < n; first += per_launch) {
    const int64_t count = n - first < per_launch ? n - first : per_launch;
    launch(first, count, CeilBlocks(count, elements_per_block));
  }
}

}  // namespace cuda
}  // namespace relugrad

#endif  // RELUGRAD_CUDA_LAUNCH_PLAN_H_
