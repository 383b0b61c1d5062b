// relugrad::Plan (relugrad.hpp): RAII over relugrad_plan, typed runs that
// check the element type, the op and the lengths, create-time errors as the
// one-shot calls' exceptions.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "relugrad/relugrad.hpp"

namespace {

TEST(CppPlan, TypedRunsMovesAndErrors) {
  std::vector<float> dy = {1, -2, 3, -4}, x = {1, 0, -1, NAN}, dx(4);
  relugrad::Plan plan = relugrad::Plan::of<float>(relugrad::Op::kReluGrad);
  EXPECT_EQ(plan.op(), relugrad::Op::kReluGrad);
  EXPECT_EQ(plan.dtype(), RELUGRAD_F32);
  plan.relu_grad<float>(dy, x, dx);
  EXPECT_EQ(dx, (std::vector<float>{1, 0, 0, -4}));  // torch: NaN gate passes
  // Moved: the new owner runs, the old one holds nothing and throws.
  relugrad::Plan moved = std::move(plan);
  std::fill(dx.begin(), dx.end(), 9.0f);
  moved.relu_grad<float>(dy, x, dx);
  EXPECT_EQ(dx, (std::vector<float>{1, 0, 0, -4}));
  EXPECT_THROW(plan.relu_grad<float>(dy, x, dx), relugrad::InvalidArgument);  // NOLINT: moved
  plan = relugrad::Plan(relugrad::Op::kReluGrad, RELUGRAD_F32,
                        relugrad::Options(relugrad::Preset::kOnednn).alpha(0.5));
  plan.relu_grad<float>(dy, x, dx);
  EXPECT_EQ(dx[2], 1.5f);
  EXPECT_EQ(plan.options().raw().alpha, 0.5);
  // Wrong element type, wrong op, wrong lengths.
  std::vector<double> d64(4), s64(4), o64(4);
  EXPECT_THROW(plan.relu_grad<double>(d64, s64, o64), relugrad::InvalidArgument);
  std::vector<uint8_t> mask(1);
  EXPECT_THROW(plan.relu_forward<float>(x, dx, mask), relugrad::InvalidArgument);
  std::vector<float> short_s(3);
  EXPECT_THROW(plan.relu_grad<float>(dy, short_s, dx), relugrad::InvalidArgument);
  // Create-time errors are the one-shot call's exceptions.
  EXPECT_THROW(
      relugrad::Plan(relugrad::Op::kReluGrad, RELUGRAD_F32, relugrad::Options().clip(1, 0)),
      relugrad::InvalidArgument);
  EXPECT_THROW(
      relugrad::Plan(relugrad::Op::kReluForwardMask, RELUGRAD_F32, relugrad::Options().gate_max(6)),
      relugrad::Unsupported);
  // The mask pair.
  auto forward = relugrad::Plan::of<float>(relugrad::Op::kReluForwardMask);
  auto backward = relugrad::Plan::of<float>(relugrad::Op::kReluGradMask);
  std::vector<float> y(4), dxm(4);
  forward.relu_forward<float>(x, y, mask);
  EXPECT_EQ(mask[0], 0x09);  // x = 1 and NaN open under torch
  backward.relu_grad_mask<float>(dy, mask, dxm);
  EXPECT_EQ(dxm, (std::vector<float>{1, 0, 0, -4}));
}

}  // namespace
