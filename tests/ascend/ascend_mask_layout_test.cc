// The 910B blocked ReluV2 mask (relugrad_mask_to_blocked / relugrad_mask_from_blocked) against
// the golden re-derived from ops-nn's ReluV2 shape rule (activation/relu_v2/op_host/
// relu_v2_infershape.cpp: mask (N, ceil(C/16), H, W, 16) for float x in NCHW or NHWC) and the
// packbits golden (np.packbits(x > 0, bitorder="little")): pad C with zeros to C1*16, view the
// padded x as (N, C1, 16, H, W), transpose to (N, C1, H, W, 16), pack x > 0 LSB-first. The flat
// mask comes from relugrad_relu_forward with the cann_relugrad_v2 preset (x > 0) on every dtype.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "relugrad/relugrad.h"
#include "test_support.h"

namespace relugrad {
namespace testing {
namespace {

struct Shape {
  int64_t n, c, h, w;
};

// Ragged C (below, at, across and between multiples of 16), H, W and N, odd element counts.
const Shape kShapes[] = {{1, 1, 1, 1},  {1, 16, 1, 1}, {2, 17, 3, 5}, {3, 15, 1, 7},
                         {1, 33, 2, 3}, {2, 32, 3, 3}, {1, 5, 7, 9},  {4, 47, 1, 1},
                         {1, 1, 9, 11}, {2, 20, 5, 1}, {0, 17, 3, 5}, {3, 64, 2, 1}};

// x > 0 per element of x in its own order, from random bits with NaNs, zeros and infinities.
std::vector<unsigned char> RandomX(relugrad_dtype d, int64_t count, uint32_t seed) {
  const auto special = SpecialValues(d);
  std::mt19937_64 rng(seed);
  std::vector<uint64_t> bits(static_cast<size_t>(count));
  const uint64_t all = relugrad_dtype_size(d) == 8   ? ~uint64_t{0}
                       : relugrad_dtype_size(d) == 4 ? 0xffffffffu
                                                     : 0xffffu;
  for (auto& b : bits) b = (rng() % 4 == 0) ? special[rng() % special.size()] : (rng() & all);
  return Pack(d, bits);
}

// x > 0 from element i's bits: sign clear, not +0, not NaN (a NaN compares false).
bool GreaterThanZero(relugrad_dtype d, const unsigned char* x, int64_t i) {
  uint32_t b = 0, mag = 0x7fff, inf = 0x7c00;
  if (d == RELUGRAD_F32) {
    std::memcpy(&b, x + 4 * i, 4);
    mag = 0x7fffffff;
    inf = 0x7f800000;
  } else {
    uint16_t h;
    std::memcpy(&h, x + 2 * i, 2);
    b = h;
    if (d == RELUGRAD_BF16) inf = 0x7f80;
  }
  const uint32_t sign = mag + 1;
  return (b & sign) == 0 && b != 0 && (b & mag) <= inf;
}

// The golden: padded, transposed, packed; gt[i] is x > 0 for element i of x in `format` order.
std::vector<uint8_t> GoldenBlocked(relugrad_x_format format, const Shape& s,
                                   const std::vector<bool>& gt) {
  const int64_t c1 = (s.c + 15) / 16;
  // padded[n][c1][c0][h][w] (NCHW with C padded to c1*16, zeros in the padding).
  std::vector<bool> padded(static_cast<size_t>(s.n * c1 * 16 * s.h * s.w), false);
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t c = 0; c < s.c; ++c)
      for (int64_t h = 0; h < s.h; ++h)
        for (int64_t w = 0; w < s.w; ++w) {
          const int64_t src = format == RELUGRAD_X_NCHW ? ((n * s.c + c) * s.h + h) * s.w + w
                                                        : ((n * s.h + h) * s.w + w) * s.c + c;
          padded[static_cast<size_t>(((n * c1 * 16 + c) * s.h + h) * s.w + w)] = gt[src];
        }
  std::vector<bool> t;  // transpose (N, C1, C0, H, W) -> (N, C1, H, W, C0)
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t a = 0; a < c1; ++a)
      for (int64_t h = 0; h < s.h; ++h)
        for (int64_t w = 0; w < s.w; ++w)
          for (int64_t b = 0; b < 16; ++b)
            t.push_back(padded[static_cast<size_t>((((n * c1 + a) * 16 + b) * s.h + h) * s.w + w)]);
  std::vector<uint8_t> packed((t.size() + 7) / 8, 0);  // packbits, bitorder="little"
  for (size_t i = 0; i < t.size(); ++i)
    if (t[i]) packed[i / 8] = static_cast<uint8_t>(packed[i / 8] | (1u << (i % 8)));
  return packed;
}

std::string Name(relugrad_x_format f, const Shape& s) {
  return std::string(f == RELUGRAD_X_NCHW ? "NCHW" : "NHWC") + " " + std::to_string(s.n) + "x" +
         std::to_string(s.c) + "x" + std::to_string(s.h) + "x" + std::to_string(s.w);
}

TEST(AscendMaskLayout, BlockedBytesFollowTheShapeRule) {
  EXPECT_EQ(relugrad_mask_blocked_bytes(2, 17, 3, 5), 2 * 2 * 3 * 5 * 2);
  EXPECT_EQ(relugrad_mask_blocked_bytes(1, 16, 1, 1), 2);
  EXPECT_EQ(relugrad_mask_blocked_bytes(1, 0, 4, 4), 0);
  EXPECT_EQ(relugrad_mask_blocked_bytes(-1, 16, 1, 1), -1);
  EXPECT_EQ(relugrad_mask_blocked_bytes(int64_t{1} << 40, 16, int64_t{1} << 20, 16), -1);
}

TEST(AscendMaskLayout, ForwardMaskToBlockedIsTheGoldenAndRoundTrips) {
  relugrad_options o;
  relugrad_options_init(&o, RELUGRAD_PRESET_CANN_RELUGRAD_V2);
  for (relugrad_dtype d : {RELUGRAD_F32, RELUGRAD_F16, RELUGRAD_BF16}) {
    for (relugrad_x_format f : {RELUGRAD_X_NCHW, RELUGRAD_X_NHWC}) {
      uint32_t seed = 1;
      for (const Shape& s : kShapes) {
        SCOPED_TRACE(Name(f, s) + " " + relugrad_dtype_name(d));
        const int64_t count = s.n * s.c * s.h * s.w;
        const auto x = RandomX(d, count, seed++);
        std::vector<unsigned char> y(x.size());
        std::vector<uint8_t> flat(static_cast<size_t>(relugrad_mask_bytes(count)) + 1, 0xA5);
        ASSERT_EQ(relugrad_relu_forward(d, count, x.data(), y.data(), flat.data(), &o), RELUGRAD_OK)
            << relugrad_last_error();
        // x > 0 from the bits (the golden's comparison: NaN is not > 0).
        std::vector<bool> gt(static_cast<size_t>(count));
        for (int64_t i = 0; i < count; ++i) gt[i] = (flat[i / 8] >> (i % 8)) & 1;
        // The flat mask itself against x > 0, computed from the values.
        for (int64_t i = 0; i < count; ++i)
          ASSERT_EQ(gt[i], GreaterThanZero(d, x.data(), i)) << "flat bit " << i;

        const int64_t bytes = relugrad_mask_blocked_bytes(s.n, s.c, s.h, s.w);
        std::vector<uint8_t> blocked(static_cast<size_t>(bytes) + 1, 0x5A);  // +1: a sentinel
        ASSERT_EQ(relugrad_mask_to_blocked(f, s.n, s.c, s.h, s.w, flat.data(), blocked.data()),
                  RELUGRAD_OK)
            << relugrad_last_error();
        EXPECT_EQ(blocked.back(), 0x5A) << "wrote past the blocked mask";
        blocked.pop_back();
        ASSERT_EQ(blocked, GoldenBlocked(f, s, gt));

        std::vector<uint8_t> back(flat.size(), 0xC3);
        ASSERT_EQ(relugrad_mask_from_blocked(f, s.n, s.c, s.h, s.w, blocked.data(), back.data()),
                  RELUGRAD_OK)
            << relugrad_last_error();
        EXPECT_EQ(back.back(), 0xC3) << "wrote past the flat mask";
        back.back() = flat.back();  // the sentinel byte of flat (0xA5, untouched by forward)
        EXPECT_EQ(back, flat) << "the round trip changed the flat mask";
      }
    }
  }
}

TEST(AscendMaskLayout, ASetPaddingBitIsRefusedAndNothingIsWritten) {
  const Shape s{2, 17, 3, 5};
  std::vector<uint8_t> blocked(static_cast<size_t>(relugrad_mask_blocked_bytes(2, 17, 3, 5)), 0);
  // Channel 31 (C1 = 2, c0 = 15) of n = 1, h = 2, w = 4: a padding channel.
  const int64_t i = (((1 * 2 + 1) * s.h + 2) * s.w + 4) * 16 + 15;
  blocked[i / 8] = static_cast<uint8_t>(1u << (i % 8));
  std::vector<uint8_t> flat(static_cast<size_t>(relugrad_mask_bytes(2 * 17 * 3 * 5)), 0x77);
  EXPECT_EQ(
      relugrad_mask_from_blocked(RELUGRAD_X_NCHW, s.n, s.c, s.h, s.w, blocked.data(), flat.data()),
      RELUGRAD_INVALID_ARGUMENT);
  EXPECT_NE(std::string(relugrad_last_error()).find("padding bit of channel 31"), std::string::npos)
      << relugrad_last_error();
  for (uint8_t b : flat) ASSERT_EQ(b, 0x77);
}

TEST(AscendMaskLayout, BadArgumentsAreRefused) {
  uint8_t a[4] = {0}, b[4] = {0};
  EXPECT_EQ(relugrad_mask_to_blocked(static_cast<relugrad_x_format>(3), 1, 1, 1, 1, a, b),
            RELUGRAD_INVALID_ARGUMENT);
  EXPECT_EQ(relugrad_mask_to_blocked(RELUGRAD_X_NCHW, 1, -1, 1, 1, a, b),
            RELUGRAD_INVALID_ARGUMENT);
  EXPECT_EQ(relugrad_mask_to_blocked(RELUGRAD_X_NCHW, 1, 1, 1, 1, nullptr, b),
            RELUGRAD_INVALID_ARGUMENT);
  EXPECT_EQ(relugrad_mask_from_blocked(RELUGRAD_X_NHWC, 1, 1, 1, 1, a, nullptr),
            RELUGRAD_INVALID_ARGUMENT);
  EXPECT_EQ(relugrad_mask_from_blocked(RELUGRAD_X_NHWC, 0, 1, 1, 1, nullptr, nullptr), RELUGRAD_OK);
}

}  // namespace
}  // namespace testing
}  // namespace relugrad
