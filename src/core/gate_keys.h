// The kernels' integer gate and clip keys (KernelParams), derived from the
// rounded bounds' bit patterns alone: no call into the scalar reference, so
// the reference stays an independent oracle of the kernels. The gate on a
// non-NaN s is s > t (pass_if_gt; zero_if_le's !(s <= t) is the same for a
// non-NaN s and t), and s < gate_max for the upper bound, on values flushed
// to zero under DAZ; both are monotone in the order key, so each is one key.
// A test pins every key against the reference's plain compares
// (tests/gate_keys_test.cc).
#ifndef RELUGRAD_CORE_GATE_KEYS_H_
#define RELUGRAD_CORE_GATE_KEYS_H_

#include <cstdint>

#include "core/dtype_traits.h"
#include "core/semantics.h"

namespace relugrad {

// Smallest key k in [key(-inf), key(+inf) + 1] whose value passes the lower
// bound (key(+inf) + 1 when none does): rounding and DAZ folded in.
int64_t GateKeyLo(Dtype dtype, const Rules& semantics);

// Largest key k in [key(-inf) - 1, key(+inf)] whose value lies below
// gate_max as compared (key(-inf) - 1 when none does). Only meaningful with
// a bound (semantics.HasGateMax()).
int64_t GateKeyHi(Dtype dtype, const Rules& semantics);

// Sets p's gate keys (gate_key_lo; gate_key_hi when p->gate_upper) and clip
// keys and bit patterns (when p->clip) for p->dtype.
void FillKeys(KernelParams* p, const Rules& semantics);

}  // namespace relugrad

#endif  // RELUGRAD_CORE_GATE_KEYS_H_
