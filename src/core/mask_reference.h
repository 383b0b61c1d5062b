// The scalar reference of the 1-bit mask path, built only from the scalar
// reference of ReluGrad (reference.h): the oracle of the mask tests. It
// shares nothing with the kernels.
//
//   forward:  bit = ReferenceGateOpen(x)
//             y   = bit ? x : (alpha != 0 ? x*alpha : (x is NaN ? x : +0))
//   backward: dx  = bit ? pass(dy) : closed(dy)
//
// pass/closed are read off ReferenceElement with a gate that is open (or
// closed) whatever the threshold: s = +inf against t = -inf (or t = +inf).
// Neither rule depends on t, so this is exact for every configuration, and
// defines dx for a 1 bit even where no x could open the gate.
#ifndef RELUGRAD_CORE_MASK_REFERENCE_H_
#define RELUGRAD_CORE_MASK_REFERENCE_H_

#include <cstdint>

#include "core/dtype_traits.h"
#include "core/semantics.h"

namespace relugrad {

// Bit i of a mask: LSB-first within byte i / 8.
inline bool MaskBit(const uint8_t* mask, int64_t i) { return (mask[i / 8] >> (i % 8)) & 1; }

// One element: y bits, and the bit in *open.
uint64_t ReferenceForwardElement(Dtype dtype, uint64_t x_bits, const Rules& semantics, bool* open);

// One element of the backward pass.
uint64_t ReferenceGradMaskElement(Dtype dtype, uint64_t dy_bits, bool open, const Rules& semantics);

// Whole arrays. y may alias x exactly; every mask byte of ceil(n/8) is
// written, padding bits of the last byte zero.
void ReferenceForwardRun(Dtype dtype, int64_t n, const void* x, void* y, uint8_t* mask,
                         const Rules& semantics);
// dx may alias dy exactly.
void ReferenceGradMaskRun(Dtype dtype, int64_t n, const void* dy, const uint8_t* mask, void* dx,
                          const Rules& semantics);

}  // namespace relugrad

#endif  // RELUGRAD_CORE_MASK_REFERENCE_H_
