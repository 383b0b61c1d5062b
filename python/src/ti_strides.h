// TensorIterator's general rule for the strides of a new output, written once for both front
// ends: the torch-native library's layouts (torch_layouts.cc) and relugrad._relugrad.ti_strides,
// which relugrad.torch's custom ops call. The custom ops serve where the native library did not
// load, so the rule is torch-free and lives in the module every build has.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace relugrad_python {

// The strides TensorIterator gives a new output of `sizes` from inputs of those sizes with these
// strides (reorder_dimensions, then allocate_or_resize_outputs; not its fast setup): dims sorted
// by the inputs' strides, first input first, stride 0 (broadcast) skipped, equal strides ordered
// by size; C order when nothing moves. Sizes and each operand are indexed by dim
// (at::IntArrayRef, std::vector<int64_t>), each operand holding a stride per dim of sizes.
template <typename Sizes, typename Operands>
std::vector<int64_t> TensorIteratorStrides(const Sizes& sizes, const Operands& operands) {
  const int64_t n = static_cast<int64_t>(sizes.size());
  std::vector<int64_t> perm(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) perm[i] = n - 1 - i;
  auto should_swap = [&](int64_t d0, int64_t d1) {
    for (const auto& st : operands) {
      const int64_t s0 = st[d0], s1 = st[d1];
      if (s0 == 0 || s1 == 0) continue;
      if (s0 != s1) return s0 < s1 ? -1 : 1;
      if (sizes[d0] > sizes[d1]) return 1;
    }
    return 0;
  };
  for (int64_t i = 1; i < n; ++i) {  // insertion sort with ambiguous comparisons
    int64_t d1 = i;
    for (int64_t d0 = i - 1; d0 >= 0; --d0) {
      const int c = should_swap(perm[d0], perm[d1]);
      if (c > 0) {
        std::swap(perm[d0], perm[d1]);
        d1 = d0;
      } else if (c < 0) {
        break;
      }
    }
  }
  bool moved = false;
  for (int64_t i = 0; i < n; ++i) moved |= perm[i] != n - 1 - i;
  std::vector<int64_t> out(static_cast<size_t>(n));
  int64_t step = 1;
  if (!moved) {
    for (int64_t d = n; d-- > 0;) {
      out[d] = step;
      step *= sizes[d];
    }
    return out;
  }
  for (int64_t d : perm) {
    out[d] = step;
    step *= sizes[d];
  }
  return out;
}

}  // namespace relugrad_python
