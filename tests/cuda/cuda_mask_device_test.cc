// The CUDA mask path on a device, through its backend entry points
// (relugrad::CudaReluForwardMask / CudaReluGradMask; the C ABI routes
// RELUGRAD_BACKEND_CUDA to them once api/mask.cc is wired), bit for bit
// against the mask reference: every config and dtype, lengths around byte
// and vector multiples, aligned (vector) and offset (scalar) data, in place,
// guard bytes; and the fused ReLU + dropout planes through the C API against
// the CPU backend. Without a device: UNSUPPORTED "no CUDA device", and the
// device tests skip.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/mask_reference.h"
#include "core/semantics.h"
#include "cuda/mask_backend.h"
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

// ---- the fused ReLU + dropout planes through the C API (backend = CUDA) ----

relugrad_options CudaOptions() {
  relugrad_options o;
  relugrad_options_init(&o, RELUGRAD_PRESET_TORCH);
  o.backend = RELUGRAD_BACKEND_CUDA;
  return o;
}

TEST(CudaMaskDeviceTest, DropoutPlanesNoDeviceIsUnsupported) {
  if (NoDeviceReason().empty())
    GTEST_SKIP() << "a CUDA device is present: covered by the device tests";
  const relugrad_options o = CudaOptions();
  float dy[8] = {1, 2, 3, 4, 5, 6, 7, 8}, dx[8] = {};
  uint8_t gate[1] = {0xff}, keep[1] = {0xff}, bytes[8] = {1, 0, 1, 0, 1, 0, 1, 0}, bits[1] = {0x5a};
  EXPECT_EQ(relugrad_relu_dropout_grad(RELUGRAD_F32, 8, dy, gate, keep, 2.0, dx, &o),
            RELUGRAD_UNSUPPORTED);
  EXPECT_NE(std::string(relugrad_last_error()).find("no CUDA device"), std::string::npos)
      << relugrad_last_error();
  EXPECT_EQ(relugrad_pack_bits(8, bytes, bits, &o), RELUGRAD_UNSUPPORTED);
  EXPECT_EQ(bits[0], 0x5a);
  EXPECT_EQ(dx[0], 0.0f);
}

// The device against the CPU backend: dy, the planes and dx in guarded device
// buffers. The NaN rule is core/dropout_rule.h's: 0x7fff for 16-bit, the
// GPU's own multiply NaN for f32/f64.
void DropoutPlanesOnDevice(relugrad_dtype dt, const std::vector<uint64_t>& dy_bits,
                           const std::vector<unsigned char>& gate,
                           const std::vector<unsigned char>& keep, size_t offset, bool in_place,
                           const std::string& what) {
  const size_t n = dy_bits.size(), es = relugrad_dtype_size(dt), mb = (n + 7) / 8;
  const std::vector<unsigned char> dy = Pack(dt, dy_bits);
  std::vector<unsigned char> want(n * es);
  relugrad_options cpu;
  relugrad_options_init(&cpu, RELUGRAD_PRESET_TORCH);
  ASSERT_EQ(relugrad_relu_dropout_grad(dt, static_cast<int64_t>(n), dy.data(), gate.data(),
                                       keep.data(), 1.0 / 0.9, want.data(), &cpu),
            RELUGRAD_OK);
  // The keep plane again, from a byte mask on the device (relugrad_pack_bits).
  std::vector<unsigned char> keep_bytes(n);
  for (size_t i = 0; i < n; ++i) keep_bytes[i] = ((keep[i / 8] >> (i % 8)) & 1u) ? 1 : 0;
  const DeviceGuarded gdy(dy, offset), gdx(n * es, offset, kSentinel), gg(gate, 0),
      gkb(keep_bytes, 0), gk(mb, 0, kSentinel);
  for (const DeviceGuarded* g : {&gdy, &gdx, &gg, &gkb, &gk}) ASSERT_EQ(g->error(), "") << what;
  const relugrad_options o = CudaOptions();
  ASSERT_EQ(relugrad_pack_bits(static_cast<int64_t>(n), gkb.data(), gk.data(), &o), RELUGRAD_OK)
      << what << ": " << relugrad_last_error();
  const DeviceGuarded& out = in_place ? gdy : gdx;
  ASSERT_EQ(relugrad_relu_dropout_grad(dt, static_cast<int64_t>(n), gdy.data(), gg.data(),
                                       gk.data(), 1.0 / 0.9, out.data(), &o),
            RELUGRAD_OK)
      << what << ": " << relugrad_last_error();
  CUDA_ASSERT(cudaDeviceSynchronize());
  const auto k = gk.Download(), dx = out.Download();
  ASSERT_EQ(gk.CheckGuards(k), "") << what << " keep";
  ASSERT_EQ(out.CheckGuards(dx), "") << what << " dx";
  ASSERT_EQ(mb == 0 ? 0 : std::memcmp(keep.data(), gk.Array(k), mb), 0) << what << " keep plane";
  for (size_t i = 0; i < n; ++i) {
    const uint64_t w = BitsAt(dt, want.data(), i), g = BitsAt(dt, out.Array(dx), i);
    const uint64_t mag = es == 2 ? (w & 0x7fffu) : es == 4 ? (w & 0x7fffffffu) : (w << 1 >> 1);
    const uint64_t inf = dt == RELUGRAD_F16    ? 0x7c00u
                         : dt == RELUGRAD_BF16 ? 0x7f80u
                         : dt == RELUGRAD_F32  ? 0x7f800000u
                                               : 0x7ff0000000000000ull;
    if (mag > inf) {
      const uint64_t gmag = es == 2 ? (g & 0x7fffu) : es == 4 ? (g & 0x7fffffffu) : (g << 1 >> 1);
      if (es == 2)
        ASSERT_EQ(g, 0x7fffu) << what << " i=" << i;
      else
        ASSERT_GT(gmag, inf) << what << " i=" << i << ": got " << Hex(g);
    } else {
      ASSERT_EQ(g, w) << what << " i=" << i << ": got " << Hex(g) << ", want " << Hex(w);
    }
  }
}

TEST(CudaMaskDeviceTest, DropoutPlanesAgainstTheCpu) {
  SKIP_WITHOUT_DEVICE();
  for (relugrad_dtype d : kAllDtypes) {
    std::vector<uint64_t> dy = SpecialValues(d);
    const auto random = RandomBits(d, 100003, 91);
    dy.insert(dy.end(), random.begin(), random.end());
    for (size_t n : {size_t{0}, size_t{1}, size_t{9}, size_t{1025}, dy.size()}) {
      const std::vector<uint64_t> part(dy.begin(), dy.begin() + n);
      std::vector<unsigned char> gate((n + 7) / 8), keep((n + 7) / 8);
      const auto gbits = RandomBits(RELUGRAD_F16, gate.size() + keep.size(), 92 + n);
      for (size_t i = 0; i < gate.size(); ++i) gate[i] = static_cast<unsigned char>(gbits[i]);
      for (size_t i = 0; i < keep.size(); ++i)
        keep[i] = static_cast<unsigned char>(gbits[gate.size() + i] | gbits[i]);
      if (n % 8 != 0) {
        gate.back() &= static_cast<unsigned char>((1u << (n % 8)) - 1u);
        keep.back() &= static_cast<unsigned char>((1u << (n % 8)) - 1u);
      }
      for (size_t offset : {size_t{0}, relugrad_dtype_size(d)}) {
        for (bool in_place : {false, true}) {
          ASSERT_NO_FATAL_FAILURE(DropoutPlanesOnDevice(
              d, part, gate, keep, offset, in_place,
              std::string(relugrad_dtype_name(d)) + " n=" + std::to_string(n) +
                  " offset=" + std::to_string(offset) + (in_place ? " in place" : "")));
        }
      }
    }
  }
}

}  // namespace
}  // namespace testing
}  // namespace relugrad
