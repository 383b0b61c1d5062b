// The caller's MXCSR cannot change relugrad's bits, and relugrad leaves the
// caller's MXCSR mode as it found it. Two kernel families compute with
// floats (cpu/scoped_ieee_float.h): dy*alpha, and the tensorflow/onednn
// multiply rule for f32/f64, which runs on x86's multiply under DAZ. Each
// case sets the calling thread's MXCSR to a hostile mode (FTZ/DAZ,
// round-toward-zero, exceptions unmasked: inf*0 would trap), runs every
// configuration on the special-value cross product, on one thread and split
// over two (the pool's worker has an MXCSR of its own), and compares with the
// reference computed under the default MXCSR. AArch64 runs the same check on
// FPCR (the Arm tier, mk/arm.mk).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "relugrad/relugrad.h"
#include "test_support.h"

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#define RELUGRAD_TEST_X86 1
#else
#define RELUGRAD_TEST_X86 0
#endif

namespace relugrad {
namespace testing {
namespace {

#if RELUGRAD_TEST_X86
constexpr unsigned kControl = 0xffc0;  // MXCSR without the sticky exception flags

struct Mode {
  const char* name;
  unsigned mxcsr;
};

// Each mode differs from the default (0x1f80) in what a float kernel could
// notice: FTZ (bit 15), DAZ (bit 6), rounding (bits 13-14), the exception
// masks (bits 7-12; 0 = that exception traps).
constexpr Mode kModes[] = {
    {"default", 0x1f80},          {"ftz_daz", 0x9fc0},
    {"daz_only", 0x1fc0},         {"round_toward_zero", 0x7f80},
    {"invalid_unmasked", 0x1f00}, {"all_unmasked_ftz_daz_round_up", 0xc040},
};

// The special-value cross product, repeated to `n` elements.
void CrossProduct(relugrad_dtype d, size_t n, std::vector<unsigned char>* dy,
                  std::vector<unsigned char>* s) {
  const auto special = SpecialValues(d);
  std::vector<uint64_t> dy_bits, s_bits;
  while (dy_bits.size() < n) {
    for (uint64_t g : special) {
      for (uint64_t v : special) {
        dy_bits.push_back(v);
        s_bits.push_back(g);
      }
    }
  }
  dy_bits.resize(n);
  s_bits.resize(n);
  *dy = Pack(d, dy_bits);
  *s = Pack(d, s_bits);
}

TEST(FloatEnvironment, CallersMxcsrChangesNoBitAndIsLeftAsFound) {
  const unsigned original = _mm_getcsr();
  for (relugrad_dtype d : kAllDtypes) {
    // 256K elements split over two threads (the grain is 64 KiB); the bare
    // cross product runs as one block on the caller.
    for (size_t n : {size_t{0}, size_t{1} << 18}) {
      std::vector<unsigned char> dy, s;
      CrossProduct(d, n == 0 ? SpecialValues(d).size() * SpecialValues(d).size() : n, &dy, &s);
      const int64_t count = static_cast<int64_t>(dy.size() / relugrad_dtype_size(d));
      for (const Config& c : AllConfigs()) {
        relugrad_options o = c.options;
        o.threads = n == 0 ? 1 : 2;
        const auto expected = Reference(d, dy, s, o);  // under the default MXCSR
        for (const Mode& mode : kModes) {
          SCOPED_TRACE(c.name + " " + relugrad_dtype_name(d) + " n=" + std::to_string(count) + " " +
                       mode.name);
          std::vector<unsigned char> dx(dy.size(), 0xA5);
          _mm_setcsr(mode.mxcsr);
          const relugrad_status st =
              relugrad_relu_grad(d, count, dy.data(), s.data(), dx.data(), &o);
          const unsigned after = _mm_getcsr();
          _mm_setcsr(original);
          ASSERT_EQ(st, RELUGRAD_OK) << relugrad_last_error();
          ASSERT_EQ(after & kControl, mode.mxcsr & kControl) << "the caller's MXCSR mode changed";
          ASSERT_EQ(CompareBits(d, expected.data(), dx.data(), static_cast<size_t>(count),
                                dy.data(), s.data()),
                    "");
        }
      }
    }
  }
}

// A caller that had exceptions unmasked and no flags raised keeps its flags
// clear: relugrad changed MXCSR for the multiply (inf*0 raises invalid) and
// restored the caller's value, flags included. The options are resolved
// once beforehand: resolving them (threshold keys, in double) runs in the
// caller's environment and may raise the denormal flag for f64, which is
// not the kernels' doing.
TEST(FloatEnvironment, RaisedFlagsDoNotLeakToACallerWhoseModeWasChanged) {
  const unsigned original = _mm_getcsr();
  for (relugrad_dtype d : {RELUGRAD_F32, RELUGRAD_F64}) {
    std::vector<unsigned char> dy, s, dx;
    CrossProduct(d, SpecialValues(d).size() * SpecialValues(d).size(), &dy, &s);
    dx.resize(dy.size());
    relugrad_options o;
    relugrad_options_init(&o, RELUGRAD_PRESET_ONEDNN);
    const int64_t n = static_cast<int64_t>(dy.size() / relugrad_dtype_size(d));
    ASSERT_EQ(relugrad_relu_grad(d, n, dy.data(), s.data(), dx.data(), &o), RELUGRAD_OK);
    _mm_setcsr(0x1f00);  // invalid unmasked, flags clear
    const relugrad_status st = relugrad_relu_grad(d, n, dy.data(), s.data(), dx.data(), &o);
    const unsigned after = _mm_getcsr();
    _mm_setcsr(original);
    ASSERT_EQ(st, RELUGRAD_OK);
    EXPECT_EQ(after, 0x1f00u) << relugrad_dtype_name(d);
  }
}
#elif defined(__aarch64__)
// AArch64: the same check on FPCR (cpu/scoped_ieee_float.h). Each mode sets
// what a float kernel could notice: FZ (24), DN (25), FZ16 (19), AHP (26),
// RMode (22-23) and the trap enables (8-12, 15; an implementation without
// trapping reads them as 0, so a mode is compared as it reads back).
uint64_t GetFpcr() {
  uint64_t v;
  __asm__ __volatile__("mrs %0, fpcr" : "=r"(v));
  return v;
}
void SetFpcr(uint64_t v) { __asm__ __volatile__("msr fpcr, %0" : : "r"(v)); }

struct Mode {
  const char* name;
  uint64_t fpcr;
};
constexpr Mode kModes[] = {
    {"default", 0},
    {"fz", uint64_t{1} << 24},
    {"fz_dn_fz16", (uint64_t{1} << 24) | (uint64_t{1} << 25) | (uint64_t{1} << 19)},
    {"round_toward_zero", uint64_t{3} << 22},
    {"round_up_ahp", (uint64_t{1} << 22) | (uint64_t{1} << 26)},
    {"invalid_trap_enabled_fz", (uint64_t{1} << 8) | (uint64_t{1} << 24)},
};

// Every dtype, every configuration (dy*alpha among them) on the special-value cross
// product extended with subnormal-producing alphas, on one thread and split over two.
TEST(FloatEnvironment, CallersFpcrChangesNoBitAndIsLeftAsFound) {
  const uint64_t original = GetFpcr();
  for (relugrad_dtype d : kAllDtypes) {
    // 64K elements: two blocks even for 16-bit dtypes (the grain is 64 KiB).
    for (size_t n : {size_t{0}, size_t{1} << 16}) {
      const auto special = SpecialValues(d);
      std::vector<uint64_t> dy_bits, s_bits;
      const size_t want = n == 0 ? special.size() * special.size() : n;
      while (dy_bits.size() < want) {
        for (uint64_t g : special) {
          for (uint64_t v : special) {
            dy_bits.push_back(v);
            s_bits.push_back(g);
          }
        }
      }
      dy_bits.resize(want);
      s_bits.resize(want);
      const auto dy = Pack(d, dy_bits);
      const auto s = Pack(d, s_bits);
      const int64_t count = static_cast<int64_t>(want);
      for (const Config& c : AllConfigs()) {
        relugrad_options o = c.options;
        o.threads = n == 0 ? 1 : 2;
        const auto expected = Reference(d, dy, s, o);  // under the default FPCR
        for (const Mode& mode : kModes) {
          SCOPED_TRACE(c.name + " " + relugrad_dtype_name(d) + " n=" + std::to_string(count) + " " +
                       mode.name);
          std::vector<unsigned char> dx(dy.size(), 0xA5);
          SetFpcr(mode.fpcr);
          const uint64_t set = GetFpcr();
          const relugrad_status st =
              relugrad_relu_grad(d, count, dy.data(), s.data(), dx.data(), &o);
          const uint64_t after = GetFpcr();
          SetFpcr(original);
          ASSERT_EQ(st, RELUGRAD_OK) << relugrad_last_error();
          ASSERT_EQ(after, set) << "the caller's FPCR changed";
          ASSERT_EQ(CompareBits(d, expected.data(), dx.data(), want, dy.data(), s.data()), "");
        }
      }
    }
  }
}

// The modes reach the hardware (here: the emulator): FZ flushes a subnormal
// product, so the test above runs each configuration in a mode that would
// change dy*alpha's bits if relugrad did not pin FPCR.
TEST(FloatEnvironment, FpcrFlushToZeroChangesAPlainMultiply) {
  const uint64_t original = GetFpcr();
  volatile float tiny = 1e-38f, half = 0.5f;
  const float ieee = tiny * half;
  SetFpcr(uint64_t{1} << 24);
  const float flushed = tiny * half;
  SetFpcr(original);
  EXPECT_NE(ieee, 0.0f);
  EXPECT_EQ(flushed, 0.0f);
}
#else
TEST(FloatEnvironment, CallersMxcsrChangesNoBitAndIsLeftAsFound) {
  GTEST_SKIP() << "MXCSR exists on x86 and FPCR on AArch64 only";
}
#endif

}  // namespace
}  // namespace testing
}  // namespace relugrad
