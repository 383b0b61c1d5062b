// The bodies of the CUDA kernels and the host-side split of a call into
// launches, blocks and threads. Host-and-device code: kernels_impl.cuh and
// mask_kernels.cu wrap each body in a __global__ function (block and thread
// from blockIdx/threadIdx) and launch it as the ForEach*Launch planners below
// say; tests/cuda runs the very same bodies and planners on the CPU for every
// (block, thread) of a simulated grid, so indexing, peeling, splitting and
// bounds are tested without a GPU.
//
// Launch geometries (Geometry; RELUGRAD_CUDA_GEOMETRY selects one per process,
// kernels.h):
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
#ifndef RELUGRAD_CUDA_KERNEL_BODY_H_
#define RELUGRAD_CUDA_KERNEL_BODY_H_

#include <cstdint>
#include <utility>

#include "core/dtype_traits.h"
#include "cuda/device_params.h"
#include "cuda/element.h"

namespace relugrad {
namespace cuda {

constexpr int kVectorBytes = 16;

// Full unrolling on the device keeps the lane arrays in registers (a
// dynamically indexed array would live in local memory).
#if defined(__CUDA_ARCH__)
#define RG_UNROLL _Pragma("unroll")
#else
#define RG_UNROLL
#endif

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

// 16 bytes moved as one access (ld/st.global.v4.u32 on the device).
struct alignas(16) Bytes16 {
  uint32_t w[4];
};

template <Dtype D>
union Lanes16 {
  Bytes16 v;
  typename DtypeTraits<D>::Bits lane[kVectorBytes / sizeof(typename DtypeTraits<D>::Bits)];
};

// dx's vector from dy's and s's, lane by lane. The lanes are a pack
// expansion, not a loop: the indices are constants in the source, so the
// lane arrays stay in registers however large the rule (an unroll pragma is
// only a hint, and a rolled loop over a union's array indexes it
// dynamically, which puts the array in local memory).
template <Dtype D, Mode M, size_t... L>
RG_INLINE void ElementLanes(const DeviceParams& p, const Lanes16<D>& a, const Lanes16<D>& b,
                            Lanes16<D>* out, std::index_sequence<L...>) {
  ((out->lane[L] = Element<D, M>(p, a.lane[L], b.lane[L])), ...);
}

template <Dtype D, Mode M>
RG_INLINE Bytes16 ElementVector(const DeviceParams& p, const Lanes16<D>& a, const Lanes16<D>& b) {
  Lanes16<D> out;
  ElementLanes<D, M>(
      p, a, b, &out,
      std::make_index_sequence<kVectorBytes / sizeof(typename DtypeTraits<D>::Bits)>());
  return out.v;
}

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

// ---- relu_grad: one-shot geometry ----

// One thread's vectors of the body: first, first + 128, ... (coalesced
// across the warp), every load before any store.
template <Dtype D, Mode M, bool kChecked>
RG_INLINE void OneShotVectorTile(const DeviceParams& p, uint32_t vectors, uint32_t first,
                                 const Bytes16* dy_v, const Bytes16* s_v, Bytes16* dx_v) {
  constexpr int kV = kOneShotVectors<D>;
  Lanes16<D> a[kV], b[kV];
  RG_UNROLL
  for (int v = 0; v < kV; ++v) {
    const uint32_t j = first + static_cast<uint32_t>(v * kOneShotThreads);
    if (!kChecked || j < vectors) {
      a[v].v = dy_v[j];
      b[v].v = s_v[j];
    }
  }
  RG_UNROLL
  for (int v = 0; v < kV; ++v) {
    const uint32_t j = first + static_cast<uint32_t>(v * kOneShotThreads);
    if (!kChecked || j < vectors) {
      dx_v[j] = ElementVector<D, M>(p, a[v], b[v]);
    }
  }
}

// One thread of one one-shot vector launch. dy, s, dx point at the launch's
// first vector (16-byte aligned); the head's elements lie just before it
// (dy[-head .. -1]) and the tail's just after its last vector. Block 0's
// threads 0 .. head + tail - 1 do those edge elements, one each.
template <Dtype D, Mode M>
RG_INLINE void OneShotVectorBody(const DeviceParams& p, uint32_t vectors, int head, int tail,
                                 const typename DtypeTraits<D>::Bits* dy,
                                 const typename DtypeTraits<D>::Bits* s,
                                 typename DtypeTraits<D>::Bits* dx, uint32_t block,
                                 uint32_t thread) {
  constexpr uint32_t kPerBlock = kOneShotThreads * kOneShotVectors<D>;
  constexpr int kLanes = kVectorBytes / sizeof(typename DtypeTraits<D>::Bits);
  const Bytes16* dy_v = reinterpret_cast<const Bytes16*>(dy);
  const Bytes16* s_v = reinterpret_cast<const Bytes16*>(s);
  Bytes16* dx_v = reinterpret_cast<Bytes16*>(dx);
  const uint32_t first = block * kPerBlock + thread;
  if (block * kPerBlock + kPerBlock <= vectors) {
    OneShotVectorTile<D, M, false>(p, vectors, first, dy_v, s_v, dx_v);
  } else {
    OneShotVectorTile<D, M, true>(p, vectors, first, dy_v, s_v, dx_v);
  }
  if (block == 0 && static_cast<int>(thread) < head + tail) {
    const int t = static_cast<int>(thread);
    const int64_t i = t < head ? int64_t{t} - head : int64_t{vectors} * kLanes + (t - head);
    dx[i] = Element<D, M>(p, dy[i], s[i]);
  }
}

// One thread of one one-shot scalar launch: elements first, first + 128,
// ... (8 of them), every load before any store.
template <Dtype D, Mode M>
RG_INLINE void OneShotScalarBody(const DeviceParams& p, uint32_t n,
                                 const typename DtypeTraits<D>::Bits* dy,
                                 const typename DtypeTraits<D>::Bits* s,
                                 typename DtypeTraits<D>::Bits* dx, uint32_t block,
                                 uint32_t thread) {
  using Bits = typename DtypeTraits<D>::Bits;
  const uint32_t first = block * (kOneShotThreads * kElementsPerThread) + thread;
  Bits a[kElementsPerThread], b[kElementsPerThread];
  RG_UNROLL
  for (int e = 0; e < kElementsPerThread; ++e) {
    const uint32_t j = first + static_cast<uint32_t>(e * kOneShotThreads);
    if (j < n) {
      a[e] = dy[j];
      b[e] = s[j];
    }
  }
  RG_UNROLL
  for (int e = 0; e < kElementsPerThread; ++e) {
    const uint32_t j = first + static_cast<uint32_t>(e * kOneShotThreads);
    if (j < n) dx[j] = Element<D, M>(p, a[e], b[e]);
  }
}

// ---- relu_grad: grid-stride geometry ----

// One thread's share of the vector kernel: vectors tid, tid + stride, ...
// of the body, then (threads 0 .. head + tail - 1) one scalar edge element.
// kUnroll vectors (tid + u * stride, coalesced across the warp) are loaded
// before any is stored, so a thread has 2 * kUnroll loads in flight.
template <Dtype D, Mode M, int kUnroll = 1>
RG_INLINE void Vector16Body(const DeviceParams& p, int64_t head, int64_t vectors, int64_t tail,
                            const typename DtypeTraits<D>::Bits* dy,
                            const typename DtypeTraits<D>::Bits* s,
                            typename DtypeTraits<D>::Bits* dx, int64_t tid, int64_t stride) {
  using Bits = typename DtypeTraits<D>::Bits;
  constexpr int kLanes = kVectorBytes / sizeof(Bits);
  const Bytes16* dy_v = reinterpret_cast<const Bytes16*>(dy + head);
  const Bytes16* s_v = reinterpret_cast<const Bytes16*>(s + head);
  Bytes16* dx_v = reinterpret_cast<Bytes16*>(dx + head);
  for (int64_t i = tid; i < vectors; i += stride * kUnroll) {
    Lanes16<D> a[kUnroll], b[kUnroll];
    RG_UNROLL
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t j = i + u * stride;
      if (j < vectors) {
        a[u].v = dy_v[j];
        b[u].v = s_v[j];
      }
    }
    RG_UNROLL
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t j = i + u * stride;
      if (j < vectors) {
        dx_v[j] = ElementVector<D, M>(p, a[u], b[u]);
      }
    }
  }
  if (tid < head + tail) {
    const int64_t i = tid < head ? tid : head + vectors * kLanes + (tid - head);
    dx[i] = Element<D, M>(p, dy[i], s[i]);
  }
}

// One thread's share of the scalar kernel: elements tid, tid + stride, ...
template <Dtype D, Mode M>
RG_INLINE void ScalarBody(const DeviceParams& p, int64_t n, const typename DtypeTraits<D>::Bits* dy,
                          const typename DtypeTraits<D>::Bits* s, typename DtypeTraits<D>::Bits* dx,
                          int64_t tid, int64_t stride) {
  for (int64_t i = tid; i < n; i += stride) dx[i] = Element<D, M>(p, dy[i], s[i]);
}

// ---- relu_grad: pipelined geometry ----

// Vectors per thread per turn of the pipelined loop: 2, or 1 for f64, whose
// general rule with 2 vectors per turn (8 vectors live across the loop)
// makes ptxas spill to local memory.
template <Dtype D>
constexpr int kPipelineVectors = sizeof(typename DtypeTraits<D>::Bits) == 8 ? 1 : 2;

// The grid-stride vector loop, software-pipelined: the loads of turn
// i + 1 are issued before the stores of turn i, so up to
// 4 * kPipelineVectors loads per thread can be in flight. Edges as in Vector16Body. (The scalar
// path of this geometry is ScalarBody.)
template <Dtype D, Mode M>
RG_INLINE void PipelinedVectorBody(const DeviceParams& p, int64_t head, int64_t vectors,
                                   int64_t tail, const typename DtypeTraits<D>::Bits* dy,
                                   const typename DtypeTraits<D>::Bits* s,
                                   typename DtypeTraits<D>::Bits* dx, int64_t tid, int64_t stride) {
  using Bits = typename DtypeTraits<D>::Bits;
  constexpr int kU = kPipelineVectors<D>;
  constexpr int kLanes = kVectorBytes / sizeof(Bits);
  const Bytes16* dy_v = reinterpret_cast<const Bytes16*>(dy + head);
  const Bytes16* s_v = reinterpret_cast<const Bytes16*>(s + head);
  Bytes16* dx_v = reinterpret_cast<Bytes16*>(dx + head);
  const int64_t turn = stride * kU;
  Lanes16<D> a[kU] = {}, b[kU] = {};
  RG_UNROLL
  for (int u = 0; u < kU; ++u) {
    const int64_t j = tid + u * stride;
    if (j < vectors) {
      a[u].v = dy_v[j];
      b[u].v = s_v[j];
    }
  }
  for (int64_t i = tid; i < vectors; i += turn) {
    Lanes16<D> na[kU] = {}, nb[kU] = {};
    RG_UNROLL
    for (int u = 0; u < kU; ++u) {
      const int64_t j = i + turn + u * stride;
      if (j < vectors) {
        na[u].v = dy_v[j];
        nb[u].v = s_v[j];
      }
    }
    RG_UNROLL
    for (int u = 0; u < kU; ++u) {
      const int64_t j = i + u * stride;
      if (j < vectors) {
        dx_v[j] = ElementVector<D, M>(p, a[u], b[u]);
      }
    }
    RG_UNROLL
    for (int u = 0; u < kU; ++u) {
      a[u] = na[u];
      b[u] = nb[u];
    }
  }
  if (tid < head + tail) {
    const int64_t i = tid < head ? tid : head + vectors * kLanes + (tid - head);
    dx[i] = Element<D, M>(p, dy[i], s[i]);
  }
}

// ---- the 1-bit mask path (core/mask_reference.h) ----
// One thread per mask byte: elements [8b, 8b + 8) and bit j of byte b for
// element 8b + j, so every byte is written whole by one thread (no atomics)
// and the last byte's padding bits are zero. With 16-byte aligned data
// arrays, the 8 elements of a full byte are 8 * size / 16 whole vectors
// (1 for 16-bit, 2 for f32, 4 for f64); otherwise (or for the last, partial
// byte) they are read one by one. A byte's loads all come before its stores
// (y may be x, dx may be dy).

// Mask byte b's data vectors (a full byte of 16-byte aligned data).
template <Dtype D, typename I>
RG_INLINE void LoadByteVectors(const typename DtypeTraits<D>::Bits* x, I b, Lanes16<D>* a) {
  const Bytes16* in = reinterpret_cast<const Bytes16*>(x + b * 8);
  RG_UNROLL
  for (int v = 0; v < kOneShotVectors<D>; ++v) a[v].v = in[v];
}

// One lane of a mask byte's vectors (pack expansions, as ElementLanes).
template <Dtype D>
RG_INLINE typename DtypeTraits<D>::Bits ForwardLane(const DeviceParams& p,
                                                    typename DtypeTraits<D>::Bits x, int bit,
                                                    uint32_t* bits) {
  bool open = false;
  const typename DtypeTraits<D>::Bits y = ForwardElement<D>(p, x, &open);
  *bits |= static_cast<uint32_t>(open) << bit;
  return y;
}

template <Dtype D>
RG_INLINE typename DtypeTraits<D>::Bits GradLane(const DeviceParams& p,
                                                 typename DtypeTraits<D>::Bits g, int bit,
                                                 uint32_t bits) {
  return ((bits >> bit) & 1u) ? OpenLane<D>(p, g) : ClosedLane<D>(p, g);
}

template <Dtype D, size_t... L>
RG_INLINE void ForwardLanes(const DeviceParams& p, const Lanes16<D>& a, int first_bit,
                            Lanes16<D>* r, uint32_t* bits, std::index_sequence<L...>) {
  ((r->lane[L] = ForwardLane<D>(p, a.lane[L], first_bit + static_cast<int>(L), bits)), ...);
}

template <Dtype D, size_t... L>
RG_INLINE void GradLanes(const DeviceParams& p, const Lanes16<D>& a, int first_bit, uint32_t bits,
                         Lanes16<D>* r, std::index_sequence<L...>) {
  ((r->lane[L] = GradLane<D>(p, a.lane[L], first_bit + static_cast<int>(L), bits)), ...);
}

template <Dtype D, typename I>
RG_INLINE void ForwardByteVectors(const DeviceParams& p, const Lanes16<D>* a,
                                  typename DtypeTraits<D>::Bits* y, uint8_t* mask, I b) {
  constexpr int kLanes = kVectorBytes / sizeof(typename DtypeTraits<D>::Bits);
  Lanes16<D> r[kOneShotVectors<D>];
  uint32_t bits = 0;
  RG_UNROLL
  for (int v = 0; v < kOneShotVectors<D>; ++v)
    ForwardLanes<D>(p, a[v], v * kLanes, &r[v], &bits, std::make_index_sequence<kLanes>());
  Bytes16* out = reinterpret_cast<Bytes16*>(y + b * 8);
  RG_UNROLL
  for (int v = 0; v < kOneShotVectors<D>; ++v) out[v] = r[v].v;
  mask[b] = static_cast<uint8_t>(bits);
}

template <Dtype D, typename I>
RG_INLINE void GradByteVectors(const DeviceParams& p, const Lanes16<D>* a, uint32_t bits,
                               typename DtypeTraits<D>::Bits* dx, I b) {
  constexpr int kLanes = kVectorBytes / sizeof(typename DtypeTraits<D>::Bits);
  Lanes16<D> r[kOneShotVectors<D>];
  RG_UNROLL
  for (int v = 0; v < kOneShotVectors<D>; ++v)
    GradLanes<D>(p, a[v], v * kLanes, bits, &r[v], std::make_index_sequence<kLanes>());
  Bytes16* out = reinterpret_cast<Bytes16*>(dx + b * 8);
  RG_UNROLL
  for (int v = 0; v < kOneShotVectors<D>; ++v) out[v] = r[v].v;
}

// Mask byte b, whichever way its data allows. n: elements of the launch;
// I: the index type (uint32_t in one-shot launches, int64_t in the loops).
template <Dtype D, typename I>
RG_INLINE void ForwardMaskByte(const DeviceParams& p, I n, const typename DtypeTraits<D>::Bits* x,
                               typename DtypeTraits<D>::Bits* y, uint8_t* mask, bool vector, I b) {
  const I base = b * 8;
  if (vector && base + 8 <= n) {
    Lanes16<D> a[kOneShotVectors<D>];
    LoadByteVectors<D, I>(x, b, a);
    ForwardByteVectors<D, I>(p, a, y, mask, b);
    return;
  }
  uint32_t bits = 0;
  const I count = n - base < 8 ? n - base : 8;
  for (I j = 0; j < count; ++j) {
    bool open = false;
    y[base + j] = ForwardElement<D>(p, x[base + j], &open);
    bits |= static_cast<uint32_t>(open) << j;
  }
  mask[b] = static_cast<uint8_t>(bits);
}

template <Dtype D, typename I>
RG_INLINE void GradMaskByte(const DeviceParams& p, I n, const typename DtypeTraits<D>::Bits* dy,
                            const uint8_t* mask, typename DtypeTraits<D>::Bits* dx, bool vector,
                            I b) {
  const I base = b * 8;
  const uint32_t bits = mask[b];
  if (vector && base + 8 <= n) {
    Lanes16<D> a[kOneShotVectors<D>];
    LoadByteVectors<D, I>(dy, b, a);
    GradByteVectors<D, I>(p, a, bits, dx, b);
    return;
  }
  const I count = n - base < 8 ? n - base : 8;
  for (I j = 0; j < count; ++j) {
    const typename DtypeTraits<D>::Bits g = dy[base + j];
    dx[base + j] = ((bits >> j) & 1u) ? OpenLane<D>(p, g) : ClosedLane<D>(p, g);
  }
}

// One-shot: one 128-thread block per 128 mask bytes (1024 elements), one
// byte per thread, no loop. n, x, y, mask: the launch's (ForEachElementLaunch
// with 1024 elements per block; each launch starts on a mask byte).
template <Dtype D>
RG_INLINE void OneShotForwardMaskBody(const DeviceParams& p, uint32_t n,
                                      const typename DtypeTraits<D>::Bits* x,
                                      typename DtypeTraits<D>::Bits* y, uint8_t* mask, bool vector,
                                      uint32_t block, uint32_t thread) {
  const uint32_t b = block * kOneShotThreads + thread;
  if (b < (n + 7u) / 8u) ForwardMaskByte<D, uint32_t>(p, n, x, y, mask, vector, b);
}

template <Dtype D>
RG_INLINE void OneShotGradMaskBody(const DeviceParams& p, uint32_t n,
                                   const typename DtypeTraits<D>::Bits* dy, const uint8_t* mask,
                                   typename DtypeTraits<D>::Bits* dx, bool vector, uint32_t block,
                                   uint32_t thread) {
  const uint32_t b = block * kOneShotThreads + thread;
  if (b < (n + 7u) / 8u) GradMaskByte<D, uint32_t>(p, n, dy, mask, dx, vector, b);
}

// Grid-stride: bytes tid, tid + stride, ...
template <Dtype D>
RG_INLINE void ForwardMaskBody(const DeviceParams& p, int64_t n,
                               const typename DtypeTraits<D>::Bits* x,
                               typename DtypeTraits<D>::Bits* y, uint8_t* mask, bool vector,
                               int64_t tid, int64_t stride) {
  const int64_t bytes = (n + 7) / 8;
  for (int64_t b = tid; b < bytes; b += stride)
    ForwardMaskByte<D, int64_t>(p, n, x, y, mask, vector, b);
}

template <Dtype D>
RG_INLINE void GradMaskBody(const DeviceParams& p, int64_t n,
                            const typename DtypeTraits<D>::Bits* dy, const uint8_t* mask,
                            typename DtypeTraits<D>::Bits* dx, bool vector, int64_t tid,
                            int64_t stride) {
  const int64_t bytes = (n + 7) / 8;
  for (int64_t b = tid; b < bytes; b += stride)
    GradMaskByte<D, int64_t>(p, n, dy, mask, dx, vector, b);
}

// Pipelined: the grid-stride loop over the full bytes of vector data with
// byte b + stride's loads issued before byte b's stores; the partial last
// byte (thread 0) and unaligned data (the grid-stride loop) byte by byte.
template <Dtype D>
RG_INLINE void PipelinedForwardMaskBody(const DeviceParams& p, int64_t n,
                                        const typename DtypeTraits<D>::Bits* x,
                                        typename DtypeTraits<D>::Bits* y, uint8_t* mask,
                                        bool vector, int64_t tid, int64_t stride) {
  if (!vector) return ForwardMaskBody<D>(p, n, x, y, mask, false, tid, stride);
  const int64_t full = n / 8;
  Lanes16<D> a[kOneShotVectors<D>] = {};
  if (tid < full) LoadByteVectors<D, int64_t>(x, tid, a);
  for (int64_t b = tid; b < full; b += stride) {
    Lanes16<D> next[kOneShotVectors<D>] = {};
    if (b + stride < full) LoadByteVectors<D, int64_t>(x, b + stride, next);
    ForwardByteVectors<D, int64_t>(p, a, y, mask, b);
    RG_UNROLL
    for (int v = 0; v < kOneShotVectors<D>; ++v) a[v] = next[v];
  }
  if (tid == 0 && full * 8 < n) ForwardMaskByte<D, int64_t>(p, n, x, y, mask, false, full);
}

template <Dtype D>
RG_INLINE void PipelinedGradMaskBody(const DeviceParams& p, int64_t n,
                                     const typename DtypeTraits<D>::Bits* dy, const uint8_t* mask,
                                     typename DtypeTraits<D>::Bits* dx, bool vector, int64_t tid,
                                     int64_t stride) {
  if (!vector) return GradMaskBody<D>(p, n, dy, mask, dx, false, tid, stride);
  const int64_t full = n / 8;
  Lanes16<D> a[kOneShotVectors<D>] = {};
  uint32_t bits = 0;
  if (tid < full) {
    LoadByteVectors<D, int64_t>(dy, tid, a);
    bits = mask[tid];
  }
  for (int64_t b = tid; b < full; b += stride) {
    Lanes16<D> next[kOneShotVectors<D>] = {};
    uint32_t next_bits = 0;
    if (b + stride < full) {
      LoadByteVectors<D, int64_t>(dy, b + stride, next);
      next_bits = mask[b + stride];
    }
    GradByteVectors<D, int64_t>(p, a, bits, dx, b);
    RG_UNROLL
    for (int v = 0; v < kOneShotVectors<D>; ++v) a[v] = next[v];
    bits = next_bits;
  }
  if (tid == 0 && full * 8 < n) GradMaskByte<D, int64_t>(p, n, dy, mask, dx, false, full);
}

}  // namespace cuda
}  // namespace relugrad

#endif  // RELUGRAD_CUDA_KERNEL_BODY_H_
