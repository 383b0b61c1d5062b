// The CUDA kernels' bodies (src/cuda/kernel_body.h, both unrolls of the
// vector body) run on the CPU over a simulated grid: every thread index of the grid the launcher
// would use (and of deliberately small grids, so the grid-stride loops take many turns) executes
// the same code the device runs. Checked bit for bit against the reference with guard bytes around
// dx, for every length 0..300 and around vector multiples, every 16-byte phase of each pointer
// (vector path with head/tail, and the scalar kernel), and in place. Runs with or without a GPU;
// the device suite repeats the checks on real hardware.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/semantics.h"
#include "cuda/device_params.h"
#include "cuda/element.h"
#include "cuda/kernel_body.h"
#include "relugrad/relugrad.h"
#include "support/guarded.h"
#include "test_support.h"

namespace relugrad {
namespace testing {
namespace {

using cuda::Mode;

template <Dtype D, Mode M>
void SimulateGrid(const cuda::DeviceParams& p, int64_t n, const void* dy_v, const void* s_v,
                  void* dx_v, int max_blocks, int unroll) {
  using Bits = typename DtypeTraits<D>::Bits;
  const Bits* dy = static_cast<const Bits*>(dy_v);
  const Bits* s = static_cast<const Bits*>(s_v);
  Bits* dx = static_cast<Bits*>(dx_v);
  const cuda::VectorPlan plan = cuda::PlanVectors(D, n, dy, s, dx);
  if (plan.vector) {
    if (plan.vectors > 0) {  // the device faults on a misaligned 16-byte access; x86 would not
      for (const void* base :
           {static_cast<const void*>(dy + plan.head), static_cast<const void*>(s + plan.head),
            static_cast<const void*>(dx + plan.head)}) {
        ASSERT_EQ(reinterpret_cast<uintptr_t>(base) % cuda::kVectorBytes, 0u)
            << "misaligned vector body";
      }
    }
    const int64_t threads =
        int64_t{cuda::BlocksFor(cuda::VectorWorkItems(plan), max_blocks)} * cuda::kThreadsPerBlock;
    for (int64_t tid = 0; tid < threads; ++tid) {
      if (unroll == 2) {
        cuda::Vector16Body<D, M, 2>(p, plan.head, plan.vectors, plan.tail, dy, s, dx, tid, threads);
      } else {
        cuda::Vector16Body<D, M, 1>(p, plan.head, plan.vectors, plan.tail, dy, s, dx, tid, threads);
      }
    }
  } else {
    const int64_t threads = int64_t{cuda::BlocksFor(n, max_blocks)} * cuda::kThreadsPerBlock;
    for (int64_t tid = 0; tid < threads; ++tid)
      cuda::ScalarBody<D, M>(p, n, dy, s, dx, tid, threads);
  }
}

template <Dtype D>
void SimulateMode(Mode mode, const cuda::DeviceParams& p, int64_t n, const void* dy, const void* s,
                  void* dx, int max_blocks, int unroll) {
  switch (mode) {
    case Mode::kSelectNanOpen:
      return SimulateGrid<D, Mode::kSelectNanOpen>(p, n, dy, s, dx, max_blocks, unroll);
    case Mode::kSelectNanClosed:
      return SimulateGrid<D, Mode::kSelectNanClosed>(p, n, dy, s, dx, max_blocks, unroll);
    case Mode::kGeneral:
      return SimulateGrid<D, Mode::kGeneral>(p, n, dy, s, dx, max_blocks, unroll);
  }
}

// What CudaReluGrad does after its device checks, on host memory.
void Simulate(relugrad_dtype dt, const relugrad_options& o, int64_t n, const void* dy,
              const void* s, void* dx, int max_blocks, int unroll) {
  Rules sem;
  ASSERT_EQ(ResolveOptions(&o, &sem), RELUGRAD_OK);
  const Dtype d = ToDtype(dt);
  const KernelParams kp = MakeKernelParams(d, sem);
  const cuda::DeviceParams p = cuda::ToDeviceParams(kp);
  const Mode mode = cuda::ModeFor(kp);
  switch (d) {
    case Dtype::kF32:
      return SimulateMode<Dtype::kF32>(mode, p, n, dy, s, dx, max_blocks, unroll);
    case Dtype::kF16:
      return SimulateMode<Dtype::kF16>(mode, p, n, dy, s, dx, max_blocks, unroll);
    case Dtype::kBF16:
      return SimulateMode<Dtype::kBF16>(mode, p, n, dy, s, dx, max_blocks, unroll);
    case Dtype::kF64:
      return SimulateMode<Dtype::kF64>(mode, p, n, dy, s, dx, max_blocks, unroll);
  }
}

enum class InPlace { kNo, kOnDy, kOnS };

void RunPlacedUnroll(relugrad_dtype d, const relugrad_options& o,
                     const std::vector<unsigned char>& dy, const std::vector<unsigned char>& s,
                     size_t dy_off, size_t s_off, size_t dx_off, InPlace in_place, int max_blocks,
                     int unroll, const std::string& what) {
  const size_t n = dy.size() / relugrad_dtype_size(d);
  Guarded a(dy, dy_off), b(s, s_off), c(dy.size(), dx_off, kSentinel);
  Guarded& out = in_place == InPlace::kOnDy ? a : in_place == InPlace::kOnS ? b : c;
  ASSERT_NO_FATAL_FAILURE(
      Simulate(d, o, static_cast<int64_t>(n), a.data(), b.data(), out.data(), max_blocks, unroll));
  const auto expected = Reference(d, dy, s, o);
  ASSERT_EQ(CompareBits(d, expected.data(), out.data(), n, dy.data(), s.data()), "") << what;
  ASSERT_EQ(out.CheckGuards(), "") << what << ": write outside dx";
}

// Both vector-kernel unrolls (1 and 2 vectors per thread per turn).
void RunPlaced(relugrad_dtype d, const relugrad_options& o, const std::vector<unsigned char>& dy,
               const std::vector<unsigned char>& s, size_t dy_off, size_t s_off, size_t dx_off,
               InPlace in_place, int max_blocks, const std::string& what) {
  for (int unroll : {1, 2}) {
    ASSERT_NO_FATAL_FAILURE(RunPlacedUnroll(d, o, dy, s, dy_off, s_off, dx_off, in_place,
                                            max_blocks, unroll,
                                            what + " unroll=" + std::to_string(unroll)));
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

}  // namespace
}  // namespace testing
}  // namespace relugrad
