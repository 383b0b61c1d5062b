// The scalar reference: every preset and dtype, one element at a time, in
// exact double arithmetic on decoded values. Not designed to be fast; it is
// the oracle of all tests and of `relugrad verify`, and it shares nothing
// with the kernels but the bit layouts and the rounding helper.
#ifndef RELUGRAD_CORE_REFERENCE_H_
#define RELUGRAD_CORE_REFERENCE_H_

#include <cstdint>

#include "core/dtype_traits.h"
#include "core/semantics.h"

namespace relugrad {

// Is the gate open for this s (raw bits of dtype)?
bool ReferenceGateOpen(Dtype dtype, uint64_t s_bits, const Rules& semantics);

// The upper bound's half of the gate for a non-NaN s: s < gate_max as
// compared (true without a bound).
bool ReferenceBelowGateMax(Dtype dtype, uint64_t s_bits, const Rules& semantics);

// dx for one element (raw bits in, raw bits out).
uint64_t ReferenceElement(Dtype dtype, uint64_t dy_bits, uint64_t s_bits, const Rules& semantics);

// Whole arrays; dx may alias dy or s exactly. Pointers need only be
// element-aligned.
void ReferenceRun(Dtype dtype, int64_t n, const void* dy, const void* s, void* dx,
                  const Rules& semantics);

}  // namespace relugrad

#endif  // RELUGRAD_CORE_REFERENCE_H_
