// The fused ReLU + dropout planes' CUDA kernel bodies (dropout_body.h) run on
// the CPU over simulated one-shot grids, launches split small, against the CPU
// backend through the C API: every dtype, special values and random data,
// lengths around byte, vector and block multiples, 16-byte aligned (vector)
// and element-offset (scalar) data, in place, guard bytes past dx and the
// packed plane. The only allowed difference is the NaN rule
// (core/dropout_rule.h): a 16-bit NaN result is 0x7fff on the device; an
// f32/f64 one is the multiply's own NaN (here the host's). Runs with or
// without a GPU.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/dtype_traits.h"
#include "cuda/dropout_body.h"
#include "relugrad/relugrad.h"
#include "test_support.h"

namespace relugrad {
namespace testing {
namespace {

struct alignas(16) Bytes16Storage {
  unsigned char b[16];
};

// Launch byte limits: the real one (one launch) and small multiples of 64
// that split every call longer than a few vectors into several launches.
constexpr int64_t kLaunchBytes[] = {cuda::kMaxLaunchBytes, 64, 192};

template <Dtype D>
void SimulateGrad(int64_t max_launch_bytes, int64_t n, const void* dy_v, const uint8_t* gate,
                  const uint8_t* keep, double scale, void* dx_v, bool vector) {
  using Bits = typename DtypeTraits<D>::Bits;
  const Bits* dy = static_cast<const Bits*>(dy_v);
  Bits* dx = static_cast<Bits*>(dx_v);
  const float scale_f = static_cast<float>(scale);
  cuda::ForEachDropoutLaunch(
      n, sizeof(Bits), max_launch_bytes, [&](int64_t first, int64_t count, uint32_t blocks) {
        for (uint32_t b = 0; b < blocks; ++b)
          for (uint32_t t = 0; t < static_cast<uint32_t>(cuda::kOneShotThreads); ++t)
            cuda::OneShotReluDropoutGradBody<D>(static_cast<uint32_t>(count), dy + first,
                                                gate + first / 8, keep + first / 8, scale_f, scale,
                                                dx + first, vector, b, t);
      });
}

void Simulate(relugrad_dtype dt, int64_t max_launch_bytes, int64_t n, const void* dy,
              const uint8_t* gate, const uint8_t* keep, double scale, void* dx, bool vector) {
  switch (ToDtype(dt)) {
    case Dtype::kF32:
      return SimulateGrad<Dtype::kF32>(max_launch_bytes, n, dy, gate, keep, scale, dx, vector);
    case Dtype::kF16:
      return SimulateGrad<Dtype::kF16>(max_launch_bytes, n, dy, gate, keep, scale, dx, vector);
    case Dtype::kBF16:
      return SimulateGrad<Dtype::kBF16>(max_launch_bytes, n, dy, gate, keep, scale, dx, vector);
    case Dtype::kF64:
      return SimulateGrad<Dtype::kF64>(max_launch_bytes, n, dy, gate, keep, scale, dx, vector);
  }
}

bool IsNanBits(relugrad_dtype dt, uint64_t b) {
  switch (dt) {
    case RELUGRAD_F32:
      return IsNan<Dtype::kF32>(static_cast<uint32_t>(b));
    case RELUGRAD_F16:
      return IsNan<Dtype::kF16>(static_cast<uint16_t>(b));
    case RELUGRAD_BF16:
      return IsNan<Dtype::kBF16>(static_cast<uint16_t>(b));
    default:
      return IsNan<Dtype::kF64>(b);
  }
}

std::vector<uint8_t> RandomPlane(size_t n, uint64_t seed) {
  std::mt19937_64 g(seed);
  std::vector<uint8_t> plane((n + 7) / 8);
  for (auto& b : plane) b = static_cast<uint8_t>(g());
  if (n % 8 != 0) plane.back() &= static_cast<uint8_t>((1u << (n % 8)) - 1u);
  return plane;
}

// The simulated grid against the CPU backend for dy (bits), every launch
// split, aligned and offset, out of place and in place.
void CheckAgainstCpu(relugrad_dtype dt, const std::vector<uint64_t>& dy_bits,
                     const std::vector<uint8_t>& gate, const std::vector<uint8_t>& keep,
                     double scale, const std::string& what) {
  const size_t n = dy_bits.size(), es = relugrad_dtype_size(dt);
  const std::vector<unsigned char> dy = Pack(dt, dy_bits);
  std::vector<unsigned char> want(n * es);
  relugrad_options o;
  relugrad_options_init(&o, RELUGRAD_PRESET_TORCH);
  o.threads = 1;
  ASSERT_EQ(relugrad_relu_dropout_grad(dt, static_cast<int64_t>(n), dy.data(), gate.data(),
                                       keep.data(), scale, want.data(), &o),
            RELUGRAD_OK)
      << relugrad_last_error();
  for (int64_t launch_bytes : kLaunchBytes) {
    for (size_t offset : {size_t{0}, es}) {
      for (bool in_place : {false, true}) {
        // 16-byte aligned storage; `offset` bytes in, dy and dx share the phase.
        std::vector<Bytes16Storage> in_store(n * es / 16 + 3), out_store(n * es / 16 + 3);
        unsigned char* in = reinterpret_cast<unsigned char*>(in_store.data()) + offset;
        unsigned char* out_base = reinterpret_cast<unsigned char*>(out_store.data());
        std::memset(out_base, 0xa5, out_store.size() * 16);
        unsigned char* out = in_place ? in : out_base + offset;
        if (n > 0) std::memcpy(in, dy.data(), n * es);
        const bool vector = offset == 0;
        Simulate(dt, launch_bytes, static_cast<int64_t>(n), in, gate.data(), keep.data(), scale,
                 out, vector);
        const std::string how = what + " launch_bytes=" + std::to_string(launch_bytes) +
                                " offset=" + std::to_string(offset) + (in_place ? " in place" : "");
        for (size_t i = 0; i < n; ++i) {
          const uint64_t w = BitsAt(dt, want.data(), i), g = BitsAt(dt, out, i);
          if (IsNanBits(dt, w)) {
            if (es == 2) {
              ASSERT_EQ(g, 0x7fffu) << how << " i=" << i << ": a 16-bit NaN is 0x7fff";
            } else {
              ASSERT_TRUE(IsNanBits(dt, g)) << how << " i=" << i << ": got " << Hex(g);
            }
          } else {
            ASSERT_EQ(g, w) << how << " i=" << i << " dy=" << Hex(dy_bits[i]) << ": got " << Hex(g)
                            << ", want " << Hex(w);
          }
        }
        if (!in_place) {
          for (size_t i = offset + n * es; i < out_store.size() * 16; ++i)
            ASSERT_EQ(out_base[i], 0xa5) << how << ": wrote past dx";
          for (size_t i = 0; i < offset; ++i) ASSERT_EQ(out_base[i], 0xa5) << how << ": before dx";
        }
      }
    }
  }
}

TEST(CudaDropoutHost, GradLengthsEveryDtype) {
  std::vector<size_t> lengths;
  for (size_t n = 0; n <= 40; ++n) lengths.push_back(n);
  for (size_t n : {1023, 1024, 1025, 2049, 4099}) lengths.push_back(n);
  for (relugrad_dtype dt : kAllDtypes) {
    for (size_t n : lengths) {
      ASSERT_NO_FATAL_FAILURE(CheckAgainstCpu(
          dt, RandomBits(dt, n, 31 + n), RandomPlane(n, 37 + n), RandomPlane(n, 41 + n), 1.0 / 0.9,
          std::string(relugrad_dtype_name(dt)) + " n=" + std::to_string(n)));
    }
  }
}

TEST(CudaDropoutHost, GradSpecialValuesEveryDtype) {
  for (relugrad_dtype dt : kAllDtypes) {
    const std::vector<uint64_t> values = SpecialValues(dt);
    std::vector<uint64_t> dy;
    for (int rep = 0; rep < 4; ++rep) dy.insert(dy.end(), values.begin(), values.end());
    std::vector<uint8_t> gate((dy.size() + 7) / 8), keep((dy.size() + 7) / 8);
    for (size_t i = 0; i < dy.size(); ++i) {
      const size_t rep = i / values.size();
      if (rep & 1u) gate[i / 8] |= static_cast<uint8_t>(1u << (i % 8));
      if (rep & 2u) keep[i / 8] |= static_cast<uint8_t>(1u << (i % 8));
    }
    for (double scale : {1.0 / 0.9, 2.0, 10.0, 1.0e300}) {
      ASSERT_NO_FATAL_FAILURE(CheckAgainstCpu(dt, dy, gate, keep, scale,
                                              std::string(relugrad_dtype_name(dt)) + " special"));
    }
  }
}

TEST(CudaDropoutHost, PackBitsLengthsAlignments) {
  std::mt19937_64 g(3);
  for (size_t n : {0, 1, 7, 8, 9, 64, 1023, 1024, 1025, 8193}) {
    std::vector<uint8_t> bytes(n + 16);
    for (auto& b : bytes) b = (g() % 3 == 0) ? 0 : static_cast<uint8_t>(g() | 1u);
    for (size_t offset : {size_t{0}, size_t{3}, size_t{8}}) {
      std::vector<uint8_t> want((n + 7) / 8);
      ASSERT_EQ(
          relugrad_pack_bits(static_cast<int64_t>(n), bytes.data() + offset, want.data(), nullptr),
          RELUGRAD_OK);
      for (int64_t launch_bytes : kLaunchBytes) {
        std::vector<uint8_t> bits((n + 7) / 8 + 4, 0xa5);
        const uint8_t* in = bytes.data() + offset;
        const bool aligned8 = reinterpret_cast<uintptr_t>(in) % 8 == 0;
        cuda::ForEachDropoutLaunch(
            static_cast<int64_t>(n), 1, launch_bytes,
            [&](int64_t first, int64_t count, uint32_t blocks) {
              for (uint32_t b = 0; b < blocks; ++b)
                for (uint32_t t = 0; t < static_cast<uint32_t>(cuda::kOneShotThreads); ++t)
                  cuda::OneShotPackBitsBody(static_cast<uint32_t>(count), in + first,
                                            bits.data() + first / 8, aligned8, b, t);
            });
        for (size_t k = 0; k < want.size(); ++k)
          ASSERT_EQ(bits[k], want[k]) << "n=" << n << " offset=" << offset << " byte " << k;
        for (size_t k = want.size(); k < bits.size(); ++k)
          ASSERT_EQ(bits[k], 0xa5) << "n=" << n << ": wrote past the plane";
      }
    }
  }
}

TEST(CudaDropoutHost, LaunchesStartOnPlaneBytes) {
  // Every launch of every element size starts on a plane byte, so the planes'
  // pointers advance by first / 8 exactly; the counts cover n once.
  for (int64_t es : {1, 2, 4, 8}) {
    for (int64_t n : {int64_t{1}, int64_t{1000}, int64_t{100003}}) {
      int64_t covered = 0;
      cuda::ForEachDropoutLaunch(n, es, 192, [&](int64_t first, int64_t count, uint32_t blocks) {
        EXPECT_EQ(first % 8, 0);
        EXPECT_EQ(first, covered);
        EXPECT_GE(int64_t{blocks} * cuda::kDropoutElementsPerBlock, count);
        covered += count;
      });
      EXPECT_EQ(covered, n);
    }
  }
}

}  // namespace
}  // namespace testing
}  // namespace relugrad
