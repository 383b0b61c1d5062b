// The bodies of the CUDA mask kernels (relu_forward with its 1-bit mask,
// relu_grad from the mask) in the three launch geometries of launch_plan.h.
// Host-and-device code: mask_kernels.cu wraps them in __global__ functions,
// and tests/cuda/cuda_mask_host_test.cc runs them on the CPU. The fused
// dropout's bodies (dropout_body.h) read plane bytes as these do.
#ifndef RELUGRAD_CUDA_MASK_BODY_H_
#define RELUGRAD_CUDA_MASK_BODY_H_

#include <cstdint>
#include <utility>

#include "core/dtype_traits.h"
#include "cuda/device_params.h"
#include "cuda/element.h"
#include "cuda/lanes.h"
#include "cuda/launch_plan.h"

namespace relugrad {
namespace cuda {

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

#endif  // RELUGRAD_CUDA_MASK_BODY_H_
