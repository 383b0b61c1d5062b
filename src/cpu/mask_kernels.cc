// Compiles mask-inl.h for every Highway target and exports its
// dispatch tables (the skeleton idiom of relu_grad_kernels.cc).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/mask_kernels.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "cpu/mask-inl.h"
#include "hwy/highway.h"

#if HWY_ONCE
#include "cpu/mask_kernels.h"
#include "cpu/variants.h"

namespace relugrad {

HWY_EXPORT(ForwardBlockF16);
HWY_EXPORT(ForwardBlockBF16);
HWY_EXPORT(ForwardBlockF32);
HWY_EXPORT(ForwardBlockF64);
HWY_EXPORT(GradMaskBlockF16);
HWY_EXPORT(GradMaskBlockBF16);
HWY_EXPORT(GradMaskBlockF32);
HWY_EXPORT(GradMaskBlockF64);
HWY_EXPORT(MaskForwardKernelsF16);
HWY_EXPORT(MaskForwardKernelsBF16);
HWY_EXPORT(MaskForwardKernelsF32);
HWY_EXPORT(MaskForwardKernelsF64);
HWY_EXPORT(MaskGradKernelsF16);
HWY_EXPORT(MaskGradKernelsBF16);
HWY_EXPORT(MaskGradKernelsF32);
HWY_EXPORT(MaskGradKernelsF64);

ForwardKernel DispatchForwardKernel(Dtype dtype) {
  switch (dtype) {
    case Dtype::kF16:
      return &HWY_DYNAMIC_DISPATCH(ForwardBlockF16);
    case Dtype::kBF16:
      return &HWY_DYNAMIC_DISPATCH(ForwardBlockBF16);
    case Dtype::kF32:
      return &HWY_DYNAMIC_DISPATCH(ForwardBlockF32);
    case Dtype::kF64:
      return &HWY_DYNAMIC_DISPATCH(ForwardBlockF64);
  }
  return nullptr;
}

GradMaskKernel DispatchGradMaskKernel(Dtype dtype) {
  switch (dtype) {
    case Dtype::kF16:
      return &HWY_DYNAMIC_DISPATCH(GradMaskBlockF16);
    case Dtype::kBF16:
      return &HWY_DYNAMIC_DISPATCH(GradMaskBlockBF16);
    case Dtype::kF32:
      return &HWY_DYNAMIC_DISPATCH(GradMaskBlockF32);
    case Dtype::kF64:
      return &HWY_DYNAMIC_DISPATCH(GradMaskBlockF64);
  }
  return nullptr;
}

ForwardKernel MaskForwardVariantKernel(MaskForwardVariantId id, Dtype dtype) {
  const int row = static_cast<int>(id);
  if (row < 0 || row >= kMaskForwardVariantCount) return nullptr;
  switch (dtype) {
    case Dtype::kF16:
      return HWY_DYNAMIC_DISPATCH(MaskForwardKernelsF16)()[row];
    case Dtype::kBF16:
      return HWY_DYNAMIC_DISPATCH(MaskForwardKernelsBF16)()[row];
    case Dtype::kF32:
      return HWY_DYNAMIC_DISPATCH(MaskForwardKernelsF32)()[row];
    case Dtype::kF64:
      return HWY_DYNAMIC_DISPATCH(MaskForwardKernelsF64)()[row];
  }
  return nullptr;
}

GradMaskKernel MaskGradVariantKernel(MaskGradVariantId id, Dtype dtype) {
  const int row = static_cast<int>(id);
  if (row < 0 || row >= kMaskGradVariantCount) return nullptr;
  switch (dtype) {
    case Dtype::kF16:
      return HWY_DYNAMIC_DISPATCH(MaskGradKernelsF16)()[row];
    case Dtype::kBF16:
      return HWY_DYNAMIC_DISPATCH(MaskGradKernelsBF16)()[row];
    case Dtype::kF32:
      return HWY_DYNAMIC_DISPATCH(MaskGradKernelsF32)()[row];
    case Dtype::kF64:
      return HWY_DYNAMIC_DISPATCH(MaskGradKernelsF64)()[row];
  }
  return nullptr;
}

}  // namespace relugrad
#endif  // HWY_ONCE
