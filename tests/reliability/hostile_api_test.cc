// Hostile input to the C API beyond tests/errors_test.cc: garbage option
// structs, sizes at the edge of the address space, pointers that wrap,
// absurd thread counts, NULL and oversized names, out-of-range indices and
// enum values in every query function, and the reference entry point held
// to the same validation as the kernel. Every case returns a status and a
// message (never crashes) and a failed call writes nothing.
#include <gtest/gtest.h>

#include <dirent.h>

#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "relugrad/relugrad.h"
#include "test_support.h"

namespace relugrad {
namespace testing {
namespace {

using GradFn = relugrad_status (*)(relugrad_dtype, int64_t, const void*, const void*, void*,
                                   const relugrad_options*);
const GradFn kEntryPoints[] = {relugrad_relu_grad, relugrad_relu_grad_reference};
const char* const kEntryNames[] = {"relugrad_relu_grad", "relugrad_relu_grad_reference"};

relugrad_options Torch() {
  relugrad_options o;
  relugrad_options_init(&o, RELUGRAD_PRESET_TORCH);
  return o;
}

// dx must still hold its fill byte after a failed call.
bool Untouched(const std::vector<unsigned char>& v, unsigned char fill) {
  for (unsigned char c : v) {
    if (c != fill) return false;
  }
  return true;
}

TEST(HostileApi, GarbageOptionStructsAreRejectedNotTrusted) {
  // Random bytes in every field (struct_size kept plausible so the fields
  // are actually read): each call either succeeds with the reference's bits
  // or fails with INVALID_ARGUMENT/UNSUPPORTED, a message and dx untouched.
  std::mt19937_64 rng(6);
  alignas(64) float dy[64], s[64];
  for (int i = 0; i < 64; ++i) {
    dy[i] = static_cast<float>(i - 32) * 0.25f;
    s[i] = static_cast<float>(31 - i) * 0.5f;
  }
  int accepted = 0, rejected = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    relugrad_options o = Torch();
    auto* raw = reinterpret_cast<unsigned char*>(&o);
    // Odd iterations keep struct_size valid; a few random bytes each time,
    // so that some structs stay valid (with odd thresholds, alphas, clips).
    const size_t garbage_from = iter % 2 ? sizeof(uint32_t) : 0;
    const int changes = 1 + static_cast<int>(rng() % 3);
    for (int k = 0; k < changes; ++k) {
      raw[garbage_from + rng() % (sizeof(o) - garbage_from)] = static_cast<unsigned char>(rng());
    }
    for (int e = 0; e < 2; ++e) {
      std::vector<unsigned char> dx(sizeof(dy), 0x77);
      const relugrad_status st = kEntryPoints[e](RELUGRAD_F32, 64, dy, s, dx.data(), &o);
      if (st == RELUGRAD_OK) {
        ++accepted;
        std::vector<unsigned char> ref(sizeof(dy));
        ASSERT_EQ(relugrad_relu_grad_reference(RELUGRAD_F32, 64, dy, s, ref.data(), &o),
                  RELUGRAD_OK);
        ASSERT_EQ(CompareBits(RELUGRAD_F32, ref.data(), dx.data(), 64), "") << kEntryNames[e];
      } else {
        ++rejected;
        ASSERT_TRUE(st == RELUGRAD_INVALID_ARGUMENT || st == RELUGRAD_UNSUPPORTED)
            << relugrad_status_name(st);
        ASSERT_STRNE(relugrad_last_error(), "") << kEntryNames[e];
        ASSERT_TRUE(Untouched(dx, 0x77))
            << kEntryNames[e] << " wrote on failure: " << relugrad_last_error();
      }
    }
  }
  EXPECT_GT(rejected, 0);
  EXPECT_GT(accepted, 0);
}

TEST(HostileApi, ZeroFilledOptionsAreCaught) {
  // The enums start at 1 where it matters and struct_size = 0 is invalid.
  relugrad_options o;
  std::memset(&o, 0, sizeof(o));
  alignas(64) float a[4] = {}, b[4] = {}, c[4];
  for (int e = 0; e < 2; ++e) {
    EXPECT_EQ(kEntryPoints[e](RELUGRAD_F32, 4, a, b, c, &o), RELUGRAD_INVALID_ARGUMENT)
        << kEntryNames[e];
    EXPECT_NE(std::string(relugrad_last_error()).find("struct_size"), std::string::npos)
        << relugrad_last_error();
  }
}

TEST(HostileApi, SizesAtTheEdgeOfTheAddressSpace) {
  alignas(64) double a[8] = {}, b[8] = {}, c[8] = {};
  const auto o = Torch();
  for (relugrad_dtype d : kAllDtypes) {
    const int64_t es = static_cast<int64_t>(relugrad_dtype_size(d));
    for (int64_t n : {std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::max() / es,
                      std::numeric_limits<int64_t>::max() / es / 2 + 1, int64_t{1} << 62,
                      std::numeric_limits<int64_t>::min()}) {
      for (int e = 0; e < 2; ++e) {
        EXPECT_EQ(kEntryPoints[e](d, n, a, b, c, &o), RELUGRAD_INVALID_ARGUMENT)
            << kEntryNames[e] << " n=" << n;
        EXPECT_STRNE(relugrad_last_error(), "");
      }
    }
  }
}

TEST(HostileApi, PointersThatWrapAroundAreRejectedBeforeAnyAccess) {
  // A pointer near the top of the address space with n elements past it
  // would wrap: the overlap arithmetic must not be fooled into "disjoint",
  // and nothing may be dereferenced.
  const auto top = reinterpret_cast<void*>(std::numeric_limits<uintptr_t>::max() & ~uintptr_t{63});
  alignas(64) float ok[64] = {}, out[64];
  const auto o = Torch();
  for (int e = 0; e < 2; ++e) {
    EXPECT_EQ(kEntryPoints[e](RELUGRAD_F32, 64, top, ok, out, &o), RELUGRAD_INVALID_ARGUMENT)
        << kEntryNames[e];
    EXPECT_NE(std::string(relugrad_last_error()).find("wraps"), std::string::npos)
        << relugrad_last_error();
    EXPECT_EQ(kEntryPoints[e](RELUGRAD_F32, 64, ok, ok, top, &o), RELUGRAD_INVALID_ARGUMENT)
        << kEntryNames[e];
    EXPECT_EQ(kEntryPoints[e](RELUGRAD_F32, 64, top, top, top, &o), RELUGRAD_INVALID_ARGUMENT)
        << kEntryNames[e];
  }
}

TEST(HostileApi, SharedInputsAndTripleAliasAreFine) {
  // dy == s is not an overlap problem (both are read only), and dx == dy == s
  // is in place; both give the reference's bits.
  for (relugrad_dtype d : kAllDtypes) {
    const size_t n = 4097;
    const auto v = Pack(d, RandomBits(d, n, 31));
    for (const Config& c : AllConfigs()) {
      const auto expected = Reference(d, v, v, c.options);
      std::vector<unsigned char> dx(v.size()), in(v);
      ASSERT_EQ(relugrad_relu_grad(d, n, v.data(), v.data(), dx.data(), &c.options), RELUGRAD_OK)
          << relugrad_last_error();
      EXPECT_EQ(CompareBits(d, expected.data(), dx.data(), n), "") << c.name;
      ASSERT_EQ(relugrad_relu_grad(d, n, in.data(), in.data(), in.data(), &c.options), RELUGRAD_OK)
          << relugrad_last_error();
      EXPECT_EQ(CompareBits(d, expected.data(), in.data(), n), "") << c.name << " (triple alias)";
    }
  }
}

TEST(HostileApi, OverlapByOneElementInEitherDirection) {
  for (relugrad_dtype d : kAllDtypes) {
    const size_t es = relugrad_dtype_size(d), n = 100;
    std::vector<unsigned char> buf((2 * n + 2) * es + 64);  // room for dx right after a
    unsigned char* base = buf.data() + (64 - reinterpret_cast<uintptr_t>(buf.data()) % 64) % 64;
    unsigned char* a = base + es;
    alignas(64) unsigned char other[100 * 8] = {};
    const auto o = Torch();
    for (int e = 0; e < 2; ++e) {
      EXPECT_EQ(kEntryPoints[e](d, n, a, other, a + es, &o), RELUGRAD_INVALID_ARGUMENT)
          << kEntryNames[e];
      EXPECT_EQ(kEntryPoints[e](d, n, a, other, a - es, &o), RELUGRAD_INVALID_ARGUMENT)
          << kEntryNames[e];
      EXPECT_EQ(kEntryPoints[e](d, n, other, a, a + (n - 1) * es, &o), RELUGRAD_INVALID_ARGUMENT)
          << kEntryNames[e];
      // Exactly adjacent is not an overlap.
      EXPECT_EQ(kEntryPoints[e](d, n - 1, a, other, a + (n - 1) * es, &o), RELUGRAD_OK)
          << relugrad_last_error();
    }
  }
}

int ThreadsInProcess() {
  int count = 0;
  if (DIR* dir = opendir("/proc/self/task")) {
    while (dirent* ent = readdir(dir)) {
      if (ent->d_name[0] != '.') ++count;
    }
    closedir(dir);
  }
  return count;
}

TEST(HostileApi, AbsurdThreadCountsAreServedAndBounded) {
  // A caller may ask for any positive thread count. The result must be
  // right, and the library must not start an OS thread per requested
  // thread: the pool is persistent, so that would leak threads for the
  // life of the process.
  const relugrad_dtype d = RELUGRAD_F32;
  const size_t n = size_t{1} << 24;  // 64 MiB: 1024 grains of work
  const auto dy = Pack(d, RandomBits(d, 1 << 16, 1));
  std::vector<unsigned char> big_dy(n * 4), big_s(n * 4), dx(n * 4);
  for (size_t off = 0; off < big_dy.size(); off += dy.size()) {
    std::memcpy(big_dy.data() + off, dy.data(), dy.size());
    std::memcpy(big_s.data() + off, dy.data() + 4, dy.size() - 4);
  }
  auto o = Torch();
  const auto expected = Reference(d, big_dy, big_s, o);
  for (int threads : {INT_MAX, 1 << 20, 4096, 257}) {
    o.threads = threads;
    ASSERT_EQ(relugrad_relu_grad(d, n, big_dy.data(), big_s.data(), dx.data(), &o), RELUGRAD_OK)
        << relugrad_last_error();
    EXPECT_EQ(CompareBits(d, expected.data(), dx.data(), n), "") << "threads=" << threads;
  }
  EXPECT_LE(ThreadsInProcess(), 300) << "the pool started a thread per requested thread";
}

TEST(HostileApi, NamesAndIndicesOutOfRange) {
  relugrad_dtype d = RELUGRAD_F32;
  relugrad_preset p = RELUGRAD_PRESET_JAX;
  const std::string huge(1 << 20, 'f');
  for (const char* name :
       {static_cast<const char*>(nullptr), "", "F32 ", "f32\n", huge.c_str(), "\xff\xfe"}) {
    const relugrad_status sd = relugrad_dtype_from_name(name, &d);
    EXPECT_EQ(sd, RELUGRAD_INVALID_ARGUMENT) << (name ? name : "(null)");
    EXPECT_STRNE(relugrad_last_error(), "");
    EXPECT_LT(std::strlen(relugrad_last_error()), size_t{4096})
        << "messages stay bounded for huge input";
    EXPECT_EQ(relugrad_preset_from_name(name, &p), RELUGRAD_INVALID_ARGUMENT);
    EXPECT_LT(std::strlen(relugrad_last_error()), size_t{4096});
    EXPECT_NE(relugrad_set_max_isa(name == nullptr   ? "\x01"
                                   : name[0] == '\0' ? "avx9000"
                                                     : name),
              RELUGRAD_OK);
    EXPECT_LT(std::strlen(relugrad_last_error()), size_t{4096});
  }
  EXPECT_EQ(d, RELUGRAD_F32) << "a failed parse wrote its output";
  EXPECT_EQ(p, RELUGRAD_PRESET_JAX) << "a failed parse wrote its output";
  EXPECT_EQ(relugrad_dtype_from_name("f32", nullptr), RELUGRAD_INVALID_ARGUMENT);
  EXPECT_EQ(relugrad_preset_from_name("torch", nullptr), RELUGRAD_INVALID_ARGUMENT);
  ASSERT_EQ(relugrad_set_max_isa(nullptr), RELUGRAD_OK);
  for (int i : {-1, INT_MIN, INT_MAX, relugrad_isa_count()})
    EXPECT_EQ(relugrad_isa_name(i), nullptr) << i;
  for (int v : {0, 5, -1, INT_MAX, INT_MIN}) {
    EXPECT_STREQ(relugrad_dtype_name(static_cast<relugrad_dtype>(v)), "invalid") << v;
    EXPECT_EQ(relugrad_dtype_size(static_cast<relugrad_dtype>(v)), 0u) << v;
  }
  for (int v : {4, 100, -1, INT_MAX, INT_MIN}) {
    EXPECT_NE(relugrad_status_name(static_cast<relugrad_status>(v)), nullptr) << v;
    EXPECT_EQ(relugrad_backend_available(static_cast<relugrad_backend>(v)), 0) << v;
  }
  for (int v : {-1, RELUGRAD_PRESET_CANN_RELUGRAD_V2_HP + 1, INT_MAX,
                INT_MIN}) {  // one past the last preset
    EXPECT_STREQ(relugrad_preset_name(static_cast<relugrad_preset>(v)), "invalid") << v;
    relugrad_options o;
    std::memset(&o, 0x3c, sizeof(o));
    EXPECT_EQ(relugrad_options_init(&o, static_cast<relugrad_preset>(v)),
              RELUGRAD_INVALID_ARGUMENT);
  }
}

TEST(HostileApi, EveryRejectedCallLeavesDxUntouchedForEveryDtype) {
  // The errors_test cases, across dtypes and both entry points, with dx
  // checked byte for byte afterwards.
  for (relugrad_dtype d : kAllDtypes) {
    const size_t es = relugrad_dtype_size(d), n = 32;
    alignas(64) unsigned char a[32 * 8] = {}, b[32 * 8] = {};
    struct Bad {
      const char* what;
      relugrad_options o;
      int64_t n;
      const void* dy;
    };
    std::vector<Bad> bad;
    auto o = Torch();
    bad.push_back({"n<0", o, -5, a});
    bad.push_back({"null dy", o, static_cast<int64_t>(n), nullptr});
    bad.push_back({"misaligned dy", o, static_cast<int64_t>(n), es > 1 ? a + 1 : nullptr});
    o.threshold = std::nan("");
    bad.push_back({"NaN threshold", o, static_cast<int64_t>(n), a});
    o = Torch();
    o.alpha = -INFINITY;
    bad.push_back({"inf alpha", o, static_cast<int64_t>(n), a});
    o = Torch();
    o.clip = 1;
    o.clip_lo = 1;
    o.clip_hi = -1;
    bad.push_back({"clip lo > hi", o, static_cast<int64_t>(n), a});
    o = Torch();
    o.threads = INT_MIN;
    bad.push_back({"threads INT_MIN", o, static_cast<int64_t>(n), a});
    for (const Bad& c : bad) {
      for (int e = 0; e < 2; ++e) {
        std::vector<unsigned char> dx(n * es + 64, 0xC3);
        unsigned char* p = dx.data() + (64 - reinterpret_cast<uintptr_t>(dx.data()) % 64) % 64;
        std::vector<unsigned char> before(dx);
        EXPECT_EQ(kEntryPoints[e](d, c.n, c.dy, b, p, &c.o), RELUGRAD_INVALID_ARGUMENT)
            << kEntryNames[e] << " " << c.what << " " << relugrad_dtype_name(d);
        EXPECT_STRNE(relugrad_last_error(), "");
        EXPECT_EQ(dx, before) << kEntryNames[e] << " " << c.what << " wrote to dx";
      }
    }
  }
}

}  // namespace
}  // namespace testing
}  // namespace relugrad
