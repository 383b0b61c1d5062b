// The CUDA mask path on a device, through its backend entry points
// (relugrad::CudaReluForwardMask / CudaReluGradMask; the C ABI routes
// RELUGRAD_BACKEND_CUDA to them once api/mask.cc is wired), bit for bit
// against the mask reference: every config and dtype, lengths around byte
// and vector multiples, aligned (vector) and offset (scalar) data, in place,
// guard bytes. Without a device: UNSUPPORTED "no CUDA device", and the
// device tests skip.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/mask_reference.h"
#include "core/semantics.h"
#include "cuda/cuda_mask.h"
#include "relugrad/relugrad.h"
#include "support/cuda_device.h"
#include "test_support.h"

namespace relugrad {
namespace testing {
namespace {

Rules Resolve(const relugrad_options& o) {
  Rules sem;
  EXPECT_EQ(ResolveOptions(&o, &sem), RELUGRAD_OK);
  return sem;
}

// Forward x -> (y, mask), then backward (dy, mask) -> dx, each against the
// reference, every array in a guarded device buffer; in_place puts y on x
// and dx on dy.
void RoundTrip(relugrad_dtype dt, const relugrad_options& o, const std::vector<unsigned char>& x,
               const std::vector<unsigned char>& dy, size_t offset, bool in_place,
               const std::string& what) {
  const Rules sem = Resolve(o);
  const Dtype d = ToDtype(dt);
  const KernelParams kp = MakeKernelParams(d, sem);
  const size_t bytes = x.size(), n = bytes / relugrad_dtype_size(dt), mb = (n + 7) / 8;
  std::vector<unsigned char> want_y(bytes), want_mask(mb), want_dx(bytes);
  ReferenceForwardRun(d, static_cast<int64_t>(n), x.data(), want_y.data(), want_mask.data(), sem);
  ReferenceGradMaskRun(d, static_cast<int64_t>(n), dy.data(), want_mask.data(), want_dx.data(),
                       sem);

  const DeviceGuarded gx(x, offset), gy(bytes, offset, kSentinel), gm(mb, 0, kSentinel),
      gg(dy, offset), gd(bytes, offset, kSentinel);
  for (const DeviceGuarded* g : {&gx, &gy, &gm, &gg, &gd}) ASSERT_EQ(g->error(), "") << what;
  const DeviceGuarded& yout = in_place ? gx : gy;
  const DeviceGuarded& dxout = in_place ? gg : gd;
  ASSERT_EQ(CudaReluForwardMask(d, static_cast<int64_t>(n), gx.data(), yout.data(), gm.data(), kp,
                                /*stream=*/nullptr),
            RELUGRAD_OK)
      << what << ": " << relugrad_last_error();
  ASSERT_EQ(CudaReluGradMask(d, static_cast<int64_t>(n), gg.data(), gm.data(), dxout.data(), kp,
                             /*stream=*/nullptr),
            RELUGRAD_OK)
      << what << ": " << relugrad_last_error();
  CUDA_ASSERT(cudaDeviceSynchronize());
  const auto y = yout.Download(), m = gm.Download(), dx = dxout.Download();
  ASSERT_EQ(yout.CheckGuards(y), "") << what << " y";
  ASSERT_EQ(gm.CheckGuards(m), "") << what << " mask";
  ASSERT_EQ(dxout.CheckGuards(dx), "") << what << " dx";
  ASSERT_EQ(CompareBits(dt, want_y.data(), yout.Array(y), n, x.data(), x.data()), "")
      << what << " y";
  ASSERT_EQ(mb == 0 ? 0 : std::memcmp(want_mask.data(), gm.Array(m), mb), 0) << what << " mask";
  ASSERT_EQ(CompareBits(dt, want_dx.data(), dxout.Array(dx), n, dy.data(), x.data()), "")
      << what << " dx";
}

TEST(CudaMaskDeviceTest, NoDeviceIsUnsupported) {
  if (NoDeviceReason().empty())
    GTEST_SKIP() << "a CUDA device is present: covered by the device tests";
  relugrad_options o;
  relugrad_options_init(&o, RELUGRAD_PRESET_TORCH);
  const Rules sem = Resolve(o);
  const KernelParams kp = MakeKernelParams(Dtype::kF32, sem);
  float x[8] = {}, y[8];
  uint8_t mask[1] = {0x5a};
  EXPECT_EQ(CudaReluForwardMask(Dtype::kF32, 8, x, y, mask, kp, /*stream=*/nullptr),
            RELUGRAD_UNSUPPORTED);
  EXPECT_NE(std::string(relugrad_last_error()).find("no CUDA device"), std::string::npos)
      << relugrad_last_error();
  EXPECT_EQ(CudaReluGradMask(Dtype::kF32, 8, x, mask, y, kp, /*stream=*/nullptr),
            RELUGRAD_UNSUPPORTED);
  EXPECT_EQ(mask[0], 0x5a);
}

TEST(CudaMaskDeviceTest, EveryConfigLengthsOffsets) {
  SKIP_WITHOUT_DEVICE();
  std::vector<size_t> lengths;
  for (size_t n = 0; n <= 40; ++n) lengths.push_back(n);
  for (size_t n : {127, 128, 129, 2047, 2048, 2049, 100003}) lengths.push_back(n);
  for (relugrad_dtype d : kAllDtypes) {
    const size_t es = relugrad_dtype_size(d);
    const auto x_all = Pack(d, RandomBits(d, lengths.back(), 81)),
               g_all = Pack(d, RandomBits(d, lengths.back(), 82));
    for (const Config& c : AllConfigs()) {
      for (size_t n : lengths) {
        const std::vector<unsigned char> x(x_all.begin(), x_all.begin() + n * es);
        const std::vector<unsigned char> g(g_all.begin(), g_all.begin() + n * es);
        for (size_t offset : {size_t{0}, es}) {
          for (bool in_place : {false, true}) {
            ASSERT_NO_FATAL_FAILURE(RoundTrip(
                d, c.options, x, g, offset, in_place,
                std::string(relugrad_dtype_name(d)) + " " + c.name + " n=" + std::to_string(n) +
                    " offset=" + std::to_string(offset) + (in_place ? " in place" : "")));
          }
        }
      }
    }
  }
}

TEST(CudaMaskDeviceTest, SpecialValuesEveryConfig) {
  SKIP_WITHOUT_DEVICE();
  for (relugrad_dtype d : kAllDtypes) {
    const auto [gs, xs] = SpecialValuePairs(d);
    const auto x = Pack(d, xs), g = Pack(d, gs);
    for (const Config& c : AllConfigs()) {
      ASSERT_NO_FATAL_FAILURE(RoundTrip(d, c.options, x, g, 0, false, c.name));
      ASSERT_NO_FATAL_FAILURE(
          RoundTrip(d, c.options, x, g, relugrad_dtype_size(d), false, c.name + " offset"));
    }
  }
}

}  // namespace
}  // namespace testing
}  // namespace relugrad
