// The C++ wrappers of the mask path (relugrad.hpp): typed spans, length
// checks as exceptions, presets. Public headers only.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "relugrad/relugrad.hpp"

namespace {

TEST(MaskCppApi, ForwardAndBackward) {
  std::vector<float> x = {1, -2, NAN, 0, -0.0f, 3, -1, 5, 7}, y(9),
                     dy = {1, 2, 3, 4, 5, 6, 7, 8, 9}, dx(9);
  std::vector<uint8_t> mask(relugrad::mask_bytes(x.size()));
  ASSERT_EQ(mask.size(), 2u);
  relugrad::relu_forward<float>(x, y, mask);  // torch: the NaN gate is open
  EXPECT_EQ(mask[0], 0xA5);
  EXPECT_EQ(mask[1], 0x01);
  EXPECT_TRUE(std::isnan(y[2]));
  EXPECT_EQ(y[1], 0.0f);
  EXPECT_FALSE(std::signbit(y[4]));  // -0 -> +0 (closed gate)
  relugrad::relu_forward<float>(x, y, mask, relugrad::Options().keep_negative_zero(true));
  EXPECT_TRUE(std::signbit(y[4]) && y[4] == 0.0f);  // torch.relu: -0 stays -0
  EXPECT_FALSE(std::signbit(y[1]));                 // -2 -> +0 still
  relugrad::relu_forward<float>(x, y, mask);
  relugrad::relu_grad_mask<float>(dy, mask, dx);
  EXPECT_EQ(dx, (std::vector<float>{1, 0, 3, 0, 0, 6, 0, 8, 9}));
  relugrad::relu_grad_mask<float>(dy, mask, dy);  // in place
  EXPECT_EQ(dy, dx);
  // tensorflow: the NaN gate is closed, y keeps the NaN.
  relugrad::relu_forward<float>(x, y, mask, relugrad::Options(relugrad::Preset::kTensorflow));
  EXPECT_EQ(mask[0], 0xA1);
  EXPECT_TRUE(std::isnan(y[2]));
  // Leaky: onednn with alpha.
  relugrad::relu_forward<float>(x, y, mask,
                                relugrad::Options(relugrad::Preset::kOnednn).alpha(0.5));
  EXPECT_EQ(y[1], -1.0f);
  std::vector<uint8_t> short_mask(1);
  EXPECT_THROW(relugrad::relu_forward<float>(x, y, short_mask), relugrad::InvalidArgument);
  EXPECT_THROW(relugrad::relu_grad_mask<float>(dy, short_mask, dx), relugrad::InvalidArgument);
  std::vector<relugrad::bf16> b = {{0x3f80}, {0xbf80}}, bo(2);
  std::vector<uint8_t> bm(1);
  relugrad::relu_forward<relugrad::bf16>(b, bo, bm);
  EXPECT_EQ(bm[0], 0x01);
  EXPECT_EQ(bo[1].bits, 0);
}

}  // namespace
