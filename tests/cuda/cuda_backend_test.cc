// The CUDA backend through the C ABI (options.backend = CUDA), bit for bit
// against the scalar reference run on the host: every dtype and
// configuration, special-value cross products, lengths 0..80 and around
// vector/grid boundaries with every pointer phase within 16 bytes (vector
// path, head/tail peeling, all-scalar path), guard bytes around dx, in place
// on dy and on s, the caller's stream (checked by capturing the call into a
// CUDA graph), and more than 2^31 elements.
//
// Without a CUDA device every device test is skipped (GTEST_SKIP, counted
// as skipped) and NoDeviceIsUnsupported checks the clean failure instead.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cstring>
#include <string>
#include <vector>

#include "relugrad/relugrad.h"
#include "support/cuda_device.h"
#include "test_support.h"

namespace relugrad {
namespace testing {
namespace {

relugrad_options OnDevice(relugrad_options o, void* stream = nullptr) {
  o.backend = RELUGRAD_BACKEND_CUDA;
  o.stream = stream;
  return o;
}

relugrad_options Preset(relugrad_preset p) {
  relugrad_options o;
  relugrad_options_init(&o, p);
  return o;
}

// One of each kernel flavour: select with NaN open (torch), select with NaN
// closed (jax), and the general rule (oneDNN alpha; TF multiply + clip).
std::vector<Config> FlavourConfigs() {
  std::vector<Config> out;
  for (const Config& c : GradConfigs()) {
    if (c.name == "torch" || c.name == "jax" || c.name == "onednn_alpha0.25" ||
        c.name == "tensorflow_clip") {
      out.push_back(c);
    }
  }
  return out;
}

enum class InPlace { kNo, kOnDy, kOnS };

// Places dy/s (and dx unless in place) at byte offsets inside guarded
// device buffers, runs the backend, and compares result and guards.
void RunOnDevice(relugrad_dtype d, const relugrad_options& o, const std::vector<unsigned char>& dy,
                 const std::vector<unsigned char>& s, size_t dy_off, size_t s_off, size_t dx_off,
                 InPlace in_place, const std::string& what) {
  const size_t n = dy.size() / relugrad_dtype_size(d);
  const DeviceGuarded a(dy, dy_off), b(s, s_off), c(dy.size(), dx_off, kSentinel);
  for (const DeviceGuarded* g : {&a, &b, &c}) ASSERT_EQ(g->error(), "") << what;
  const DeviceGuarded& out = in_place == InPlace::kOnDy ? a : in_place == InPlace::kOnS ? b : c;
  const relugrad_options od = OnDevice(o);
  ASSERT_EQ(relugrad_relu_grad(d, static_cast<int64_t>(n), a.data(), b.data(), out.data(), &od),
            RELUGRAD_OK)
      << what << ": " << relugrad_last_error();
  CUDA_ASSERT(cudaDeviceSynchronize());
  const std::vector<unsigned char> host = out.Download();
  ASSERT_EQ(out.CheckGuards(host), "") << what << ": dx";
  const auto expected = Reference(d, dy, s, o);
  ASSERT_EQ(CompareBits(d, expected.data(), out.Array(host), n, dy.data(), s.data()), "") << what;
}

std::string Where(relugrad_dtype d, const std::string& config, size_t n, size_t o1, size_t o2,
                  size_t o3) {
  return std::string(relugrad_dtype_name(d)) + " " + config + " n=" + std::to_string(n) +
         " offsets(dy,s,dx)=" + std::to_string(o1) + "," + std::to_string(o2) + "," +
         std::to_string(o3);
}

// Runs here as well: without a device (or without the backend) the call
// fails with UNSUPPORTED and says why, and nothing is touched.
TEST(CudaBackendTest, NoDeviceIsUnsupported) {
  if (NoDeviceReason().empty())
    GTEST_SKIP() << "a CUDA device is present: covered by the device tests";
  float a[16] = {}, b[16] = {}, c[16];
  std::memset(c, 0x5a, sizeof(c));
  const relugrad_options o = OnDevice(Preset(RELUGRAD_PRESET_TORCH));
  for (int64_t n : {int64_t{16}, int64_t{0}}) {
    EXPECT_EQ(relugrad_relu_grad(RELUGRAD_F32, n, a, b, c, &o), RELUGRAD_UNSUPPORTED);
    EXPECT_NE(std::string(relugrad_last_error()).find("no CUDA device"), std::string::npos)
        << "message was: " << relugrad_last_error();
  }
  for (unsigned char byte : std::vector<unsigned char>(
           reinterpret_cast<unsigned char*>(c), reinterpret_cast<unsigned char*>(c) + sizeof(c))) {
    ASSERT_EQ(byte, 0x5a);
  }
}

TEST(CudaBackendTest, ReportsBuilt) {
  EXPECT_EQ(relugrad_backend_available(RELUGRAD_BACKEND_CUDA), 1);
}

TEST(CudaBackendTest, SpecialValueCrossProductEveryConfig) {
  SKIP_WITHOUT_DEVICE();
  for (relugrad_dtype d : kAllDtypes) {
    const auto [dy_bits, s_bits] = SpecialValuePairs(d);
    const auto dy = Pack(d, dy_bits), s = Pack(d, s_bits);
    for (const Config& c : GradConfigs()) {
      ASSERT_NO_FATAL_FAILURE(RunOnDevice(d, c.options, dy, s, 0, 0, 0, InPlace::kNo, c.name));
      const size_t es = relugrad_dtype_size(d);
      ASSERT_NO_FATAL_FAILURE(
          RunOnDevice(d, c.options, dy, s, es, 0, es, InPlace::kNo, c.name + " scalar path"));
    }
  }
}

TEST(CudaBackendTest, RandomBitsEveryConfig) {
  SKIP_WITHOUT_DEVICE();
  for (relugrad_dtype d : kAllDtypes) {
    const auto dy = Pack(d, RandomBits(d, 100003, 5)), s = Pack(d, RandomBits(d, 100003, 6));
    for (const Config& c : GradConfigs()) {
      ASSERT_NO_FATAL_FAILURE(RunOnDevice(d, c.options, dy, s, 0, 0, 0, InPlace::kNo, c.name));
    }
  }
}

// Lengths 0..80 and around vector and block multiples, with each pointer at
// offset 0, one element, or 16 minus one element within 16 bytes: equal
// phases take the vector path (with head and tail), unequal ones the
// scalar kernel.
TEST(CudaBackendTest, LengthsAndMisalignments) {
  SKIP_WITHOUT_DEVICE();
  std::vector<size_t> lengths;
  for (size_t n = 0; n <= 80; ++n) lengths.push_back(n);
  for (size_t n : {127, 128, 129, 255, 256, 257, 1023, 1024, 1025, 2047, 2048, 2049, 4097, 65537})
    lengths.push_back(n);
  for (relugrad_dtype d : kAllDtypes) {
    const size_t es = relugrad_dtype_size(d);
    const size_t max_n = lengths.back();
    const auto dy_all = Pack(d, RandomBits(d, max_n, 11)),
               s_all = Pack(d, RandomBits(d, max_n, 12));
    const std::vector<size_t> offsets =
        es == 8 ? std::vector<size_t>{0, 8} : std::vector<size_t>{0, es, 16 - es};
    for (const Config& c : FlavourConfigs()) {
      for (size_t n : lengths) {
        const std::vector<unsigned char> dy(dy_all.begin(), dy_all.begin() + n * es);
        const std::vector<unsigned char> s(s_all.begin(), s_all.begin() + n * es);
        for (size_t o1 : offsets) {
          for (size_t o2 : offsets) {
            for (size_t o3 : offsets) {
              ASSERT_NO_FATAL_FAILURE(RunOnDevice(d, c.options, dy, s, o1, o2, o3, InPlace::kNo,
                                                  Where(d, c.name, n, o1, o2, o3)));
            }
          }
        }
      }
    }
  }
}

TEST(CudaBackendTest, InPlace) {
  SKIP_WITHOUT_DEVICE();
  for (relugrad_dtype d : kAllDtypes) {
    const size_t es = relugrad_dtype_size(d);
    const auto dy = Pack(d, RandomBits(d, 5000, 21)), s = Pack(d, RandomBits(d, 5000, 22));
    for (const Config& c : GradConfigs()) {
      for (size_t off : {size_t{0}, es}) {
        ASSERT_NO_FATAL_FAILURE(
            RunOnDevice(d, c.options, dy, s, off, off, 0, InPlace::kOnDy, c.name + " on dy"));
        ASSERT_NO_FATAL_FAILURE(
            RunOnDevice(d, c.options, dy, s, off, off, 0, InPlace::kOnS, c.name + " on s"));
      }
      ASSERT_NO_FATAL_FAILURE(
          RunOnDevice(d, c.options, dy, s, es, 0, 0, InPlace::kOnDy, c.name + " on dy, scalar"));
    }
  }
}

// Large n: over 20 000 one-shot blocks, and past the loop geometries' grid
// cap (SMs * 32 blocks of 256 threads), so there every thread runs several
// grid-stride turns (RELUGRAD_CUDA_GEOMETRY picks the geometry per process).
TEST(CudaBackendTest, GridStrideSizes) {
  SKIP_WITHOUT_DEVICE();
  const size_t n = (size_t{20} << 20) + 3;
  for (relugrad_dtype d : {RELUGRAD_F16, RELUGRAD_F32}) {
    const auto dy = Pack(d, RandomBits(d, n, 31)), s = Pack(d, RandomBits(d, n, 32));
    for (const Config& c : FlavourConfigs()) {
      if (c.name != "torch" && c.name != "onednn_alpha0.25") continue;  // one select, one general
      ASSERT_NO_FATAL_FAILURE(RunOnDevice(d, c.options, dy, s, 0, 0, 0, InPlace::kNo, c.name));
    }
  }
}

// The kernel goes on options.stream: capturing the stream into a CUDA graph
// (global capture mode, so every call relugrad makes must be capture-safe)
// records exactly one kernel node, and replaying the graph gives the bits.
TEST(CudaBackendTest, RunsOnTheCallersStream) {
  SKIP_WITHOUT_DEVICE();
  const relugrad_dtype d = RELUGRAD_F32;
  const size_t n = 10007, bytes = n * 4;
  const auto dy = Pack(d, RandomBits(d, n, 41)), s = Pack(d, RandomBits(d, n, 42));
  DeviceBuffer a(bytes), b(bytes), c(bytes);
  CUDA_ASSERT(cudaMemcpy(a.get(), dy.data(), bytes, cudaMemcpyHostToDevice));
  CUDA_ASSERT(cudaMemcpy(b.get(), s.data(), bytes, cudaMemcpyHostToDevice));
  CUDA_ASSERT(cudaMemset(c.get(), 0, bytes));
  cudaStream_t stream = nullptr;
  CUDA_ASSERT(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const relugrad_options o = OnDevice(Preset(RELUGRAD_PRESET_TORCH), stream);

  // Global mode: the strictest, and PyTorch's default for torch.cuda.graph.
  CUDA_ASSERT(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  const relugrad_status st =
      relugrad_relu_grad(d, static_cast<int64_t>(n), a.get(), b.get(), c.get(), &o);
  cudaGraph_t graph = nullptr;
  CUDA_ASSERT(cudaStreamEndCapture(stream, &graph));
  ASSERT_EQ(st, RELUGRAD_OK) << relugrad_last_error();
  size_t nodes = 0;
  CUDA_ASSERT(cudaGraphGetNodes(graph, nullptr, &nodes));
  EXPECT_EQ(nodes, 1u) << "the launch did not land on the captured stream";
  cudaGraphExec_t exec = nullptr;
  CUDA_ASSERT(cudaGraphInstantiate(&exec, graph, 0));
  CUDA_ASSERT(cudaGraphLaunch(exec, stream));
  CUDA_ASSERT(cudaStreamSynchronize(stream));
  std::vector<unsigned char> got(bytes);
  CUDA_ASSERT(cudaMemcpy(got.data(), c.get(), bytes, cudaMemcpyDeviceToHost));
  EXPECT_EQ(
      CompareBits(d, Reference(d, dy, s, Preset(RELUGRAD_PRESET_TORCH)).data(), got.data(), n), "");

  // And a plain call on the non-blocking stream, ordered after an async copy.
  CUDA_ASSERT(cudaMemsetAsync(c.get(), 0, bytes, stream));
  ASSERT_EQ(relugrad_relu_grad(d, static_cast<int64_t>(n), a.get(), b.get(), c.get(), &o),
            RELUGRAD_OK);
  CUDA_ASSERT(cudaMemcpyAsync(got.data(), c.get(), bytes, cudaMemcpyDeviceToHost, stream));
  CUDA_ASSERT(cudaStreamSynchronize(stream));
  EXPECT_EQ(
      CompareBits(d, Reference(d, dy, s, Preset(RELUGRAD_PRESET_TORCH)).data(), got.data(), n), "");
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
}

// 64-bit sizes: 2^31 + 9 f16 elements (4 GiB per array: the one-shot
// geometry splits it into 2 GiB launches with 32-bit indices). dy is one
// constant, s is "open" up to an odd split past 2^31 and "closed" after, so
// the expected output is known without a host reference of that size.
TEST(CudaBackendTest, MoreThan2To31Elements) {
  SKIP_WITHOUT_DEVICE();
  const size_t n = (size_t{1} << 31) + 9, bytes = n * 2;
  size_t free_bytes = 0, total_bytes = 0;
  CUDA_ASSERT(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (free_bytes < 3 * bytes + (size_t{1} << 30))
    GTEST_SKIP() << "needs 13 GiB of free device memory";
  DeviceBuffer a(bytes), b(bytes), c(bytes);
  const size_t split = (size_t{1} << 31) + 3;
  CUDA_ASSERT(cudaMemset(a.get(), 0x42, bytes));                          // dy = 0x4242 (3.13)
  CUDA_ASSERT(cudaMemset(b.get(), 0x3c, split * 2));                      // s = 0x3c3c > 0: open
  CUDA_ASSERT(cudaMemset(b.get() + split * 2, 0xbc, bytes - split * 2));  // s = 0xbcbc < 0: closed
  CUDA_ASSERT(cudaMemset(c.get(), 0x11, bytes));
  const relugrad_options o = OnDevice(Preset(RELUGRAD_PRESET_TORCH));
  ASSERT_EQ(
      relugrad_relu_grad(RELUGRAD_F16, static_cast<int64_t>(n), a.get(), b.get(), c.get(), &o),
      RELUGRAD_OK)
      << relugrad_last_error();
  CUDA_ASSERT(cudaDeviceSynchronize());
  std::vector<uint16_t> out(n);
  CUDA_ASSERT(cudaMemcpy(out.data(), c.get(), bytes, cudaMemcpyDeviceToHost));
  for (size_t i = 0; i < n; ++i) {
    const uint16_t expected = i < split ? 0x4242 : 0;
    if (out[i] != expected)
      FAIL() << "element " << i << ": " << Hex(out[i]) << ", expected " << Hex(expected);
  }
}

TEST(CudaBackendTest, HostPointerIsRejected) {
  SKIP_WITHOUT_DEVICE();
  std::vector<float> host(64, 1.0f);
  DeviceBuffer b(64 * 4), c(64 * 4);
  const relugrad_options o = OnDevice(Preset(RELUGRAD_PRESET_TORCH));
  EXPECT_EQ(relugrad_relu_grad(RELUGRAD_F32, 64, host.data(), b.get(), c.get(), &o),
            RELUGRAD_INVALID_ARGUMENT);
  EXPECT_NE(std::string(relugrad_last_error()).find("dy"), std::string::npos)
      << relugrad_last_error();
  EXPECT_NE(std::string(relugrad_last_error()).find("host memory"), std::string::npos)
      << relugrad_last_error();
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);  // the context is still healthy
}

}  // namespace
}  // namespace testing
}  // namespace relugrad
