// The host-side work plan ("tiling") shared by every backend: how n
// elements split into blocks (one per CPU worker, CUDA grid slice or Ascend
// core), on which alignment unit block boundaries fall, and how long a tile
// inside a block is. CPU: 64-byte units so no two threads write one cache
// line. Ascend: 32-byte units and tiles sized to the Unified Buffer.
#ifndef RELUGRAD_CORE_WORK_PLAN_H_
#define RELUGRAD_CORE_WORK_PLAN_H_

#include <algorithm>
#include <cstdint>

namespace relugrad {

struct WorkPlanRequest {
  int64_t n = 0;
  int elem_bytes = 4;
  uint64_t dx_address = 0;        // boundaries align to this address + k * unit
  int64_t unit_bytes = 64;        // alignment unit of block boundaries
  int max_blocks = 1;             // workers or cores available
  int64_t grain_bytes = 0;        // below this many bytes of dx per block, use fewer blocks
  int64_t tile_budget_bytes = 0;  // bytes of one tile of one array (0: tile = block)
  int64_t tile_unit_bytes = 0;    // tiles are multiples of this (0: unit_bytes)
  int64_t chunk_bytes = 0;        // CPU: least bytes of dx per chunk of a block (0: one chunk)
  int max_chunks = 64;            // CPU: chunks per block at most (larger blocks get larger chunks)
};

struct WorkPlan {
  int64_t n = 0;
  int elem_bytes = 4;
  int64_t unit_elems = 1;   // alignment unit in elements
  int64_t head_elems = 0;   // elements before dx's first unit-aligned address
  int blocks = 1;           // blocks actually used (>= 1, even for n == 0)
  int64_t block_elems = 0;  // elements per block beyond block 0's head; a multiple of unit_elems
  int64_t tile_elems =
      0;  // elements per tile (a multiple of the tile unit); last tile of a block may be shorter
  // CPU: each block splits into `chunks` chunks of chunk_elems (a multiple of
  // unit_elems; block 0's first chunk also takes the head), the units of
  // work the thread pool lets the caller take over from a late worker.
  // Trailing chunks of a short last block may be empty.
  int chunks = 1;
  int64_t chunk_elems = 0;  // 0: one chunk per block

  int64_t Begin(int block) const {
    return block == 0 ? 0 : std::min(n, head_elems + block * block_elems);
  }
  int64_t End(int block) const {
    return block == blocks - 1 ? n : std::min(n, head_elems + (block + 1) * block_elems);
  }
  int64_t ChunkBegin(int block, int chunk) const {
    if (chunk == 0) return Begin(block);
    return std::min(End(block), head_elems + block * block_elems + chunk * chunk_elems);
  }
  int64_t ChunkEnd(int block, int chunk) const {
    if (chunk == chunks - 1) return End(block);
    return std::min(End(block), head_elems + block * block_elems + (chunk + 1) * chunk_elems);
  }
  int64_t TilesIn(int block) const {
    const int64_t len = End(block) - Begin(block);
    return tile_elems == 0 ? 1 : (len + tile_elems - 1) / tile_elems;
  }
};

WorkPlan MakeWorkPlan(const WorkPlanRequest& request);

}  // namespace relugrad

#endif  // RELUGRAD_CORE_WORK_PLAN_H_
