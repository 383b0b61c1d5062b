#include "support/block_kernel_tester.h"

#include <gtest/gtest.h>

#include <cstring>

#include "check/check_data.h"
#include "core/error.h"
#include "core/mask_reference.h"
#include "cpu/scoped_ieee_float.h"
#include "support/guarded.h"
#include "test_support.h"

namespace relugrad {
namespace testing {

using check::CompareBits;
using check::Hex;
using check::Pack;
using check::RandomBits;
using check::Reference;
using check::SpecialValues;

Rules RulesFor(const relugrad_options& options) {
  Rules rules;
  EXPECT_EQ(ResolveOptions(&options, &rules), RELUGRAD_OK) << relugrad_last_error();
  return rules;
}

KernelParams ParamsFor(relugrad_dtype dtype, const relugrad_options& options) {
  return MakeKernelParams(ToDtype(dtype), RulesFor(options));
}

std::string BlockKernelTester::RunPlaced(BlockKernel kernel, const KernelParams& p,
                                         const std::vector<unsigned char>& dy,
                                         const std::vector<unsigned char>& s, size_t dy_off,
                                         size_t s_off, size_t dx_off, size_t begin) const {
  const size_t es = relugrad_dtype_size(dtype_);
  const size_t n = dy.size() / es;
  const Guarded a(dy, dy_off), b(s, s_off);
  Guarded c(dy.size(), dx_off, kSentinel);
  {
    ScopedIeeeFloat ieee(KernelMxcsr(p));
    kernel(p, a.data(), b.data(), c.data(), static_cast<int64_t>(begin), static_cast<int64_t>(n));
  }
  std::string where = " (n=" + std::to_string(n) + " begin=" + std::to_string(begin) +
                      " offsets dy/s/dx=" + std::to_string(dy_off) + "/" + std::to_string(s_off) +
                      "/" + std::to_string(dx_off) + ")";
  const auto expected = Reference(dtype_, dy, s, options_);
  const std::string diff = CompareBits(dtype_, expected.data() + begin * es, c.data() + begin * es,
                                       n - begin, dy.data() + begin * es, s.data() + begin * es);
  if (!diff.empty()) return diff + where;
  for (size_t i = 0; i < begin * es; ++i) {
    if (c.data()[i] != kSentinel) return "write before begin" + where;
  }
  const std::string guards = c.CheckGuards();
  return guards.empty() ? "" : guards + where;
}

void BlockKernelTester::Test(BlockKernel kernel, const std::string& name) const {
  ASSERT_NE(kernel, nullptr) << name;
  const KernelParams p = ParamsFor(dtype_, options_);
  const size_t es = relugrad_dtype_size(dtype_);
  SCOPED_TRACE(name + " " + relugrad_dtype_name(dtype_) + " seed=" + std::to_string(seed_));

  // Every special value of dy against every special value of s.
  {
    const auto [dy_bits, s_bits] = SpecialValuePairs(dtype_);
    const auto dy = Pack(dtype_, dy_bits), s = Pack(dtype_, s_bits);
    ASSERT_EQ(RunPlaced(kernel, p, dy, s, 0, 0, 0, 0), "") << "special values";
    ASSERT_EQ(RunPlaced(kernel, p, dy, s, es, 3 * es % 64, 5 * es % 64, 1), "")
        << "special values, misaligned";
  }

  // Every length up to kMaxSweepLength, each pointer at its own offset
  // within a line, from the start and from a ragged begin.
  const auto dy_all = Pack(dtype_, RandomBits(dtype_, kMaxSweepLength, seed_));
  const auto s_all = Pack(dtype_, RandomBits(dtype_, kMaxSweepLength, seed_ + 1));
  for (size_t n = 0; n <= kMaxSweepLength; ++n) {
    const std::vector<unsigned char> dy(dy_all.begin(), dy_all.begin() + n * es);
    const std::vector<unsigned char> s(s_all.begin(), s_all.begin() + n * es);
    const size_t off = n * es % 64;
    ASSERT_EQ(RunPlaced(kernel, p, dy, s, 0, 0, 0, 0), "") << "aligned";
    ASSERT_EQ(RunPlaced(kernel, p, dy, s, off, (64 - off) % 64, n * 7 * es % 64, 0), "");
    if (n > 0) ASSERT_EQ(RunPlaced(kernel, p, dy, s, 0, 0, 0, n * 3 / 4), "") << "sub-range";
  }

  // Each pointer alone at every element offset within a line.
  for (size_t n : {size_t{67}, size_t{1000}}) {
    const auto dy = Pack(dtype_, RandomBits(dtype_, n, seed_ + 2));
    const auto s = Pack(dtype_, RandomBits(dtype_, n, seed_ + 3));
    for (size_t off = 0; off < 64; off += es) {
      ASSERT_EQ(RunPlaced(kernel, p, dy, s, off, 0, 0, 0), "") << "dy offset";
      ASSERT_EQ(RunPlaced(kernel, p, dy, s, 0, off, 0, 0), "") << "s offset";
      ASSERT_EQ(RunPlaced(kernel, p, dy, s, 0, 0, off, 0), "") << "dx offset";
    }
  }

  if (large_) {
    const size_t n = (size_t{1} << 16) + 13;
    const auto dy = Pack(dtype_, RandomBits(dtype_, n, seed_ + 4));
    const auto s = Pack(dtype_, RandomBits(dtype_, n, seed_ + 5));
    ASSERT_EQ(RunPlaced(kernel, p, dy, s, 0, 0, 0, 0), "") << "large";
    ASSERT_EQ(RunPlaced(kernel, p, dy, s, es, 2 * es, 3 * es, 11), "") << "large, misaligned";
  }

  if (streaming_) return;
  // In place: dx is dy, or dx is s (the cached kernels' contract).
  for (size_t n : {size_t{1}, size_t{31}, size_t{1029}}) {
    const auto dy = Pack(dtype_, RandomBits(dtype_, n, seed_ + 6));
    const auto s = Pack(dtype_, RandomBits(dtype_, n, seed_ + 7));
    const auto expected = Reference(dtype_, dy, s, options_);
    ScopedIeeeFloat ieee(KernelMxcsr(p));
    auto work = dy;
    kernel(p, work.data(), s.data(), work.data(), 0, static_cast<int64_t>(n));
    ASSERT_EQ(CompareBits(dtype_, expected.data(), work.data(), n), "") << "dx = dy, n=" << n;
    work = s;
    kernel(p, dy.data(), work.data(), work.data(), 0, static_cast<int64_t>(n));
    ASSERT_EQ(CompareBits(dtype_, expected.data(), work.data(), n), "") << "dx = s, n=" << n;
  }
}

std::string MaskForwardKernelTester::RunPlaced(ForwardKernel kernel, const KernelParams& p,
                                               const Rules& rules,
                                               const std::vector<unsigned char>& x, size_t x_off,
                                               size_t y_off, size_t mask_off, size_t begin,
                                               bool in_place) const {
  const size_t es = relugrad_dtype_size(dtype_);
  const size_t n = x.size() / es, mask_bytes = (n + 7) / 8;
  Guarded gx(x, x_off), gy(x.size(), y_off, kSentinel), gm(mask_bytes, mask_off, kSentinel);
  Guarded& y = in_place ? gx : gy;
  {
    ScopedIeeeFloat ieee(KernelMxcsr(p));
    kernel(p, gx.data(), y.data(), gm.data(), static_cast<int64_t>(begin), static_cast<int64_t>(n),
           streaming_);
  }
  const std::string where = " (n=" + std::to_string(n) + " begin=" + std::to_string(begin) +
                            " offsets x/y/mask=" + std::to_string(x_off) + "/" +
                            (in_place ? std::string("x") : std::to_string(y_off)) + "/" +
                            std::to_string(mask_off) + ")";
  std::vector<unsigned char> want_y(x.size()), want_mask(mask_bytes);
  ReferenceForwardRun(ToDtype(dtype_), static_cast<int64_t>(n), x.data(), want_y.data(),
                      want_mask.data(), rules);
  const std::string diff = CompareBits(dtype_, want_y.data() + begin * es, y.data() + begin * es,
                                       n - begin, x.data() + begin * es, x.data() + begin * es);
  if (!diff.empty()) return "y: " + diff + where;
  for (size_t i = begin / 8; i < mask_bytes; ++i) {
    if (gm.data()[i] != want_mask[i])
      return "mask byte " + std::to_string(i) + ": " + Hex(gm.data()[i]) + ", expected " +
             Hex(want_mask[i]) + where;
  }
  // Before begin: y untouched (x's bytes in place, sentinels otherwise), the
  // mask's bytes untouched; x untouched when y is elsewhere.
  for (size_t i = 0; i < begin * es; ++i) {
    if (y.data()[i] != (in_place ? x[i] : kSentinel)) return "y: write before begin" + where;
  }
  for (size_t i = 0; i < begin / 8; ++i) {
    if (gm.data()[i] != kSentinel) return "mask: write before begin" + where;
  }
  if (!in_place && !x.empty() && std::memcmp(gx.data(), x.data(), x.size()) != 0)
    return "x was written" + where;
  const std::string guards = y.CheckGuards() + gm.CheckGuards() + gx.CheckGuards();
  return guards.empty() ? "" : guards + where;
}

void MaskForwardKernelTester::Test(ForwardKernel kernel, const std::string& name) const {
  ASSERT_NE(kernel, nullptr) << name;
  const KernelParams p = ParamsFor(dtype_, options_);
  const Rules rules = RulesFor(options_);
  const size_t es = relugrad_dtype_size(dtype_);
  SCOPED_TRACE(name + " " + relugrad_dtype_name(dtype_) + " seed=" + std::to_string(seed_));
  const bool in_place = !streaming_;  // the in-place runs, where the kernel admits them

  // Every special value, from the start and from the second mask byte.
  {
    const auto x = Pack(dtype_, SpecialValues(dtype_));
    ASSERT_EQ(RunPlaced(kernel, p, rules, x, 0, 0, 0, 0, false), "") << "special values";
    ASSERT_EQ(RunPlaced(kernel, p, rules, x, es, 3 * es % 64, 1, 8, false), "")
        << "special values, misaligned";
    if (in_place) ASSERT_EQ(RunPlaced(kernel, p, rules, x, es, 0, 5, 0, true), "");
  }

  // Every length up to kMaxSweepLength, each array at its own offset, from
  // the start and from a begin on a mask byte.
  const auto x_all = Pack(dtype_, RandomBits(dtype_, kMaxSweepLength, seed_));
  for (size_t n = 0; n <= kMaxSweepLength; ++n) {
    const std::vector<unsigned char> x(x_all.begin(), x_all.begin() + n * es);
    const size_t off = n * es % 64;
    ASSERT_EQ(RunPlaced(kernel, p, rules, x, 0, 0, 0, 0, false), "") << "aligned";
    ASSERT_EQ(RunPlaced(kernel, p, rules, x, off, (64 - off) % 64, n % 64, 0, false), "");
    ASSERT_EQ(RunPlaced(kernel, p, rules, x, 0, 0, 0, n * 3 / 4 / 8 * 8, false), "") << "sub-range";
    if (in_place) ASSERT_EQ(RunPlaced(kernel, p, rules, x, off, 0, 0, 0, true), "") << "in place";
  }

  // Each array alone at every element offset within a line (the mask at
  // every byte offset).
  for (size_t n : {size_t{67}, size_t{1000}}) {
    const auto x = Pack(dtype_, RandomBits(dtype_, n, seed_ + 2));
    for (size_t off = 0; off < 64; off += es) {
      ASSERT_EQ(RunPlaced(kernel, p, rules, x, off, 0, 0, 0, false), "") << "x offset";
      ASSERT_EQ(RunPlaced(kernel, p, rules, x, 0, off, 0, 0, false), "") << "y offset";
    }
    for (size_t off = 0; off < 64; ++off) {
      ASSERT_EQ(RunPlaced(kernel, p, rules, x, 0, 0, off, 0, false), "") << "mask offset";
    }
    if (in_place) ASSERT_EQ(RunPlaced(kernel, p, rules, x, es, 0, 3, 8, true), "") << "in place";
  }

  if (large_) {
    const size_t n = (size_t{1} << 16) + 13;
    const auto x = Pack(dtype_, RandomBits(dtype_, n, seed_ + 4));
    ASSERT_EQ(RunPlaced(kernel, p, rules, x, 0, 0, 0, 0, false), "") << "large";
    ASSERT_EQ(RunPlaced(kernel, p, rules, x, es, 3 * es, 7, 16, false), "") << "large, misaligned";
  }
}

namespace {

// ceil(n / 8) random mask bytes, the padding bits of the last one zero.
std::vector<unsigned char> RandomMaskBytes(size_t n, uint64_t seed) {
  std::vector<unsigned char> mask((n + 7) / 8);
  uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
  for (unsigned char& byte : mask) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    byte = static_cast<unsigned char>(state >> 56);
  }
  if (n % 8 != 0) mask.back() = static_cast<unsigned char>(mask.back() & ((1u << (n % 8)) - 1u));
  return mask;
}

}  // namespace

std::string MaskGradKernelTester::RunPlaced(GradMaskKernel kernel, const KernelParams& p,
                                            const Rules& rules,
                                            const std::vector<unsigned char>& dy,
                                            const std::vector<unsigned char>& mask, size_t dy_off,
                                            size_t dx_off, size_t mask_off, size_t begin,
                                            bool in_place) const {
  const size_t es = relugrad_dtype_size(dtype_);
  const size_t n = dy.size() / es;
  Guarded gdy(dy, dy_off), gdx(dy.size(), dx_off, kSentinel), gm(mask, mask_off);
  Guarded& dx = in_place ? gdy : gdx;
  {
    ScopedIeeeFloat ieee(KernelMxcsr(p));
    kernel(p, gdy.data(), gm.data(), dx.data(), static_cast<int64_t>(begin),
           static_cast<int64_t>(n), streaming_);
  }
  const std::string where = " (n=" + std::to_string(n) + " begin=" + std::to_string(begin) +
                            " offsets dy/dx/mask=" + std::to_string(dy_off) + "/" +
                            (in_place ? std::string("dy") : std::to_string(dx_off)) + "/" +
                            std::to_string(mask_off) + ")";
  std::vector<unsigned char> want(dy.size());
  ReferenceGradMaskRun(ToDtype(dtype_), static_cast<int64_t>(n), dy.data(), mask.data(),
                       want.data(), rules);
  const std::string diff = CompareBits(dtype_, want.data() + begin * es, dx.data() + begin * es,
                                       n - begin, dy.data() + begin * es, dy.data() + begin * es);
  if (!diff.empty()) return "dx: " + diff + where;
  for (size_t i = 0; i < begin * es; ++i) {
    if (dx.data()[i] != (in_place ? dy[i] : kSentinel)) return "dx: write before begin" + where;
  }
  if (!in_place && !dy.empty() && std::memcmp(gdy.data(), dy.data(), dy.size()) != 0)
    return "dy was written" + where;
  if (!mask.empty() && std::memcmp(gm.data(), mask.data(), mask.size()) != 0)
    return "the mask was written" + where;
  const std::string guards = dx.CheckGuards() + gm.CheckGuards() + gdy.CheckGuards();
  return guards.empty() ? "" : guards + where;
}

void MaskGradKernelTester::Test(GradMaskKernel kernel, const std::string& name) const {
  ASSERT_NE(kernel, nullptr) << name;
  const KernelParams p = ParamsFor(dtype_, options_);
  const Rules rules = RulesFor(options_);
  const size_t es = relugrad_dtype_size(dtype_);
  SCOPED_TRACE(name + " " + relugrad_dtype_name(dtype_) + " seed=" + std::to_string(seed_));
  const bool in_place = !streaming_;

  // Every special dy under an open and a closed bit each.
  {
    const auto special = SpecialValues(dtype_);
    std::vector<uint64_t> bits(special);
    bits.insert(bits.end(), special.begin(), special.end());
    const auto dy = Pack(dtype_, bits);
    std::vector<unsigned char> mask((bits.size() + 7) / 8, 0);
    for (size_t i = 0; i < special.size(); ++i)
      mask[i / 8] |= static_cast<unsigned char>(1u << (i % 8));
    ASSERT_EQ(RunPlaced(kernel, p, rules, dy, mask, 0, 0, 0, 0, false), "") << "special values";
    ASSERT_EQ(RunPlaced(kernel, p, rules, dy, mask, es, 3 * es % 64, 1, 8, false), "")
        << "special values, misaligned";
    if (in_place) ASSERT_EQ(RunPlaced(kernel, p, rules, dy, mask, es, 0, 5, 0, true), "");
  }

  const auto dy_all = Pack(dtype_, RandomBits(dtype_, kMaxSweepLength, seed_));
  for (size_t n = 0; n <= kMaxSweepLength; ++n) {
    const std::vector<unsigned char> dy(dy_all.begin(), dy_all.begin() + n * es);
    const auto mask = RandomMaskBytes(n, seed_ + n);
    const size_t off = n * es % 64;
    ASSERT_EQ(RunPlaced(kernel, p, rules, dy, mask, 0, 0, 0, 0, false), "") << "aligned";
    ASSERT_EQ(RunPlaced(kernel, p, rules, dy, mask, off, (64 - off) % 64, n % 64, 0, false), "");
    ASSERT_EQ(RunPlaced(kernel, p, rules, dy, mask, 0, 0, 0, n * 3 / 4 / 8 * 8, false), "")
        << "sub-range";
    if (in_place)
      ASSERT_EQ(RunPlaced(kernel, p, rules, dy, mask, off, 0, 0, 0, true), "") << "in place";
  }

  for (size_t n : {size_t{67}, size_t{1000}}) {
    const auto dy = Pack(dtype_, RandomBits(dtype_, n, seed_ + 2));
    const auto mask = RandomMaskBytes(n, seed_ + 3);
    for (size_t off = 0; off < 64; off += es) {
      ASSERT_EQ(RunPlaced(kernel, p, rules, dy, mask, off, 0, 0, 0, false), "") << "dy offset";
      ASSERT_EQ(RunPlaced(kernel, p, rules, dy, mask, 0, off, 0, 0, false), "") << "dx offset";
    }
    for (size_t off = 0; off < 64; ++off) {
      ASSERT_EQ(RunPlaced(kernel, p, rules, dy, mask, 0, 0, off, 0, false), "") << "mask offset";
    }
    if (in_place)
      ASSERT_EQ(RunPlaced(kernel, p, rules, dy, mask, es, 0, 3, 8, true), "") << "in place";
  }

  if (large_) {
    const size_t n = (size_t{1} << 16) + 13;
    const auto dy = Pack(dtype_, RandomBits(dtype_, n, seed_ + 4));
    const auto mask = RandomMaskBytes(n, seed_ + 5);
    ASSERT_EQ(RunPlaced(kernel, p, rules, dy, mask, 0, 0, 0, 0, false), "") << "large";
    ASSERT_EQ(RunPlaced(kernel, p, rules, dy, mask, es, 3 * es, 7, 16, false), "")
        << "large, misaligned";
  }
}

}  // namespace testing
}  // namespace relugrad
