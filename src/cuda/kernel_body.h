// The bodies of the CUDA kernels and the host-side split of a call into
// scalar head, 16-byte vector body and scalar tail. Host-and-device code:
// kernels.cu wraps each body in a __global__ function (tid and stride from
// blockIdx/threadIdx), and tests/cuda/cuda_kernel_host_test.cc runs the very
// same bodies on the CPU for every (tid) of a simulated grid, so indexing,
// peeling and bounds are tested without a GPU.
#ifndef RELUGRAD_CUDA_KERNEL_BODY_H_
#define RELUGRAD_CUDA_KERNEL_BODY_H_

#include <cstdint>

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
// Threads per block of every kernel.
constexpr int kThreadsPerBlock = 256;

// 16 bytes moved as one access (ld/st.global.v4.u32 on the device).
struct alignas(16) Bytes16 {
  uint32_t w[4];
};

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

// Blocks for `work_items` threads' worth of work, capped (grid-stride loops
// cover the rest). The vector kernel's scalar edges need head + tail <= 14
// threads, always within the first block.
inline int BlocksFor(int64_t work_items, int max_blocks) {
  const int64_t needed = (work_items + kThreadsPerBlock - 1) / kThreadsPerBlock;
  const int64_t cap = max_blocks > 0 ? max_blocks : 1;
  return static_cast<int>(needed < 1 ? 1 : (needed < cap ? needed : cap));
}

inline int64_t VectorWorkItems(const VectorPlan& plan) {
  return plan.vectors > plan.head + plan.tail ? plan.vectors : plan.head + plan.tail;
}

template <Dtype D>
union Lanes16 {
  Bytes16 v;
  typename DtypeTraits<D>::Bits lane[kVectorBytes / sizeof(typename DtypeTraits<D>::Bits)];
};

// One thread's share of the vector kernel: vectors tid, tid + stride, ...
// of the body, then (threads 0 .. head + tail - 1) one scalar edge element.
// kUnroll vectors (tid + u * stride, coalesced across the warp) are loaded
// before any is stored, so a thread has 2 * kUnroll loads in flight; the
// compiler cannot do this itself because dx may alias dy or s. That aliasing
// is exact, so vector i is only ever read, then written, by one thread, and
// loading vector i + stride before storing vector i is safe.
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
        Lanes16<D> out;
        RG_UNROLL
        for (int l = 0; l < kLanes; ++l) out.lane[l] = Element<D, M>(p, a[u].lane[l], b[u].lane[l]);
        dx_v[j] = out.v;
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

// ---- the 1-bit mask path (core/mask_reference.h) ----
// One thread per mask byte: elements [8b, 8b + 8) and bit j of byte b for
// element 8b + j, so every byte is written whole by one thread (no atomics)
// and the last byte's padding bits are zero. With 16-byte aligned data
// arrays, the 8 elements of a full byte are 8 * size / 16 whole vectors
// (1 for 16-bit, 2 for f32, 4 for f64); otherwise (or for the last, partial
// byte) they are read one by one.

inline bool Aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % kVectorBytes == 0; }

template <Dtype D>
RG_INLINE void ForwardMaskBody(const DeviceParams& p, int64_t n,
                               const typename DtypeTraits<D>::Bits* x,
                               typename DtypeTraits<D>::Bits* y, uint8_t* mask, bool vector,
                               int64_t tid, int64_t stride) {
  using Bits = typename DtypeTraits<D>::Bits;
  constexpr int kLanes = kVectorBytes / sizeof(Bits);
  constexpr int kVecs = static_cast<int>(8 * sizeof(Bits) / kVectorBytes);  // 1, 2 or 4
  const int64_t bytes = (n + 7) / 8;
  const int64_t full = n / 8;
  for (int64_t b = tid; b < bytes; b += stride) {
    const int64_t base = b * 8;
    uint32_t bits = 0;
    if (vector && b < full) {
      const Bytes16* in = reinterpret_cast<const Bytes16*>(x + base);
      Bytes16* out = reinterpret_cast<Bytes16*>(y + base);
      Lanes16<D> a[kVecs], r[kVecs];
      RG_UNROLL
      for (int v = 0; v < kVecs; ++v) a[v].v = in[v];  // all loads before any store (y may be x)
      RG_UNROLL
      for (int v = 0; v < kVecs; ++v) {
        RG_UNROLL
        for (int l = 0; l < kLanes; ++l) {
          bool open = false;
          r[v].lane[l] = ForwardElement<D>(p, a[v].lane[l], &open);
          bits |= static_cast<uint32_t>(open) << (v * kLanes + l);
        }
      }
      RG_UNROLL
      for (int v = 0; v < kVecs; ++v) out[v] = r[v].v;
    } else {
      const int64_t count = n - base < 8 ? n - base : 8;
      for (int64_t j = 0; j < count; ++j) {
        bool open = false;
        y[base + j] = ForwardElement<D>(p, x[base + j], &open);
        bits |= static_cast<uint32_t>(open) << j;
      }
    }
    mask[b] = static_cast<uint8_t>(bits);
  }
}

template <Dtype D>
RG_INLINE void GradMaskBody(const DeviceParams& p, int64_t n,
                            const typename DtypeTraits<D>::Bits* dy, const uint8_t* mask,
                            typename DtypeTraits<D>::Bits* dx, bool vector, int64_t tid,
                            int64_t stride) {
  using Bits = typename DtypeTraits<D>::Bits;
  constexpr int kLanes = kVectorBytes / sizeof(Bits);
  constexpr int kVecs = static_cast<int>(8 * sizeof(Bits) / kVectorBytes);  // 1, 2 or 4
  const int64_t bytes = (n + 7) / 8;
  const int64_t full = n / 8;
  for (int64_t b = tid; b < bytes; b += stride) {
    const int64_t base = b * 8;
    const uint32_t bits = mask[b];
    if (vector && b < full) {
      const Bytes16* in = reinterpret_cast<const Bytes16*>(dy + base);
      Bytes16* out = reinterpret_cast<Bytes16*>(dx + base);
      Lanes16<D> a[kVecs], r[kVecs];
      RG_UNROLL
      for (int v = 0; v < kVecs; ++v) a[v].v = in[v];  // dx may be dy
      RG_UNROLL
      for (int v = 0; v < kVecs; ++v) {
        RG_UNROLL
        for (int l = 0; l < kLanes; ++l) {
          const Bits g = a[v].lane[l];
          r[v].lane[l] =
              ((bits >> (v * kLanes + l)) & 1u) ? OpenLane<D>(p, g) : ClosedLane<D>(p, g);
        }
      }
      RG_UNROLL
      for (int v = 0; v < kVecs; ++v) out[v] = r[v].v;
    } else {
      const int64_t count = n - base < 8 ? n - base : 8;
      for (int64_t j = 0; j < count; ++j) {
        const Bits g = dy[base + j];
        dx[base + j] = ((bits >> j) & 1u) ? OpenLane<D>(p, g) : ClosedLane<D>(p, g);
      }
    }
  }
}

}  // namespace cuda
}  // namespace relugrad

#endif  // RELUGRAD_CUDA_KERNEL_BODY_H_
