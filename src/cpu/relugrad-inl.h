// ReluGrad kernels on raw bits, written once with Highway and compiled for
// every target by cpu_kernels.cc (foreach_target). Included once per target.
//
// Every rule is an integer operation on bit patterns (KernelParams holds the
// precomputed keys and bit patterns), so the results are identical on every
// ISA and do not depend on the caller's MXCSR. The only float arithmetic is
// dy*alpha for alpha != 0, done with MXCSR pinned to IEEE by the caller.
//
// Tails: Highway 1.0.3 has no LoadN/StoreN and its 16-bit MaskedLoad reads a
// whole vector, so the last partial vector goes through a stack bounce
// buffer: never a byte read or written outside [p, p + n).

// Per-target include guard (Highway's idiom).
#if defined(RELUGRAD_CPU_RELUGRAD_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef RELUGRAD_CPU_RELUGRAD_INL_H_
#undef RELUGRAD_CPU_RELUGRAD_INL_H_
#else
#define RELUGRAD_CPU_RELUGRAD_INL_H_
#endif

#include <cstring>
#include <type_traits>

#include "core/dtype_traits.h"
#include "core/semantics.h"
#include "cpu/rules-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace relugrad {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Every rule: the gate from s, then the shared pass/closed rules.
template <Dtype D, class DU>
HWY_INLINE hn::Vec<DU> GeneralVec(DU du, const BitConstants<D, DU>& c, const KernelParams& p,
                                  hn::Vec<DU> dy, hn::Vec<DU> s) {
  return CombineVec<D>(du, c, p, GateOpen<D>(du, c, p.gate_nan_open, s), dy);
}

// Applies `op` to [begin, end) of the arrays, full vectors then the tail
// through a bounce buffer.
template <Dtype D, class Op>
HWY_INLINE void ForEachVector(const void* dy_v, const void* s_v, void* dx_v, int64_t begin,
                              int64_t end, const Op& op) {
  using U = typename DtypeTraits<D>::Bits;
  const hn::ScalableTag<U> du;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(du));
  const U* HWY_RESTRICT dy = static_cast<const U*>(dy_v);
  const U* HWY_RESTRICT s = static_cast<const U*>(s_v);
  U* dx = static_cast<U*>(dx_v);  // may alias dy or s exactly: no restrict
  int64_t i = begin;
  for (; i + 2 * lanes <= end; i += 2 * lanes) {
    const auto a0 = hn::LoadU(du, dy + i), s0 = hn::LoadU(du, s + i);
    const auto a1 = hn::LoadU(du, dy + i + lanes), s1 = hn::LoadU(du, s + i + lanes);
    hn::StoreU(op(du, a0, s0), du, dx + i);
    hn::StoreU(op(du, a1, s1), du, dx + i + lanes);
  }
  for (; i + lanes <= end; i += lanes) {
    hn::StoreU(op(du, hn::LoadU(du, dy + i), hn::LoadU(du, s + i)), du, dx + i);
  }
  if (i < end) {
    const size_t rest = static_cast<size_t>(end - i);
    HWY_ALIGN U dy_buf[HWY_MAX_BYTES / sizeof(U)] = {};
    HWY_ALIGN U s_buf[HWY_MAX_BYTES / sizeof(U)] = {};
    HWY_ALIGN U dx_buf[HWY_MAX_BYTES / sizeof(U)];
    std::memcpy(dy_buf, dy + i, rest * sizeof(U));
    std::memcpy(s_buf, s + i, rest * sizeof(U));
    hn::Store(op(du, hn::Load(du, dy_buf), hn::Load(du, s_buf)), du, dx_buf);
    std::memcpy(dx + i, dx_buf, rest * sizeof(U));
  }
}

template <Dtype D>
HWY_NOINLINE void RunBlock(const KernelParams& p, const void* dy, const void* s, void* dx,
                           int64_t begin, int64_t end) {
  using U = typename DtypeTraits<D>::Bits;
  using DU = hn::ScalableTag<U>;
  const DU du_full;
  const BitConstants<D, DU> c(du_full, p);
  if (p.IsPlainSelect()) {
    if (p.gate_nan_open) {
      ForEachVector<D>(dy, s, dx, begin, end, [&](auto du, auto a, auto b) {
        return PlainSelectVec<D>(du, c, true, a, b);
      });
    } else {
      ForEachVector<D>(dy, s, dx, begin, end, [&](auto du, auto a, auto b) {
        return PlainSelectVec<D>(du, c, false, a, b);
      });
    }
    return;
  }
  ForEachVector<D>(dy, s, dx, begin, end, [&](auto du, auto a, auto b) {
    return GeneralVec<D>(du, c, p, a, b);
  });
}

// Entry points exported per target (one per element width).
HWY_NOINLINE void RunBlockF16(const KernelParams& p, const void* dy, const void* s, void* dx, int64_t b, int64_t e) { RunBlock<Dtype::kF16>(p, dy, s, dx, b, e); }
HWY_NOINLINE void RunBlockBF16(const KernelParams& p, const void* dy, const void* s, void* dx, int64_t b, int64_t e) { RunBlock<Dtype::kBF16>(p, dy, s, dx, b, e); }
HWY_NOINLINE void RunBlockF32(const KernelParams& p, const void* dy, const void* s, void* dx, int64_t b, int64_t e) { RunBlock<Dtype::kF32>(p, dy, s, dx, b, e); }
HWY_NOINLINE void RunBlockF64(const KernelParams& p, const void* dy, const void* s, void* dx, int64_t b, int64_t e) { RunBlock<Dtype::kF64>(p, dy, s, dx, b, e); }

}  // namespace HWY_NAMESPACE
}  // namespace relugrad
HWY_AFTER_NAMESPACE();

#endif  // RELUGRAD_CPU_RELUGRAD_INL_H_
