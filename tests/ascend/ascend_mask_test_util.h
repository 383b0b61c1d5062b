// What the ReluV2 mask kernel tests share (ascend_mask_kernel_test.cc,
// ascend_mask_plan_test.cc): mask sizes, the blocked shapes they sweep, and a
// blocked f32 tiling request.
#ifndef RELUGRAD_TESTS_ASCEND_ASCEND_MASK_TEST_UTIL_H_
#define RELUGRAD_TESTS_ASCEND_ASCEND_MASK_TEST_UTIL_H_

#include <cstddef>
#include <cstdint>

#include "ascend/host/relu_v2_tiling_host.h"

namespace rg_ascend_test {

inline size_t MaskBytes(int64_t n) { return static_cast<size_t>((n + 7) / 8); }

struct Shape {
  int64_t n, c, h, w;
};

// Ragged C (below, at, across multiples of 16), odd N, H, W, planes wider than a tile, and
// enough images for several blocks (12 x 16 x 4 x 4: one image per run; 16 x 17 x 3 x 5: 8).
inline const Shape kShapes[] = {{1, 1, 1, 1},   {1, 16, 1, 1}, {2, 17, 3, 5},   {3, 15, 1, 7},
                                {1, 33, 2, 3},  {2, 32, 3, 3}, {1, 5, 7, 9},    {4, 47, 1, 1},
                                {5, 20, 5, 1},  {3, 64, 2, 1}, {2, 18, 37, 31}, {7, 3, 3, 3},
                                {12, 16, 4, 4}, {16, 17, 3, 5}};

inline relugrad::ascend::BlockedTilingRequest BlockedF32(int64_t n, int64_t c, int64_t h, int64_t w,
                                                         int cores) {
  relugrad::ascend::BlockedTilingRequest r;
  r.n = n;
  r.c = c;
  r.h = h;
  r.w = w;
  r.cores = cores;
  r.grain_bytes = 0;
  return r;
}

}  // namespace rg_ascend_test

#endif  // RELUGRAD_TESTS_ASCEND_ASCEND_MASK_TEST_UTIL_H_
