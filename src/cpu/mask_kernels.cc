// Compiles relugrad_mask-inl.h for every Highway target and exports its
// dispatch tables (the skeleton idiom of cpu_kernels.cc).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/mask_kernels.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "cpu/relugrad_mask-inl.h"
#include "hwy/highway.h"

#if HWY_ONCE
#include "cpu/mask_kernels.h"

namespace relugrad {

HWY_EXPORT(ForwardBlockF16);
HWY_EXPORT(ForwardBlockBF16);
HWY_EXPORT(ForwardBlockF32);
HWY_EXPORT(ForwardBlockF64);
HWY_EXPORT(GradMaskBlockF16);
HWY_EXPORT(GradMaskBlockBF16);
HWY_EXPORT(GradMaskBlockF32);
HWY_EXPORT(GradMaskBlockF64);

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

}  // namespace relugrad
#endif  // HWY_ONCE
