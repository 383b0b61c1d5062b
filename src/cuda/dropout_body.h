// The bodies of the fused ReLU + dropout planes' CUDA kernels (pack_bits and
// relu_dropout_grad), host-and-device code as mask_body.h's: the kernels
// (dropout_kernels.cu) wrap them in __global__ functions, and
// tests/cuda/cuda_dropout_host_test.cc runs them on the CPU for every
// (block, thread) of a simulated grid against the CPU backend.
//
// Geometry: the one-shot geometry of the mask kernels (launch_plan.h): 128
// threads per block, one plane byte (8 elements) per thread, all of a
// thread's loads issued before its stores, a grid that covers the launch
// once, launches of at most kMaxLaunchBytes per array. Only this geometry:
// RELUGRAD_CUDA_GEOMETRY's loops are relu_grad's and the mask path's A/B.
#ifndef RELUGRAD_CUDA_DROPOUT_BODY_H_
#define RELUGRAD_CUDA_DROPOUT_BODY_H_

#include <cstdint>
#include <utility>

#include "core/dropout_rule.h"
#include "cuda/lanes.h"
#include "cuda/launch_plan.h"
#include "cuda/mask_body.h"

namespace relugrad {
namespace cuda {

// Elements (pack: mask bytes) per one-shot block: one plane byte per thread.
constexpr int64_t kDropoutElementsPerBlock = int64_t{kOneShotThreads} * 8;

// Plane byte b of `bits` from bytes[8b, 8b + 8) (fewer for the last byte,
// its padding bits 0). aligned8: `bytes` is 8-byte aligned (one 64-bit load
// per full byte).
template <typename I>
RG_INLINE void PackBitsByte(I n, const uint8_t* bytes, uint8_t* bits, bool aligned8, I b) {
  const I base = b * 8;
  if (base + 8 <= n) {
    uint64_t word = 0;
    if (aligned8) {
      word = *reinterpret_cast<const uint64_t*>(bytes + base);
    } else {
      for (int j = 0; j < 8; ++j) word |= static_cast<uint64_t>(bytes[base + j]) << (8 * j);
    }
    bits[b] = element::PackEightBytes(word);
    return;
  }
  uint32_t v = 0;
  for (I j = 0; base + j < n; ++j) v |= static_cast<uint32_t>(bytes[base + j] != 0) << j;
  bits[b] = static_cast<uint8_t>(v);
}

template <Dtype D, size_t... L>
RG_INLINE void DropoutLanes(const Lanes16<D>& a, int first, uint32_t gate, uint32_t keep,
                            float scale_f, double scale_d, Lanes16<D>* out,
                            std::index_sequence<L...>) {
  ((out->lane[L] = element::DropoutGrad<D, /*kDeviceNan=*/true>(
        a.lane[L], (gate >> (first + static_cast<int>(L))) & 1u,
        (keep >> (first + static_cast<int>(L))) & 1u, scale_f, scale_d)),
   ...);
}

// dx for plane byte b's 8 elements. vector: dy and dx are 16-byte aligned
// (whole 16-byte vectors for full bytes).
template <Dtype D, typename I>
RG_INLINE void ReluDropoutGradByte(I n, const typename DtypeTraits<D>::Bits* dy,
                                   const uint8_t* gate, const uint8_t* keep, float scale_f,
                                   double scale_d, typename DtypeTraits<D>::Bits* dx, bool vector,
                                   I b) {
  const I base = b * 8;
  const uint32_t g = gate[b];
  const uint32_t k = keep[b];
  if (vector && base + 8 <= n) {
    constexpr int kLanes = kVectorBytes / sizeof(typename DtypeTraits<D>::Bits);
    Lanes16<D> a[kOneShotVectors<D>];
    LoadByteVectors<D, I>(dy, b, a);
    Lanes16<D> r[kOneShotVectors<D>];
    RG_UNROLL
    for (int v = 0; v < kOneShotVectors<D>; ++v)
      DropoutLanes<D>(a[v], v * kLanes, g, k, scale_f, scale_d, &r[v],
                      std::make_index_sequence<kLanes>());
    Bytes16* out = reinterpret_cast<Bytes16*>(dx + b * 8);
    RG_UNROLL
    for (int v = 0; v < kOneShotVectors<D>; ++v) out[v] = r[v].v;
    return;
  }
  const I count = n - base < 8 ? n - base : 8;
  for (I j = 0; j < count; ++j) {
    dx[base + j] = element::DropoutGrad<D, /*kDeviceNan=*/true>(dy[base + j], (g >> j) & 1u,
                                                                (k >> j) & 1u, scale_f, scale_d);
  }
}

// One-shot bodies: n is the launch's count (elements; pack: mask bytes),
// every pointer the launch's first.
RG_INLINE void OneShotPackBitsBody(uint32_t n, const uint8_t* bytes, uint8_t* bits, bool aligned8,
                                   uint32_t block, uint32_t thread) {
  const uint32_t b = block * kOneShotThreads + thread;
  if (b < (n + 7u) / 8u) PackBitsByte<uint32_t>(n, bytes, bits, aligned8, b);
}

template <Dtype D>
RG_INLINE void OneShotReluDropoutGradBody(uint32_t n, const typename DtypeTraits<D>::Bits* dy,
                                          const uint8_t* gate, const uint8_t* keep, float scale_f,
                                          double scale_d, typename DtypeTraits<D>::Bits* dx,
                                          bool vector, uint32_t block, uint32_t thread) {
  const uint32_t b = block * kOneShotThreads + thread;
  if (b < (n + 7u) / 8u)
    ReluDropoutGradByte<D, uint32_t>(n, dy, gate, keep, scale_f, scale_d, dx, vector, b);
}

// The launches of a call over n elements of elem_bytes each (pack: 1):
// launch(first_element, count, blocks), at most max_launch_bytes per array,
// each starting on a plane byte (max_launch_bytes is a multiple of 64).
template <typename F>
void ForEachDropoutLaunch(int64_t n, int64_t elem_bytes, int64_t max_launch_bytes, F&& launch) {
  const int64_t per_launch = max_launch_bytes / elem_bytes;
  for (int64_t first = 0; first < n; first += per_launch) {
    const int64_t count = n - first < per_launch ? n - first : per_launch;
    launch(first, count, CeilBlocks(count, kDropoutElementsPerBlock));
  }
}

}  // namespace cuda
}  // namespace relugrad

#endif  // RELUGRAD_CUDA_DROPOUT_BODY_H_
