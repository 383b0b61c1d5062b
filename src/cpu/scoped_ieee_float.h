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
// AArch64's counterpart of MXCSR is FPCR. It has no multiply rule to serve
// (UsesFloatMultiplyRule is x86-only), so only dy*alpha asks for it: IEEE
// means FZ, FZ16, DN, AHP, the rounding mode and the trap enables all clear.
#if defined(__aarch64__)
#define RELUGRAD_ARM_FPCR 1
#include <cstdint>
#else
#define RELUGRAD_ARM_FPCR 0
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
// (RunBlock in relu_grad-inl.h asks the same question).
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

#if RELUGRAD_ARM_FPCR
// FPCR bits that change a float result: IOE..IXE (8-12) and IDE (15) trap
// enables, FZ16 (19), RMode (22-23), FZ (24), DN (25), AHP (26).
inline constexpr uint64_t kFpcrControl =
    (uint64_t{0x1f} << 8) | (uint64_t{1} << 15) | (uint64_t{1} << 19) | (uint64_t{0x1f} << 22);
inline uint64_t ReadFpcr() {
  uint64_t v;
  __asm__ __volatile__("mrs %0, fpcr" : "=r"(v));
  return v;
}
inline void WriteFpcr(uint64_t v) { __asm__ __volatile__("msr fpcr, %0" : : "r"(v)); }
#endif

// Sets MXCSR (FPCR on AArch64) to meet `need` for a scope and restores it; writes nothing when
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
#elif RELUGRAD_ARM_FPCR
    if (need.care != 0) {
      saved_fpcr_ = ReadFpcr();
      if ((saved_fpcr_ & kFpcrControl) != 0) {
        WriteFpcr(saved_fpcr_ & ~kFpcrControl);
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
#elif RELUGRAD_ARM_FPCR
    if (changed_) WriteFpcr(saved_fpcr_);
#endif
  }
  ScopedIeeeFloat(const ScopedIeeeFloat&) = delete;
  ScopedIeeeFloat& operator=(const ScopedIeeeFloat&) = delete;

 private:
  bool changed_ = false;
  unsigned saved_ = 0;
#if RELUGRAD_ARM_FPCR
  uint64_t saved_fpcr_ = 0;
#endif
};

}  // namespace relugrad

#endif  // RELUGRAD_CPU_SCOPED_IEEE_FLOAT_H_
