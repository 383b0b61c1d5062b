#include "support/block_kernel_tester.h"

#include <gtest/gtest.h>

#include <cstring>

#include "check/check_data.h"
#include "core/error.h"
#include "cpu/scoped_ieee_float.h"
#include "support/guarded.h"

namespace relugrad {
namespace testing {

using check::CompareBits;
using check::Pack;
using check::RandomBits;
using check::Reference;
using check::SpecialValues;

KernelParams ParamsFor(relugrad_dtype dtype, const relugrad_options& options) {
  Rules sem;
  EXPECT_EQ(ResolveOptions(&options, &sem), RELUGRAD_OK) << relugrad_last_error();
  return MakeKernelParams(ToDtype(dtype), sem);
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
    const auto special = SpecialValues(dtype_);
    std::vector<uint64_t> dy_bits, s_bits;
    for (uint64_t g : special) {
      for (uint64_t v : special) {
        dy_bits.push_back(v);
        s_bits.push_back(g);
      }
    }
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

}  // namespace testing
}  // namespace relugrad
