#include "ascend/host/relu_grad_tiling_host.h"

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "core/dtype_traits.h"

namespace relugrad {
namespace ascend {
namespace {

struct KeyFacts {
  int bits;
  int64_t key_min, key_max, key_ninf, key_pinf;
};

template <Dtype D>
KeyFacts Facts() {
  using T = DtypeTraits<D>;
  KeyFacts f;
  f.bits = T::kBits;
  f.key_min = -(int64_t{1} << (T::kBits - 1));
  f.key_max = (int64_t{1} << (T::kBits - 1)) - 1;
  f.key_ninf = OrderKey<D>(static_cast<typename T::Bits>(T::kSign | T::kInf));
  f.key_pinf = OrderKey<D>(T::kInf);
  return f;
}

KeyFacts FactsOf(Dtype d) {
  switch (d) {
    case Dtype::kF16:
      return Facts<Dtype::kF16>();
    case Dtype::kBF16:
      return Facts<Dtype::kBF16>();
    default:
      return Facts<Dtype::kF32>();
  }
}

// Sign-extended raw pattern of a 16/32-bit data value.
int32_t SignExtend(uint64_t bits, int width) {
  return width == 16 ? static_cast<int32_t>(static_cast<int16_t>(static_cast<uint16_t>(bits)))
                     : static_cast<int32_t>(static_cast<uint32_t>(bits));
}

}  // namespace

RgRawSet KeyIntervalsToRawSet(int bits, const int64_t* key_lo, const int64_t* key_hi,
                              int intervals) {
  const int64_t key_min = -(int64_t{1} << (bits - 1));
  std::vector<std::pair<int64_t, int64_t>> raw;
  for (int i = 0; i < intervals; ++i) {
    const int64_t lo = key_lo[i], hi = key_hi[i];
    if (lo > hi) continue;
    // Keys >= 0 are their own raw pattern.
    if (hi >= 0) raw.emplace_back(std::max<int64_t>(lo, 0), hi);
    // Keys < 0 map to raw = key_min - 1 - key: order reverses.
    if (lo <= -1) {
      const int64_t top = std::min<int64_t>(hi, -1);
      raw.emplace_back(key_min - 1 - top, key_min - 1 - lo);
    }
  }
  std::sort(raw.begin(), raw.end());
  std::vector<std::pair<int64_t, int64_t>> merged;
  for (const auto& r : raw) {
    if (!merged.empty() && r.first <= merged.back().second + 1) {
      merged.back().second = std::max(merged.back().second, r.second);
    } else {
      merged.push_back(r);
    }
  }
  RgRawSet set;
  std::memset(&set, 0, sizeof(set));
  // Gate sets have at most three key intervals (a bounded range and the two
  // NaN ranges), clip sets one; of those only the range can straddle zero,
  // hence at most four raw intervals; anything more is a bug in the caller.
  constexpr size_t kMax = sizeof(set.lo) / sizeof(set.lo[0]);
  set.count = static_cast<uint32_t>(std::min(merged.size(), kMax));
  for (uint32_t i = 0; i < set.count; ++i) {
    set.lo[i] = static_cast<int32_t>(merged[i].first);
    set.hi[i] = static_cast<int32_t>(merged[i].second);
  }
  if (merged.size() > kMax) set.count = 0xffffffffu;  // caught by MakeTiling
  return set;
}

bool MakeTiling(const TilingRequest& req, const KernelParams& p, ReluGradTilingData* td,
                WorkPlan* plan, const char** why) {
  if (req.dtype == Dtype::kF64) {
    *why = "the Ascend kernel has no f64: 910B vector units have no f64 arithmetic or compare";
    return false;
  }
  std::memset(td, 0, sizeof(*td));
  const KeyFacts f = FactsOf(req.dtype);
  const int elem = DtypeSize(req.dtype);
  td->dtype = static_cast<uint32_t>(req.dtype);
  td->plainSelect = p.IsPlainSelect() ? 1 : 0;
  td->openMultiply = p.open_multiply ? 1 : 0;
  td->flushSubnormals = p.flush_subnormals ? 1 : 0;
  td->clip = p.clip ? 1 : 0;
  td->closedRule = p.closed == ClosedRule::kZero      ? kRgClosedZero
                   : p.closed == ClosedRule::kMulZero ? kRgClosedMulZero
                                                      : kRgClosedMulAlpha;
  td->alpha = p.alpha_f32;

  // Gate: open iff key >= gate_key_lo and (pass_if_gt) key <= key(+inf),
  // or (zero_if_le) any key below key(-inf) (negative NaNs) or above
  // key(+inf) (positive NaNs). An upper bound (gate_max) caps the non-NaN
  // range at gate_key_hi; NaN gates keep the predicate's rule.
  {
    int64_t lo[3], hi[3];
    int count = 0;
    lo[count] = p.gate_key_lo;
    hi[count] = p.gate_upper ? std::min(p.gate_key_hi, f.key_pinf) : f.key_pinf;
    ++count;
    if (p.gate_nan_open) {
      lo[count] = f.key_pinf + 1;
      hi[count] = f.key_max;
      ++count;
      lo[count] = f.key_min;
      hi[count] = f.key_ninf - 1;
      ++count;
    }
    td->gate = KeyIntervalsToRawSet(f.bits, lo, hi, count);
  }
  if (p.clip) {
    const int64_t below_lo = f.key_ninf, below_hi = std::min(p.clip_key_lo - 1, f.key_pinf);
    const int64_t above_lo = std::max(p.clip_key_hi + 1, f.key_ninf), above_hi = f.key_pinf;
    td->clipBelow = KeyIntervalsToRawSet(f.bits, &below_lo, &below_hi, 1);
    td->clipAbove = KeyIntervalsToRawSet(f.bits, &above_lo, &above_hi, 1);
    td->clipLoBits = SignExtend(p.clip_lo_bits, f.bits);
    td->clipHiBits = SignExtend(p.clip_hi_bits, f.bits);
  }
  if (td->gate.count > 4 || td->clipBelow.count > 4 || td->clipAbove.count > 4) {
    *why = "internal: a bit-pattern set needs more than four intervals";
    return false;
  }

  td->scratchSlots =
      RgScratchSlots(td->dtype, td->plainSelect, td->closedRule, td->flushSubnormals);
  WorkPlanRequest wr;
  wr.n = req.n;
  wr.elem_bytes = elem;
  wr.dx_address = req.dx_address;
  wr.unit_bytes = kUnitBytes;
  wr.max_blocks = std::max(1, req.cores);
  wr.grain_bytes = req.grain_bytes;
  // Every tile-sized buffer (3 queues x 2, plus the scratch slots) shares
  // the 184 KiB TPipe may allocate; MakeWorkPlan rounds down to 256 bytes.
  wr.tile_budget_bytes = kUbTPipeBytes / (kQueueBuffers + td->scratchSlots);
  wr.tile_unit_bytes = kTileUnitBytes;
  *plan = MakeWorkPlan(wr);
  td->n = static_cast<uint64_t>(plan->n);
  td->headElems = static_cast<uint64_t>(plan->head_elems);
  td->blockElems = static_cast<uint64_t>(plan->block_elems);
  td->blocks = static_cast<uint32_t>(plan->blocks);
  td->tileElems = static_cast<uint32_t>(plan->tile_elems);
  return true;
}

}  // namespace ascend
}  // namespace relugrad
