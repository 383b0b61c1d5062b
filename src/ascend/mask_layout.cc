// The ReluV2 mask's 910B blocked layout (N, C1, H, W, C0 = 16) against the flat layout of
// relugrad's mask (relugrad.h, "The ReluV2 mask of Ascend 910B"). Host-side bit moves: both
// directions visit every element of x once and write whole output bytes, so padding bits are
// always defined (0) and no output byte keeps what the caller left there.
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/error.h"
#include "relugrad/relugrad.h"

namespace relugrad {
namespace {

constexpr int64_t kC0 = 16;  // float types; int8/uint8 use 32 and are not served here

struct Dims {
  int64_t n, c, h, w, c1;
};

bool Mul(int64_t a, int64_t b, int64_t* out) { return !__builtin_mul_overflow(a, b, out); }

// Elements of the blocked mask (a multiple of 16, so whole bytes), or -1.
int64_t BlockedElements(int64_t n, int64_t c, int64_t h, int64_t w) {
  if (n < 0 || c < 0 || h < 0 || w < 0) return -1;
  int64_t e = (c + kC0 - 1) / kC0;
  if (!Mul(e, n, &e) || !Mul(e, h, &e) || !Mul(e, w, &e) || !Mul(e, kC0, &e)) return -1;
  return e;
}

relugrad_status Check(relugrad_x_format format, int64_t n, int64_t c, int64_t h, int64_t w,
                      const void* in, const void* out, const char* what, Dims* d) {
  if (format != RELUGRAD_X_NCHW && format != RELUGRAD_X_NHWC)
    return Fail(RELUGRAD_INVALID_ARGUMENT, "%s: format %d is neither NCHW (1) nor NHWC (2)", what,
                static_cast<int>(format));
  const int64_t blocked = BlockedElements(n, c, h, w);
  if (blocked < 0)
    return Fail(RELUGRAD_INVALID_ARGUMENT,
                "%s: dimensions N=%lld C=%lld H=%lld W=%lld are negative or overflow", what,
                static_cast<long long>(n), static_cast<long long>(c), static_cast<long long>(h),
                static_cast<long long>(w));
  if (blocked > 0 && (in == nullptr || out == nullptr))
    return Fail(RELUGRAD_INVALID_ARGUMENT, "%s: a mask pointer is NULL", what);
  *d = {n, c, h, w, (c + kC0 - 1) / kC0};
  return RELUGRAD_OK;
}

// Flat index of x[n][c][h][w] in x's own order.
inline int64_t FlatIndex(relugrad_x_format f, const Dims& d, int64_t n, int64_t c, int64_t h,
                         int64_t w) {
  return f == RELUGRAD_X_NCHW ? ((n * d.c + c) * d.h + h) * d.w + w
                              : ((n * d.h + h) * d.w + w) * d.c + c;
}

inline int64_t BlockedIndex(const Dims& d, int64_t n, int64_t c, int64_t h, int64_t w) {
  return (((n * d.c1 + c / kC0) * d.h + h) * d.w + w) * kC0 + c % kC0;
}

inline bool GetBit(const uint8_t* m, int64_t i) { return (m[i >> 3] >> (i & 7)) & 1; }
inline void SetBit(uint8_t* m, int64_t i) {
  m[i >> 3] = static_cast<uint8_t>(m[i >> 3] | (1u << (i & 7)));
}

template <class Fn>
void ForEachElement(const Dims& d, Fn fn) {
  for (int64_t n = 0; n < d.n; ++n)
    for (int64_t c = 0; c < d.c; ++c)
      for (int64_t h = 0; h < d.h; ++h)
        for (int64_t w = 0; w < d.w; ++w) fn(n, c, h, w);
}

}  // namespace
}  // namespace relugrad

extern "C" {

int64_t relugrad_mask_blocked_bytes(int64_t n, int64_t c, int64_t h, int64_t w) {
  const int64_t e = relugrad::BlockedElements(n, c, h, w);
  return e < 0 ? -1 : e / 8;
}

relugrad_status relugrad_mask_to_blocked(relugrad_x_format format, int64_t n, int64_t c, int64_t h,
                                         int64_t w, const uint8_t* flat, uint8_t* blocked) {
  using namespace relugrad;
  Dims d;
  RELUGRAD_RETURN_IF_ERROR(
      Check(format, n, c, h, w, flat, blocked, "relugrad_mask_to_blocked", &d));
  const int64_t bytes = relugrad_mask_blocked_bytes(n, c, h, w);
  if (bytes == 0) return RELUGRAD_OK;
  std::memset(blocked, 0, static_cast<size_t>(bytes));
  ForEachElement(d, [&](int64_t i, int64_t j, int64_t k, int64_t l) {
    if (GetBit(flat, FlatIndex(format, d, i, j, k, l)))
      SetBit(blocked, BlockedIndex(d, i, j, k, l));
  });
  return RELUGRAD_OK;
}

relugrad_status relugrad_mask_from_blocked(relugrad_x_format format, int64_t n, int64_t c,
                                           int64_t h, int64_t w, const uint8_t* blocked,
                                           uint8_t* flat) {
  using namespace relugrad;
  Dims d;
  RELUGRAD_RETURN_IF_ERROR(
      Check(format, n, c, h, w, blocked, flat, "relugrad_mask_from_blocked", &d));
  if (relugrad_mask_blocked_bytes(n, c, h, w) == 0) return RELUGRAD_OK;
  // The padding channels first, so that a refused mask leaves flat untouched.
  if (c % kC0 != 0) {
    for (int64_t i = 0; i < n; ++i)
      for (int64_t k = 0; k < h; ++k)
        for (int64_t l = 0; l < w; ++l)
          for (int64_t j = c; j < d.c1 * kC0; ++j)
            if (GetBit(blocked, BlockedIndex(d, i, j, k, l)))
              return Fail(RELUGRAD_INVALID_ARGUMENT,
                          "relugrad_mask_from_blocked: padding bit of channel %lld set at "
                          "n=%lld h=%lld w=%lld (C=%lld): not a ReluV2 mask",
                          static_cast<long long>(j), static_cast<long long>(i),
                          static_cast<long long>(k), static_cast<long long>(l),
                          static_cast<long long>(c));
  }
  const int64_t total = n * c * h * w;
  std::memset(flat, 0, static_cast<size_t>((total + 7) / 8));
  ForEachElement(d, [&](int64_t i, int64_t j, int64_t k, int64_t l) {
    if (GetBit(blocked, BlockedIndex(d, i, j, k, l)))
      SetBit(flat, FlatIndex(format, d, i, j, k, l));
  });
  return RELUGRAD_OK;
}

}  // extern "C"
