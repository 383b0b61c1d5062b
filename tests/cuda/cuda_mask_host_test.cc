// The CUDA mask-path kernel bodies (mask_body.h: ForwardMaskBody,
// GradMaskBody and their one-shot and pipelined forms) run on the CPU over simulated grids, against
// the mask reference (core/mask_reference.h), bit for bit: every config and dtype, lengths 0..130
// and around byte/vector multiples, aligned (vector) and element-offset (scalar) data, in place,
// one-block grids (many grid-stride turns) and full grids, guard bytes around y/dx and the mask.
// Runs with or without a GPU.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/mask_reference.h"
#include "core/semantics.h"
#include "cuda/device_params.h"
#include "cuda/launch_config.h"
#include "cuda/launch_plan.h"
#include "cuda/mask_body.h"
#include "relugrad/relugrad.h"
#include "support/guarded.h"
#include "test_support.h"

namespace relugrad {
namespace testing {
namespace {

// A geometry with its knob: one-shot with a launch byte limit, the loops with a grid cap.
struct Variant {
  cuda::Geometry geometry;
  int max_blocks;
  int64_t max_launch_bytes;
  std::string Name() const {
    return std::string(cuda::GeometryName(geometry)) +
           (geometry == cuda::Geometry::kOneShot
                ? " launch_bytes=" + std::to_string(max_launch_bytes)
                : " max_blocks=" + std::to_string(max_blocks));
  }
};

template <Dtype D>
void Simulate(bool forward, const cuda::DeviceParams& p, int64_t n, const void* in_v, void* out_v,
              uint8_t* mask, const Variant& v) {
  using Bits = typename DtypeTraits<D>::Bits;
  const Bits* in = static_cast<const Bits*>(in_v);
  Bits* out = static_cast<Bits*>(out_v);
  const bool vector = cuda::Aligned16(in) && cuda::Aligned16(out);
  if (v.geometry == cuda::Geometry::kOneShot) {
    // As mask_kernels.cu launches it: 1024 elements (128 mask bytes) per block.
    int64_t covered = 0;
    cuda::ForEachElementLaunch(
        D, n, v.max_launch_bytes, int64_t{cuda::kOneShotThreads} * 8,
        [&](int64_t first, int64_t count, uint32_t blocks) {
          ASSERT_EQ(first, covered);
          ASSERT_EQ(first % 8, 0);
          covered += count;
          // A launch after the first starts aligned when the call does.
          ASSERT_EQ(cuda::Aligned16(in + first) && cuda::Aligned16(out + first), vector);
          for (uint32_t b = 0; b < blocks; ++b) {
            for (uint32_t t = 0; t < static_cast<uint32_t>(cuda::kOneShotThreads); ++t) {
              if (forward) {
                cuda::OneShotForwardMaskBody<D>(p, static_cast<uint32_t>(count), in + first,
                                                out + first, mask + first / 8, vector, b, t);
              } else {
                cuda::OneShotGradMaskBody<D>(p, static_cast<uint32_t>(count), in + first,
                                             mask + first / 8, out + first, vector, b, t);
              }
            }
          }
        });
    ASSERT_EQ(covered, n);
    return;
  }
  const int64_t threads =
      int64_t{cuda::BlocksFor((n + 7) / 8, v.max_blocks)} * cuda::kThreadsPerBlock;
  const bool pipelined = v.geometry == cuda::Geometry::kPipelined;
  for (int64_t tid = 0; tid < threads; ++tid) {
    if (forward && pipelined) {
      cuda::PipelinedForwardMaskBody<D>(p, n, in, out, mask, vector, tid, threads);
    } else if (forward) {
      cuda::ForwardMaskBody<D>(p, n, in, out, mask, vector, tid, threads);
    } else if (pipelined) {
      cuda::PipelinedGradMaskBody<D>(p, n, in, mask, out, vector, tid, threads);
    } else {
      cuda::GradMaskBody<D>(p, n, in, mask, out, vector, tid, threads);
    }
  }
}

void SimulateAny(Dtype d, bool forward, const cuda::DeviceParams& p, int64_t n, const void* in,
                 void* out, uint8_t* mask, const Variant& v) {
  switch (d) {
    case Dtype::kF32:
      return Simulate<Dtype::kF32>(forward, p, n, in, out, mask, v);
    case Dtype::kF16:
      return Simulate<Dtype::kF16>(forward, p, n, in, out, mask, v);
    case Dtype::kBF16:
      return Simulate<Dtype::kBF16>(forward, p, n, in, out, mask, v);
    case Dtype::kF64:
      return Simulate<Dtype::kF64>(forward, p, n, in, out, mask, v);
  }
}

// Forward x -> (y, mask), then backward (dy, mask) -> dx, each against the
// reference; in_place puts y on x and dx on dy.
void RoundTripVariant(relugrad_dtype dt, const relugrad_options& o,
                      const std::vector<unsigned char>& x, const std::vector<unsigned char>& dy,
                      size_t offset, bool in_place, const Variant& v, const std::string& what) {
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
  SimulateAny(d, true, p, static_cast<int64_t>(n), gx.data(), yout.data(), gm.data(), v);
  ASSERT_EQ(CompareBits(dt, want_y.data(), yout.data(), n, x.data(), x.data()), "")
      << what << " forward y";
  ASSERT_EQ(mb == 0 ? 0 : std::memcmp(want_mask.data(), gm.data(), mb), 0)
      << what << " forward mask";
  ASSERT_EQ(yout.CheckGuards(), "") << what << " y";
  ASSERT_EQ(gm.CheckGuards(), "") << what << " mask";

  Guarded gg(dy, offset), gd(bytes, offset, kSentinel);
  Guarded& dxout = in_place ? gg : gd;
  SimulateAny(d, false, p, static_cast<int64_t>(n), gg.data(), dxout.data(), gm.data(), v);
  ASSERT_EQ(CompareBits(dt, want_dx.data(), dxout.data(), n, dy.data(), x.data()), "")
      << what << " backward dx";
  ASSERT_EQ(dxout.CheckGuards(), "") << what << " dx";
}

// Every geometry: one-shot (with max_blocks == 1, 64-byte launches so the split into launches is
// exercised), grid-stride and pipelined (grid capped at max_blocks).
void RoundTrip(relugrad_dtype dt, const relugrad_options& o, const std::vector<unsigned char>& x,
               const std::vector<unsigned char>& dy, size_t offset, bool in_place, int max_blocks,
               const std::string& what) {
  const Variant variants[] = {
      {cuda::Geometry::kOneShot, max_blocks, max_blocks == 1 ? 64 : cuda::kMaxLaunchBytes},
      {cuda::Geometry::kGridStride, max_blocks, 0},
      {cuda::Geometry::kPipelined, max_blocks, 0},
  };
  for (const Variant& v : variants) {
    ASSERT_NO_FATAL_FAILURE(
        RoundTripVariant(dt, o, x, dy, offset, in_place, v, what + " " + v.Name()));
  }
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
