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
#include "test_support.h"

namespace relugrad {
namespace testing {
namespace {

constexpr unsigned char kSentinel = 0xA5;
constexpr size_t kGuard = 64;

std::string NoDeviceReason() {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return std::string("cudaGetDeviceCount: ") + cudaGetErrorString(e);
  }
  return count == 0 ? "the CUDA runtime reports 0 devices" : "";
}

#define SKIP_WITHOUT_DEVICE()                                                    \
  do {                                                                           \
    const std::string reason_ = NoDeviceReason();                                \
    if (!reason_.empty())                                                        \
      GTEST_SKIP() << "no CUDA device (" << reason_ << "): device test skipped"; \
  } while (0)

#define CUDA_ASSERT(expr)                                                  \
  do {                                                                     \
    const cudaError_t e_ = (expr);                                         \
    ASSERT_EQ(e_, cudaSuccess) << #expr << ": " << cudaGetErrorString(e_); \
  } while (0)

class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t bytes) {
    if (cudaMalloc(&ptr_, bytes == 0 ? 1 : bytes) != cudaSuccess) ptr_ = nullptr;
  }
  ~DeviceBuffer() {
    if (ptr_ != nullptr) cudaFree(ptr_);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  unsigned char* get() const { return static_cast<unsigned char*>(ptr_); }

 private:
  void* ptr_ = nullptr;
};

Rules Resolve(const relugrad_options& o) {
  Rules sem;
  EXPECT_EQ(ResolveOptions(&o, &sem), RELUGRAD_OK);
  return sem;
}

std::vector<unsigned char> Download(const DeviceBuffer& b, size_t bytes) {
  std::vector<unsigned char> h(bytes);
  if (cudaMemcpy(h.data(), b.get(), bytes, cudaMemcpyDeviceToHost) != cudaSuccess) h.clear();
  return h;
}

void ExpectGuards(const std::vector<unsigned char>& h, size_t begin, size_t bytes,
                  const std::string& what) {
  ASSERT_FALSE(h.empty()) << what << ": download failed";
  for (size_t i = 0; i < begin; ++i) ASSERT_EQ(h[i], kSentinel) << what << ": write before";
  for (size_t i = begin + bytes; i < h.size(); ++i)
    ASSERT_EQ(h[i], kSentinel) << what << ": write after";
}

void RoundTrip(relugrad_dtype dt, const relugrad_options& o, const std::vector<unsigned char>& x,
               const std::vector<unsigned char>& dy, size_t offset, bool in_place,
               const std::string& what) {
  const Rules sem = Resolve(o);
  const Dtype d = ToDtype(dt);
  const KernelParams kp = MakeKernelParams(d, sem);
  const size_t bytes = x.size(), n = bytes / relugrad_dtype_size(dt), mb = (n + 7) / 8;
  const size_t total = bytes + 2 * kGuard + 16, mtotal = mb + 2 * kGuard;
  std::vector<unsigned char> want_y(bytes), want_mask(mb), want_dx(bytes);
  ReferenceForwardRun(d, static_cast<int64_t>(n), x.data(), want_y.data(), want_mask.data(), sem);
  ReferenceGradMaskRun(d, static_cast<int64_t>(n), dy.data(), want_mask.data(), want_dx.data(),
                       sem);

  DeviceBuffer xb(total), yb(total), mbuf(mtotal), gb(total), db(total);
  for (const DeviceBuffer* b : {&xb, &yb, &gb, &db})
    CUDA_ASSERT(cudaMemset(b->get(), kSentinel, total));
  CUDA_ASSERT(cudaMemset(mbuf.get(), kSentinel, mtotal));
  const size_t at = kGuard + offset;
  CUDA_ASSERT(cudaMemcpy(xb.get() + at, x.data(), bytes, cudaMemcpyHostToDevice));
  CUDA_ASSERT(cudaMemcpy(gb.get() + at, dy.data(), bytes, cudaMemcpyHostToDevice));
  const DeviceBuffer& yout = in_place ? xb : yb;
  const DeviceBuffer& dxout = in_place ? gb : db;
  uint8_t* mask = mbuf.get() + kGuard;
  ASSERT_EQ(CudaReluForwardMask(d, static_cast<int64_t>(n), xb.get() + at, yout.get() + at, mask,
                                kp, /*stream=*/nullptr),
            RELUGRAD_OK)
      << what << ": " << relugrad_last_error();
  ASSERT_EQ(CudaReluGradMask(d, static_cast<int64_t>(n), gb.get() + at, mask, dxout.get() + at, kp,
                             /*stream=*/nullptr),
            RELUGRAD_OK)
      << what << ": " << relugrad_last_error();
  CUDA_ASSERT(cudaDeviceSynchronize());
  const auto y = Download(yout, total), m = Download(mbuf, mtotal), dx = Download(dxout, total);
  ASSERT_EQ(CompareBits(dt, want_y.data(), y.data() + at, n, x.data(), x.data()), "")
      << what << " y";
  ASSERT_EQ(mb == 0 ? 0 : std::memcmp(want_mask.data(), m.data() + kGuard, mb), 0)
      << what << " mask";
  ASSERT_EQ(CompareBits(dt, want_dx.data(), dx.data() + at, n, dy.data(), x.data()), "")
      << what << " dx";
  ASSERT_NO_FATAL_FAILURE(ExpectGuards(y, at, bytes, what + " y"));
  ASSERT_NO_FATAL_FAILURE(ExpectGuards(m, kGuard, mb, what + " mask"));
  ASSERT_NO_FATAL_FAILURE(ExpectGuards(dx, at, bytes, what + " dx"));
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
    const auto special = SpecialValues(d);
    std::vector<uint64_t> xs, gs;
    for (uint64_t a : special) {
      for (uint64_t b : special) {
        xs.push_back(a);
        gs.push_back(b);
      }
    }
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
