#include "mask_test_support.h"

#include <cstring>
#include <random>
#include <stdexcept>

#include "core/mask_reference.h"
#include "core/semantics.h"

namespace relugrad {
namespace testing {
namespace {

Rules Resolve(const relugrad_options& o) {
  Rules sem;
  if (ResolveOptions(&o, &sem) != RELUGRAD_OK) throw std::runtime_error(relugrad_last_error());
  return sem;
}

}  // namespace

void ReferenceForward(relugrad_dtype d, const Bytes& x, const relugrad_options& o, Bytes* y,
                      Bytes* mask) {
  const int64_t n = static_cast<int64_t>(x.size() / relugrad_dtype_size(d));
  y->assign(x.size(), 0);
  mask->assign(static_cast<size_t>(relugrad_mask_bytes(n)), 0xEE);
  ReferenceForwardRun(ToDtype(d), n, x.data(), y->data(), mask->data(), Resolve(o));
}

Bytes ReferenceGradMask(relugrad_dtype d, const Bytes& dy, const Bytes& mask,
                        const relugrad_options& o) {
  const int64_t n = static_cast<int64_t>(dy.size() / relugrad_dtype_size(d));
  Bytes dx(dy.size());
  ReferenceGradMaskRun(ToDtype(d), n, dy.data(), mask.data(), dx.data(), Resolve(o));
  return dx;
}

std::string CompareMask(const Bytes& expected, const unsigned char* actual, size_t n) {
  for (size_t i = 0; i < expected.size(); ++i) {
    if (expected[i] == actual[i]) continue;
    for (size_t b = 0; b < 8; ++b) {
      if (((expected[i] ^ actual[i]) >> b) & 1) {
        const size_t bit = i * 8 + b;
        return "mask bit " + std::to_string(bit) + (bit >= n ? " (padding)" : "") +
               " of n=" + std::to_string(n) + ": expected " +
               std::to_string((expected[i] >> b) & 1);
      }
    }
  }
  return "";
}

Bytes RandomMask(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Bytes m((n + 7) / 8);
  for (auto& b : m) b = static_cast<unsigned char>(rng());
  if (n % 8 != 0) m.back() = static_cast<unsigned char>(m.back() & ((1u << (n % 8)) - 1u));
  return m;
}

}  // namespace testing
}  // namespace relugrad
