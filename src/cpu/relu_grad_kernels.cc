// Compiles relu_grad-inl.h for every Highway target and exports a dispatch
// table (Highway's skeleton idiom: foreach_target + HWY_EXPORT).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/relu_grad_kernels.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "cpu/relu_grad-inl.h"
#include "hwy/highway.h"

#if HWY_ONCE
#include "cpu/relu_grad_kernels.h"
#include "cpu/variants.h"

namespace relugrad {

HWY_EXPORT(RunBlockF16);
HWY_EXPORT(RunBlockBF16);
HWY_EXPORT(RunBlockF32);
HWY_EXPORT(RunBlockF64);
HWY_EXPORT(RunBlockStreamF16);
HWY_EXPORT(RunBlockStreamBF16);
HWY_EXPORT(RunBlockStreamF32);
HWY_EXPORT(RunBlockStreamF64);
HWY_EXPORT(VariantKernelsF16);
HWY_EXPORT(VariantKernelsBF16);
HWY_EXPORT(VariantKernelsF32);
HWY_EXPORT(VariantKernelsF64);

BlockKernel DispatchBlockKernel(Dtype dtype) {
  switch (dtype) {
    case Dtype::kF16:
      return &HWY_DYNAMIC_DISPATCH(RunBlockF16);
    case Dtype::kBF16:
      return &HWY_DYNAMIC_DISPATCH(RunBlockBF16);
    case Dtype::kF32:
      return &HWY_DYNAMIC_DISPATCH(RunBlockF32);
    case Dtype::kF64:
      return &HWY_DYNAMIC_DISPATCH(RunBlockF64);
  }
  return nullptr;
}

BlockKernel DispatchStreamingBlockKernel(Dtype dtype) {
  switch (dtype) {
    case Dtype::kF16:
      return &HWY_DYNAMIC_DISPATCH(RunBlockStreamF16);
    case Dtype::kBF16:
      return &HWY_DYNAMIC_DISPATCH(RunBlockStreamBF16);
    case Dtype::kF32:
      return &HWY_DYNAMIC_DISPATCH(RunBlockStreamF32);
    case Dtype::kF64:
      return &HWY_DYNAMIC_DISPATCH(RunBlockStreamF64);
  }
  return nullptr;
}

BlockKernel CpuVariantKernel(CpuVariantId id, Dtype dtype, bool stream) {
  const int row = static_cast<int>(id);
  if (row < 0 || row >= kCpuVariantCount) return nullptr;
  switch (dtype) {
    case Dtype::kF16:
      return HWY_DYNAMIC_DISPATCH(VariantKernelsF16)(stream)[row];
    case Dtype::kBF16:
      return HWY_DYNAMIC_DISPATCH(VariantKernelsBF16)(stream)[row];
    case Dtype::kF32:
      return HWY_DYNAMIC_DISPATCH(VariantKernelsF32)(stream)[row];
    case Dtype::kF64:
      return HWY_DYNAMIC_DISPATCH(VariantKernelsF64)(stream)[row];
  }
  return nullptr;
}

}  // namespace relugrad
#endif  // HWY_ONCE
