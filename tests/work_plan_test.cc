// The shared work plan: blocks, and the chunks inside each block, cover
// [0, n) exactly once in order, interior boundaries fall on unit-aligned
// addresses of dx, tiles respect budgets.
#include <gtest/gtest.h>

#include "core/work_plan.h"

namespace relugrad {
namespace {

void CheckPlan(const WorkPlanRequest& r) {
  const WorkPlan p = MakeWorkPlan(r);
  ASSERT_GE(p.blocks, 1);
  ASSERT_LE(p.blocks, std::max(1, r.max_blocks));
  int64_t expected_begin = 0;
  for (int b = 0; b < p.blocks; ++b) {
    ASSERT_EQ(p.Begin(b), expected_begin) << "block " << b;
    ASSERT_GE(p.End(b), p.Begin(b));
    if (b > 0 && p.Begin(b) < r.n) {
      const uint64_t addr = r.dx_address + static_cast<uint64_t>(p.Begin(b)) * r.elem_bytes;
      ASSERT_EQ(addr % r.unit_bytes, 0u) << "block " << b << " starts mid-unit";
    }
    // Chunks tile the block in order; interior chunk boundaries are unit-aligned.
    ASSERT_GE(p.chunks, 1);
    ASSERT_LE(p.chunks, std::max(1, r.max_chunks));
    int64_t chunk_begin = p.Begin(b);
    for (int c = 0; c < p.chunks; ++c) {
      ASSERT_EQ(p.ChunkBegin(b, c), chunk_begin) << "block " << b << " chunk " << c;
      ASSERT_GE(p.ChunkEnd(b, c), p.ChunkBegin(b, c));
      if (c > 0 && p.ChunkBegin(b, c) < p.End(b)) {
        const uint64_t addr =
            r.dx_address + static_cast<uint64_t>(p.ChunkBegin(b, c)) * r.elem_bytes;
        ASSERT_EQ(addr % r.unit_bytes, 0u) << "block " << b << " chunk " << c << " starts mid-unit";
        ASSERT_LE(p.ChunkEnd(b, c) - p.ChunkBegin(b, c), p.chunk_elems);
        ASSERT_GE(p.chunk_elems * r.elem_bytes, r.chunk_bytes);
      }
      chunk_begin = p.ChunkEnd(b, c);
    }
    ASSERT_EQ(chunk_begin, p.End(b)) << "block " << b;
    expected_begin = p.End(b);
  }
  ASSERT_EQ(expected_begin, r.n);
  if (r.tile_budget_bytes > 0) {
    ASSERT_GT(p.tile_elems, 0);
    const int64_t tile_unit = (r.tile_unit_bytes ? r.tile_unit_bytes : r.unit_bytes) / r.elem_bytes;
    ASSERT_EQ(p.tile_elems % tile_unit, 0);
    ASSERT_LE(p.tile_elems * r.elem_bytes, std::max(r.tile_budget_bytes, tile_unit * r.elem_bytes));
  }
}

TEST(WorkPlan, CoversEveryElementOnceWithAlignedBoundaries) {
  for (int64_t n : {0, 1, 7, 15, 16, 17, 1000, 4096, 65537, 1 << 20, 3'000'001}) {
    for (int elem : {2, 4, 8}) {
      for (uint64_t misalign = 0; misalign < 64; misalign += elem) {
        for (int blocks : {1, 2, 3, 8, 48}) {
          WorkPlanRequest r;
          r.n = n;
          r.elem_bytes = elem;
          r.dx_address = 0x10000 + misalign;
          r.unit_bytes = 64;
          r.max_blocks = blocks;
          CheckPlan(r);
          r.grain_bytes = 64 * 1024;
          CheckPlan(r);
          for (int64_t chunk : {64, 200, 4096, 256 * 1024}) {  // CPU chunks (thread_pool.h)
            r.chunk_bytes = chunk;
            for (int max_chunks : {1, 3, 64}) {
              r.max_chunks = max_chunks;
              CheckPlan(r);
            }
          }
          r.chunk_bytes = 0;
          r.max_chunks = 64;
        }
      }
    }
  }
}

TEST(WorkPlan, AscendStyleTiles) {
  // 32-byte units, tiles in 256-byte repeats, a UB budget per buffer.
  for (int64_t n : {0, 1, 100, 4096, 99999, 1 << 22}) {
    for (int elem : {2, 4}) {
      WorkPlanRequest r;
      r.n = n;
      r.elem_bytes = elem;
      r.unit_bytes = 32;
      r.max_blocks = 40;
      r.tile_budget_bytes = 184 * 1024 / 6;
      r.tile_unit_bytes = 256;
      CheckPlan(r);
    }
  }
}

TEST(WorkPlan, GrainKeepsSmallInputsOnOneBlock) {
  WorkPlanRequest r;
  r.n = 4096;
  r.elem_bytes = 4;
  r.max_blocks = 2;
  r.grain_bytes = 64 * 1024;
  EXPECT_EQ(MakeWorkPlan(r).blocks, 1);
  r.n = 1 << 20;
  EXPECT_EQ(MakeWorkPlan(r).blocks, 2);
}

}  // namespace
}  // namespace relugrad
