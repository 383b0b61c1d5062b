// KernelParams flattened into a plain struct that a CUDA kernel takes by
// value (it lands in the kernel's constant parameter bank: no device copy,
// no per-call allocation). Only what the element rule reads is kept; every
// rule was decided on the host by MakeKernelParams and is not re-derived.
//
// Plain C++ (no CUDA headers), so the host tests can build the same struct
// and run the same element rule on the CPU.
#ifndef RELUGRAD_CUDA_DEVICE_PARAMS_H_
#define RELUGRAD_CUDA_DEVICE_PARAMS_H_

#include <cstdint>
#include <type_traits>

#include "core/semantics.h"

namespace relugrad {
namespace cuda {

// What a closed gate writes (ClosedRule as a fixed-width integer).
enum ClosedCode : uint8_t { kClosedZero = 0, kClosedMulZero = 1, kClosedMulAlpha = 2 };

struct DeviceParams {
  // gate_key_lo - 1: always inside the dtype's key range, since gate_key_lo
  // lies in [key(-inf), key(+inf) + 1]; the kernel narrows it to Key and
  // tests key > this (the CPU kernel's form).
  int64_t gate_key_lo_minus_1;
  // Upper bound (gate_max): when gate_upper, a non-NaN s is open only if
  // also key(s) <= gate_key_hi (KernelParams' key, in the Key range).
  int64_t gate_key_hi;
  int64_t clip_key_lo;
  int64_t clip_key_hi;
  uint64_t clip_lo_bits;
  uint64_t clip_hi_bits;
  double alpha;     // f64 data: alpha as given
  float alpha_f32;  // f16/bf16/f32 data: alpha rounded to float (the compute type)
  uint8_t gate_nan_open;
  uint8_t gate_upper;
  uint8_t open_multiply;
  uint8_t flush_subnormals;
  uint8_t clip;
  uint8_t closed;              // ClosedCode
  uint8_t keep_negative_zero;  // mask forward: a closed -0 stays -0
};
static_assert(std::is_trivially_copyable<DeviceParams>::value, "passed to kernels by value");
static_assert(sizeof(DeviceParams) <= 128, "kernel parameter space is small; keep it lean");

inline DeviceParams ToDeviceParams(const KernelParams& p) {
  DeviceParams d{};
  d.gate_key_lo_minus_1 = p.gate_key_lo - 1;
  d.gate_key_hi = p.gate_key_hi;
  d.gate_upper = p.gate_upper ? 1 : 0;
  d.clip_key_lo = p.clip_key_lo;
  d.clip_key_hi = p.clip_key_hi;
  d.clip_lo_bits = p.clip_lo_bits;
  d.clip_hi_bits = p.clip_hi_bits;
  d.alpha = p.alpha;
  d.alpha_f32 = p.alpha_f32;
  d.gate_nan_open = p.gate_nan_open ? 1 : 0;
  d.open_multiply = p.open_multiply ? 1 : 0;
  d.flush_subnormals = p.flush_subnormals ? 1 : 0;
  d.clip = p.clip ? 1 : 0;
  d.keep_negative_zero = p.keep_negative_zero ? 1 : 0;
  switch (p.closed) {
    case ClosedRule::kZero:
      d.closed = kClosedZero;
      break;
    case ClosedRule::kMulZero:
      d.closed = kClosedMulZero;
      break;
    case ClosedRule::kMulAlpha:
      d.closed = kClosedMulAlpha;
      break;
  }
  return d;
}

}  // namespace cuda
}  // namespace relugrad

#endif  // RELUGRAD_CUDA_DEVICE_PARAMS_H_
