// The bodies of the CUDA relu_grad kernels in the three launch geometries
// (one-shot, grid-stride, pipelined; launch_plan.h describes them and the
// aliasing rule that lets every body load before it stores). Host-and-device
// code: relu_grad_kernels.cuh wraps them in __global__ functions, and
// tests/cuda/cuda_kernel_host_test.cc runs them on the CPU.
#ifndef RELUGRAD_CUDA_RELU_GRAD_BODY_H_
#define RELUGRAD_CUDA_RELU_GRAD_BODY_H_

#include <cstdint>
#include <utility>

#include "core/dtype_traits.h"
#include "cuda/device_params.h"
#include "cuda/element.h"
#include "cuda/lanes.h"
#include "cuda/launch_plan.h"

namespace relugrad {
namespace cuda {

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

}  // namespace cuda
}  // namespace relugrad

#endif  // RELUGRAD_CUDA_RELU_GRAD_BODY_H_
