// The mask path's API: every 16-bit gate pattern against the reference,
// thread counts 1..8 giving identical bits, the work plan's byte rule, each
// invalid argument's status and message.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "core/work_plan.h"
#include "cpu/launch.h"
#include "mask_test_support.h"
#include "relugrad/relugrad.h"
#include "test_support.h"

namespace relugrad {
namespace testing {
namespace {

TEST(MaskApi, MaskBytes) {
  EXPECT_EQ(relugrad_mask_bytes(0), 0);
  EXPECT_EQ(relugrad_mask_bytes(1), 1);
  EXPECT_EQ(relugrad_mask_bytes(8), 1);
  EXPECT_EQ(relugrad_mask_bytes(9), 2);
  EXPECT_EQ(relugrad_mask_bytes(-1), -1);
  EXPECT_EQ(relugrad_mask_bytes(int64_t{1} << 40), int64_t{1} << 37);
}

// Every f16/bf16 bit pattern as x, every configuration: y and mask.
TEST(MaskApi, Every16BitPatternForward) {
  for (relugrad_dtype d : {RELUGRAD_F16, RELUGRAD_BF16}) {
    std::vector<uint64_t> bits(65536);
    for (size_t i = 0; i < bits.size(); ++i) bits[i] = i;
    const Bytes x = Pack(d, bits);
    for (const Config& c : AllConfigs()) {
      Bytes ey, em, y(x.size()), m(8192);
      ReferenceForward(d, x, c.options, &ey, &em);
      ASSERT_EQ(relugrad_relu_forward(d, 65536, x.data(), y.data(), m.data(), &c.options),
                RELUGRAD_OK);
      ASSERT_EQ(CompareBits(d, ey.data(), y.data(), 65536, x.data(), x.data()), "") << c.name;
      ASSERT_EQ(CompareMask(em, m.data(), 65536), "") << c.name << " " << relugrad_dtype_name(d);
    }
  }
}

// keep_negative_zero against torch.relu's rule written out (y = x < 0 ? +0 : x
// on f32 bits), and a struct_size that ends before the field: +0 as before.
TEST(MaskApi, KeepNegativeZeroIsTorchReluAndOlderStructsWritePlusZero) {
  const std::vector<float> x = {-0.0f, 0.0f, -1.0f, 2.5f, -1e-40f, 1e-40f, NAN, -NAN, -INFINITY};
  const auto n = static_cast<int64_t>(x.size());
  relugrad_options o;
  ASSERT_EQ(relugrad_options_init(&o, RELUGRAD_PRESET_TORCH), RELUGRAD_OK);
  o.keep_negative_zero = 1;
  std::vector<float> y(x.size());
  uint8_t mask[2] = {};
  ASSERT_EQ(relugrad_relu_forward(RELUGRAD_F32, n, x.data(), y.data(), mask, &o), RELUGRAD_OK);
  for (size_t i = 0; i < x.size(); ++i) {
    const float want = x[i] < 0.0f ? 0.0f : x[i];  // clamp_min(x, 0): -0 and NaN pass
    uint32_t got_bits, want_bits;
    std::memcpy(&got_bits, &y[i], 4);
    std::memcpy(&want_bits, &want, 4);
    EXPECT_EQ(got_bits, want_bits) << "x[" << i << "]";
  }
  o.struct_size = static_cast<uint32_t>(offsetof(relugrad_options, keep_negative_zero));
  ASSERT_EQ(relugrad_relu_forward(RELUGRAD_F32, n, x.data(), y.data(), mask, &o), RELUGRAD_OK);
  uint32_t first;
  std::memcpy(&first, &y[0], 4);
  EXPECT_EQ(first, 0u) << "an older struct gets the default: +0 for x = -0";
}

TEST(MaskApi, ThreadCountsGiveIdenticalBits) {
  for (relugrad_dtype d : kAllDtypes) {
    const size_t n = (size_t{1} << 19) + 77;  // several 64 KiB grains for every dtype
    const Bytes x = Pack(d, RandomBits(d, n, 3)), dy = Pack(d, RandomBits(d, n, 4));
    for (const Config& c : {AllConfigs()[0], AllConfigs()[1], AllConfigs()[8]}) {
      Bytes y1, m1, dx1;
      for (int threads = 1; threads <= 8; ++threads) {
        relugrad_options o = c.options;
        o.threads = threads;
        // Odd offsets of y/dx exercise the plan's head rounding.
        Guarded gy(x.size(), relugrad_dtype_size(d) * 3, 0),
            gdx(dy.size(), relugrad_dtype_size(d) * 5, 0);
        Bytes m(static_cast<size_t>(relugrad_mask_bytes(static_cast<int64_t>(n))));
        ASSERT_EQ(
            relugrad_relu_forward(d, static_cast<int64_t>(n), x.data(), gy.data(), m.data(), &o),
            RELUGRAD_OK);
        ASSERT_EQ(relugrad_relu_grad_mask(d, static_cast<int64_t>(n), dy.data(), m.data(),
                                          gdx.data(), &o),
                  RELUGRAD_OK);
        Bytes y(gy.data(), gy.data() + x.size()), dx(gdx.data(), gdx.data() + dy.size());
        if (threads == 1) {
          y1 = y, m1 = m, dx1 = dx;
          Bytes ey, em;
          ReferenceForward(d, x, o, &ey, &em);
          ASSERT_EQ(CompareMask(em, m.data(), n), "") << c.name;
          continue;
        }
        ASSERT_EQ(CompareBits(d, y1.data(), y.data(), n), "") << c.name << " threads=" << threads;
        ASSERT_EQ(m1, m) << c.name << " threads=" << threads;
        ASSERT_EQ(CompareBits(d, dx1.data(), dx.data(), n), "") << c.name << " threads=" << threads;
      }
    }
  }
}

// Block boundaries own whole mask bytes, and fall on the output's cache
// lines whenever its alignment allows.
TEST(MaskApi, WorkPlanBoundariesAreWholeMaskBytes) {
  for (int es : {2, 4, 8}) {
    for (uintptr_t misalign = 0; misalign < 64; misalign += es) {
      for (int threads : {1, 2, 3, 8}) {
        const int64_t n = 3 * 1000 * 1000 + 5;
        const uintptr_t address = 4096 + misalign;
        const WorkPlan plan = PlanBlocks(LaunchPolicy::ForThisMachine(), LaunchOp::kGradMask, n, es,
                                         address, threads);
        ASSERT_LE(plan.blocks, threads);
        ASSERT_EQ(plan.Begin(0), 0);
        ASSERT_EQ(plan.End(plan.blocks - 1), n);
        for (int b = 0; b < plan.blocks; ++b) {  // chunks too: whole mask bytes
          for (int c = 1; c < plan.chunks; ++c) {
            ASSERT_EQ(plan.ChunkBegin(b, c), plan.ChunkEnd(b, c - 1));
            ASSERT_EQ(plan.ChunkBegin(b, c) % 8, 0) << "es=" << es << " misalign=" << misalign;
          }
        }
        if (threads == 1) ASSERT_GT(plan.chunks, 1) << "the test should see chunks";
        for (int b = 1; b < plan.blocks; ++b) {
          ASSERT_EQ(plan.Begin(b), plan.End(b - 1));
          ASSERT_EQ(plan.Begin(b) % 8, 0) << "es=" << es << " misalign=" << misalign;
          const uintptr_t line_offset = (address + static_cast<uintptr_t>(plan.Begin(b) * es)) % 64;
          // Lines are reachable at a multiple-of-8 element iff the head is.
          const int64_t head = misalign == 0 ? 0 : static_cast<int64_t>((64 - misalign) / es);
          if (head % 8 == 0) EXPECT_EQ(line_offset, 0u) << "es=" << es << " misalign=" << misalign;
        }
      }
    }
  }
}

// Non-temporal stores (large, non-aliasing outputs) give the same bits:
// forced on for every size here, at aligned and misaligned outputs.
TEST(MaskApi, StreamingStoresGiveTheReferenceBits) {
  for (relugrad_dtype d : kAllDtypes) {
    const size_t es = relugrad_dtype_size(d);
    for (size_t n : {size_t{5}, size_t{1000}, size_t{100003}}) {
      const Bytes x = Pack(d, RandomBits(d, n, 31)), dy = Pack(d, RandomBits(d, n, 32));
      for (const Config& c : {AllConfigs()[0], AllConfigs()[1], AllConfigs()[8]}) {
        Bytes ey, em;
        ReferenceForward(d, x, c.options, &ey, &em);
        const Bytes edx = ReferenceGradMask(d, dy, em, c.options);
        for (size_t off : {size_t{0}, es, size_t{32}}) {
          relugrad_options o = c.options;
          o.threads = 2;
          o.stores = RELUGRAD_STORES_STREAMING;
          Guarded gy(x.size(), off, 0), gm(em.size(), 0, 0), gdx(dy.size(), off, 0);
          ASSERT_EQ(
              relugrad_relu_forward(d, static_cast<int64_t>(n), x.data(), gy.data(), gm.data(), &o),
              RELUGRAD_OK);
          ASSERT_EQ(relugrad_relu_grad_mask(d, static_cast<int64_t>(n), dy.data(), gm.data(),
                                            gdx.data(), &o),
                    RELUGRAD_OK);
          const std::string what = c.name + " " + relugrad_dtype_name(d) +
                                   " n=" + std::to_string(n) + " off=" + std::to_string(off);
          ASSERT_EQ(CompareBits(d, ey.data(), gy.data(), n), "") << what;
          ASSERT_EQ(CompareMask(em, gm.data(), n), "") << what;
          ASSERT_EQ(CompareBits(d, edx.data(), gdx.data(), n), "") << what;
          ASSERT_EQ(gy.CheckGuards() + gdx.CheckGuards() + gm.CheckGuards(), "") << what;
        }
      }
    }
  }
}

TEST(MaskApi, InvalidArguments) {
  float x[16] = {}, y[16] = {};
  uint8_t m[4] = {};
  relugrad_options o;
  relugrad_options_init(&o, RELUGRAD_PRESET_TORCH);
  auto expect = [](relugrad_status got, relugrad_status want, const char* needle) {
    EXPECT_EQ(got, want) << relugrad_last_error();
    EXPECT_NE(std::string(relugrad_last_error()).find(needle), std::string::npos)
        << relugrad_last_error();
  };
  expect(relugrad_relu_forward(static_cast<relugrad_dtype>(0), 16, x, y, m, &o),
         RELUGRAD_INVALID_ARGUMENT, "dtype");
  expect(relugrad_relu_forward(RELUGRAD_F32, -1, x, y, m, &o), RELUGRAD_INVALID_ARGUMENT,
         "n must be");
  expect(relugrad_relu_forward(RELUGRAD_F32, 16, nullptr, y, m, &o), RELUGRAD_INVALID_ARGUMENT,
         "x is NULL");
  expect(relugrad_relu_forward(RELUGRAD_F32, 16, x, nullptr, m, &o), RELUGRAD_INVALID_ARGUMENT,
         "y is NULL");
  expect(relugrad_relu_forward(RELUGRAD_F32, 16, x, y, nullptr, &o), RELUGRAD_INVALID_ARGUMENT,
         "mask is NULL");
  expect(relugrad_relu_forward(RELUGRAD_F32, 15, x, x + 1, m, &o), RELUGRAD_INVALID_ARGUMENT,
         "partially overlaps");
  expect(relugrad_relu_forward(RELUGRAD_F32, 15, reinterpret_cast<char*>(x) + 1, y, m, &o),
         RELUGRAD_INVALID_ARGUMENT, "aligned");
  expect(relugrad_relu_forward(RELUGRAD_F32, 16, x, y, reinterpret_cast<uint8_t*>(x), &o),
         RELUGRAD_INVALID_ARGUMENT, "mask overlaps x");
  expect(relugrad_relu_forward(RELUGRAD_F32, 16, x, y, reinterpret_cast<uint8_t*>(y) + 63, &o),
         RELUGRAD_INVALID_ARGUMENT, "mask overlaps y");
  expect(relugrad_relu_grad_mask(RELUGRAD_F32, 16, x, reinterpret_cast<uint8_t*>(y), y, &o),
         RELUGRAD_INVALID_ARGUMENT, "mask overlaps dx");
  expect(relugrad_relu_grad_mask(RELUGRAD_F32, 16, x, reinterpret_cast<uint8_t*>(x) + 2, y, &o),
         RELUGRAD_INVALID_ARGUMENT, "mask overlaps dy");
  expect(relugrad_relu_grad_mask(RELUGRAD_F32, 16, x, nullptr, y, &o), RELUGRAD_INVALID_ARGUMENT,
         "mask is NULL");
  expect(relugrad_relu_grad_mask(RELUGRAD_F32, 16, nullptr, m, y, &o), RELUGRAD_INVALID_ARGUMENT,
         "dy is NULL");
  relugrad_options bad = o;
  bad.threshold = NAN;
  expect(relugrad_relu_grad_mask(RELUGRAD_F32, 16, x, m, y, &bad), RELUGRAD_INVALID_ARGUMENT,
         "threshold");
  bad = o;
  bad.backend = RELUGRAD_BACKEND_ASCEND_TWIN;  // the mask kernels select; multiply is refused
  bad.combine = RELUGRAD_COMBINE_MULTIPLY;
  const char* twin_why =
      relugrad_backend_available(RELUGRAD_BACKEND_ASCEND_TWIN) ? "not served" : "not built";
  expect(relugrad_relu_forward(RELUGRAD_F32, 16, x, y, m, &bad), RELUGRAD_UNSUPPORTED, twin_why);
  expect(relugrad_relu_grad_mask(RELUGRAD_F32, 16, x, m, y, &bad), RELUGRAD_UNSUPPORTED, twin_why);
  if (!relugrad_backend_available(RELUGRAD_BACKEND_CUDA)) {
    bad.backend = RELUGRAD_BACKEND_CUDA;  // dispatched to the CUDA stubs
    expect(relugrad_relu_forward(RELUGRAD_F32, 16, x, y, m, &bad), RELUGRAD_UNSUPPORTED,
           "not built");
    expect(relugrad_relu_grad_mask(RELUGRAD_F32, 16, x, m, y, &bad), RELUGRAD_UNSUPPORTED,
           "not built");
  }
  // n == 0: a no-op with NULL pointers; options NULL means torch.
  EXPECT_EQ(relugrad_relu_forward(RELUGRAD_F32, 0, nullptr, nullptr, nullptr, nullptr),
            RELUGRAD_OK);
  EXPECT_EQ(relugrad_relu_grad_mask(RELUGRAD_F64, 0, nullptr, nullptr, nullptr, nullptr),
            RELUGRAD_OK);
  // The mask is not touched past ceil(n/8) bytes.
  uint8_t guard[3] = {0xA5, 0xA5, 0xA5};
  EXPECT_EQ(relugrad_relu_forward(RELUGRAD_F32, 9, x, y, guard, nullptr), RELUGRAD_OK);
  EXPECT_EQ(guard[2], 0xA5);
}

}  // namespace
}  // namespace testing
}  // namespace relugrad
