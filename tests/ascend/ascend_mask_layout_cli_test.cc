// relugrad mask-layout end to end: `relugrad forward --mask-out` on an NHWC x, the flat mask
// converted to the 910B blocked layout and back by the CLI equals what the C API gives, and bad
// input exits non-zero with one line and no output file. `forward --mask-out` and `run --mask`
// with --backend ascend_twin (the AscendC ReluV2 / ReluGradV2 kernels on the CPU twin) write the
// cpu backend's files.
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

}  // namespace
}  // namespace testing
}  // namespace relugrad
