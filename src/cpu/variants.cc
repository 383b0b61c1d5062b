#include "cpu/variants.h"

#include <cstring>

namespace relugrad {
namespace {

constexpr CpuVariant kRows[] = {
#define RG_CPU_VARIANT(id, name, requirement, ...)                                   \
  {CpuVariantId::id, name, requirement, [](Dtype d, const KernelParams& p) -> bool { \
     (void)d;                                                                        \
     (void)p;                                                                        \
     return __VA_ARGS__;                                                             \
   }},
#include "cpu/variants.inc"
#undef RG_CPU_VARIANT
};
static_assert(sizeof(kRows) / sizeof(kRows[0]) == kCpuVariantCount, "one row per id");

constexpr MaskGradVariant kMaskRows[] = {
#define RG_MASK_VARIANT(id, name, requirement, ...)                                       \
  {MaskGradVariantId::id, name, requirement, [](Dtype d, const KernelParams& p) -> bool { \
     (void)d;                                                                             \
     (void)p;                                                                             \
     return __VA_ARGS__;                                                                  \
   }},
#include "cpu/mask_variants.inc"
#undef RG_MASK_VARIANT
};
static_assert(sizeof(kMaskRows) / sizeof(kMaskRows[0]) == kMaskGradVariantCount, "one row per id");

constexpr MaskForwardVariant kMaskForwardRows[] = {
#define RG_MASK_FORWARD_VARIANT(id, name, requirement, ...)                                  \
  {MaskForwardVariantId::id, name, requirement, [](Dtype d, const KernelParams& p) -> bool { \
     (void)d;                                                                                \
     (void)p;                                                                                \
     return __VA_ARGS__;                                                                     \
   }},
#include "cpu/mask_forward_variants.inc"
#undef RG_MASK_FORWARD_VARIANT
};
static_assert(sizeof(kMaskForwardRows) / sizeof(kMaskForwardRows[0]) == kMaskForwardVariantCount,
              "one row per id");

}  // namespace

const CpuVariant* CpuVariants() { return kRows; }

const MaskForwardVariant* MaskForwardVariants() { return kMaskForwardRows; }

const MaskGradVariant* MaskGradVariants() { return kMaskRows; }

const CpuVariant* FindCpuVariant(const char* name) {
  if (name == nullptr) return nullptr;
  for (const CpuVariant& row : kRows) {
    if (std::strcmp(row.name, name) == 0) return &row;
  }
  return nullptr;
}

}  // namespace relugrad
