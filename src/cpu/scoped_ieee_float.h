// The library's float operations run under an MXCSR it sets itself, so a
// host process that set FTZ/DAZ (TensorFlow's threads do) cannot change our
// bits. Two kinds of kernels compute with floats (everything else is integer
// work on bit patterns and ignores MXCSR):
//  - dy*alpha for alpha != 0 (and x*alpha in the mask forward): IEEE, with
//    FTZ/DAZ applied by the kernels themselves;
//  - the tensorflow/onednn multiply rule (open lanes dy*1, closed lanes dy*0)
//    for f32/f64 on x86 (UsesFloatMultiplyRule): x86's own multiply gives
//    every bit that rule asks for (the sign of a zero, inf*0 = the default
//    NaN 0xffc00000, a NaN quieted with its payload and sign), and with DAZ
//    set it flushes a subnormal dy the way flush_subnormals asks; as integer
//    bit work the rule costs about 11 vector operations per vector against
//    2-4 this way (docs/design.md, "Multiply rule on x86's multiply").
#ifndef RELUGRAD_CPU_SCOPED_IEEE_FLOAT_H_
#define RELUGRAD_CPU_SCOPED_IEEE_FLOAT_H_

#include "core/semantics.h"

#if defined(__x86_64__) || defined(__i386__)
#define RELUGRAD_X86_MXCSR 1
#include <xmmintrin.h>
#else
#define RELUGRAD_X86_MXCSR 0
#endif

namespace relugrad {

// All exceptions masked, round to nearest even, FTZ = DAZ = 0.
inline constexpr unsigned kMxcsrIeee = 0x1f80;
inline constexpr unsigned kMxcsrExceptionMasks = 0x1f80;
inline constexpr unsigned kMxcsrDaz = 0x0040;
// Every bit but the sticky exception flags (bits 0-5).
inline constexpr unsigned kMxcsrControl = 0xffc0;

// What a kernel needs of MXCSR: the bits `care` must read as in `want`.
struct MxcsrNeed {
  unsigned want = 0, care = 0;  // care = 0: no float math, MXCSR untouched
};

// True when the block kernels compute `p`'s rule with the float multiply
// (RunBlock in relugrad-inl.h asks the same question).
inline bool UsesFloatMultiplyRule(const KernelParams& p) {
#if RELUGRAD_X86_MXCSR
  return (p.dtype == Dtype::kF32 || p.dtype == Dtype::kF64) && p.open_multiply && !p.clip &&
         p.closed == ClosedRule::kMulZero && p.gate_key_lo >= 0 && !p.gate_upper;
#else
  (void)p;
  return false;
#endif
}

// dy*alpha wants all of IEEE. The multiply rule's products are exact zeros,
// NaNs or dy itself, so rounding and FTZ cannot change them; it wants the
// exceptions masked (inf*0 raises invalid) and DAZ: with flush_subnormals,
// DAZ is what makes dy*1 flush a subnormal dy; without, only dy*0 is
// computed, the same under DAZ, but a subnormal operand without DAZ costs a
// microcode assist (docs/design.md, "Multiply rule on x86's multiply"). A host already in that
// state (TensorFlow's threads) pays no MXCSR write; others pay two (set and restore).
inline MxcsrNeed KernelMxcsr(const KernelParams& p) {
  if (p.closed == ClosedRule::kMulAlpha) return {kMxcsrIeee, kMxcsrControl};
  if (UsesFloatMultiplyRule(p))
    return {kMxcsrExceptionMasks | kMxcsrDaz, kMxcsrExceptionMasks | kMxcsrDaz};
  return {};
}

// Sets MXCSR to meet `need` for a scope and restores it; writes nothing when
// the caller's MXCSR already meets it (reading MXCSR is cheap, writing not).
class ScopedIeeeFloat {
 public:
  explicit ScopedIeeeFloat(MxcsrNeed need) {
#if RELUGRAD_X86_MXCSR
    if (need.care != 0) {
      saved_ = _mm_getcsr();
      if ((saved_ & need.care) != need.want) {
        _mm_setcsr((saved_ & ~need.care) | need.want);
        changed_ = true;
      }
    }
#else
    (void)need;
#endif
  }
  ~ScopedIeeeFloat() {
#if RELUGRAD_X86_MXCSR
    if (changed_) _mm_setcsr(saved_);
#endif
  }
  ScopedIeeeFloat(const ScopedIeeeFloat&) = delete;
  ScopedIeeeFloat& operator=(const ScopedIeeeFloat&) = delete;

 private:
  bool changed_ = false;
  unsigned saved_ = 0;
};

}  // namespace relugrad

#endif  // RELUGRAD_CPU_SCOPED_IEEE_FLOAT_H_
