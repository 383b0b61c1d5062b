// Every invalid-argument and unsupported case returns its own status and a
// message naming the problem; nothing is written on failure.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "relugrad/relugrad.h"

namespace {

relugrad_options Torch() {
  relugrad_options o;
  relugrad_options_init(&o, RELUGRAD_PRESET_TORCH);
  return o;
}

void ExpectFailure(relugrad_status expected_status, const char* expected_text, relugrad_dtype d,
                   int64_t n, const void* dy, const void* s, void* dx, const relugrad_options* o) {
  EXPECT_EQ(relugrad_relu_grad(d, n, dy, s, dx, o), expected_status);
  EXPECT_NE(std::string(relugrad_last_error()).find(expected_text), std::string::npos)
      << "message was: " << relugrad_last_error();
}

TEST(Errors, InvalidArguments) {
  alignas(64) float a[64] = {}, b[64] = {}, c[64];
  std::memset(c, 0x5a, sizeof(c));
  const auto o = Torch();
  ExpectFailure(RELUGRAD_INVALID_ARGUMENT, "dtype", static_cast<relugrad_dtype>(0), 4, a, b, c, &o);
  ExpectFailure(RELUGRAD_INVALID_ARGUMENT, "dtype", static_cast<relugrad_dtype>(9), 4, a, b, c, &o);
  ExpectFailure(RELUGRAD_INVALID_ARGUMENT, "n must be >= 0", RELUGRAD_F32, -1, a, b, c, &o);
  ExpectFailure(RELUGRAD_INVALID_ARGUMENT, "does not fit", RELUGRAD_F32,
                std::numeric_limits<int64_t>::max(), a, b, c, &o);
  ExpectFailure(RELUGRAD_INVALID_ARGUMENT, "dy is NULL", RELUGRAD_F32, 4, nullptr, b, c, &o);
  ExpectFailure(RELUGRAD_INVALID_ARGUMENT, "s is NULL", RELUGRAD_F32, 4, a, nullptr, c, &o);
  ExpectFailure(RELUGRAD_INVALID_ARGUMENT, "dx is NULL", RELUGRAD_F32, 4, a, b, nullptr, &o);
  ExpectFailure(RELUGRAD_INVALID_ARGUMENT, "not aligned", RELUGRAD_F32, 4,
                reinterpret_cast<const char*>(a) + 1, b, c, &o);
  ExpectFailure(RELUGRAD_INVALID_ARGUMENT, "partially overlaps dy", RELUGRAD_F32, 8, a, b, a + 1,
                &o);
  ExpectFailure(RELUGRAD_INVALID_ARGUMENT, "partially overlaps s", RELUGRAD_F32, 8, a, b, b + 7,
                &o);

  auto bad = o;
  bad.gate = static_cast<relugrad_gate>(7);
  ExpectFailure(RELUGRAD_INVALID_ARGUMENT, "options.gate", RELUGRAD_F32, 4, a, b, c, &bad);
  bad = o;
  bad.combine = static_cast<relugrad_combine>(-1);
  ExpectFailure(RELUGRAD_INVALID_ARGUMENT, "options.combine", RELUGRAD_F32, 4, a, b, c, &bad);
  bad = o;
  bad.denormals = static_cast<relugrad_denormals>(2);
  ExpectFailure(RELUGRAD_INVALID_ARGUMENT, "options.denormals", RELUGRAD_F32, 4, a, b, c, &bad);
  bad = o;
  bad.threshold_rounding = static_cast<relugrad_threshold_rounding>(5);
  ExpectFailure(RELUGRAD_INVALID_ARGUMENT, "threshold_rounding", RELUGRAD_F32, 4, a, b, c, &bad);
  bad = o;
  bad.backend = static_cast<relugrad_backend>(42);
  ExpectFailure(RELUGRAD_INVALID_ARGUMENT, "options.backend", RELUGRAD_F32, 4, a, b, c, &bad);
  bad = o;
  bad.threshold = std::nan("");
  ExpectFailure(RELUGRAD_INVALID_ARGUMENT, "threshold is NaN", RELUGRAD_F32, 4, a, b, c, &bad);
  bad = o;
  bad.alpha = INFINITY;
  ExpectFailure(RELUGRAD_INVALID_ARGUMENT, "alpha must be finite", RELUGRAD_F32, 4, a, b, c, &bad);
  bad = o;
  bad.clip = 1;
  bad.clip_lo = 2;
  bad.clip_hi = 1;
  ExpectFailure(RELUGRAD_INVALID_ARGUMENT, "clip range", RELUGRAD_F32, 4, a, b, c, &bad);
  bad.clip_lo = std::nan("");
  ExpectFailure(RELUGRAD_INVALID_ARGUMENT, "clip bounds", RELUGRAD_F32, 4, a, b, c, &bad);
  bad = o;
  bad.threads = -2;
  ExpectFailure(RELUGRAD_INVALID_ARGUMENT, "threads", RELUGRAD_F32, 4, a, b, c, &bad);
  bad = o;
  bad.struct_size = 3;
  ExpectFailure(RELUGRAD_INVALID_ARGUMENT, "struct_size", RELUGRAD_F32, 4, a, b, c, &bad);
  bad.struct_size = sizeof(relugrad_options) + 8;
  ExpectFailure(RELUGRAD_INVALID_ARGUMENT, "struct_size", RELUGRAD_F32, 4, a, b, c, &bad);

  for (float v : c) {
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    EXPECT_EQ(bits, 0x5a5a5a5au) << "a failed call wrote to dx";
  }
}

TEST(Errors, ValidEdgeCases) {
  alignas(64) float a[8] = {1, -1, 2, -2, 0, 3, -3, 4}, b[8] = {1, 1, -1, -1, 1, 0, 1, -1};
  const auto o = Torch();
  EXPECT_EQ(relugrad_relu_grad(RELUGRAD_F32, 0, nullptr, nullptr, nullptr, &o),
            RELUGRAD_OK);  // n = 0
  EXPECT_EQ(relugrad_relu_grad(RELUGRAD_F32, 8, a, b, a, nullptr),
            RELUGRAD_OK);  // NULL options = torch, in place
  EXPECT_EQ(a[0], 1.0f);
  EXPECT_EQ(a[2], 0.0f);
  // Disjoint neighbours are not overlap.
  alignas(64) float buf[16] = {};
  EXPECT_EQ(relugrad_relu_grad(RELUGRAD_F32, 8, buf, b, buf + 8, &o), RELUGRAD_OK);
  // A shorter options struct (an older caller) still works: defaults fill the rest.
  relugrad_options old = o;
  old.struct_size = offsetof(relugrad_options, clip);
  EXPECT_EQ(relugrad_relu_grad(RELUGRAD_F32, 8, a, b, a, &old), RELUGRAD_OK)
      << relugrad_last_error();
}

TEST(Errors, UnsupportedIsKeptApart) {
  alignas(64) float a[4] = {}, b[4] = {}, c[4] = {};
  auto o = Torch();
  if (!relugrad_backend_available(RELUGRAD_BACKEND_CUDA)) {
    o.backend = RELUGRAD_BACKEND_CUDA;
    EXPECT_EQ(relugrad_relu_grad(RELUGRAD_F32, 4, a, b, c, &o), RELUGRAD_UNSUPPORTED);
    EXPECT_NE(std::string(relugrad_last_error()).find("CUDA"), std::string::npos);
  }
  EXPECT_EQ(relugrad_set_max_isa("no-such-isa"), RELUGRAD_INVALID_ARGUMENT);
  EXPECT_NE(std::string(relugrad_last_error()).find("unknown SIMD target"), std::string::npos);
}

TEST(Errors, PresetAndNameParsing) {
  relugrad_options o;
  EXPECT_EQ(relugrad_options_init(&o, static_cast<relugrad_preset>(17)), RELUGRAD_INVALID_ARGUMENT);
  EXPECT_EQ(relugrad_options_init(nullptr, RELUGRAD_PRESET_TORCH), RELUGRAD_INVALID_ARGUMENT);
  relugrad_preset p;
  EXPECT_EQ(relugrad_preset_from_name("tensorflow", &p), RELUGRAD_OK);
  EXPECT_EQ(p, RELUGRAD_PRESET_TENSORFLOW);
  EXPECT_EQ(relugrad_preset_from_name("mxnet", &p), RELUGRAD_INVALID_ARGUMENT);
  relugrad_dtype d;
  EXPECT_EQ(relugrad_dtype_from_name("bf16", &d), RELUGRAD_OK);
  EXPECT_EQ(d, RELUGRAD_BF16);
  EXPECT_EQ(relugrad_dtype_from_name("int8", &d), RELUGRAD_INVALID_ARGUMENT);
}

TEST(Errors, LastErrorIsPerThreadAndClearedOnSuccess) {
  alignas(64) float a[4] = {}, b[4] = {}, c[4] = {};
  EXPECT_EQ(relugrad_relu_grad(RELUGRAD_F32, -1, a, b, c, nullptr), RELUGRAD_INVALID_ARGUMENT);
  EXPECT_STRNE(relugrad_last_error(), "");
  EXPECT_EQ(relugrad_relu_grad(RELUGRAD_F32, 4, a, b, c, nullptr), RELUGRAD_OK);
  EXPECT_STREQ(relugrad_last_error(), "");
}

}  // namespace
