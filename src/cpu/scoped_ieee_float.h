// dy*alpha (and x*alpha in the mask forward) are the library's only float
// operations: this pins MXCSR to IEEE (no FTZ/DAZ, round to nearest, all
// exceptions masked) for a block, so a host process that set FTZ/DAZ
// (TensorFlow's threads do) cannot change our bits. FTZ/DAZ, when the
// semantics ask for it, is applied by the kernels themselves.
#ifndef RELUGRAD_CPU_SCOPED_IEEE_FLOAT_H_
#define RELUGRAD_CPU_SCOPED_IEEE_FLOAT_H_

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

namespace relugrad {

class ScopedIeeeFloat {
 public:
  explicit ScopedIeeeFloat(bool active) : active_(active) {
#if defined(__x86_64__) || defined(__i386__)
    if (active_) {
      saved_ = _mm_getcsr();
      _mm_setcsr(0x1f80);  // all exceptions masked, RNE, FTZ=DAZ=0
    }
#endif
  }
  ~ScopedIeeeFloat() {
#if defined(__x86_64__) || defined(__i386__)
    if (active_) _mm_setcsr(saved_);
#endif
  }
  ScopedIeeeFloat(const ScopedIeeeFloat&) = delete;
  ScopedIeeeFloat& operator=(const ScopedIeeeFloat&) = delete;

 private:
  bool active_;
  unsigned saved_ = 0;
};

}  // namespace relugrad

#endif  // RELUGRAD_CPU_SCOPED_IEEE_FLOAT_H_
