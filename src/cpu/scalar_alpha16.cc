#include "cpu/scalar_alpha16.h"

#include "core/dtype_traits.h"
#include "core/element_rule.h"

namespace relugrad {
namespace {

template <Dtype D>
void Run(const KernelParams& p, const void* dy, const void* s, void* dx, int64_t begin,
         int64_t end) {
  const auto* dy16 = static_cast<const uint16_t*>(dy);
  const auto* s16 = static_cast<const uint16_t*>(s);
  auto* dx16 = static_cast<uint16_t*>(dx);
  for (int64_t i = begin; i < end; ++i) {
    const bool open = element::GateOpen<D>(s16[i], p.gate_key_lo - 1, p.gate_nan_open, p.gate_upper,
                                           p.gate_key_hi);
    dx16[i] = open ? element::OpenLane<D>(p, dy16[i]) : element::MulAlpha<D>(p, dy16[i]);
  }
}

}  // namespace

// On a 64-byte boundary: the loop's speed must not depend on where the
// linker puts it (docs/design.md, "A loop where it was measured").
__attribute__((aligned(64))) void RunBlockAlpha16(const KernelParams& p, const void* dy,
                                                  const void* s, void* dx, int64_t begin,
                                                  int64_t end) {
  if (p.dtype == Dtype::kF16)
    Run<Dtype::kF16>(p, dy, s, dx, begin, end);
  else
    Run<Dtype::kBF16>(p, dy, s, dx, begin, end);
}

}  // namespace relugrad
