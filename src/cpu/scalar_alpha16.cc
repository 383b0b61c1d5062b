#include "cpu/scalar_alpha16.h"

#include <cmath>
#include <cstring>

#include "core/dtype_traits.h"
#include "cpu/mul_alpha16.h"

namespace relugrad {
namespace {

template <Dtype D>
uint16_t Element(const KernelParams& p, uint16_t dy, uint16_t s) {
  using T = DtypeTraits<D>;
  const int64_t key = OrderKey<D>(s);
  const int64_t key_pinf = OrderKey<D>(T::kInf);
  const int64_t key_ninf = OrderKey<D>(static_cast<uint16_t>(T::kSign | T::kInf));
  const bool nan = key < key_ninf || key > key_pinf;
  const int64_t key_hi = p.gate_upper ? p.gate_key_hi : key_pinf;
  const bool open = nan ? p.gate_nan_open : (key >= p.gate_key_lo && key <= key_hi);
  const bool dy_nan = IsNan<D>(dy);
  const bool flush = p.flush_subnormals;
  if (open) {
    uint16_t out = dy;
    if (p.open_multiply) {
      if (dy_nan)
        out = static_cast<uint16_t>(dy | T::kQuiet);
      else if (flush && IsSubnormal<D>(dy))
        out = static_cast<uint16_t>(dy & T::kSign);
    }
    if (p.clip && !dy_nan) {
      const int64_t k = OrderKey<D>(out);
      if (k < p.clip_key_lo)
        out = static_cast<uint16_t>(p.clip_lo_bits);
      else if (k > p.clip_key_hi)
        out = static_cast<uint16_t>(p.clip_hi_bits);
    }
    return out;
  }
  return MulAlpha16<D>(p, dy);
}

template <Dtype D>
void Run(const KernelParams& p, const void* dy, const void* s, void* dx, int64_t begin,
         int64_t end) {
  const auto* dy16 = static_cast<const uint16_t*>(dy);
  const auto* s16 = static_cast<const uint16_t*>(s);
  auto* dx16 = static_cast<uint16_t*>(dx);
  for (int64_t i = begin; i < end; ++i) dx16[i] = Element<D>(p, dy16[i], s16[i]);
}

}  // namespace

void RunBlockAlpha16(const KernelParams& p, const void* dy, const void* s, void* dx, int64_t begin,
                     int64_t end) {
  if (p.dtype == Dtype::kF16)
    Run<Dtype::kF16>(p, dy, s, dx, begin, end);
  else
    Run<Dtype::kBF16>(p, dy, s, dx, begin, end);
}

}  // namespace relugrad
