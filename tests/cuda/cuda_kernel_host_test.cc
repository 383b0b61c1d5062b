// The CUDA kernels' bodies (src/cuda/relu_grad_body.h and launch_plan.h: the one-shot geometry, the
// grid-stride loop with both unrolls, the pipelined loop) run on the CPU over simulated grids:
// every (block, thread) of every launch the launcher would make (with the launchers' own planners,
// and with deliberately small launches and grids, so the split into launches and the loops' many
// turns are exercised) executes the same code the device runs. Checked bit for bit against the
// reference with guard bytes around dx, for every length 0..300 and around vector multiples, every
// 16-byte phase of each pointer (vector path with head/tail, and the scalar kernel), and in place.
// Runs with or without a GPU; the device suite repeats the checks on real hardware.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/semantics.h"
#include "cuda/device_params.h"
#include "cuda/element.h"
#include "cuda/launch_config.h"
#include "cuda/launch_plan.h"
#include "cuda/relu_grad_body.h"
#include "relugrad/relugrad.h"
#include "support/guarded.h"
#include "test_support.h"

namespace relugrad {
namespace testing {
namespace {

using cuda::Mode;

// One way of running a call: a geometry with its knobs. One-shot: the
// launch byte limit (kMaxLaunchBytes, or a small multiple of 64 so that a
// few hundred elements already take several launches); loop geometries: the
// grid cap (1: one block loops over everything). reverse: blocks and threads
// in reverse order (a GPU runs them in any order; a body that relied on
// another thread's earlier write would differ).
struct Variant {
  cuda::Geometry geometry;
  int unroll;
  int max_blocks;
  int64_t max_launch_bytes;
  bool reverse;
  std::string Name() const {
    return std::string(cuda::GeometryName(geometry)) +
           (geometry == cuda::Geometry::kGridStride ? " unroll=" + std::to_string(unroll) : "") +
           (geometry == cuda::Geometry::kOneShot
                ? " launch_bytes=" + std::to_string(max_launch_bytes)
                : " max_blocks=" + std::to_string(max_blocks)) +
           (reverse ? " reversed" : "");
  }
};

// Calls body(block, thread) for every thread of a grid, in the variant's order.
template <typename F>
void RunGrid(uint32_t blocks, int threads, bool reverse, F&& body) {
  for (uint32_t bi = 0; bi < blocks; ++bi) {
    for (int ti = 0; ti < threads; ++ti) {
      const uint32_t b = reverse ? blocks - 1 - bi : bi;
      const int t = reverse ? threads - 1 - ti : ti;
      body(b, static_cast<uint32_t>(t));
    }
  }
}

void ExpectAligned(const void* a, const void* b, const void* c) {
  for (const void* p : {a, b, c}) {
    // The device faults on a misaligned 16-byte access; x86 would not.
    ASSERT_EQ(reinterpret_cast<uintptr_t>(p) % cuda::kVectorBytes, 0u) << "misaligned vector body";
  }
}

template <Dtype D, Mode M>
void SimulateGrid(const cuda::DeviceParams& p, int64_t n, const void* dy_v, const void* s_v,
                  void* dx_v, const Variant& v) {
  using Bits = typename DtypeTraits<D>::Bits;
  constexpr int64_t kLanes = cuda::kVectorBytes / sizeof(Bits);
  const Bits* dy = static_cast<const Bits*>(dy_v);
  const Bits* s = static_cast<const Bits*>(s_v);
  Bits* dx = static_cast<Bits*>(dx_v);
  const cuda::VectorPlan plan = cuda::PlanVectors(D, n, dy, s, dx);
  if (v.geometry == cuda::Geometry::kOneShot) {
    if (plan.vector) {
      const int64_t per_block = int64_t{cuda::kOneShotThreads} * cuda::kOneShotVectors<D>;
      int64_t covered = 0;
      cuda::ForEachVectorLaunch(
          D, plan, v.max_launch_bytes,
          [&](int64_t first, int64_t count, int head, int tail, uint32_t blocks) {
            // The launch's invariants: contiguous, within the byte limit, no empty block,
            // the edges within block 0.
            ASSERT_EQ(first, covered);
            covered += count;
            ASSERT_LE(count * cuda::kVectorBytes, v.max_launch_bytes);
            ASSERT_GE(int64_t{blocks} * per_block, count);
            ASSERT_TRUE(blocks == 1 || int64_t{blocks - 1} * per_block < count);
            ASSERT_LE(head + tail, cuda::kOneShotThreads);
            const int64_t at = plan.head + first * kLanes;
            if (count > 0) ASSERT_NO_FATAL_FAILURE(ExpectAligned(dy + at, s + at, dx + at));
            RunGrid(blocks, cuda::kOneShotThreads, v.reverse, [&](uint32_t b, uint32_t t) {
              cuda::OneShotVectorBody<D, M>(p, static_cast<uint32_t>(count), head, tail, dy + at,
                                            s + at, dx + at, b, t);
            });
          });
      ASSERT_EQ(covered, plan.vectors);
    } else {
      constexpr int64_t kPerBlock = int64_t{cuda::kOneShotThreads} * cuda::kElementsPerThread;
      int64_t covered = 0;
      cuda::ForEachElementLaunch(
          D, n, v.max_launch_bytes, kPerBlock, [&](int64_t first, int64_t count, uint32_t blocks) {
            ASSERT_EQ(first, covered);
            covered += count;
            ASSERT_LE(count * static_cast<int64_t>(sizeof(Bits)), v.max_launch_bytes);
            ASSERT_GE(int64_t{blocks} * kPerBlock, count);
            RunGrid(blocks, cuda::kOneShotThreads, v.reverse, [&](uint32_t b, uint32_t t) {
              cuda::OneShotScalarBody<D, M>(p, static_cast<uint32_t>(count), dy + first, s + first,
                                            dx + first, b, t);
            });
          });
      ASSERT_EQ(covered, n);
    }
    return;
  }
  if (!plan.vector) {
    const uint32_t blocks = static_cast<uint32_t>(cuda::BlocksFor(n, v.max_blocks));
    const int64_t threads = int64_t{blocks} * cuda::kThreadsPerBlock;
    RunGrid(blocks, cuda::kThreadsPerBlock, v.reverse, [&](uint32_t b, uint32_t t) {
      cuda::ScalarBody<D, M>(p, n, dy, s, dx, int64_t{b} * cuda::kThreadsPerBlock + t, threads);
    });
    return;
  }
  if (plan.vectors > 0) {
    ASSERT_NO_FATAL_FAILURE(ExpectAligned(dy + plan.head, s + plan.head, dx + plan.head));
  }
  const uint32_t blocks =
      static_cast<uint32_t>(cuda::BlocksFor(cuda::VectorWorkItems(plan), v.max_blocks));
  const int64_t threads = int64_t{blocks} * cuda::kThreadsPerBlock;
  RunGrid(blocks, cuda::kThreadsPerBlock, v.reverse, [&](uint32_t b, uint32_t t) {
    const int64_t tid = int64_t{b} * cuda::kThreadsPerBlock + t;
    if (v.geometry == cuda::Geometry::kPipelined) {
      cuda::PipelinedVectorBody<D, M>(p, plan.head, plan.vectors, plan.tail, dy, s, dx, tid,
                                      threads);
    } else if (v.unroll == 2) {
      cuda::Vector16Body<D, M, 2>(p, plan.head, plan.vectors, plan.tail, dy, s, dx, tid, threads);
    } else {
      cuda::Vector16Body<D, M, 1>(p, plan.head, plan.vectors, plan.tail, dy, s, dx, tid, threads);
    }
  });
}

template <Dtype D>
void SimulateMode(Mode mode, const cuda::DeviceParams& p, int64_t n, const void* dy, const void* s,
                  void* dx, const Variant& v) {
  switch (mode) {
    case Mode::kSelectNanOpen:
      return SimulateGrid<D, Mode::kSelectNanOpen>(p, n, dy, s, dx, v);
    case Mode::kSelectNanClosed:
      return SimulateGrid<D, Mode::kSelectNanClosed>(p, n, dy, s, dx, v);
    case Mode::kGeneral:
      return SimulateGrid<D, Mode::kGeneral>(p, n, dy, s, dx, v);
  }
}

// What CudaReluGrad does after its device checks, on host memory.
void Simulate(relugrad_dtype dt, const relugrad_options& o, int64_t n, const void* dy,
              const void* s, void* dx, const Variant& v) {
  Rules sem;
  ASSERT_EQ(ResolveOptions(&o, &sem), RELUGRAD_OK);
  const Dtype d = ToDtype(dt);
  const KernelParams kp = MakeKernelParams(d, sem);
  const cuda::DeviceParams p = cuda::ToDeviceParams(kp);
  const Mode mode = cuda::ModeFor(kp);
  switch (d) {
    case Dtype::kF32:
      return SimulateMode<Dtype::kF32>(mode, p, n, dy, s, dx, v);
    case Dtype::kF16:
      return SimulateMode<Dtype::kF16>(mode, p, n, dy, s, dx, v);
    case Dtype::kBF16:
      return SimulateMode<Dtype::kBF16>(mode, p, n, dy, s, dx, v);
    case Dtype::kF64:
      return SimulateMode<Dtype::kF64>(mode, p, n, dy, s, dx, v);
  }
}

enum class InPlace { kNo, kOnDy, kOnS };

void RunPlacedVariant(relugrad_dtype d, const relugrad_options& o,
                      const std::vector<unsigned char>& dy, const std::vector<unsigned char>& s,
                      size_t dy_off, size_t s_off, size_t dx_off, InPlace in_place,
                      const Variant& v, const std::string& what) {
  const size_t n = dy.size() / relugrad_dtype_size(d);
  Guarded a(dy, dy_off), b(s, s_off), c(dy.size(), dx_off, kSentinel);
  Guarded& out = in_place == InPlace::kOnDy ? a : in_place == InPlace::kOnS ? b : c;
  ASSERT_NO_FATAL_FAILURE(
      Simulate(d, o, static_cast<int64_t>(n), a.data(), b.data(), out.data(), v));
  const auto expected = Reference(d, dy, s, o);
  ASSERT_EQ(CompareBits(d, expected.data(), out.data(), n, dy.data(), s.data()), "") << what;
  ASSERT_EQ(out.CheckGuards(), "") << what << ": write outside dx";
}

// Every geometry: one-shot (the default; with max_blocks == 1, 64-byte launches so the split
// into launches is exercised), grid-stride with both unrolls and pipelined (grid capped at
// max_blocks). In place, each also with its grid run in reverse.
void RunPlaced(relugrad_dtype d, const relugrad_options& o, const std::vector<unsigned char>& dy,
               const std::vector<unsigned char>& s, size_t dy_off, size_t s_off, size_t dx_off,
               InPlace in_place, int max_blocks, const std::string& what) {
  const int64_t launch_bytes = max_blocks == 1 ? 64 : cuda::kMaxLaunchBytes;
  std::vector<Variant> variants = {
      {cuda::Geometry::kOneShot, 0, max_blocks, launch_bytes, false},
      {cuda::Geometry::kGridStride, 1, max_blocks, 0, false},
      {cuda::Geometry::kGridStride, 2, max_blocks, 0, false},
      {cuda::Geometry::kPipelined, 0, max_blocks, 0, false},
  };
  if (in_place != InPlace::kNo) {
    const size_t count = variants.size();
    for (size_t i = 0; i < count; ++i) {
      Variant r = variants[i];
      r.reverse = true;
      variants.push_back(r);
    }
  }
  for (const Variant& v : variants) {
    ASSERT_NO_FATAL_FAILURE(
        RunPlacedVariant(d, o, dy, s, dy_off, s_off, dx_off, in_place, v, what + " " + v.Name()));
  }
}

std::vector<Config> FlavourConfigs() {
  std::vector<Config> out;
  for (const Config& c : GradConfigs()) {
    if (c.name == "torch" || c.name == "jax" || c.name == "onednn_alpha0.25" ||
        c.name == "tensorflow_clip" || c.name == "torch_relu6") {
      out.push_back(c);
    }
  }
  return out;
}

std::string Where(relugrad_dtype d, const std::string& c, size_t n, size_t o1, size_t o2, size_t o3,
                  int blocks) {
  return std::string(relugrad_dtype_name(d)) + " " + c + " n=" + std::to_string(n) +
         " offsets(dy,s,dx)=" + std::to_string(o1) + "," + std::to_string(o2) + "," +
         std::to_string(o3) + " max_blocks=" + std::to_string(blocks);
}

TEST(CudaKernelHostTest, LengthsPhasesAndGrids) {
  std::vector<size_t> lengths;
  for (size_t n = 0; n <= 300; ++n) lengths.push_back(n);
  for (size_t n : {511, 512, 513, 1023, 1024, 1025, 2047, 2048, 2049, 4097}) lengths.push_back(n);
  for (relugrad_dtype d : kAllDtypes) {
    const size_t es = relugrad_dtype_size(d);
    const auto dy_all = Pack(d, RandomBits(d, lengths.back(), 51)),
               s_all = Pack(d, RandomBits(d, lengths.back(), 52));
    const std::vector<size_t> offsets =
        es == 8 ? std::vector<size_t>{0, 8} : std::vector<size_t>{0, es, 16 - es};
    for (const Config& c : FlavourConfigs()) {
      for (size_t n : lengths) {
        const std::vector<unsigned char> dy(dy_all.begin(), dy_all.begin() + n * es);
        const std::vector<unsigned char> s(s_all.begin(), s_all.begin() + n * es);
        for (size_t o1 : offsets) {
          for (size_t o2 : offsets) {
            for (size_t o3 : offsets) {
              // max_blocks 1: one block strides over everything (many
              // grid-stride turns); 1 << 20: the grid covers n in one turn.
              for (int blocks : {1, 1 << 20}) {
                ASSERT_NO_FATAL_FAILURE(RunPlaced(d, c.options, dy, s, o1, o2, o3, InPlace::kNo,
                                                  blocks, Where(d, c.name, n, o1, o2, o3, blocks)));
              }
            }
          }
        }
      }
    }
  }
}

TEST(CudaKernelHostTest, EveryConfigSpecialValues) {
  for (relugrad_dtype d : kAllDtypes) {
    const auto [dy_bits, s_bits] = SpecialValuePairs(d);
    const auto dy = Pack(d, dy_bits), s = Pack(d, s_bits);
    const size_t es = relugrad_dtype_size(d);
    for (const Config& c : GradConfigs()) {
      ASSERT_NO_FATAL_FAILURE(
          RunPlaced(d, c.options, dy, s, 0, 0, 0, InPlace::kNo, 1 << 20, c.name + " vector"));
      ASSERT_NO_FATAL_FAILURE(
          RunPlaced(d, c.options, dy, s, es, es, es, InPlace::kNo, 2, c.name + " head+tail"));
      ASSERT_NO_FATAL_FAILURE(
          RunPlaced(d, c.options, dy, s, 0, es, 0, InPlace::kNo, 2, c.name + " scalar"));
    }
  }
}

TEST(CudaKernelHostTest, InPlace) {
  for (relugrad_dtype d : kAllDtypes) {
    const size_t es = relugrad_dtype_size(d);
    const auto dy = Pack(d, RandomBits(d, 3001, 61)), s = Pack(d, RandomBits(d, 3001, 62));
    for (const Config& c : GradConfigs()) {
      for (size_t off : {size_t{0}, es}) {
        for (int blocks : {1, 1 << 20}) {
          ASSERT_NO_FATAL_FAILURE(RunPlaced(d, c.options, dy, s, off, off, 0, InPlace::kOnDy,
                                            blocks, c.name + " on dy"));
          ASSERT_NO_FATAL_FAILURE(
              RunPlaced(d, c.options, dy, s, off, off, 0, InPlace::kOnS, blocks, c.name + " on s"));
        }
      }
      ASSERT_NO_FATAL_FAILURE(
          RunPlaced(d, c.options, dy, s, es, 0, 0, InPlace::kOnDy, 3, c.name + " on dy, scalar"));
    }
  }
}

TEST(CudaKernelHostTest, PlanSplitsEveryElementOnce) {
  alignas(64) static unsigned char buf[3][256];
  for (relugrad_dtype dt : kAllDtypes) {
    const Dtype d = ToDtype(dt);
    const int64_t es = relugrad_dtype_size(dt);
    const int64_t lanes = 16 / es;
    for (int64_t n = 0; n <= 64; ++n) {
      for (int64_t off = 0; off < 16; off += es) {
        const cuda::VectorPlan p =
            cuda::PlanVectors(d, n, buf[0] + off, buf[1] + off, buf[2] + off);
        ASSERT_TRUE(p.vector);
        EXPECT_EQ(p.head + p.vectors * lanes + p.tail, n);
        EXPECT_LT(p.tail, lanes);
        EXPECT_EQ(p.head, std::min<int64_t>(n, ((16 - off) % 16) / es));
        if (p.vectors > 0)
          EXPECT_EQ(reinterpret_cast<uintptr_t>(buf[0] + off + p.head * es) % 16, 0u);
      }
      const cuda::VectorPlan q = cuda::PlanVectors(d, n, buf[0], buf[1] + es, buf[2]);
      EXPECT_FALSE(q.vector);
    }
  }
  EXPECT_EQ(cuda::BlocksFor(0, 100), 1);
  EXPECT_EQ(cuda::BlocksFor(257, 100), 2);
  EXPECT_EQ(cuda::BlocksFor(int64_t{1} << 40, 4224), 4224);
}

TEST(CudaKernelHostTest, LaunchConfigFromEnvironmentValues) {
  cuda::LaunchConfig c;
  std::string error;
  ASSERT_TRUE(cuda::ParseLaunchConfig(nullptr, nullptr, &c, &error));
  EXPECT_EQ(c.geometry, cuda::Geometry::kOneShot);
  EXPECT_EQ(c.unroll, 2);
  ASSERT_TRUE(cuda::ParseLaunchConfig("", "", &c, &error));
  EXPECT_EQ(c.geometry, cuda::Geometry::kOneShot);
  ASSERT_TRUE(cuda::ParseLaunchConfig("gridstride", "1", &c, &error));
  EXPECT_EQ(c.geometry, cuda::Geometry::kGridStride);
  EXPECT_EQ(c.unroll, 1);
  ASSERT_TRUE(cuda::ParseLaunchConfig("pipelined", nullptr, &c, &error));
  EXPECT_EQ(c.geometry, cuda::Geometry::kPipelined);
  ASSERT_TRUE(cuda::ParseLaunchConfig("oneshot", "2", &c, &error));
  EXPECT_EQ(c.geometry, cuda::Geometry::kOneShot);
  EXPECT_FALSE(cuda::ParseLaunchConfig("one-shot", nullptr, &c, &error));
  EXPECT_EQ(error, "RELUGRAD_CUDA_GEOMETRY=one-shot: expected oneshot, gridstride or pipelined");
  EXPECT_FALSE(cuda::ParseLaunchConfig(nullptr, "4", &c, &error));
  EXPECT_EQ(error, "RELUGRAD_CUDA_UNROLL=4: expected 1 or 2");
  EXPECT_STREQ(cuda::GeometryName(cuda::Geometry::kOneShot), "oneshot");
  EXPECT_STREQ(cuda::GeometryName(cuda::Geometry::kGridStride), "gridstride");
  EXPECT_STREQ(cuda::GeometryName(cuda::Geometry::kPipelined), "pipelined");
}

// PyTorch's geometry: 128 threads, 8 elements (16-byte vectors) per thread, ceil(n / 1024)
// blocks.
TEST(CudaKernelHostTest, OneShotGeometry) {
  EXPECT_EQ(cuda::kOneShotThreads, 128);
  EXPECT_EQ(cuda::kElementsPerThread, 8);
  EXPECT_EQ(cuda::kOneShotVectors<Dtype::kF32>, 2);
  EXPECT_EQ(cuda::kOneShotVectors<Dtype::kF16>, 1);
  EXPECT_EQ(cuda::kOneShotVectors<Dtype::kBF16>, 1);
  EXPECT_EQ(cuda::kOneShotVectors<Dtype::kF64>, 4);
  for (relugrad_dtype dt : kAllDtypes) {
    const Dtype d = ToDtype(dt);
    const int64_t lanes = 16 / relugrad_dtype_size(dt);
    for (int64_t n : {int64_t{1024}, int64_t{1025}, int64_t{1} << 20, (int64_t{1} << 24) + 3}) {
      const cuda::VectorPlan plan{true, 0, n / lanes, n % lanes};
      int launches = 0;
      cuda::ForEachVectorLaunch(d, plan, cuda::kMaxLaunchBytes,
                                [&](int64_t, int64_t count, int, int, uint32_t blocks) {
                                  ++launches;
                                  EXPECT_EQ(count, plan.vectors);
                                  EXPECT_EQ(int64_t{blocks}, (count * lanes + 1023) / 1024) << n;
                                });
      EXPECT_EQ(launches, 1);
    }
  }
}

// Calls over 2^31 bytes per array: launches of at most 2^31 bytes, contiguous, each starting
// 16-byte aligned (and on a mask byte), with 32-bit indices and grids; the head goes with the
// first launch and the tail with the last. Plan arithmetic only (no memory).
TEST(CudaKernelHostTest, LargeCallsSplitInto32BitLaunches) {
  for (relugrad_dtype dt : kAllDtypes) {
    const Dtype d = ToDtype(dt);
    const int64_t es = relugrad_dtype_size(dt), lanes = 16 / es;
    for (int64_t bytes :
         {cuda::kMaxLaunchBytes - 16, cuda::kMaxLaunchBytes, cuda::kMaxLaunchBytes + 16,
          3 * cuda::kMaxLaunchBytes + 48, int64_t{5} << 33}) {
      const int64_t n = bytes / es + 1;  // one more element: a tail (or an odd last element)
      const cuda::VectorPlan plan{true, 1, (n - 1) / lanes, (n - 1) % lanes};
      int64_t covered = 0, launches = 0;
      cuda::ForEachVectorLaunch(
          d, plan, cuda::kMaxLaunchBytes,
          [&](int64_t first, int64_t count, int head, int tail, uint32_t blocks) {
            EXPECT_EQ(first, covered);
            covered += count;
            EXPECT_LE(count * 16, cuda::kMaxLaunchBytes);
            EXPECT_LE(int64_t{blocks} * cuda::kOneShotThreads * cuda::OneShotVectors(d) +
                          cuda::kOneShotThreads,
                      int64_t{1} << 32)
                << "32-bit vector indices";
            EXPECT_EQ(head, launches == 0 ? 1 : 0);
            EXPECT_EQ(tail, first + count == plan.vectors ? plan.tail : 0);
            ++launches;
          });
      EXPECT_EQ(covered, plan.vectors);
      EXPECT_EQ(launches, (plan.vectors * 16 + cuda::kMaxLaunchBytes - 1) / cuda::kMaxLaunchBytes);
      covered = 0;
      cuda::ForEachElementLaunch(d, n, cuda::kMaxLaunchBytes, 1024,
                                 [&](int64_t first, int64_t count, uint32_t blocks) {
                                   EXPECT_EQ(first, covered);
                                   covered += count;
                                   EXPECT_EQ(first % 8, 0);
                                   EXPECT_EQ((first * es) % 16, 0);
                                   EXPECT_LE(count * es, cuda::kMaxLaunchBytes);
                                   EXPECT_LE(int64_t{blocks} * 1024 + 1024, int64_t{1} << 32);
                                 });
      EXPECT_EQ(covered, n);
    }
  }
}

TEST(CudaKernelHostTest, OneShotSplitLaunchesEveryPhase) {
  // 64-byte launches over a few thousand elements: dozens of launches, each with its own
  // partial last block, every 16-byte phase, in place too.
  for (relugrad_dtype d : kAllDtypes) {
    const size_t es = relugrad_dtype_size(d);
    const auto dy = Pack(d, RandomBits(d, 2053, 81)), s = Pack(d, RandomBits(d, 2053, 82));
    for (const Config& c : FlavourConfigs()) {
      for (size_t off = 0; off < 16; off += es) {
        for (int64_t launch_bytes : {int64_t{64}, int64_t{192}, int64_t{4096}}) {
          const Variant v{cuda::Geometry::kOneShot, 0, 0, launch_bytes, false};
          ASSERT_NO_FATAL_FAILURE(RunPlacedVariant(d, c.options, dy, s, off, off, off, InPlace::kNo,
                                                   v, c.name + " " + v.Name()));
          const Variant r{cuda::Geometry::kOneShot, 0, 0, launch_bytes, true};
          ASSERT_NO_FATAL_FAILURE(RunPlacedVariant(d, c.options, dy, s, off, off, off,
                                                   InPlace::kOnDy, r, c.name + " " + r.Name()));
        }
      }
    }
  }
}

}  // namespace
}  // namespace testing
}  // namespace relugrad
