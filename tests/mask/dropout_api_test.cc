// The fused ReLU + dropout planes' C API on the CPU backend
// (relugrad_pack_bits, relugrad_relu_dropout_grad): bits against a reference
// written here from PyTorch CUDA's formula (exact products in double, one
// rounding to f32, then to the 16-bit type), every dtype, special values and
// random data, every scale PyTorch passes and extremes, in place, thread
// counts, a host thread with DAZ/FTZ set; every argument error, and the
// backends that refuse.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/dtype_traits.h"
#include "core/float_convert.h"
#include "relugrad/relugrad.h"
#include "test_support.h"

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

namespace relugrad {
namespace testing {
namespace {

bool Bit(const std::vector<uint8_t>& plane, size_t i) { return (plane[i / 8] >> (i % 8)) & 1u; }

// dx for one element as relugrad.h states it, on the CPU backend: a closed
// gate +0; a NaN dy quieted; inf * 0 the default NaN; else ((C)keep * dy) *
// (C)scale rounded once to T (C float for 16-bit and f32, double for f64).
uint64_t Expected(relugrad_dtype dt, uint64_t dy, bool gate, bool keep, double scale) {
  const Dtype d = ToDtype(dt);
  if (!gate) return 0;
  const int bits = static_cast<int>(relugrad_dtype_size(dt)) * 8;
  const uint64_t sign = uint64_t{1} << (bits - 1);
  const uint64_t mag = dy & (sign - 1);
  const int mbits = dt == RELUGRAD_F32    ? 23
                    : dt == RELUGRAD_F16  ? 10
                    : dt == RELUGRAD_BF16 ? 7
                                          : 52;
  const uint64_t inf = ((sign - 1) >> mbits) << mbits;
  const uint64_t quiet = uint64_t{1} << (mbits - 1);
  if (mag > inf) return dy | quiet;
  const double v = BitsToDouble(d, dy);
  const double c = dt == RELUGRAD_F64 ? scale : static_cast<double>(static_cast<float>(scale));
  // keep * dy is dy or a signed zero (exact); times an f32 scale it is exact
  // in double (48 significant bits at most), so the conversion to float is the
  // one rounding. inf * 0 (an inf dy dropped, or an f32 scale that overflowed
  // times a zero) is the default NaN.
  const double product = (keep ? v : 0.0 * v) * c;
  if (std::isnan(product)) return sign | inf | quiet;
  if (dt == RELUGRAD_F64) return DoubleToBitsRne(d, product);
  const float r = RoundToFloat(product);
  return DoubleToBitsRne(d, static_cast<double>(r));
}

std::vector<uint8_t> RandomPlane(size_t n, uint64_t seed, int one_in) {
  std::mt19937_64 g(seed);
  std::vector<uint8_t> plane((n + 7) / 8, 0);
  for (size_t i = 0; i < n; ++i)
    if (g() % one_in != 0) plane[i / 8] |= static_cast<uint8_t>(1u << (i % 8));
  return plane;
}

relugrad_options Options(relugrad_backend backend, int threads) {
  relugrad_options o;
  relugrad_options_init(&o, RELUGRAD_PRESET_TORCH);
  o.backend = backend;
  o.threads = threads;
  return o;
}

// dy -> dx through the C API, every element checked against Expected.
// call_mxcsr: the MXCSR the API call runs under (0: the thread's own); the
// expectations are computed under the thread's own.
void CheckGrad(relugrad_dtype dt, const std::vector<uint64_t>& dy_bits,
               const std::vector<uint8_t>& gate, const std::vector<uint8_t>& keep, double scale,
               int threads, bool in_place, const std::string& what, unsigned call_mxcsr = 0) {
  const size_t n = dy_bits.size(), es = relugrad_dtype_size(dt);
  std::vector<uint64_t> want(n);
  for (size_t i = 0; i < n; ++i)
    want[i] = Expected(dt, dy_bits[i], Bit(gate, i), Bit(keep, i), scale);
  std::vector<unsigned char> dy = Pack(dt, dy_bits), dx(n * es + 16, 0xa5);
  const relugrad_options o = Options(RELUGRAD_BACKEND_CPU, threads);
  void* out = in_place ? static_cast<void*>(dy.data()) : static_cast<void*>(dx.data());
#if defined(__x86_64__) || defined(__i386__)
  const unsigned saved = _mm_getcsr();
  if (call_mxcsr != 0) _mm_setcsr(call_mxcsr);
#endif
  const relugrad_status s = relugrad_relu_dropout_grad(dt, static_cast<int64_t>(n), dy.data(),
                                                       gate.data(), keep.data(), scale, out, &o);
#if defined(__x86_64__) || defined(__i386__)
  _mm_setcsr(saved);
#endif
  ASSERT_EQ(s, RELUGRAD_OK) << what << ": " << relugrad_last_error();
  for (size_t i = 0; i < n; ++i) {
    const uint64_t got = BitsAt(dt, out, i);
    ASSERT_EQ(got, want[i]) << what << " i=" << i << " dy=" << Hex(dy_bits[i])
                            << " gate=" << Bit(gate, i) << " keep=" << Bit(keep, i)
                            << " scale=" << scale << ": got " << Hex(got) << ", want "
                            << Hex(want[i]);
  }
  if (!in_place) {
    for (size_t i = n * es; i < dx.size(); ++i) ASSERT_EQ(dx[i], 0xa5) << what << ": past dx";
  }
}

// The scales PyTorch passes (1 / (1 - p)) and the extremes of the contract.
const double kScales[] = {1.0 / (1.0 - 0.1),
                          2.0,
                          1.0 / (1.0 - 0.9),
                          1.0 / (1.0 - 0.3),
                          1.0,
                          1.0 / (1.0 - 1e-7),
                          3.0e38,
                          1.0e300,
                          1.0e-30};

TEST(DropoutApi, SpecialValuesEveryDtypeAndScale) {
  for (relugrad_dtype dt : kAllDtypes) {
    const std::vector<uint64_t> values = SpecialValues(dt);
    std::vector<uint64_t> dy;
    for (int rep = 0; rep < 4; ++rep) dy.insert(dy.end(), values.begin(), values.end());
    const size_t n = dy.size();
    // Every (gate, keep) pair for every value: the 4 repetitions walk them.
    std::vector<uint8_t> gate((n + 7) / 8, 0), keep((n + 7) / 8, 0);
    for (size_t i = 0; i < n; ++i) {
      const size_t rep = i / values.size();
      if (rep & 1u) gate[i / 8] |= static_cast<uint8_t>(1u << (i % 8));
      if (rep & 2u) keep[i / 8] |= static_cast<uint8_t>(1u << (i % 8));
    }
    for (double scale : kScales) {
      ASSERT_NO_FATAL_FAILURE(CheckGrad(dt, dy, gate, keep, scale, 1, false,
                                        std::string(relugrad_dtype_name(dt)) + " special"));
    }
  }
}

TEST(DropoutApi, RandomDataLengthsThreadsInPlace) {
  for (relugrad_dtype dt : kAllDtypes) {
    for (size_t n : {size_t{0}, size_t{1}, size_t{7}, size_t{8}, size_t{9}, size_t{63},
                     size_t{1000}, size_t{(1u << 16) + 3}}) {
      const auto dy = RandomBits(dt, n, 7 + n);
      const auto gate = RandomPlane(n, 11 + n, 2), keep = RandomPlane(n, 13 + n, 10);
      for (int threads : {1, 0, 3}) {
        for (bool in_place : {false, true}) {
          ASSERT_NO_FATAL_FAILURE(
              CheckGrad(dt, dy, gate, keep, 1.0 / 0.9, threads, in_place,
                        std::string(relugrad_dtype_name(dt)) + " n=" + std::to_string(n) +
                            " threads=" + std::to_string(threads) + (in_place ? " in place" : "")));
        }
      }
    }
  }
}

#if defined(__x86_64__) || defined(__i386__)
TEST(DropoutApi, HostDazFtzDoesNotChangeBits) {
  // Subnormal dy and products: the two multiplies are IEEE whatever the caller's MXCSR.
  const std::vector<uint64_t> dy = {0x00000001u, 0x80000001u, 0x007fffffu,
                                    0x00800000u, 0x00400001u, 0x3f800000u};
  const std::vector<uint8_t> all(1, 0xff);
  const unsigned daz_ftz = _mm_getcsr() | 0x8040u;
  for (double scale : {1.0e-30, 1.0 / 0.9, 0.5}) {
    ASSERT_NO_FATAL_FAILURE(
        CheckGrad(RELUGRAD_F32, dy, all, all, scale, 1, false, "DAZ/FTZ host", daz_ftz));
    ASSERT_NO_FATAL_FAILURE(
        CheckGrad(RELUGRAD_F32, dy, all, all, scale, 3, false, "DAZ/FTZ host", daz_ftz));
  }
}
#endif

TEST(DropoutApi, PackBitsEveryLengthAndOffset) {
  std::mt19937_64 g(5);
  for (size_t n : {size_t{0}, size_t{1}, size_t{5}, size_t{8}, size_t{15}, size_t{16}, size_t{17},
                   size_t{1023}, size_t{(3u << 20) + 5}}) {
    for (size_t offset : {size_t{0}, size_t{1}, size_t{3}}) {
      std::vector<uint8_t> bytes(n + offset);
      for (auto& b : bytes) {
        const int r = static_cast<int>(g() % 4);
        b = r == 0 ? 0 : r == 1 ? 1 : static_cast<uint8_t>(g());
      }
      for (int threads : {1, 0}) {
        std::vector<uint8_t> bits((n + 7) / 8 + 2, 0xa5);
        const relugrad_options o = Options(RELUGRAD_BACKEND_CPU, threads);
        ASSERT_EQ(
            relugrad_pack_bits(static_cast<int64_t>(n), bytes.data() + offset, bits.data(), &o),
            RELUGRAD_OK)
            << relugrad_last_error();
        for (size_t k = 0; k < (n + 7) / 8; ++k) {
          uint8_t want = 0;
          for (size_t j = 0; j < 8 && 8 * k + j < n; ++j)
            want |= static_cast<uint8_t>((bytes[offset + 8 * k + j] != 0) << j);
          ASSERT_EQ(bits[k], want) << "n=" << n << " offset=" << offset << " byte " << k;
        }
        EXPECT_EQ(bits[(n + 7) / 8], 0xa5) << "n=" << n << ": past bits";
      }
      // NULL options: the CPU backend, all cores.
      std::vector<uint8_t> a((n + 7) / 8), b((n + 7) / 8);
      const relugrad_options o1 = Options(RELUGRAD_BACKEND_CPU, 1);
      ASSERT_EQ(relugrad_pack_bits(static_cast<int64_t>(n), bytes.data() + offset, a.data(), &o1),
                RELUGRAD_OK);
      ASSERT_EQ(
          relugrad_pack_bits(static_cast<int64_t>(n), bytes.data() + offset, b.data(), nullptr),
          RELUGRAD_OK);
      EXPECT_EQ(a, b);
    }
  }
}

void ExpectInvalid(relugrad_status s, const char* fragment) {
  EXPECT_EQ(s, RELUGRAD_INVALID_ARGUMENT);
  EXPECT_NE(std::string(relugrad_last_error()).find(fragment), std::string::npos)
      << "message: " << relugrad_last_error() << " (wanted '" << fragment << "')";
}

TEST(DropoutApi, PackBitsErrors) {
  std::vector<uint8_t> bytes(64, 1), bits(8, 0x5a);
  ExpectInvalid(relugrad_pack_bits(-1, bytes.data(), bits.data(), nullptr), "");
  ExpectInvalid(relugrad_pack_bits(8, nullptr, bits.data(), nullptr), "bytes is NULL");
  ExpectInvalid(relugrad_pack_bits(8, bytes.data(), nullptr, nullptr), "bits is NULL");
  ExpectInvalid(relugrad_pack_bits(64, bytes.data(), bytes.data() + 60, nullptr),
                "bits overlaps bytes");
  ExpectInvalid(relugrad_pack_bits(8, bytes.data(), bytes.data(), nullptr), "bits overlaps bytes");
  relugrad_options o = Options(RELUGRAD_BACKEND_CPU, 1);
  o.threads = -1;
  ExpectInvalid(relugrad_pack_bits(8, bytes.data(), bits.data(), &o), "threads");
  o = Options(RELUGRAD_BACKEND_CPU, 1);
  o.struct_size = 3;
  ExpectInvalid(relugrad_pack_bits(8, bytes.data(), bits.data(), &o), "struct_size");
  EXPECT_EQ(bits, std::vector<uint8_t>(8, 0x5a)) << "a refused call wrote its output";
  // n = 0 takes NULL pointers.
  EXPECT_EQ(relugrad_pack_bits(0, nullptr, nullptr, nullptr), RELUGRAD_OK);
}

TEST(DropoutApi, GradErrors) {
  std::vector<float> dy(64, 1.0f), dx(64, 7.0f);
  std::vector<uint8_t> gate(8, 0xff), keep(8, 0xff);
  const auto call = [&](relugrad_dtype dt, int64_t n, const void* d, const uint8_t* g,
                        const uint8_t* k, double scale, void* out) {
    return relugrad_relu_dropout_grad(dt, n, d, g, k, scale, out, nullptr);
  };
  ExpectInvalid(
      call(static_cast<relugrad_dtype>(9), 8, dy.data(), gate.data(), keep.data(), 2.0, dx.data()),
      "dtype");
  ExpectInvalid(call(RELUGRAD_F32, -2, dy.data(), gate.data(), keep.data(), 2.0, dx.data()), "");
  for (double bad : {0.0, -2.0, std::nan(""), static_cast<double>(INFINITY)}) {
    ExpectInvalid(call(RELUGRAD_F32, 8, dy.data(), gate.data(), keep.data(), bad, dx.data()),
                  "scale must be finite and > 0");
  }
  ExpectInvalid(call(RELUGRAD_F32, 8, nullptr, gate.data(), keep.data(), 2.0, dx.data()),
                "dy is NULL");
  ExpectInvalid(call(RELUGRAD_F32, 8, dy.data(), nullptr, keep.data(), 2.0, dx.data()),
                "gate is NULL");
  ExpectInvalid(call(RELUGRAD_F32, 8, dy.data(), gate.data(), nullptr, 2.0, dx.data()),
                "keep is NULL");
  ExpectInvalid(call(RELUGRAD_F32, 8, dy.data(), gate.data(), keep.data(), 2.0, nullptr),
                "dx is NULL");
  ExpectInvalid(call(RELUGRAD_F32, 8, dy.data(), gate.data(), keep.data(), 2.0, dy.data() + 1),
                "dx partially overlaps dy");
  ExpectInvalid(call(RELUGRAD_F32, 8, dy.data(), gate.data(), keep.data(), 2.0,
                     reinterpret_cast<char*>(dx.data()) + 1),
                "not aligned");
  uint8_t* dx_bytes = reinterpret_cast<uint8_t*>(dx.data());
  ExpectInvalid(call(RELUGRAD_F32, 8, dy.data(), dx_bytes, keep.data(), 2.0, dx.data()),
                "dx overlaps gate");
  ExpectInvalid(call(RELUGRAD_F32, 8, dy.data(), gate.data(), dx_bytes + 4, 2.0, dx.data()),
                "dx overlaps keep");
  ExpectInvalid(call(RELUGRAD_F32, 8, dy.data(), reinterpret_cast<const uint8_t*>(dy.data()),
                     keep.data(), 2.0, dx.data()),
                "dy overlaps gate");
  EXPECT_EQ(dx, std::vector<float>(64, 7.0f)) << "a refused call wrote its output";
  EXPECT_EQ(call(RELUGRAD_F32, 0, nullptr, nullptr, nullptr, 2.0, nullptr), RELUGRAD_OK);
}

TEST(DropoutApi, BackendsThatRefuse) {
  std::vector<float> dy(8, 1.0f), dx(8, 7.0f);
  std::vector<uint8_t> gate(1, 0xff), keep(1, 0xff), bytes(8, 1), bits(1, 0x5a);
  relugrad_options o = Options(RELUGRAD_BACKEND_ASCEND_TWIN, 1);
  EXPECT_EQ(relugrad_relu_dropout_grad(RELUGRAD_F32, 8, dy.data(), gate.data(), keep.data(), 2.0,
                                       dx.data(), &o),
            RELUGRAD_UNSUPPORTED);
  EXPECT_NE(std::string(relugrad_last_error()).find("does not implement"), std::string::npos)
      << relugrad_last_error();
  EXPECT_EQ(relugrad_pack_bits(8, bytes.data(), bits.data(), &o), RELUGRAD_UNSUPPORTED);
  // CUDA: not built, or built with no device here, or host memory refused:
  // UNSUPPORTED or INVALID_ARGUMENT with the reason, never a write.
  o = Options(RELUGRAD_BACKEND_CUDA, 1);
  const relugrad_status s = relugrad_relu_dropout_grad(RELUGRAD_F32, 8, dy.data(), gate.data(),
                                                       keep.data(), 2.0, dx.data(), &o);
  EXPECT_NE(s, RELUGRAD_OK);
  EXPECT_NE(std::string(relugrad_last_error()), "");
  EXPECT_NE(relugrad_pack_bits(8, bytes.data(), bits.data(), &o), RELUGRAD_OK);
  int bad_backend = 7;
  std::memcpy(&o.backend, &bad_backend, sizeof(bad_backend));
  ExpectInvalid(relugrad_pack_bits(8, bytes.data(), bits.data(), &o), "options.backend");
  EXPECT_EQ(dx, std::vector<float>(8, 7.0f));
  EXPECT_EQ(bits[0], 0x5a);
}

}  // namespace
}  // namespace testing
}  // namespace relugrad
