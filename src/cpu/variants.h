// The named kernel variants of the gate-from-s CPU path (variants.inc): one
// row per fast path, each a name, what its predicate requires and a block
// kernel per SIMD target, cached and streaming stores. Selection is a pure
// function of (dtype, params), done once per call (or once per plan); the
// block kernel then runs that row's body with no rule test left in its loop.
#ifndef RELUGRAD_CPU_VARIANTS_H_
#define RELUGRAD_CPU_VARIANTS_H_

#include <cstddef>
#include <cstdint>

#include "core/dtype_traits.h"
#include "core/semantics.h"
#include "cpu/mask_kernels.h"
#include "cpu/relu_grad_kernels.h"
#include "cpu/scoped_ieee_float.h"

namespace relugrad {

// The tensorflow / onednn multiply rule with every option a compile-time
// constant: multiply, dy*0 on closed lanes, no clip, no upper bound, and a
// threshold >= +0 (the raw-bits gate).
inline bool IsMulZeroFast(const KernelParams& p) {
  return p.open_multiply && !p.clip && p.closed == ClosedRule::kMulZero && p.gate_key_lo >= 0 &&
         !p.gate_upper;
}

// One row of a variant table (each table has its own Id enum).
template <class Id>
struct VariantRow {
  Id id;
  const char* name;         // stable: tests, benchmarks and `relugrad info --variants` use it
  const char* requirement;  // the predicate in words
  bool (*holds)(Dtype dtype, const KernelParams& p);
};

enum class CpuVariantId : uint8_t {
#define RG_CPU_VARIANT(id, name, requirement, ...) id,
#include "cpu/variants.inc"
#undef RG_CPU_VARIANT
  kCount
};
inline constexpr int kCpuVariantCount = static_cast<int>(CpuVariantId::kCount);

using CpuVariant = VariantRow<CpuVariantId>;

// The rows in priority order (kCpuVariantCount of them; row i has id i).
const CpuVariant* CpuVariants();
// The row named `name`, or nullptr.
const CpuVariant* FindCpuVariant(const char* name);

// The first row whose predicate holds (the last row always does). Inline:
// the chain of the rows' predicates, a few compares per call.
inline CpuVariantId SelectCpuVariant(Dtype d, const KernelParams& p) {
#define RG_CPU_VARIANT(id, name, requirement, ...) \
  if (__VA_ARGS__) return CpuVariantId::id;
#include "cpu/variants.inc"
#undef RG_CPU_VARIANT
  return CpuVariantId::kGeneral;
}

// The row's block kernel for `dtype` on the target dispatch uses now (the
// ISA cap applies: a caller that stores it must fetch it again after
// SetMaxIsa). stream: non-temporal stores for dx's whole aligned lines (the
// 16-bit alpha row has none and returns its one kernel). Runs the row's body
// for any params; it is only bit-exact for params the row's predicate (and,
// for rows after the first, every earlier row's failure) admits.
BlockKernel CpuVariantKernel(CpuVariantId id, Dtype dtype, bool stream);

// The rows of the backward-from-mask kernel (mask_variants.inc), as above.
enum class MaskGradVariantId : uint8_t {
#define RG_MASK_VARIANT(id, name, requirement, ...) id,
#include "cpu/mask_variants.inc"
#undef RG_MASK_VARIANT
  kCount
};
inline constexpr int kMaskGradVariantCount = static_cast<int>(MaskGradVariantId::kCount);

using MaskGradVariant = VariantRow<MaskGradVariantId>;

const MaskGradVariant* MaskGradVariants();

inline MaskGradVariantId SelectMaskGradVariant(Dtype d, const KernelParams& p) {
  (void)d;
#define RG_MASK_VARIANT(id, name, requirement, ...) \
  if (__VA_ARGS__) return MaskGradVariantId::id;
#include "cpu/mask_variants.inc"
#undef RG_MASK_VARIANT
  return MaskGradVariantId::kGeneral;
}

// The row's kernel for `dtype` on the target dispatch uses now, as
// MaskForwardVariantKernel below; nullptr for an id outside the table.
GradMaskKernel MaskGradVariantKernel(MaskGradVariantId id, Dtype dtype);

// The rows of the forward-with-mask kernel (mask_forward_variants.inc), as
// above; ForwardBlock selects per block and runs the row's kernel.
enum class MaskForwardVariantId : uint8_t {
#define RG_MASK_FORWARD_VARIANT(id, name, requirement, ...) id,
#include "cpu/mask_forward_variants.inc"
#undef RG_MASK_FORWARD_VARIANT
  kCount
};
inline constexpr int kMaskForwardVariantCount = static_cast<int>(MaskForwardVariantId::kCount);

using MaskForwardVariant = VariantRow<MaskForwardVariantId>;

const MaskForwardVariant* MaskForwardVariants();

inline MaskForwardVariantId SelectMaskForwardVariant(Dtype d, const KernelParams& p) {
#define RG_MASK_FORWARD_VARIANT(id, name, requirement, ...) \
  if (__VA_ARGS__) return MaskForwardVariantId::id;
#include "cpu/mask_forward_variants.inc"
#undef RG_MASK_FORWARD_VARIANT
  return MaskForwardVariantId::kZeroClosed;
}

// The row's forward kernel for `dtype` on the target dispatch uses now (the
// ISA cap applies, as for CpuVariantKernel); nullptr for an id outside the
// table. Bit-exact for the params the row admits (its predicate, and every
// earlier row's failure).
ForwardKernel MaskForwardVariantKernel(MaskForwardVariantId id, Dtype dtype);

}  // namespace relugrad

#endif  // RELUGRAD_CPU_VARIANTS_H_
