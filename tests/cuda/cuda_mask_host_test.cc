// The CUDA mask-path kernel bodies (kernel_body.h: ForwardMaskBody,
// GradMaskBody) run on the CPU over simulated grids, against the mask
// reference (core/mask_reference.h), bit for bit: every config and dtype,
// lengths 0..130 and around byte/vector multiples, aligned (vector) and
// element-offset (scalar) data, in place, one-block grids (many grid-stride
// turns) and full grids, guard bytes around y/dx and the mask. Runs with or
// without a GPU.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/mask_reference.h"
#include "core/semantics.h"
#include "cuda/device_params.h"
#include "cuda/kernel_body.h"
#include "relugrad/relugrad.h"
#include "support/guarded.h"
#include "test_support.h"

namespace relugrad {
namespace testing {
namespace {

template <Dtype D>
void Simulate(bool forward, const cuda::DeviceParams& p, int64_t n, const void* in, void* out,
              uint8_t* mask, int max_blocks) {
  using Bits = typename DtypeTraits<D>::Bits;
  const bool vector = cuda::Aligned16(in) && cuda::Aligned16(out);
  const int64_t threads =
      int64_t{cuda::BlocksFor((n + 7) / 8, max_blocks)} * cuda::kThreadsPerBlock;
  for (int64_t tid = 0; tid < threads; ++tid) {
    if (forward) {
      cuda::ForwardMaskBody<D>(p, n, static_cast<const Bits*>(in), static_cast<Bits*>(out), mask,
                               vector, tid, threads);
    } else {
      cuda::GradMaskBody<D>(p, n, static_cast<const Bits*>(in), mask, static_cast<Bits*>(out),
                            vector, tid, threads);
    }
  }
}

void SimulateAny(Dtype d, bool forward, const cuda::DeviceParams& p, int64_t n, const void* in,
                 void* out, uint8_t* mask, int max_blocks) {
  switch (d) {
    case Dtype::kF32:
      return Simulate<Dtype::kF32>(forward, p, n, in, out, mask, max_blocks);
    case Dtype::kF16:
      return Simulate<Dtype::kF16>(forward, p, n, in, out, mask, max_blocks);
    case Dtype::kBF16:
      return Simulate<Dtype::kBF16>(forward, p, n, in, out, mask, max_blocks);
    case Dtype::kF64:
      return Simulate<Dtype::kF64>(forward, p, n, in, out, mask, max_blocks);
  }
}

// Forward x -> (y, mask), then backward (dy, mask) -> dx, each against the
// reference; in_place puts y on x and dx on dy.
void RoundTrip(relugrad_dtype dt, const relugrad_options& o, const std::vector<unsigned char>& x,
               const std::vector<unsigned char>& dy, size_t offset, bool in_place, int max_blocks,
               const std::string& what) {
  Rules sem;
  ASSERT_EQ(ResolveOptions(&o, &sem), RELUGRAD_OK);
  const Dtype d = ToDtype(dt);
  const cuda::DeviceParams p = cuda::ToDeviceParams(MakeKernelParams(d, sem));
  const size_t bytes = x.size(), n = bytes / relugrad_dtype_size(dt), mb = (n + 7) / 8;

  std::vector<unsigned char> want_y(bytes), want_mask(mb), want_dx(bytes);
  ReferenceForwardRun(d, static_cast<int64_t>(n), x.data(), want_y.data(), want_mask.data(), sem);
  ReferenceGradMaskRun(d, static_cast<int64_t>(n), dy.data(), want_mask.data(), want_dx.data(),
                       sem);

  Guarded gx(x, offset), gy(bytes, offset, kSentinel), gm(mb, 0, kSentinel);
  Guarded& yout = in_place ? gx : gy;
  SimulateAny(d, true, p, static_cast<int64_t>(n), gx.data(), yout.data(), gm.data(), max_blocks);
  ASSERT_EQ(CompareBits(dt, want_y.data(), yout.data(), n, x.data(), x.data()), "")
      << what << " forward y";
  ASSERT_EQ(mb == 0 ? 0 : std::memcmp(want_mask.data(), gm.data(), mb), 0)
      << what << " forward mask";
  ASSERT_EQ(yout.CheckGuards(), "") << what << " y";
  ASSERT_EQ(gm.CheckGuards(), "") << what << " mask";

  Guarded gg(dy, offset), gd(bytes, offset, kSentinel);
  Guarded& dxout = in_place ? gg : gd;
  SimulateAny(d, false, p, static_cast<int64_t>(n), gg.data(), dxout.data(), gm.data(), max_blocks);
  ASSERT_EQ(CompareBits(dt, want_dx.data(), dxout.data(), n, dy.data(), x.data()), "")
      << what << " backward dx";
  ASSERT_EQ(dxout.CheckGuards(), "") << what << " dx";
}

TEST(CudaMaskHostTest, EveryConfigLengthsOffsetsGrids) {
  std::vector<size_t> lengths;
  for (size_t n = 0; n <= 130; ++n) lengths.push_back(n);
  for (size_t n : {255, 256, 257, 2047, 2048, 2049, 4103}) lengths.push_back(n);
  for (relugrad_dtype d : kAllDtypes) {
    const size_t es = relugrad_dtype_size(d);
    const auto x_all = Pack(d, RandomBits(d, lengths.back(), 71)),
               g_all = Pack(d, RandomBits(d, lengths.back(), 72));
    for (const Config& c : AllConfigs()) {
      for (size_t n : lengths) {
        const std::vector<unsigned char> x(x_all.begin(), x_all.begin() + n * es);
        const std::vector<unsigned char> g(g_all.begin(), g_all.begin() + n * es);
        for (size_t offset : {size_t{0}, es}) {
          for (bool in_place : {false, true}) {
            for (int blocks : {1, 1 << 20}) {
              ASSERT_NO_FATAL_FAILURE(RoundTrip(
                  d, c.options, x, g, offset, in_place, blocks,
                  std::string(relugrad_dtype_name(d)) + " " + c.name + " n=" + std::to_string(n) +
                      " offset=" + std::to_string(offset) + (in_place ? " in place" : "") +
                      " blocks=" + std::to_string(blocks)));
            }
          }
        }
      }
    }
  }
}

TEST(CudaMaskHostTest, SpecialValuesEveryConfig) {
  for (relugrad_dtype d : kAllDtypes) {
    const auto [gs, xs] = SpecialValuePairs(d);
    const auto x = Pack(d, xs), g = Pack(d, gs);
    for (const Config& c : AllConfigs()) {
      ASSERT_NO_FATAL_FAILURE(RoundTrip(d, c.options, x, g, 0, false, 1 << 20, c.name + " vector"));
      ASSERT_NO_FATAL_FAILURE(
          RoundTrip(d, c.options, x, g, relugrad_dtype_size(d), false, 3, c.name + " scalar"));
    }
  }
}

}  // namespace
}  // namespace testing
}  // namespace relugrad
