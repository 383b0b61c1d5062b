// relugrad mask-layout end to end: `relugrad forward --mask-out` on an NHWC x, the flat mask
// converted to the 910B blocked layout and back by the CLI equals what the C API gives, and bad
// input exits non-zero with one line and no output file. `forward --mask-out` and `run --mask`
// with --backend ascend_twin (the AscendC ReluV2 / ReluGradV2 kernels on the CPU twin) write the
// cpu backend's files; with --mask-layout blocked (the blocked kernels, NCHW and NHWC x) the
// mask is `mask-layout --to blocked` of the cpu backend's, y and dx the cpu backend's; what
// --mask-layout blocked refuses writes no file.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "cli_harness.h"
#include "io/npy.h"
#include "relugrad/relugrad.h"

namespace relugrad {
namespace testing {
namespace {

std::vector<uint8_t> ReadMask(const std::string& path, std::vector<int64_t>* shape) {
  npy::Array a;
  std::string error;
  EXPECT_TRUE(npy::Read(path, &a, &error)) << error;
  EXPECT_EQ(a.descr, "|u1");
  if (shape) *shape = a.shape;
  const auto* p = reinterpret_cast<const uint8_t*>(a.data.data());
  return std::vector<uint8_t>(p, p + a.count);
}

TEST(AscendMaskLayoutCli, ForwardMaskToBlockedAndBackMatchesTheCApi) {
  const int64_t n = 2, c = 19, h = 3, w = 5, count = n * c * h * w;
  std::vector<float> x(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) x[i] = static_cast<float>((i * 7919) % 13) - 6.0f;
  const std::string dir = ScratchDir();
  std::string error;
  ASSERT_TRUE(npy::Write(dir + "/x.npy", "<f4", {n, h, w, c}, x.data(), x.size() * 4, &error))
      << error;
  auto r = RunCli("forward --x " + dir + "/x.npy -o " + dir + "/y.npy --mask-out " + dir +
                  "/m.npy --semantics cann_relugrad_v2");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto flat = ReadMask(dir + "/m.npy", nullptr);

  r = RunCli("mask-layout --to blocked --layout nhwc --shape 2,19,3,5 --mask " + dir +
             "/m.npy -o " + dir + "/b.npy");
  ASSERT_EQ(r.status, 0) << r.err;
  std::vector<int64_t> shape;
  const auto blocked = ReadMask(dir + "/b.npy", &shape);
  EXPECT_EQ(shape, (std::vector<int64_t>{2, 2, 3, 5, 2}));
  std::vector<uint8_t> expected(static_cast<size_t>(relugrad_mask_blocked_bytes(n, c, h, w)));
  ASSERT_EQ(relugrad_mask_to_blocked(RELUGRAD_X_NHWC, n, c, h, w, flat.data(), expected.data()),
            RELUGRAD_OK);
  EXPECT_EQ(blocked, expected);
  // Element (n=1, c=18, h=2, w=4): its x > 0 is its blocked bit.
  const float x1 = x[static_cast<size_t>(((1 * h + 2) * w + 4) * c + 18)];
  const int64_t bit = (((1 * 2 + 1) * h + 2) * w + 4) * 16 + 2;
  EXPECT_EQ(((blocked[bit / 8] >> (bit % 8)) & 1) != 0, x1 > 0.0f);

  r = RunCli("mask-layout --to flat --layout nhwc --shape 2,19,3,5 --mask " + dir + "/b.npy -o " +
             dir + "/f.npy");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(ReadMask(dir + "/f.npy", nullptr), flat);
}

TEST(AscendMaskLayoutCli, BadInputExitsNonZeroWithoutAnOutputFile) {
  const std::string dir = ScratchDir();
  std::vector<uint8_t> m(3, 0xff);
  std::string error;
  ASSERT_TRUE(npy::Write(dir + "/short.npy", "|u1", {3}, m.data(), m.size(), &error)) << error;
  auto r = RunCli("mask-layout --to blocked --layout nchw --shape 1,17,2,2 --mask " + dir +
                  "/short.npy -o " + dir + "/never.npy");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("the flat mask of this shape has 9"), std::string::npos) << r.err;
  EXPECT_FALSE(Exists(dir + "/never.npy"));
  // A blocked mask (1, 2, 2, 2, 16 bits: 16 bytes) with the bit of padding channel 17 (C1 index
  // 1, C0 index 1) at h = 0, w = 0 set: bit ((1 * 2 + 0) * 2 + 0) * 16 + 1 = 65.
  std::vector<uint8_t> b(16, 0);
  b[8] = 0x02;
  ASSERT_TRUE(npy::Write(dir + "/pad.npy", "|u1", {16}, b.data(), b.size(), &error)) << error;
  r = RunCli("mask-layout --to flat --layout nchw --shape 1,17,2,2 --mask " + dir + "/pad.npy -o " +
             dir + "/never.npy");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("padding bit of channel 17"), std::string::npos) << r.err;
  EXPECT_FALSE(Exists(dir + "/never.npy"));
  r = RunCli("mask-layout --to sideways --layout nchw --shape 1,1,1,1 --mask " + dir +
             "/pad.npy -o " + dir + "/never.npy");
  EXPECT_NE(r.status, 0);
  EXPECT_FALSE(Exists(dir + "/never.npy"));
}

std::vector<uint8_t> ReadBytes(const std::string& path) {
  npy::Array a;
  std::string error;
  EXPECT_TRUE(npy::Read(path, &a, &error)) << error;
  const auto* p = reinterpret_cast<const uint8_t*>(a.data.data());
  return std::vector<uint8_t>(p, p + a.data.size());
}

TEST(AscendMaskLayoutCli, ForwardAndRunMaskOnTheTwinMatchTheCpuBackend) {
  if (!relugrad_backend_available(RELUGRAD_BACKEND_ASCEND_TWIN)) GTEST_SKIP() << "twin not built";
  const int64_t count = 3 * 1001;  // a partial last mask byte
  std::vector<uint16_t> x(static_cast<size_t>(count)), dy(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    x[static_cast<size_t>(i)] = static_cast<uint16_t>(i * 40503u);  // every sign, NaNs, zeros
    dy[static_cast<size_t>(i)] = static_cast<uint16_t>(i * 2654435761u >> 7);
  }
  const std::string dir = ScratchDir();
  std::string error;
  ASSERT_TRUE(npy::Write(dir + "/x.npy", "<f2", {3, 1001}, x.data(), x.size() * 2, &error))
      << error;
  ASSERT_TRUE(npy::Write(dir + "/dy.npy", "<f2", {3, 1001}, dy.data(), dy.size() * 2, &error))
      << error;
  for (const std::string backend : {"cpu", "ascend_twin"}) {
    auto r = RunCli("forward --x " + dir + "/x.npy -o " + dir + "/y_" + backend +
                    ".npy --mask-out " + dir + "/m_" + backend + ".npy --backend " + backend);
    ASSERT_EQ(r.status, 0) << backend << ": " << r.err;
    r = RunCli("run --dy " + dir + "/dy.npy --mask " + dir + "/m_" + backend + ".npy -o " + dir +
               "/dx_" + backend + ".npy --backend " + backend);
    ASSERT_EQ(r.status, 0) << backend << ": " << r.err;
  }
  EXPECT_EQ(ReadBytes(dir + "/y_ascend_twin.npy"), ReadBytes(dir + "/y_cpu.npy"));
  EXPECT_EQ(ReadBytes(dir + "/m_ascend_twin.npy"), ReadBytes(dir + "/m_cpu.npy"));
  EXPECT_EQ(ReadBytes(dir + "/dx_ascend_twin.npy"), ReadBytes(dir + "/dx_cpu.npy"));
  // What the kernels do not serve is one line and no file.
  auto r = RunCli("forward --x " + dir + "/x.npy -o " + dir + "/never.npy --mask-out " + dir +
                  "/never_m.npy --backend ascend_twin --semantics tensorflow");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("ascend-twin"), std::string::npos) << r.err;
  EXPECT_FALSE(Exists(dir + "/never_m.npy"));
}

// --mask-layout blocked on the twin (the AscendC blocked kernels from NCHW and NHWC x) against
// the cpu backend: y and dx byte for byte, the mask equal to `mask-layout --to blocked` of the
// cpu backend's flat mask.
TEST(AscendMaskLayoutCli, BlockedForwardAndRunOnTheTwinMatchTheCpuBackend) {
  if (!relugrad_backend_available(RELUGRAD_BACKEND_ASCEND_TWIN)) GTEST_SKIP() << "twin not built";
  const int64_t n = 2, c = 19, h = 3, w = 5, count = n * c * h * w;
  const std::string dir = ScratchDir();
  std::string error;
  struct Case {
    const char* layout;
    const char* descr;
    std::vector<int64_t> shape;
  };
  const Case cases[] = {{"nchw", "<f2", {n, c, h, w}},
                        {"nhwc", "<f2", {n, h, w, c}},
                        {"nchw", "<f4", {n, c, h, w}},
                        {"nhwc", "<f4", {n, h, w, c}}};
  for (const Case& k : cases) {
    const bool f32 = std::string(k.descr) == "<f4";
    std::vector<uint32_t> x(static_cast<size_t>(count)), dy(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) {
      // Every sign, NaNs, zeros: 16-bit patterns spread over the range (f32: in the high half).
      const uint32_t a = static_cast<uint32_t>(i * 40503u) & 0xffffu;
      const uint32_t b = static_cast<uint32_t>(i * 2654435761u >> 7) & 0xffffu;
      x[static_cast<size_t>(i)] = f32 ? a << 16 | b : a;
      dy[static_cast<size_t>(i)] = f32 ? b << 16 | a : b;
    }
    const size_t elem = f32 ? 4 : 2;
    std::vector<uint8_t> xb(static_cast<size_t>(count) * elem), dyb(xb.size());
    for (size_t i = 0; i < static_cast<size_t>(count); ++i) {
      std::memcpy(&xb[i * elem], &x[i], elem);  // little-endian: the low bytes
      std::memcpy(&dyb[i * elem], &dy[i], elem);
    }
    const std::string tag = std::string(k.layout) + (f32 ? "_f32" : "_f16");
    const std::string p = dir + "/" + tag;
    ASSERT_TRUE(npy::Write(p + "_x.npy", k.descr, k.shape, xb.data(), xb.size(), &error)) << error;
    ASSERT_TRUE(npy::Write(p + "_dy.npy", k.descr, k.shape, dyb.data(), dyb.size(), &error))
        << error;
    const std::string blocked = " --backend ascend_twin --mask-layout blocked --layout " +
                                std::string(k.layout) + " --shape 2,19,3,5";
    // The cpu backend, flat; its mask converted by the CLI.
    auto r =
        RunCli("forward --x " + p + "_x.npy -o " + p + "_y_cpu.npy --mask-out " + p + "_m_cpu.npy");
    ASSERT_EQ(r.status, 0) << tag << ": " << r.err;
    r = RunCli("run --dy " + p + "_dy.npy --mask " + p + "_m_cpu.npy -o " + p + "_dx_cpu.npy");
    ASSERT_EQ(r.status, 0) << tag << ": " << r.err;
    r = RunCli("mask-layout --to blocked --layout " + std::string(k.layout) +
               " --shape 2,19,3,5 --mask " + p + "_m_cpu.npy -o " + p + "_mb_cpu.npy");
    ASSERT_EQ(r.status, 0) << tag << ": " << r.err;
    // The twin, blocked.
    r = RunCli("forward --x " + p + "_x.npy -o " + p + "_y_twin.npy --mask-out " + p +
               "_m_twin.npy" + blocked);
    ASSERT_EQ(r.status, 0) << tag << ": " << r.err;
    r = RunCli("run --dy " + p + "_dy.npy --mask " + p + "_m_twin.npy -o " + p + "_dx_twin.npy" +
               blocked);
    ASSERT_EQ(r.status, 0) << tag << ": " << r.err;
    EXPECT_EQ(ReadBytes(p + "_y_twin.npy"), ReadBytes(p + "_y_cpu.npy")) << tag;
    std::vector<int64_t> shape;
    EXPECT_EQ(ReadMask(p + "_m_twin.npy", &shape), ReadBytes(p + "_mb_cpu.npy")) << tag;
    EXPECT_EQ(shape, (std::vector<int64_t>{2, 2, 3, 5, 2})) << tag;
    EXPECT_EQ(ReadBytes(p + "_dx_twin.npy"), ReadBytes(p + "_dx_cpu.npy")) << tag;
  }
}

// What --mask-layout blocked refuses: one line, exit non-zero, no output file.
TEST(AscendMaskLayoutCli, BlockedRefusalsWriteNothing) {
  const std::string dir = ScratchDir();
  std::string error;
  std::vector<float> x(2 * 19 * 3 * 5, 1.0f);
  std::vector<int32_t> xi(x.size(), 1);
  std::vector<double> xd(x.size(), 1.0);
  std::vector<uint8_t> m(static_cast<size_t>(relugrad_mask_blocked_bytes(2, 19, 3, 5)), 0xff);
  ASSERT_TRUE(npy::Write(dir + "/x.npy", "<f4", {2, 3, 5, 19}, x.data(), x.size() * 4, &error));
  ASSERT_TRUE(npy::Write(dir + "/xi.npy", "<i4", {2, 3, 5, 19}, xi.data(), xi.size() * 4, &error));
  ASSERT_TRUE(npy::Write(dir + "/xd.npy", "<f8", {2, 3, 5, 19}, xd.data(), xd.size() * 8, &error));
  ASSERT_TRUE(npy::Write(dir + "/m.npy", "|u1", {static_cast<int64_t>(m.size())}, m.data(),
                         m.size(), &error));
  const std::string out = " -o " + dir + "/never.npy --mask-out " + dir + "/never_m.npy";
  const std::string nhwc = " --mask-layout blocked --layout nhwc --shape 2,19,3,5";
  // twin: the case names --backend ascend_twin (refused as "not built" without the twin).
  const struct {
    std::string args, says;
    bool twin;
  } cases[] = {
      // Another backend.
      {"forward --x " + dir + "/x.npy" + out + nhwc, "ascend_twin only", false},
      {"run --dy " + dir + "/x.npy --mask " + dir + "/m.npy -o " + dir + "/never.npy" + nhwc,
       "ascend_twin only", false},
      // A shape that is not the array's: NCHW order for an NHWC array, a wrong dimension.
      {"forward --x " + dir + "/x.npy" + out +
           " --backend ascend_twin --mask-layout blocked --layout nchw --shape 2,19,3,5",
       "is not --shape 2,19,3,5 in NCHW order", true},
      {"forward --x " + dir + "/x.npy" + out +
           " --backend ascend_twin --mask-layout blocked --layout nhwc --shape 2,18,3,5",
       "is not --shape", true},
      {"run --dy " + dir + "/x.npy --mask " + dir + "/m.npy -o " + dir +
           "/never.npy --backend ascend_twin --mask-layout blocked --layout nhwc --shape 2,17,3,5",
       "is not --shape", true},
      // Non-float and f64 data.
      {"forward --x " + dir + "/xi.npy" + out + " --backend ascend_twin" + nhwc, "integer", true},
      {"forward --x " + dir + "/xd.npy" + out + " --backend ascend_twin" + nhwc, "f64", true},
      // Flags that belong to the blocked layout, a layout that does not exist.
      {"forward --x " + dir + "/x.npy" + out + " --layout nhwc", "--mask-layout blocked only",
       false},
      {"forward --x " + dir + "/x.npy" + out + " --backend ascend_twin --mask-layout tiled",
       "flat or blocked", true},
      {"forward --x " + dir + "/x.npy" + out +
           " --backend ascend_twin --mask-layout blocked --layout hwcn --shape 2,19,3,5",
       "nchw or nhwc", true},
  };
  const bool twin = relugrad_backend_available(RELUGRAD_BACKEND_ASCEND_TWIN) != 0;
  for (const auto& k : cases) {
    if (k.twin && !twin) continue;
    const auto r = RunCli(k.args);
    EXPECT_NE(r.status, 0) << k.args;
    EXPECT_NE(r.err.find(k.says), std::string::npos) << k.args << "\n" << r.err;
    EXPECT_FALSE(Exists(dir + "/never.npy")) << k.args;
    EXPECT_FALSE(Exists(dir + "/never_m.npy")) << k.args;
  }
  if (!twin) return;
  // A blocked mask one byte short.
  std::vector<uint8_t> shortm(m.size() - 1, 0);
  ASSERT_TRUE(npy::Write(dir + "/short.npy", "|u1", {static_cast<int64_t>(shortm.size())},
                         shortm.data(), shortm.size(), &error));
  const auto r = RunCli("run --dy " + dir + "/x.npy --mask " + dir + "/short.npy -o " + dir +
                        "/never.npy --backend ascend_twin" + nhwc);
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("the blocked mask of --shape has 120"), std::string::npos) << r.err;
  EXPECT_FALSE(Exists(dir + "/never.npy"));
}

}  // namespace
}  // namespace testing
}  // namespace relugrad
