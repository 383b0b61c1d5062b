#include "core/work_plan.h"

namespace relugrad {
namespace {
int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t RoundUp(int64_t a, int64_t b) { return CeilDiv(a, b) * b; }
}  // namespace

WorkPlan MakeWorkPlan(const WorkPlanRequest& r) {
  WorkPlan plan;
  plan.n = r.n;
  plan.elem_bytes = r.elem_bytes;
  plan.unit_elems = std::max<int64_t>(1, r.unit_bytes / r.elem_bytes);
  const int64_t unit_bytes = plan.unit_elems * r.elem_bytes;
  // Elements until dx reaches a unit boundary (the address is element-aligned).
  const int64_t misalign = static_cast<int64_t>(r.dx_address % static_cast<uint64_t>(unit_bytes));
  plan.head_elems =
      std::min<int64_t>(r.n, misalign == 0 ? 0 : (unit_bytes - misalign) / r.elem_bytes);

  const int64_t body = r.n - plan.head_elems;
  int64_t blocks = std::max(1, r.max_blocks);
  if (r.grain_bytes > 0) {
    blocks = std::min<int64_t>(blocks, std::max<int64_t>(1, (r.n * r.elem_bytes) / r.grain_bytes));
  }
  plan.block_elems = body <= 0 ? plan.unit_elems : RoundUp(CeilDiv(body, blocks), plan.unit_elems);
  // Rounding up may leave trailing blocks empty: drop them.
  plan.blocks =
      static_cast<int>(std::max<int64_t>(1, body <= 0 ? 1 : CeilDiv(body, plan.block_elems)));

  if (r.chunk_bytes > 0 && body > 0) {
    plan.chunk_elems = RoundUp(std::max<int64_t>(1, r.chunk_bytes / r.elem_bytes), plan.unit_elems);
    const int64_t max_chunks = std::max(1, r.max_chunks);
    plan.chunk_elems =
        std::max(plan.chunk_elems, RoundUp(CeilDiv(plan.block_elems, max_chunks), plan.unit_elems));
    if (plan.chunk_elems >= plan.block_elems) {
      plan.chunk_elems = 0;  // one chunk per block
    } else {
      plan.chunks = static_cast<int>(CeilDiv(plan.block_elems, plan.chunk_elems));
    }
  }
  if (r.tile_budget_bytes > 0) {
    const int64_t tile_unit =
        std::max<int64_t>(1, (r.tile_unit_bytes ? r.tile_unit_bytes : unit_bytes) / r.elem_bytes);
    const int64_t budget =
        std::max<int64_t>(tile_unit, (r.tile_budget_bytes / r.elem_bytes) / tile_unit * tile_unit);
    const int64_t longest = plan.head_elems + plan.block_elems;
    plan.tile_elems = std::min(budget, RoundUp(std::max<int64_t>(1, longest), tile_unit));
  }
  return plan;
}

}  // namespace relugrad
