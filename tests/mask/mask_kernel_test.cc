// The mask path's kernels against the mask reference, bit for bit, on every
// SIMD target attainable here (dispatch capped at each), every configuration
// of AllConfigs() and every dtype: special values, every n from 0 to 1100,
// misalignments of each pointer, sentinels around every output, in place,
// large arrays; and the contract that matters to users:
// relu_grad_mask(dy, forward_mask(x)) == relu_grad(dy, x).
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "mask_test_support.h"
#include "relugrad/relugrad.h"
#include "test_support.h"

namespace relugrad {
namespace testing {
namespace {

class MaskKernelTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    isa_ = std::make_unique<ScopedIsa>(GetParam());
    ASSERT_EQ(std::string(relugrad_isa_selected()), GetParam())
        << "the ISA cap did not take effect";
  }
  void TearDown() override { isa_.reset(); }
  std::unique_ptr<ScopedIsa> isa_;
};

struct Offsets {
  size_t in = 0, out = 0, mask = 0;
};

// Forward at the given byte offsets (out == SIZE_MAX: in place on x).
void CheckForward(relugrad_dtype d, const relugrad_options& o, const Bytes& x, Offsets off,
                  bool in_place, const std::string& what) {
  const size_t bytes = x.size();
  const size_t n = bytes / relugrad_dtype_size(d);
  Bytes ey, em;
  ReferenceForward(d, x, o, &ey, &em);
  Guarded gx(bytes, off.in, 0), gy(bytes, off.out, 0x5A), gm(em.size(), off.mask, 0x5A);
  if (bytes > 0)
    std::memcpy(gx.data(), x.data(), bytes);  // reliability: x.data() is NULL when empty (UBSan)
  unsigned char* y = in_place ? gx.data() : gy.data();
  ASSERT_EQ(relugrad_relu_forward(d, static_cast<int64_t>(n), gx.data(), y, gm.data(), &o),
            RELUGRAD_OK)
      << relugrad_last_error();
  ASSERT_EQ(CompareBits(d, ey.data(), y, n, x.data(), x.data()), "") << what << " (y)";
  ASSERT_EQ(CompareMask(em, gm.data(), n), "") << what;
  if (!in_place && bytes > 0)
    ASSERT_EQ(std::memcmp(gx.data(), x.data(), bytes), 0)
        << what << ": x changed";  // reliability: no memcmp on NULL
  ASSERT_EQ(gx.CheckGuards(), "") << what << " (x)";
  ASSERT_EQ(gy.CheckGuards(), "") << what << " (y)";
  ASSERT_EQ(gm.CheckGuards(), "") << what << " (mask)";
}

// Backward from `mask` at the given offsets; in place writes dx over dy.
void CheckGrad(relugrad_dtype d, const relugrad_options& o, const Bytes& dy, const Bytes& mask,
               Offsets off, bool in_place, const std::string& what) {
  const size_t bytes = dy.size();
  const size_t n = bytes / relugrad_dtype_size(d);
  const Bytes expected = ReferenceGradMask(d, dy, mask, o);
  Guarded gdy(bytes, off.in, 0), gdx(bytes, off.out, 0x5A), gm(mask.size(), off.mask, 0);
  if (bytes > 0) std::memcpy(gdy.data(), dy.data(), bytes);  // reliability: no memcpy from NULL
  if (!mask.empty()) std::memcpy(gm.data(), mask.data(), mask.size());
  unsigned char* dx = in_place ? gdy.data() : gdx.data();
  ASSERT_EQ(relugrad_relu_grad_mask(d, static_cast<int64_t>(n), gdy.data(), gm.data(), dx, &o),
            RELUGRAD_OK)
      << relugrad_last_error();
  ASSERT_EQ(CompareBits(d, expected.data(), dx, n), "") << what;
  if (!mask.empty())
    ASSERT_EQ(std::memcmp(gm.data(), mask.data(), mask.size()), 0)
        << what << ": mask changed";  // reliability
  ASSERT_EQ(gdy.CheckGuards(), "") << what << " (dy)";
  ASSERT_EQ(gdx.CheckGuards(), "") << what << " (dx)";
  ASSERT_EQ(gm.CheckGuards(), "") << what << " (mask)";
}

// relu_grad_mask(dy, forward_mask(x)) == relu_grad(dy, x), both by the library.
void CheckEquivalence(relugrad_dtype d, const relugrad_options& o, const Bytes& dy, const Bytes& x,
                      const std::string& what) {
  const size_t n = dy.size() / relugrad_dtype_size(d);
  Bytes y(x.size()), mask(static_cast<size_t>(relugrad_mask_bytes(static_cast<int64_t>(n)))),
      a(dy.size()), b(dy.size());
  ASSERT_EQ(relugrad_relu_forward(d, static_cast<int64_t>(n), x.data(), y.data(), mask.data(), &o),
            RELUGRAD_OK);
  ASSERT_EQ(
      relugrad_relu_grad_mask(d, static_cast<int64_t>(n), dy.data(), mask.data(), a.data(), &o),
      RELUGRAD_OK);
  ASSERT_EQ(relugrad_relu_grad(d, static_cast<int64_t>(n), dy.data(), x.data(), b.data(), &o),
            RELUGRAD_OK);
  ASSERT_EQ(CompareBits(d, b.data(), a.data(), n, dy.data(), x.data()), "")
      << what << ": mask path != gate-from-x path";
}

TEST_P(MaskKernelTest, SpecialValueCrossProduct) {
  for (relugrad_dtype d : kAllDtypes) {
    const auto [dy_bits, x_bits] = SpecialValuePairs(d);
    const Bytes dy = Pack(d, dy_bits), x = Pack(d, x_bits);
    for (const Config& c : AllConfigs()) {
      const std::string what = c.name + " " + relugrad_dtype_name(d);
      CheckForward(d, c.options, x, {}, false, what);
      Bytes ey, em;
      ReferenceForward(d, x, c.options, &ey, &em);
      CheckGrad(d, c.options, dy, em, {}, false, what);
      CheckGrad(d, c.options, dy, RandomMask(dy_bits.size(), 5), {}, false, what + " random mask");
      CheckEquivalence(d, c.options, dy, x, what);
      if (HasFatalFailure()) return;
    }
  }
}

TEST_P(MaskKernelTest, EveryLengthUpTo1100) {
  const uint64_t seed = 4321;
  for (relugrad_dtype d : kAllDtypes) {
    const size_t es = relugrad_dtype_size(d);
    const Bytes dy_all = Pack(d, RandomBits(d, 1100, seed)),
                x_all = Pack(d, RandomBits(d, 1100, seed + 1));
    const auto configs = AllConfigs();
    for (size_t n = 0; n <= 1100; ++n) {
      // Rotate configurations and offsets so every n sees a different
      // alignment and rule set without a cubic sweep.
      const Config& c = configs[n % configs.size()];
      const Bytes dy(dy_all.begin(), dy_all.begin() + n * es),
          x(x_all.begin(), x_all.begin() + n * es);
      const size_t off = (n * es) % 64 / es * es;
      const Offsets o{off, (n * 7 * es) % 64, n % 64};
      const std::string what = c.name + " " + relugrad_dtype_name(d) + " n=" + std::to_string(n) +
                               " seed=" + std::to_string(seed);
      CheckForward(d, c.options, x, o, false, what);
      CheckGrad(d, c.options, dy, RandomMask(n, n), o, false, what);
      CheckEquivalence(d, c.options, dy, x, what);
      if (HasFatalFailure()) return;
    }
  }
}

TEST_P(MaskKernelTest, EveryMisalignmentOfEachPointer) {
  for (relugrad_dtype d : kAllDtypes) {
    const size_t es = relugrad_dtype_size(d);
    for (size_t n : {size_t{67}, size_t{1000}}) {
      const Bytes dy = Pack(d, RandomBits(d, n, 99)), x = Pack(d, RandomBits(d, n, 100));
      const Bytes mask = RandomMask(n, 101);
      for (const Config& c : {AllConfigs()[0], AllConfigs()[1], AllConfigs()[8]}) {
        for (size_t off = 0; off < 64; off += es) {
          const std::string what = c.name + " " + relugrad_dtype_name(d) +
                                   " n=" + std::to_string(n) + " offset=" + std::to_string(off);
          CheckForward(d, c.options, x, {off, 0, 0}, false, "x " + what);
          CheckForward(d, c.options, x, {0, off, 0}, false, "y " + what);
          CheckGrad(d, c.options, dy, mask, {off, 0, 0}, false, "dy " + what);
          CheckGrad(d, c.options, dy, mask, {0, off, 0}, false, "dx " + what);
          if (HasFatalFailure()) return;
        }
        for (size_t off = 0; off < 64; ++off) {  // the mask is byte-aligned only
          CheckForward(d, c.options, x, {0, 0, off}, false, "mask offset " + std::to_string(off));
          CheckGrad(d, c.options, dy, mask, {0, 0, off}, false,
                    "mask offset " + std::to_string(off));
          if (HasFatalFailure()) return;
        }
      }
    }
  }
}

TEST_P(MaskKernelTest, InPlace) {
  for (relugrad_dtype d : kAllDtypes) {
    for (size_t n : {size_t{1}, size_t{31}, size_t{1029}, size_t{20000}}) {
      const Bytes dy = Pack(d, RandomBits(d, n, n)), x = Pack(d, RandomBits(d, n, n + 1));
      for (const Config& c : AllConfigs()) {
        const std::string what = c.name + " " + relugrad_dtype_name(d) + " n=" + std::to_string(n);
        CheckForward(d, c.options, x, {8, 0, 3}, true, "y=x " + what);
        CheckGrad(d, c.options, dy, RandomMask(n, n + 2), {8, 0, 3}, true, "dx=dy " + what);
        if (HasFatalFailure()) return;
      }
    }
  }
}

TEST_P(MaskKernelTest, LargeArrays) {
  for (relugrad_dtype d : kAllDtypes) {
    for (size_t n : {size_t{1} << 16, (size_t{1} << 18) + 13}) {
      const Bytes dy = Pack(d, RandomBits(d, n, 7 * n)), x = Pack(d, RandomBits(d, n, 7 * n + 1));
      for (const Config& c : {AllConfigs()[0], AllConfigs()[1], AllConfigs()[8]}) {
        const std::string what = c.name + " " + relugrad_dtype_name(d) + " n=" + std::to_string(n);
        CheckForward(d, c.options, x, {relugrad_dtype_size(d) * (n % 2), 0, 1}, false, what);
        CheckGrad(d, c.options, dy, RandomMask(n, n), {0, 8, 1}, false, what);
        CheckEquivalence(d, c.options, dy, x, what);
        if (HasFatalFailure()) return;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Targets, MaskKernelTest, ::testing::ValuesIn(TargetsToTest()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
}  // namespace testing
}  // namespace relugrad
