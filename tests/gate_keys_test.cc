// The kernels' gate keys (core/gate_keys.h, derived from the bounds' bits)
// pinned against the reference's gate (core/reference.h, plain compares on
// decoded values): for every dtype, gate, denormal mode and threshold
// rounding, and thresholds that are every 16-bit pattern, and for f32/f64 a
// large sample with subnormals, +-0, +-inf, their neighbours and values
// between two data-type values, key(s) >= gate_key_lo iff the reference gate
// is open for the non-NaN s, and key(s) <= gate_key_hi iff s lies below
// gate_max. Both sides are monotone in the key, so checking the keys on
// either side of each boundary, and every s for a smaller set of bounds,
// decides it.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/float_convert.h"
#include "core/gate_keys.h"
#include "core/reference.h"
#include "core/semantics.h"

namespace relugrad {
namespace {

constexpr Dtype kDtypes[] = {Dtype::kF16, Dtype::kBF16, Dtype::kF32, Dtype::kF64};

struct Range {
  int64_t key_ninf, key_pinf;
};

Range KeysOf(Dtype d) {
  switch (d) {
    case Dtype::kF16:
      return {OrderKey<Dtype::kF16>(0xfc00u), OrderKey<Dtype::kF16>(0x7c00u)};
    case Dtype::kBF16:
      return {OrderKey<Dtype::kBF16>(0xff80u), OrderKey<Dtype::kBF16>(0x7f80u)};
    case Dtype::kF32:
      return {OrderKey<Dtype::kF32>(0xff800000u), OrderKey<Dtype::kF32>(0x7f800000u)};
    case Dtype::kF64:
      return {OrderKey<Dtype::kF64>(0xfff0000000000000ull),
              OrderKey<Dtype::kF64>(0x7ff0000000000000ull)};
  }
  return {0, 0};
}

uint64_t BitsOfKey(Dtype d, int64_t key) {
  switch (d) {
    case Dtype::kF16:
      return BitsFromKey<Dtype::kF16>(static_cast<int16_t>(key));
    case Dtype::kBF16:
      return BitsFromKey<Dtype::kBF16>(static_cast<int16_t>(key));
    case Dtype::kF32:
      return BitsFromKey<Dtype::kF32>(static_cast<int32_t>(key));
    case Dtype::kF64:
      return BitsFromKey<Dtype::kF64>(key);
  }
  return 0;
}

std::string Name(Dtype d, const Rules& sem, double bound) {
  char buf[160];
  std::snprintf(buf, sizeof(buf), "dtype %d gate %d denormals %d rounding %d bound %a",
                static_cast<int>(d), static_cast<int>(sem.gate), static_cast<int>(sem.denormals),
                static_cast<int>(sem.threshold_rounding), bound);
  return buf;
}

// Every option combination the keys depend on.
std::vector<Rules> Modes() {
  std::vector<Rules> out;
  for (auto gate : {RELUGRAD_GATE_ZERO_IF_LE, RELUGRAD_GATE_PASS_IF_GT}) {
    for (auto den : {RELUGRAD_DENORMALS_IEEE, RELUGRAD_DENORMALS_FTZ_DAZ}) {
      for (auto r : {RELUGRAD_THRESHOLD_COMPUTE, RELUGRAD_THRESHOLD_DTYPE}) {
        Rules s;
        s.gate = gate;
        s.denormals = den;
        s.threshold_rounding = r;
        out.push_back(s);
      }
    }
  }
  return out;
}

// Open <=> key >= lo at the two keys around lo (and the ends of the range).
void CheckLoBoundary(Dtype d, const Rules& sem) {
  const Range r = KeysOf(d);
  const int64_t lo = GateKeyLo(d, sem);
  ASSERT_GE(lo, r.key_ninf) << Name(d, sem, sem.threshold);
  ASSERT_LE(lo, r.key_pinf + 1) << Name(d, sem, sem.threshold);
  if (lo <= r.key_pinf)
    ASSERT_TRUE(ReferenceGateOpen(d, BitsOfKey(d, lo), sem))
        << Name(d, sem, sem.threshold) << " lo " << lo;
  if (lo - 1 >= r.key_ninf)
    ASSERT_FALSE(ReferenceGateOpen(d, BitsOfKey(d, lo - 1), sem))
        << Name(d, sem, sem.threshold) << " lo-1 " << lo - 1;
}

void CheckHiBoundary(Dtype d, const Rules& sem) {
  const Range r = KeysOf(d);
  const int64_t hi = GateKeyHi(d, sem);
  ASSERT_GE(hi, r.key_ninf - 1) << Name(d, sem, sem.gate_max);
  ASSERT_LE(hi, r.key_pinf) << Name(d, sem, sem.gate_max);
  if (hi >= r.key_ninf)
    ASSERT_TRUE(ReferenceBelowGateMax(d, BitsOfKey(d, hi), sem))
        << Name(d, sem, sem.gate_max) << " hi " << hi;
  if (hi + 1 <= r.key_pinf)
    ASSERT_FALSE(ReferenceBelowGateMax(d, BitsOfKey(d, hi + 1), sem))
        << Name(d, sem, sem.gate_max) << " hi+1 " << hi + 1;
}

// Every non-NaN 16-bit s against both keys.
void CheckEvery16BitS(Dtype d, const Rules& sem) {
  const Range r = KeysOf(d);
  const int64_t lo = GateKeyLo(d, sem);
  const int64_t hi = sem.HasGateMax() ? GateKeyHi(d, sem) : r.key_pinf;
  for (int64_t k = r.key_ninf; k <= r.key_pinf; ++k) {
    const uint64_t s = BitsOfKey(d, k);
    Rules lower = sem;
    lower.gate_max = Rules::kNoGateMax;
    ASSERT_EQ(k >= lo, ReferenceGateOpen(d, s, lower))
        << Name(d, sem, sem.threshold) << " key " << k;
    ASSERT_EQ(k <= hi, ReferenceBelowGateMax(d, s, sem))
        << Name(d, sem, sem.gate_max) << " key " << k;
  }
}

// Bounds for 16-bit data: every non-NaN pattern's value, and the f32
// values just beside it (between two 16-bit values: compute rounding keeps
// them, data-type rounding moves them to one).
std::vector<double> Bounds16(Dtype d) {
  const Range r = KeysOf(d);
  std::vector<double> out;
  for (int64_t k = r.key_ninf; k <= r.key_pinf; ++k) {
    const double v = BitsToDouble(d, BitsOfKey(d, k));
    out.push_back(v);
    if (std::isfinite(v)) {
      const float f = static_cast<float>(v);
      out.push_back(std::nextafter(f, std::numeric_limits<float>::infinity()));
      out.push_back(std::nextafter(f, -std::numeric_limits<float>::infinity()));
    }
  }
  return out;
}

// Bounds for f32/f64: specials, subnormals, both zeros, the extremes and
// their neighbours in float and double, and seeded random patterns.
std::vector<double> BoundsWide(Dtype d) {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> seeds = {0.0,
                               -0.0,
                               inf,
                               -inf,
                               1.0,
                               -1.0,
                               0.75,
                               -1.5,
                               0.1,
                               -0.1,
                               0x1p-126,
                               -0x1p-126,
                               0x1p-149,
                               -0x1p-149,
                               0x1p-127,
                               -0x1p-140,
                               0x1p-1022,
                               -0x1p-1022,
                               0x1p-1074,
                               -0x1p-1074,
                               0x1p-1040,
                               3.4028234663852886e38,
                               -3.4028234663852886e38,
                               1e39,
                               -1e39,
                               1.7976931348623157e308,
                               -1.7976931348623157e308,
                               1e-45,
                               1e-40,
                               -1e-40,
                               1e-310,
                               -1e-310};
  std::vector<double> out;
  for (double v : seeds) {
    out.push_back(v);
    out.push_back(std::nextafter(v, inf));
    out.push_back(std::nextafter(v, -inf));
    const float f = static_cast<float>(v);
    out.push_back(std::nextafter(f, std::numeric_limits<float>::infinity()));
    out.push_back(std::nextafter(f, -std::numeric_limits<float>::infinity()));
  }
  std::mt19937_64 rng(20261201);
  for (int i = 0; i < 20000; ++i) {
    double v;
    if (d == Dtype::kF32) {
      const uint32_t bits = static_cast<uint32_t>(rng());
      v = BitsToDouble(d, bits);
      if (std::isnan(v)) continue;
      out.push_back(v);
      // Between this f32 and the next: only compute-type rounding of an f64
      // threshold keeps it, the f32 path rounds it.
      out.push_back(std::nextafter(v, inf));
    } else {
      const uint64_t bits = rng();
      v = BitsToDouble(d, bits);
      if (std::isnan(v)) continue;
      out.push_back(v);
      // Subnormals and tiny normals are rare among random patterns.
      out.push_back(BitsToDouble(d, bits & 0x801fffffffffffffull));
    }
  }
  std::vector<double> clean;
  for (double v : out)
    if (!std::isnan(v)) clean.push_back(v);
  return clean;
}

TEST(GateKeys, LowerKeyIsTheReferenceBoundary) {
  for (Dtype d : kDtypes) {
    const auto bounds = (d == Dtype::kF16 || d == Dtype::kBF16) ? Bounds16(d) : BoundsWide(d);
    for (Rules sem : Modes()) {
      for (double t : bounds) {
        sem.threshold = t;
        CheckLoBoundary(d, sem);
        if (HasFatalFailure()) return;
      }
    }
  }
}

TEST(GateKeys, UpperKeyIsTheReferenceBoundary) {
  for (Dtype d : kDtypes) {
    const auto bounds = (d == Dtype::kF16 || d == Dtype::kBF16) ? Bounds16(d) : BoundsWide(d);
    for (Rules sem : Modes()) {
      sem.threshold = -std::numeric_limits<double>::infinity();
      for (double h : bounds) {
        if (h == Rules::kNoGateMax) continue;  // +inf is "no bound"
        sem.gate_max = h;
        CheckHiBoundary(d, sem);
        if (HasFatalFailure()) return;
      }
    }
  }
}

// Every 16-bit s, for bounds where the rules meet: zeros, subnormals, the
// smallest normal, infinities, values between two 16-bit values.
TEST(GateKeys, Every16BitPatternAgreesWithTheReference) {
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> bounds = {
      0.0,      -0.0,     inf,       -inf,     1.0,       -1.5,         0x1p-24,
      -0x1p-24, 0x1p-133, -0x1p-133, 0x1p-126, -0x1p-126, 1e-40,        -1e-40,
      0x1p-14,  65504.0,  65520.0,   0.1,      -0.1,      1.0 + 0x1p-9, 3e38};
  for (Dtype d : {Dtype::kF16, Dtype::kBF16}) {
    for (Rules sem : Modes()) {
      for (double b : bounds) {
        sem.threshold = b;  // the lower bound alone
        sem.gate_max = Rules::kNoGateMax;
        CheckEvery16BitS(d, sem);
        sem.threshold = -inf;  // the upper bound alone
        sem.gate_max = b;
        CheckEvery16BitS(d, sem);
        if (HasFatalFailure()) return;
      }
    }
  }
}

// FillKeys writes the same keys MakeKernelParams hands the kernels.
TEST(GateKeys, KernelParamsCarryTheKeys) {
  for (Dtype d : kDtypes) {
    for (Rules sem : Modes()) {
      sem.threshold = 0.1;
      sem.gate_max = 6.0;
      const KernelParams p = MakeKernelParams(d, sem);
      EXPECT_EQ(p.gate_key_lo, GateKeyLo(d, sem));
      EXPECT_TRUE(p.gate_upper);
      EXPECT_EQ(p.gate_key_hi, GateKeyHi(d, sem));
    }
  }
}

}  // namespace
}  // namespace relugrad
