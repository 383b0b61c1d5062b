// ReluGrad kernels on raw bits, written once with Highway and compiled for
// every target by relu_grad_kernels.cc (foreach_target). Included once per target.
// Each fast path is a row of variants.inc; RunVariant holds the rows' bodies.
//
// The rules are integer operations on bit patterns (KernelParams holds the
// precomputed keys and bit patterns), identical on every ISA, with two
// exceptions that multiply floats: dy*alpha for alpha != 0, and the
// tensorflow/onednn multiply rule for f32/f64 on x86 (FloatMultiplyZeroVec);
// both run under an MXCSR the caller sets (KernelMxcsr,
// scoped_ieee_float.h), so the caller's MXCSR changes no bit.
//
// Tails: Highway 1.0.3 has no LoadN/StoreN and its 16-bit MaskedLoad reads a
// whole vector, so the last partial vector goes through a stack bounce
// buffer: never a byte read or written outside [p, p + n).

// Per-target include guard (Highway's idiom).
#if defined(RELUGRAD_CPU_RELU_GRAD_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef RELUGRAD_CPU_RELU_GRAD_INL_H_
#undef RELUGRAD_CPU_RELU_GRAD_INL_H_
#else
#define RELUGRAD_CPU_RELU_GRAD_INL_H_
#endif

#include <cstring>
#include <type_traits>

#include "core/dtype_traits.h"
#include "core/semantics.h"
#include "cpu/relu_grad_kernels.h"
#include "cpu/rules-inl.h"
#include "cpu/scalar_alpha16.h"
#include "cpu/variants.h"
#include "hwy/cache_control.h"
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

// GeneralVec for a gate with an upper bound (gate_max: hardtanh).
template <Dtype D, class DU>
HWY_INLINE hn::Vec<DU> BoundedVec(DU du, const BitConstants<D, DU>& c, const KernelParams& p,
                                  hn::Vec<DU> dy, hn::Vec<DU> s) {
  return CombineVec<D>(du, c, p, GateOpenBounded<D>(du, c, p.gate_nan_open, s), dy);
}

// s at p, loaded once into a register. A gate compares s two or three times,
// and on AVX-512 the compiler folds the load into each compare (one memory
// operand apiece), which costs bandwidth at L3 and DRAM sizes; Opaque keeps
// the one load in a register (docs/design.md, "One load of s").
template <class DU>
HWY_INLINE hn::Vec<DU> LoadGateInput(DU du, const hn::TFromD<DU>* HWY_RESTRICT p) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  return Opaque(hn::LoadU(du, p));
#else
  return hn::LoadU(du, p);
#endif
}

// Applies `op` to [begin, end) of the arrays, full vectors then the tail
// through a bounce buffer. Unrolled by two (docs/design.md, "Unrolling and prefetch").
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
    const auto a0 = hn::LoadU(du, dy + i), s0 = LoadGateInput(du, s + i);
    const auto a1 = hn::LoadU(du, dy + i + lanes), s1 = LoadGateInput(du, s + i + lanes);
    hn::StoreU(op(du, a0, s0), du, dx + i);
    hn::StoreU(op(du, a1, s1), du, dx + i + lanes);
  }
  for (; i + lanes <= end; i += lanes) {
    hn::StoreU(op(du, hn::LoadU(du, dy + i), LoadGateInput(du, s + i)), du, dx + i);
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

// As ForEachVector, but dx's whole, aligned 64-byte lines are written with
// non-temporal stores (Stream): no read-for-ownership of dx and no eviction
// of dy/s, so DRAM moves 3 arrays instead of 4. Only for outputs that do
// not alias an input and do not fit in cache (the caller decides). The
// ragged head and tail use ordinary stores; FlushStream orders the streams
// before the pool's join publishes the result.
template <Dtype D, class Op>
HWY_INLINE void ForEachVectorStream(const void* dy_v, const void* s_v, void* dx_v, int64_t begin,
                                    int64_t end, const Op& op) {
  using U = typename DtypeTraits<D>::Bits;
  const hn::ScalableTag<U> du;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(du));
  constexpr int64_t kLine = 64;
  const int64_t line_bytes = HWY_MAX(kLine, lanes * static_cast<int64_t>(sizeof(U)));
  const int64_t line_elems = line_bytes / static_cast<int64_t>(sizeof(U));
  const U* HWY_RESTRICT dy = static_cast<const U*>(dy_v);
  const U* HWY_RESTRICT s = static_cast<const U*>(s_v);
  U* HWY_RESTRICT dx = static_cast<U*>(dx_v);
  const uintptr_t addr = reinterpret_cast<uintptr_t>(dx + begin);
  const int64_t head_bytes = static_cast<int64_t>((line_bytes - addr % line_bytes) % line_bytes);
  const int64_t body = HWY_MIN(end, begin + head_bytes / static_cast<int64_t>(sizeof(U)));
  ForEachVector<D>(dy, s, dx, begin, body, op);
  int64_t i = body;
  for (; i + line_elems <= end; i += line_elems) {
    for (int64_t k = 0; k < line_elems; k += lanes) {
      hn::Stream(op(du, hn::LoadU(du, dy + i + k), LoadGateInput(du, s + i + k)), du, dx + i + k);
    }
  }
  ForEachVector<D>(dy, s, dx, i, end, op);
  hwy::FlushStream();
}

// Runs `op` over the range with ordinary or streaming stores.
template <Dtype D, bool kStream, class Op>
HWY_INLINE void ForEach(const void* dy, const void* s, void* dx, int64_t begin, int64_t end,
                        const Op& op) {
  if constexpr (kStream) {
    ForEachVectorStream<D>(dy, s, dx, begin, end, op);
  } else {
    ForEachVector<D>(dy, s, dx, begin, end, op);
  }
}

// The body of one variant row (variants.inc): the row's loop with the
// options its predicate fixes as constants. Only called with params the
// row admits (SelectCpuVariant).
template <Dtype D, bool kStream, CpuVariantId V>
HWY_INLINE void RunVariant(const KernelParams& p, const void* dy, const void* s, void* dx,
                           int64_t begin, int64_t end) {
  using U = typename DtypeTraits<D>::Bits;
  using DU = hn::ScalableTag<U>;
  using Id = CpuVariantId;
  const DU du_full;
  if constexpr (V == Id::kAlpha16Scalar) {
    RunBlockAlpha16(p, dy, s, dx, begin, end);
  } else if constexpr (V == Id::kBoundedPlainSelect) {
    const BitConstants<D, DU> c(du_full, p);
    const bool nan_open = p.gate_nan_open;
    ForEach<D, kStream>(dy, s, dx, begin, end, [&](auto du, auto a, auto b) {
      return OpenOrZero(du, GateOpenBounded<D>(du, c, nan_open, b), a);
    });
  } else if constexpr (V == Id::kBoundedGeneral) {
    const BitConstants<D, DU> c(du_full, p);
    ForEach<D, kStream>(dy, s, dx, begin, end,
                        [&](auto du, auto a, auto b) { return BoundedVec<D>(du, c, p, a, b); });
  } else if constexpr (V == Id::kNanOpenZeroGate) {
    const typename NanOpenZeroGate<D>::template Consts<DU> zc(du_full);
    ForEach<D, kStream>(dy, s, dx, begin, end, [&](auto du, auto a, auto b) {
      return NanOpenZeroGate<D>::Select(du, zc, a, b);
    });
  } else if constexpr (V == Id::kRawGateNanOpen || V == Id::kRawGateNanClosed) {
    constexpr bool kNanOpen = V == Id::kRawGateNanOpen;
    const typename RawGate<D, kNanOpen>::template Consts<DU> rc(du_full, p);
    ForEach<D, kStream>(dy, s, dx, begin, end, [&](auto du, auto a, auto b) {
      return RawGate<D, kNanOpen>::Select(du, rc, a, b);
    });
  } else if constexpr (V == Id::kMulZeroX86NanOpenFlush || V == Id::kMulZeroX86NanOpen ||
                       V == Id::kMulZeroX86NanClosedFlush || V == Id::kMulZeroX86NanClosed ||
                       V == Id::kMulZeroNanOpenFlush || V == Id::kMulZeroNanOpen ||
                       V == Id::kMulZeroNanClosedFlush || V == Id::kMulZeroNanClosed) {
    constexpr bool kNanOpen = V == Id::kMulZeroX86NanOpenFlush || V == Id::kMulZeroX86NanOpen ||
                              V == Id::kMulZeroNanOpenFlush || V == Id::kMulZeroNanOpen;
    constexpr bool kFlush = V == Id::kMulZeroX86NanOpenFlush ||
                            V == Id::kMulZeroX86NanClosedFlush || V == Id::kMulZeroNanOpenFlush ||
                            V == Id::kMulZeroNanClosedFlush;
    // x86's multiply where this target has it (RELUGRAD_HAVE_FLOAT_MULTIPLY_RULE)
    // for f32/f64; the integer rule otherwise.
    constexpr bool kNative = RELUGRAD_HAVE_FLOAT_MULTIPLY_RULE &&
                             (D == Dtype::kF32 || D == Dtype::kF64) &&
                             (V == Id::kMulZeroX86NanOpenFlush || V == Id::kMulZeroX86NanOpen ||
                              V == Id::kMulZeroX86NanClosedFlush || V == Id::kMulZeroX86NanClosed);
    const BitConstants<D, DU> c(du_full, p);
    const typename RawGate<D, kNanOpen>::template Consts<DU> rc(du_full, p);
    ForEach<D, kStream>(dy, s, dx, begin, end, [&](auto du, auto a, auto b) {
      const auto open = RawGate<D, kNanOpen>::Open(du, rc, b);
      if constexpr (kNative) {
        return FloatMultiplyZeroVec<D, kFlush>(du, open, a);
      } else {
        return MultiplyZeroVec<D, kFlush>(du, c, open, a);
      }
    });
  } else if constexpr (V == Id::kPlainSelectNanOpen || V == Id::kPlainSelectNanClosed) {
    constexpr bool kNanOpen = V == Id::kPlainSelectNanOpen;
    const BitConstants<D, DU> c(du_full, p);
    ForEach<D, kStream>(dy, s, dx, begin, end, [&](auto du, auto a, auto b) {
      return PlainSelectVec<D>(du, c, kNanOpen, a, b);
    });
  } else {
    static_assert(V == Id::kGeneral, "every row has a body");
    const BitConstants<D, DU> c(du_full, p);
    ForEach<D, kStream>(dy, s, dx, begin, end,
                        [&](auto du, auto a, auto b) { return GeneralVec<D>(du, c, p, a, b); });
  }
}

// One row's block kernel, as CpuVariantKernel hands it out.
template <Dtype D, bool kStream, CpuVariantId V>
HWY_NOINLINE void VariantBlock(const KernelParams& p, const void* dy, const void* s, void* dx,
                               int64_t begin, int64_t end) {
  RunVariant<D, kStream, V>(p, dy, s, dx, begin, end);
}

// This target's block kernels of every row, indexed by CpuVariantId.
template <Dtype D, bool kStream>
HWY_INLINE const BlockKernel* VariantTable() {
  static constexpr BlockKernel kTable[] = {
#define RG_CPU_VARIANT(id, ...) &VariantBlock<D, kStream, CpuVariantId::id>,
#include "cpu/variants.inc"
#undef RG_CPU_VARIANT
  };
  static_assert(sizeof(kTable) / sizeof(kTable[0]) == kCpuVariantCount, "one body per row");
  return kTable;
}

// Selects the row per call and runs its block kernel (DispatchBlockKernel's
// kernel, for callers that hold no selected row; CpuReluGrad takes the row's
// kernel itself). A call into each row's own function: every body inlined
// here makes the small calls slower (docs/design.md, "Named kernel variants").
template <Dtype D, bool kStream = false>
HWY_NOINLINE void RunBlock(const KernelParams& p, const void* dy, const void* s, void* dx,
                           int64_t begin, int64_t end) {
  switch (SelectCpuVariant(D, p)) {
#define RG_CPU_VARIANT(id, ...)                                           \
  case CpuVariantId::id:                                                  \
    VariantBlock<D, kStream, CpuVariantId::id>(p, dy, s, dx, begin, end); \
    return;
#include "cpu/variants.inc"
#undef RG_CPU_VARIANT
    case CpuVariantId::kCount:
      break;
  }
}

// Entry points exported per target (one per element width).
HWY_NOINLINE void RunBlockF16(const KernelParams& p, const void* dy, const void* s, void* dx,
                              int64_t b, int64_t e) {
  RunBlock<Dtype::kF16>(p, dy, s, dx, b, e);
}
HWY_NOINLINE void RunBlockBF16(const KernelParams& p, const void* dy, const void* s, void* dx,
                               int64_t b, int64_t e) {
  RunBlock<Dtype::kBF16>(p, dy, s, dx, b, e);
}
HWY_NOINLINE void RunBlockF32(const KernelParams& p, const void* dy, const void* s, void* dx,
                              int64_t b, int64_t e) {
  RunBlock<Dtype::kF32>(p, dy, s, dx, b, e);
}
HWY_NOINLINE void RunBlockF64(const KernelParams& p, const void* dy, const void* s, void* dx,
                              int64_t b, int64_t e) {
  RunBlock<Dtype::kF64>(p, dy, s, dx, b, e);
}
// Streaming-store variants for large, non-aliasing outputs (relu_grad_backend.cc).
HWY_NOINLINE void RunBlockStreamF16(const KernelParams& p, const void* dy, const void* s, void* dx,
                                    int64_t b, int64_t e) {
  RunBlock<Dtype::kF16, true>(p, dy, s, dx, b, e);
}
HWY_NOINLINE void RunBlockStreamBF16(const KernelParams& p, const void* dy, const void* s, void* dx,
                                     int64_t b, int64_t e) {
  RunBlock<Dtype::kBF16, true>(p, dy, s, dx, b, e);
}
HWY_NOINLINE void RunBlockStreamF32(const KernelParams& p, const void* dy, const void* s, void* dx,
                                    int64_t b, int64_t e) {
  RunBlock<Dtype::kF32, true>(p, dy, s, dx, b, e);
}
HWY_NOINLINE void RunBlockStreamF64(const KernelParams& p, const void* dy, const void* s, void* dx,
                                    int64_t b, int64_t e) {
  RunBlock<Dtype::kF64, true>(p, dy, s, dx, b, e);
}

// The variant tables exported per target (one per element width).
HWY_NOINLINE const BlockKernel* VariantKernelsF16(bool stream) {
  return stream ? VariantTable<Dtype::kF16, true>() : VariantTable<Dtype::kF16, false>();
}
HWY_NOINLINE const BlockKernel* VariantKernelsBF16(bool stream) {
  return stream ? VariantTable<Dtype::kBF16, true>() : VariantTable<Dtype::kBF16, false>();
}
HWY_NOINLINE const BlockKernel* VariantKernelsF32(bool stream) {
  return stream ? VariantTable<Dtype::kF32, true>() : VariantTable<Dtype::kF32, false>();
}
HWY_NOINLINE const BlockKernel* VariantKernelsF64(bool stream) {
  return stream ? VariantTable<Dtype::kF64, true>() : VariantTable<Dtype::kF64, false>();
}

}  // namespace HWY_NAMESPACE
}  // namespace relugrad
HWY_AFTER_NAMESPACE();

#endif  // RELUGRAD_CPU_RELU_GRAD_INL_H_
