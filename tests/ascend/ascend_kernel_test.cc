// The AscendC kernel through the CPU twin, bit for bit against the scalar
// reference: every dtype the kernel serves, every preset and option family,
// n from 0 to several tiles x several blocks, odd tails, misaligned dx,
// in place. Exhaustive over 16-bit gate and dy patterns.
#include <cstring>
#include <vector>

#include "ascend/twin_launch.h"
#include "ascend_test_util.h"
#include "core/backend.h"
#include "core/reference.h"
#include "gtest/gtest.h"

namespace {

using relugrad::Dtype;
using rg_ascend_test::Config;

std::string Hex(const std::vector<uint8_t>& v, int64_t i, int elem) {
  uint64_t x = 0;
  std::memcpy(&x, &v[static_cast<size_t>(i * elem)], static_cast<size_t>(elem));
  char buf[32];
  std::snprintf(buf, sizeof(buf), "0x%0*llx", elem * 2, static_cast<unsigned long long>(x));
  return buf;
}

// Runs one case: kernel on the twin vs ReferenceRun, dx offset by `shift`
// elements from a 64-byte boundary.
void CheckCase(Dtype dtype, const Config& cfg, int64_t n, int cores, int shift, bool in_place,
               uint32_t seed) {
  relugrad::Rules sem;
  const relugrad::KernelParams params = rg_ascend_test::ParamsFor(dtype, cfg.options, &sem);
  const int elem = relugrad::DtypeSize(dtype);
  const std::vector<uint8_t> dy = rg_ascend_test::MakeBits(dtype, n, seed);
  const std::vector<uint8_t> s = rg_ascend_test::MakeBits(dtype, n, seed * 7 + 1);
  std::vector<uint8_t> want(dy.size());
  relugrad::ReferenceRun(dtype, n, dy.data(), s.data(), want.data(), sem);

  // Separate storage so the twin's GM bounds are the arrays' own.
  std::vector<uint8_t> dy_store(dy.size() + 64 + static_cast<size_t>(shift * elem));
  std::vector<uint8_t> dx_store(dy.size() + 64 + static_cast<size_t>(shift * elem), 0xcd);
  auto align = [&](std::vector<uint8_t>& v) {
    const uintptr_t p = reinterpret_cast<uintptr_t>(v.data());
    return v.data() + ((64 - p % 64) % 64) + shift * elem;
  };
  uint8_t* dyp = align(dy_store);
  uint8_t* dxp = in_place ? dyp : align(dx_store);
  if (n > 0) std::memcpy(dyp, dy.data(), dy.size());

  relugrad::ascend::TilingRequest req;
  req.dtype = dtype;
  req.n = n;
  req.dx_address = reinterpret_cast<uintptr_t>(dxp);
  req.cores = cores;
  req.grain_bytes = 0;  // use every core the test asks for
  relugrad::ascend::TwinRun run;
  const char* why = "";
  try {
    ASSERT_TRUE(relugrad::ascend::RunOnTwin(req, dyp, s.data(), dxp, params, &run, &why)) << why;
  } catch (const std::exception& e) {
    FAIL() << cfg.name << " n=" << n << " cores=" << cores << ": " << e.what();
  }
  std::vector<uint8_t> got(dxp, dxp + dy.size());
  const int64_t i = rg_ascend_test::FirstDiff(got, want, elem);
  ASSERT_EQ(i, -1) << cfg.name << " " << relugrad_dtype_name(static_cast<relugrad_dtype>(dtype))
                   << " n=" << n << " cores=" << cores << " shift=" << shift
                   << " in_place=" << in_place << ": element " << i << " dy=" << Hex(dy, i, elem)
                   << " s=" << Hex(s, i, elem) << " got " << Hex(got, i, elem) << " want "
                   << Hex(want, i, elem) << " (tile " << run.tiling.tileElems << ", blocks "
                   << run.tiling.blocks << ")";
  // Bytes around dx untouched.
  if (!in_place) {
    for (uint8_t* p = dx_store.data(); p < dxp; ++p) ASSERT_EQ(*p, 0xcd) << "write before dx";
    for (uint8_t* p = dxp + dy.size(); p < dx_store.data() + dx_store.size(); ++p)
      ASSERT_EQ(*p, 0xcd);
  }
}

class AscendKernel : public ::testing::TestWithParam<Dtype> {};

TEST_P(AscendKernel, EveryConfigAgainstReference) {
  const Dtype dtype = GetParam();
  for (const Config& cfg : rg_ascend_test::Configs()) {
    // Tile length of this config, to place n around tile boundaries.
    relugrad::Rules sem;
    const relugrad::KernelParams params = rg_ascend_test::ParamsFor(dtype, cfg.options, &sem);
    ReluGradTilingData td;
    relugrad::WorkPlan plan;
    relugrad::ascend::TilingRequest req;
    req.dtype = dtype;
    req.n = 1 << 20;
    req.cores = 1;
    const char* why = "";
    ASSERT_TRUE(relugrad::ascend::MakeTiling(req, params, &td, &plan, &why)) << why;
    const int64_t tile = td.tileElems;
    const int64_t ns[] = {0, 1, 7, 17, 64, 129, tile - 1, tile, tile + 3};
    uint32_t seed = 1;
    for (int64_t n : ns) {
      for (int cores : {1, 3}) {
        CheckCase(dtype, cfg, n, cores, (n % 3 == 0) ? 0 : 1, false, seed++);
        if (HasFatalFailure()) return;
      }
    }
  }
}

TEST_P(AscendKernel, SeveralTilesTimesSeveralBlocks) {
  const Dtype dtype = GetParam();
  const auto configs = rg_ascend_test::Configs();
  uint32_t seed = 100;
  // Plain select (torch), the general path (tensorflow) and alpha (onednn+alpha).
  for (const char* name : {"torch", "tensorflow", "onednn+alpha0.1", "torch+clip[-0.5,2]"}) {
    const Config* cfg = nullptr;
    for (const auto& c : configs) {
      if (c.name == name) cfg = &c;
    }
    ASSERT_NE(cfg, nullptr) << name;
    relugrad::Rules sem;
    const auto params = rg_ascend_test::ParamsFor(dtype, cfg->options, &sem);
    ReluGradTilingData td;
    relugrad::WorkPlan plan;
    relugrad::ascend::TilingRequest req;
    req.dtype = dtype;
    req.n = 1 << 20;
    const char* why = "";
    ASSERT_TRUE(relugrad::ascend::MakeTiling(req, params, &td, &plan, &why));
    const int64_t tile = td.tileElems;
    for (int cores : {2, 5}) {
      for (int shift : {0, 3}) {
        // Several tiles per block, a ragged last tile and a ragged last block.
        const int64_t n = 3 * tile * cores + 2 * tile / 3 + 5;
        CheckCase(dtype, *cfg, n, cores, shift, false, seed++);
        if (HasFatalFailure()) return;
      }
    }
    CheckCase(dtype, *cfg, 2 * tile * 3 + 11, 3, 1, /*in_place=*/true, seed++);
    if (HasFatalFailure()) return;
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, AscendKernel,
                         ::testing::Values(Dtype::kF32, Dtype::kF16, Dtype::kBF16),
                         [](const auto& info) {
                           return std::string(
                               relugrad_dtype_name(static_cast<relugrad_dtype>(info.param)));
                         });

// Every 16-bit pattern as the gate (dy varied) and as dy (gate open and
// closed), for every config: the NaN, signed-zero, subnormal and threshold
// rules see all their inputs.
class AscendExhaustive16 : public ::testing::TestWithParam<Dtype> {};

TEST_P(AscendExhaustive16, AllPatterns) {
  const Dtype dtype = GetParam();
  const int64_t n = 2 * 65536;
  for (const Config& cfg : rg_ascend_test::Configs()) {
    relugrad::Rules sem;
    const auto params = rg_ascend_test::ParamsFor(dtype, cfg.options, &sem);
    std::vector<uint16_t> dy(static_cast<size_t>(n)), s(static_cast<size_t>(n)),
        got(static_cast<size_t>(n)), want(static_cast<size_t>(n));
    const std::vector<uint8_t> noise = rg_ascend_test::MakeBits(dtype, 65536, 5);
    const uint16_t open_s =
        dtype == Dtype::kF16 ? 0x7bff : 0x7f7f;  // the largest finite: open unless threshold +inf
    for (int64_t i = 0; i < 65536; ++i) {
      s[static_cast<size_t>(i)] = static_cast<uint16_t>(i);
      std::memcpy(&dy[static_cast<size_t>(i)], &noise[static_cast<size_t>(2 * i)], 2);
      dy[static_cast<size_t>(65536 + i)] = static_cast<uint16_t>(i);
      s[static_cast<size_t>(65536 + i)] =
          (i & 1) ? open_s : static_cast<uint16_t>(0x8000);  // open / -0
    }
    relugrad::ReferenceRun(dtype, n, dy.data(), s.data(), want.data(), sem);
    relugrad::ascend::TilingRequest req;
    req.dtype = dtype;
    req.n = n;
    req.dx_address = reinterpret_cast<uintptr_t>(got.data());
    req.cores = 2;
    req.grain_bytes = 0;
    relugrad::ascend::TwinRun run;
    const char* why = "";
    ASSERT_TRUE(
        relugrad::ascend::RunOnTwin(req, dy.data(), s.data(), got.data(), params, &run, &why));
    for (int64_t i = 0; i < n; ++i) {
      const size_t k = static_cast<size_t>(i);
      ASSERT_EQ(got[k], want[k]) << cfg.name << " element " << i << " dy=0x" << std::hex << dy[k]
                                 << " s=0x" << s[k] << " got 0x" << got[k] << " want 0x" << want[k];
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes16, AscendExhaustive16, ::testing::Values(Dtype::kF16, Dtype::kBF16),
                         [](const auto& info) {
                           return std::string(
                               relugrad_dtype_name(static_cast<relugrad_dtype>(info.param)));
                         });

// The kernel strides over plan blocks by GetBlockNum(): a launch narrower
// or wider than the plan still computes every element exactly once.
TEST(AscendKernelLaunch, LaunchWidthOtherThanThePlan) {
  relugrad_options o;
  relugrad_options_init(&o, RELUGRAD_PRESET_TENSORFLOW);
  relugrad::Rules sem;
  const auto params = rg_ascend_test::ParamsFor(Dtype::kF32, o, &sem);
  const int64_t n = 50000;
  const auto dy = rg_ascend_test::MakeBits(Dtype::kF32, n, 3);
  const auto s = rg_ascend_test::MakeBits(Dtype::kF32, n, 4);
  std::vector<uint8_t> want(dy.size());
  relugrad::ReferenceRun(Dtype::kF32, n, dy.data(), s.data(), want.data(), sem);
  for (int width : {1, 2, 7, 9}) {
    std::vector<uint8_t> got(dy.size(), 0xcd);
    relugrad::ascend::TilingRequest req;
    req.n = n;
    req.cores = 7;
    req.grain_bytes = 0;
    req.dx_address = reinterpret_cast<uintptr_t>(got.data());
    ReluGradTilingData td;
    relugrad::WorkPlan plan;
    const char* why = "";
    ASSERT_TRUE(relugrad::ascend::MakeTiling(req, params, &td, &plan, &why));
    ASSERT_EQ(td.blocks, 7u);
    ASSERT_NO_THROW(relugrad::ascend::LaunchWithTiling(&relu_grad, td, plan, dy.data(), s.data(),
                                                       got.data(), width))
        << "width " << width;
    EXPECT_EQ(rg_ascend_test::FirstDiff(got, want, 4), -1) << "width " << width;
  }
}

// The backend entry point the C ABI dispatches to.
TEST(AscendBackend, PublicApiRoutesToTwin) {
  ASSERT_TRUE(relugrad::AscendTwinBackendOps().built);
  EXPECT_TRUE(relugrad_backend_available(RELUGRAD_BACKEND_ASCEND_TWIN));
  const int64_t n = 1000;
  const auto dy = rg_ascend_test::MakeBits(Dtype::kF32, n, 9);
  const auto s = rg_ascend_test::MakeBits(Dtype::kF32, n, 10);
  std::vector<uint8_t> got(dy.size()), want(dy.size());
  relugrad_options o;
  relugrad_options_init(&o, RELUGRAD_PRESET_TENSORFLOW);
  ASSERT_EQ(relugrad_relu_grad_reference(RELUGRAD_F32, n, dy.data(), s.data(), want.data(), &o),
            RELUGRAD_OK);
  o.backend = RELUGRAD_BACKEND_ASCEND_TWIN;
  ASSERT_EQ(relugrad_relu_grad(RELUGRAD_F32, n, dy.data(), s.data(), got.data(), &o), RELUGRAD_OK)
      << relugrad_last_error();
  EXPECT_EQ(rg_ascend_test::FirstDiff(got, want, 4), -1);
  EXPECT_EQ(relugrad_relu_grad(RELUGRAD_F32, 0, nullptr, nullptr, nullptr, &o), RELUGRAD_OK);
}

TEST(AscendBackend, F64IsUnsupported) {
  std::vector<double> a(8, 1.0), b(8, 1.0), c(8);
  relugrad_options o;
  relugrad_options_init(&o, RELUGRAD_PRESET_TORCH);
  o.backend = RELUGRAD_BACKEND_ASCEND_TWIN;
  EXPECT_EQ(relugrad_relu_grad(RELUGRAD_F64, 8, a.data(), b.data(), c.data(), &o),
            RELUGRAD_UNSUPPORTED);
  EXPECT_NE(std::string(relugrad_last_error()).find("f64"), std::string::npos)
      << relugrad_last_error();
}

}  // namespace
