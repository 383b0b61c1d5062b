// Plans (relugrad_plan_*, relugrad::Plan): a plan run gives the bits of the
// one-shot call and of the reference for every op x dtype x configuration;
// invalid and unsupported requests fail at create with the one-shot call's
// status and message; runs check their arrays as the one-shot calls do; a
// plan is immutable (its options struct may change after create) and runs
// on many threads at once. The C++ Plan: cpp_plan_test.cc (relugrad.hpp's
// relugrad::check cannot share a file with the check vocabulary).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstddef>
#include <cstring>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "core/rules.h"
#include "core/semantics.h"
#include "cpu/variants.h"
#include "relugrad/relugrad.h"
#include "test_support.h"

namespace relugrad {
namespace testing {
namespace {

// Owns a C plan for the length of a scope.
struct PlanPtr {
  relugrad_plan* p = nullptr;
  ~PlanPtr() { relugrad_plan_destroy(p); }
};

struct Outcome {
  relugrad_status status;
  std::string message;
};

Outcome Last(relugrad_status st) { return {st, relugrad_last_error()}; }

std::string Describe(const Outcome& o) {
  return std::string(relugrad_status_name(o.status)) + ": " + o.message;
}

size_t Es(relugrad_dtype d) { return relugrad_dtype_size(d); }

// dy and s: special values crossed (every dy with every s), then seeded random bits.
struct Inputs {
  size_t n;
  std::vector<unsigned char> dy, s;
};

Inputs MakeInputs(relugrad_dtype d, uint64_t seed) {
  const std::vector<uint64_t> special = SpecialValues(d);
  std::vector<uint64_t> dy_bits, s_bits;
  for (uint64_t a : special) {
    for (uint64_t b : special) {
      dy_bits.push_back(a);
      s_bits.push_back(b);
    }
  }
  const std::vector<uint64_t> rdy = RandomBits(d, 333, seed), rs = RandomBits(d, 333, seed + 1);
  dy_bits.insert(dy_bits.end(), rdy.begin(), rdy.end());
  s_bits.insert(s_bits.end(), rs.begin(), rs.end());
  return {dy_bits.size(), Pack(d, dy_bits), Pack(d, s_bits)};
}

bool Bounded(const relugrad_options& o) { return std::isfinite(o.gate_max); }

TEST(Plan, ReluGradRunsGiveTheOneShotAndReferenceBits) {
  for (relugrad_dtype d : kAllDtypes) {
    const Inputs in = MakeInputs(d, 7);
    for (const Config& c : GradConfigs()) {
      SCOPED_TRACE(std::string(relugrad_dtype_name(d)) + " " + c.name);
      PlanPtr plan;
      ASSERT_EQ(relugrad_plan_create(RELUGRAD_OP_RELU_GRAD, d, &c.options, &plan.p), RELUGRAD_OK)
          << relugrad_last_error();
      std::vector<unsigned char> planned(in.dy.size(), 0xAB), one_shot(in.dy.size(), 0xCD);
      ASSERT_EQ(relugrad_plan_run(plan.p, static_cast<int64_t>(in.n), in.dy.data(), in.s.data(),
                                  planned.data()),
                RELUGRAD_OK)
          << relugrad_last_error();
      ASSERT_EQ(relugrad_relu_grad(d, static_cast<int64_t>(in.n), in.dy.data(), in.s.data(),
                                   one_shot.data(), &c.options),
                RELUGRAD_OK);
      EXPECT_EQ(std::memcmp(planned.data(), one_shot.data(), planned.size()), 0);
      const auto want = Reference(d, in.dy, in.s, c.options);
      EXPECT_EQ(CompareBits(d, want.data(), planned.data(), in.n, in.dy.data(), in.s.data()), "");
      // In place over dy, then over s: the same bits again.
      std::vector<unsigned char> on_dy = in.dy, on_s = in.s;
      ASSERT_EQ(relugrad_plan_run(plan.p, static_cast<int64_t>(in.n), on_dy.data(), in.s.data(),
                                  on_dy.data()),
                RELUGRAD_OK);
      ASSERT_EQ(relugrad_plan_run(plan.p, static_cast<int64_t>(in.n), in.dy.data(), on_s.data(),
                                  on_s.data()),
                RELUGRAD_OK);
      EXPECT_EQ(on_dy, want);
      EXPECT_EQ(on_s, want);
    }
  }
}

TEST(Plan, MaskRunsGiveTheOneShotAndReferenceBits) {
  for (relugrad_dtype d : kAllDtypes) {
    const Inputs in = MakeInputs(d, 11);
    const size_t bytes = in.dy.size(), mb = static_cast<size_t>(relugrad_mask_bytes(in.n));
    const auto n = static_cast<int64_t>(in.n);
    for (const Config& c : GradConfigs()) {
      SCOPED_TRACE(std::string(relugrad_dtype_name(d)) + " " + c.name);
      PlanPtr forward, backward;
      const relugrad_status fst =
          relugrad_plan_create(RELUGRAD_OP_RELU_FORWARD_MASK, d, &c.options, &forward.p);
      std::vector<unsigned char> mask(mb, 0xEE);
      if (Bounded(c.options)) {
        // No mask forward for a bounded gate: the one-shot call's answer.
        const Outcome planned = Last(fst);
        EXPECT_EQ(forward.p, nullptr);
        std::vector<unsigned char> y(bytes);
        const Outcome one_shot = Last(relugrad_relu_forward(
            d, n, in.s.data(), y.data(), reinterpret_cast<uint8_t*>(mask.data()), &c.options));
        EXPECT_EQ(planned.status, RELUGRAD_UNSUPPORTED);
        EXPECT_EQ(Describe(planned), Describe(one_shot));
        // The backward takes any options: run it on the unbounded gate's mask.
        relugrad_options unbounded = c.options;
        unbounded.gate_max = std::numeric_limits<double>::infinity();
        ASSERT_EQ(relugrad_relu_forward(d, n, in.s.data(), y.data(),
                                        reinterpret_cast<uint8_t*>(mask.data()), &unbounded),
                  RELUGRAD_OK);
      } else {
        ASSERT_EQ(fst, RELUGRAD_OK) << relugrad_last_error();
        std::vector<unsigned char> y(bytes, 0xAB), y1(bytes, 0xCD), mask1(mb, 0x11);
        ASSERT_EQ(relugrad_plan_run_forward(forward.p, n, in.s.data(), y.data(),
                                            reinterpret_cast<uint8_t*>(mask.data())),
                  RELUGRAD_OK)
            << relugrad_last_error();
        ASSERT_EQ(relugrad_relu_forward(d, n, in.s.data(), y1.data(),
                                        reinterpret_cast<uint8_t*>(mask1.data()), &c.options),
                  RELUGRAD_OK);
        EXPECT_EQ(y, y1);
        EXPECT_EQ(mask, mask1);
      }
      ASSERT_EQ(relugrad_plan_create(RELUGRAD_OP_RELU_GRAD_MASK, d, &c.options, &backward.p),
                RELUGRAD_OK)
          << relugrad_last_error();
      std::vector<unsigned char> dx(bytes, 0xAB), dx1(bytes, 0xCD);
      ASSERT_EQ(relugrad_plan_run(backward.p, n, in.dy.data(), mask.data(), dx.data()), RELUGRAD_OK)
          << relugrad_last_error();
      ASSERT_EQ(relugrad_relu_grad_mask(d, n, in.dy.data(), reinterpret_cast<uint8_t*>(mask.data()),
                                        dx1.data(), &c.options),
                RELUGRAD_OK);
      EXPECT_EQ(dx, dx1);
      if (!Bounded(c.options)) {
        // The mask path's promise: grad_mask(dy, forward mask of x) == relu_grad(dy, x).
        const auto want = Reference(d, in.dy, in.s, c.options);
        EXPECT_EQ(CompareBits(d, want.data(), dx.data(), in.n, in.dy.data(), in.s.data()), "");
      }
    }
  }
}

// Options the library refuses, each with the one-shot call's status and message.
std::vector<std::pair<std::string, relugrad_options>> RefusedOptions() {
  relugrad_options torch;
  relugrad_options_init(&torch, RELUGRAD_PRESET_TORCH);
  std::vector<std::pair<std::string, relugrad_options>> out;
  auto add = [&](const std::string& name, auto change) {
    relugrad_options o = torch;
    change(o);
    out.emplace_back(name, o);
  };
  add("threshold NaN", [](relugrad_options& o) { o.threshold = std::nan(""); });
  add("gate 7", [](relugrad_options& o) { o.gate = static_cast<relugrad_gate>(7); });
  add("combine -1", [](relugrad_options& o) { o.combine = static_cast<relugrad_combine>(-1); });
  add("denormals 2", [](relugrad_options& o) { o.denormals = static_cast<relugrad_denormals>(2); });
  add("rounding 9", [](relugrad_options& o) {
    o.threshold_rounding = static_cast<relugrad_threshold_rounding>(9);
  });
  add("stores 3", [](relugrad_options& o) { o.stores = static_cast<relugrad_stores>(3); });
  add("backend 3", [](relugrad_options& o) { o.backend = static_cast<relugrad_backend>(3); });
  add("alpha inf", [](relugrad_options& o) { o.alpha = std::numeric_limits<double>::infinity(); });
  add("clip empty", [](relugrad_options& o) {
    o.clip = 1;
    o.clip_lo = 1;
    o.clip_hi = -1;
  });
  add("clip NaN", [](relugrad_options& o) {
    o.clip = 1;
    o.clip_lo = std::nan("");
  });
  add("gate_max NaN", [](relugrad_options& o) { o.gate_max = std::nan(""); });
  add("gate_max <= threshold", [](relugrad_options& o) {
    o.threshold = 1;
    o.gate_max = 1;
  });
  add("threads -1", [](relugrad_options& o) { o.threads = -1; });
  add("struct_size 3", [](relugrad_options& o) { o.struct_size = 3; });
  add("struct_size too large", [](relugrad_options& o) { o.struct_size = sizeof(o) + 8; });
  add("ascend f64 is unsupported below",
      [](relugrad_options& o) { o.backend = RELUGRAD_BACKEND_ASCEND_TWIN; });
  add("ascend alpha beyond f32", [](relugrad_options& o) {
    o.backend = RELUGRAD_BACKEND_ASCEND_TWIN;
    o.combine = RELUGRAD_COMBINE_MULTIPLY;
    o.alpha = 1e39;
  });
  if (!relugrad_backend_available(RELUGRAD_BACKEND_CUDA)) {
    // Built, CUDA refuses host arrays at run time instead (its tests cover it).
    add("cuda not built", [](relugrad_options& o) { o.backend = RELUGRAD_BACKEND_CUDA; });
  }
  add("forward with gate_max", [](relugrad_options& o) { o.gate_max = 6; });
  return out;
}

// The one-shot call of op on valid arrays of 8 elements.
Outcome OneShot(relugrad_plan_op op, relugrad_dtype d, const relugrad_options& o) {
  alignas(64) unsigned char a[64] = {}, b[64] = {}, out[64] = {};
  uint8_t mask[1] = {};
  switch (op) {
    case RELUGRAD_OP_RELU_GRAD:
      return Last(relugrad_relu_grad(d, 8, a, b, out, &o));
    case RELUGRAD_OP_RELU_FORWARD_MASK:
      return Last(relugrad_relu_forward(d, 8, a, out, mask, &o));
    case RELUGRAD_OP_RELU_GRAD_MASK:
      return Last(relugrad_relu_grad_mask(d, 8, a, mask, out, &o));
  }
  return {RELUGRAD_INTERNAL_ERROR, "unknown op"};
}

constexpr relugrad_plan_op kOps[] = {RELUGRAD_OP_RELU_GRAD, RELUGRAD_OP_RELU_FORWARD_MASK,
                                     RELUGRAD_OP_RELU_GRAD_MASK};

// What create must answer for a refused configuration: the status, and a
// word of the reason for the unsupported ones ("" where create succeeds).
Outcome Expected(relugrad_plan_op op, relugrad_dtype d, const std::string& name) {
  const bool twin = relugrad_backend_available(RELUGRAD_BACKEND_ASCEND_TWIN) != 0;
  const bool grad = op == RELUGRAD_OP_RELU_GRAD;
  if (name == "ascend f64 is unsupported below") {
    if (!twin) return {RELUGRAD_UNSUPPORTED, "not built"};
    if (d == RELUGRAD_F64) return {RELUGRAD_UNSUPPORTED, grad ? "f64 is not supported" : "no f64"};
    return {RELUGRAD_OK, ""};
  }
  if (name == "ascend alpha beyond f32") {
    if (!twin) return {RELUGRAD_UNSUPPORTED, "not built"};
    if (!grad) return {RELUGRAD_UNSUPPORTED, d == RELUGRAD_F64 ? "no f64" : "not served"};
    return {RELUGRAD_UNSUPPORTED, "exceeds the f32 range"};
  }
  if (name == "cuda not built") return {RELUGRAD_UNSUPPORTED, "CUDA backend is not built"};
  if (name == "forward with gate_max") {
    if (op == RELUGRAD_OP_RELU_FORWARD_MASK) return {RELUGRAD_UNSUPPORTED, "no mask forward"};
    return {RELUGRAD_OK, ""};
  }
  return {RELUGRAD_INVALID_ARGUMENT, ""};
}

// A CPU relu_grad plan holds the variant row the dispatcher would take for
// its kernel parameters (chosen once at create, reported by name); the mask
// ops, which choose per block, report none.
TEST(Plan, HoldsTheSelectedNamedVariant) {
  std::vector<bool> seen(kCpuVariantCount, false);
  for (relugrad_dtype d : {RELUGRAD_F32, RELUGRAD_F16, RELUGRAD_BF16, RELUGRAD_F64}) {
    for (const Config& c : GradConfigs()) {
      PlanPtr plan;
      ASSERT_EQ(relugrad_plan_create(RELUGRAD_OP_RELU_GRAD, d, &c.options, &plan.p), RELUGRAD_OK)
          << c.name;
      Rules rules;
      ASSERT_EQ(ResolveOptions(&c.options, &rules), RELUGRAD_OK);
      const CpuVariantId want = SelectCpuVariant(ToDtype(d), MakeKernelParams(ToDtype(d), rules));
      seen[static_cast<int>(want)] = true;
      EXPECT_STREQ(relugrad_plan_variant(plan.p), CpuVariants()[static_cast<int>(want)].name)
          << relugrad_dtype_name(d) << " " << c.name;
    }
    PlanPtr mask;
    ASSERT_EQ(relugrad_plan_create(RELUGRAD_OP_RELU_GRAD_MASK, d, nullptr, &mask.p), RELUGRAD_OK);
    EXPECT_STREQ(relugrad_plan_variant(mask.p), "");
  }
  // Which rows every configuration reaches is variants_test's; here: plans differ.
  int distinct = 0;
  for (bool s : seen) distinct += s ? 1 : 0;
  EXPECT_GE(distinct, 5);
  EXPECT_STREQ(relugrad_plan_variant(nullptr), "");
}

TEST(Plan, CreateFailsAsTheOneShotCallWithItsMessage) {
  int refused = 0;
  for (relugrad_plan_op op : kOps) {
    for (relugrad_dtype d : kAllDtypes) {
      for (const auto& [name, o] : RefusedOptions()) {
        SCOPED_TRACE(std::string(relugrad_enum_name(RELUGRAD_ENUM_PLAN_OP, op)) + " " +
                     relugrad_dtype_name(d) + " " + name);
        const Outcome want = Expected(op, d, name);
        const Outcome one_shot = OneShot(op, d, o);
        relugrad_plan* plan = reinterpret_cast<relugrad_plan*>(&refused);  // must be reset
        const Outcome created = Last(relugrad_plan_create(op, d, &o, &plan));
        EXPECT_EQ(Describe(created), Describe(one_shot));
        EXPECT_EQ(created.status, want.status) << created.message;
        EXPECT_NE(created.message.find(want.message), std::string::npos) << created.message;
        if (created.status == RELUGRAD_OK) {
          EXPECT_NE(plan, nullptr);
          relugrad_plan_destroy(plan);
          continue;
        }
        EXPECT_EQ(plan, nullptr);
        EXPECT_NE(created.message, "");
        ++refused;
      }
    }
  }
  EXPECT_GT(refused, 15 * 12);  // every invalid value, for every op and dtype, and more
}

TEST(Plan, CreateChecksOpDtypeAndOut) {
  relugrad_plan* plan = nullptr;
  EXPECT_EQ(relugrad_plan_create(static_cast<relugrad_plan_op>(0), RELUGRAD_F32, nullptr, &plan),
            RELUGRAD_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(relugrad_last_error()), "op 0 is not a relugrad_plan_op");
  EXPECT_EQ(relugrad_plan_create(static_cast<relugrad_plan_op>(4), RELUGRAD_F32, nullptr, &plan),
            RELUGRAD_INVALID_ARGUMENT);
  EXPECT_EQ(plan, nullptr);
  // The dtype message is the one-shot call's.
  float a[1] = {}, b[1] = {}, c[1];
  const Outcome one_shot =
      Last(relugrad_relu_grad(static_cast<relugrad_dtype>(9), 1, a, b, c, nullptr));
  EXPECT_EQ(Describe(Last(relugrad_plan_create(RELUGRAD_OP_RELU_GRAD,
                                               static_cast<relugrad_dtype>(9), nullptr, &plan))),
            Describe(one_shot));
  EXPECT_EQ(
      relugrad_plan_create(RELUGRAD_OP_RELU_GRAD, static_cast<relugrad_dtype>(0), nullptr, &plan),
      RELUGRAD_INVALID_ARGUMENT);
  EXPECT_EQ(relugrad_plan_create(RELUGRAD_OP_RELU_GRAD, RELUGRAD_F32, nullptr, nullptr),
            RELUGRAD_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(relugrad_last_error()), "out is NULL");
  relugrad_plan_destroy(nullptr);  // a no-op
}

// Every array check of the one-shot calls, with the same status and message.
TEST(Plan, RunsCheckTheirArraysAsTheOneShotCalls) {
  relugrad_options o;
  relugrad_options_init(&o, RELUGRAD_PRESET_TORCH);
  PlanPtr grad, forward, grad_mask;
  ASSERT_EQ(relugrad_plan_create(RELUGRAD_OP_RELU_GRAD, RELUGRAD_F32, &o, &grad.p), RELUGRAD_OK);
  ASSERT_EQ(relugrad_plan_create(RELUGRAD_OP_RELU_FORWARD_MASK, RELUGRAD_F32, &o, &forward.p),
            RELUGRAD_OK);
  ASSERT_EQ(relugrad_plan_create(RELUGRAD_OP_RELU_GRAD_MASK, RELUGRAD_F32, &o, &grad_mask.p),
            RELUGRAD_OK);
  alignas(64) float buf[64] = {};
  float* a = buf;
  float* b = buf + 16;
  float* c = buf + 32;
  auto* m = reinterpret_cast<uint8_t*>(buf + 48);
  auto* odd = reinterpret_cast<float*>(reinterpret_cast<unsigned char*>(buf) + 2);
  struct Case {
    const char* what;
    int64_t n;
    const void *a, *b;
    void* out;
  };
  const Case grad_cases[] = {
      {"n < 0", -1, a, b, c},
      {"NULL dy", 4, nullptr, b, c},
      {"NULL s", 4, a, nullptr, c},
      {"NULL dx", 4, a, b, nullptr},
      {"misaligned dy", 4, odd, b, c},
      {"dx overlaps dy", 8, a, b, a + 1},
      {"dx overlaps s", 8, a, b, b + 2},
      {"n == 0 with NULL", 0, nullptr, nullptr, nullptr},
      {"in place", 8, a, b, a},
  };
  for (const Case& k : grad_cases) {
    SCOPED_TRACE(k.what);
    const Outcome one_shot = Last(relugrad_relu_grad(RELUGRAD_F32, k.n, k.a, k.b, k.out, &o));
    EXPECT_EQ(Describe(Last(relugrad_plan_run(grad.p, k.n, k.a, k.b, k.out))), Describe(one_shot));
  }
  const Case forward_cases[] = {
      {"n < 0", -1, a, c, m},
      {"NULL x", 4, nullptr, c, m},
      {"NULL y", 4, a, nullptr, m},
      {"NULL mask", 4, a, c, nullptr},
      {"y overlaps x", 8, a, a + 1, m},
      {"mask overlaps x", 8, a, c, reinterpret_cast<uint8_t*>(a)},
      {"mask overlaps y", 8, a, c, reinterpret_cast<uint8_t*>(c + 1)},
      {"in place", 8, a, a, m},
  };
  for (const Case& k : forward_cases) {
    SCOPED_TRACE(std::string("forward ") + k.what);
    void* y = const_cast<void*>(k.b);
    auto* mask = static_cast<uint8_t*>(k.out);
    const Outcome one_shot = Last(relugrad_relu_forward(RELUGRAD_F32, k.n, k.a, y, mask, &o));
    EXPECT_EQ(Describe(Last(relugrad_plan_run_forward(forward.p, k.n, k.a, y, mask))),
              Describe(one_shot));
  }
  const Case mask_cases[] = {
      {"n < 0", -1, a, m, c},
      {"NULL dy", 4, nullptr, m, c},
      {"NULL mask", 4, a, nullptr, c},
      {"NULL dx", 4, a, m, nullptr},
      {"dx overlaps dy", 8, a, m, a + 1},
      {"mask overlaps dy", 8, a, a, c},
      {"mask overlaps dx", 8, a, c, c},
      {"in place", 8, a, m, a},
  };
  for (const Case& k : mask_cases) {
    SCOPED_TRACE(std::string("grad_mask ") + k.what);
    const auto* mask = static_cast<const uint8_t*>(k.b);
    const Outcome one_shot = Last(relugrad_relu_grad_mask(RELUGRAD_F32, k.n, k.a, mask, k.out, &o));
    EXPECT_EQ(Describe(Last(relugrad_plan_run(grad_mask.p, k.n, k.a, k.b, k.out))),
              Describe(one_shot));
  }
  // A NULL plan, and a plan given to the other run function.
  EXPECT_EQ(Describe(Last(relugrad_plan_run(nullptr, 4, a, b, c))),
            "invalid argument: plan is NULL");
  EXPECT_EQ(Describe(Last(relugrad_plan_run_forward(nullptr, 4, a, c, m))),
            "invalid argument: plan is NULL");
  EXPECT_EQ(Describe(Last(relugrad_plan_run(forward.p, 4, a, b, c))),
            "invalid argument: relugrad_plan_run cannot run a relu_forward_mask plan (use "
            "relugrad_plan_run_forward)");
  EXPECT_EQ(Describe(Last(relugrad_plan_run_forward(grad.p, 4, a, c, m))),
            "invalid argument: relugrad_plan_run_forward cannot run a relu_grad plan (use "
            "relugrad_plan_run)");
  // A run that succeeds leaves no error behind.
  EXPECT_EQ(relugrad_plan_run(grad.p, 4, a, b, c), RELUGRAD_OK);
  EXPECT_STREQ(relugrad_last_error(), "");
}

TEST(Plan, QueriesAndImmutability) {
  relugrad_options o;
  relugrad_options_init(&o, RELUGRAD_PRESET_TENSORFLOW);
  o.threshold = 0.5;
  o.threads = 100000;
  PlanPtr plan;
  ASSERT_EQ(relugrad_plan_create(RELUGRAD_OP_RELU_GRAD_MASK, RELUGRAD_BF16, &o, &plan.p),
            RELUGRAD_OK);
  EXPECT_EQ(relugrad_plan_get_op(plan.p), RELUGRAD_OP_RELU_GRAD_MASK);
  EXPECT_EQ(relugrad_plan_get_dtype(plan.p), RELUGRAD_BF16);
  EXPECT_EQ(relugrad_plan_get_op(nullptr), 0);
  EXPECT_EQ(relugrad_plan_get_dtype(nullptr), 0);
  relugrad_options got;
  relugrad_options_init(&got, RELUGRAD_PRESET_TORCH);
  ASSERT_EQ(relugrad_plan_get_options(plan.p, &got), RELUGRAD_OK);
  relugrad_options want = o;
  want.threads = 256;  // capped
  EXPECT_EQ(std::memcmp(&got, &want, sizeof(got)), 0);
  // A shorter out struct gets the fields that fit, no more.
  relugrad_options old;
  std::memset(&old, 0x5A, sizeof(old));
  old.struct_size = static_cast<uint32_t>(offsetof(relugrad_options, stores));
  ASSERT_EQ(relugrad_plan_get_options(plan.p, &old), RELUGRAD_OK);
  EXPECT_EQ(old.struct_size, offsetof(relugrad_options, stores));
  EXPECT_EQ(old.threshold, 0.5);
  // Untouched bytes: read as an int (0x5A5A5A5A is no relugrad_stores value,
  // and loading it through the enum type is undefined).
  int32_t stores_bits;
  std::memcpy(&stores_bits, &old.stores, sizeof(stores_bits));
  EXPECT_EQ(stores_bits, 0x5A5A5A5A);
  EXPECT_EQ(relugrad_plan_get_options(nullptr, &got), RELUGRAD_INVALID_ARGUMENT);
  EXPECT_EQ(relugrad_plan_get_options(plan.p, nullptr), RELUGRAD_INVALID_ARGUMENT);
  // A shorter struct at create gets the defaults of the fields it lacks, and
  // NULL is the torch preset.
  relugrad_options short_in = o;
  short_in.struct_size = static_cast<uint32_t>(offsetof(relugrad_options, gate_max));
  short_in.gate_max = 3;  // beyond struct_size: ignored
  PlanPtr from_short, from_null;
  ASSERT_EQ(relugrad_plan_create(RELUGRAD_OP_RELU_GRAD, RELUGRAD_F32, &short_in, &from_short.p),
            RELUGRAD_OK);
  ASSERT_EQ(relugrad_plan_get_options(from_short.p, &got), RELUGRAD_OK);
  EXPECT_EQ(got.struct_size, sizeof(got));
  EXPECT_EQ(got.gate_max, std::numeric_limits<double>::infinity());
  EXPECT_EQ(got.threshold, 0.5);
  ASSERT_EQ(relugrad_plan_create(RELUGRAD_OP_RELU_GRAD, RELUGRAD_F32, nullptr, &from_null.p),
            RELUGRAD_OK);
  ASSERT_EQ(relugrad_plan_get_options(from_null.p, &got), RELUGRAD_OK);
  relugrad_options torch;
  relugrad_options_init(&torch, RELUGRAD_PRESET_TORCH);
  EXPECT_EQ(std::memcmp(&got, &torch, sizeof(got)), 0);

  // The options object may change after create: the plan keeps its rules.
  relugrad_options live;
  relugrad_options_init(&live, RELUGRAD_PRESET_TORCH);
  PlanPtr kept;
  ASSERT_EQ(relugrad_plan_create(RELUGRAD_OP_RELU_GRAD, RELUGRAD_F32, &live, &kept.p), RELUGRAD_OK);
  live.threshold = 5;
  live.gate = RELUGRAD_GATE_PASS_IF_GT;
  float dy[2] = {1, 1}, s[2] = {2, std::nanf("")}, dx[2] = {};
  ASSERT_EQ(relugrad_plan_run(kept.p, 2, dy, s, dx), RELUGRAD_OK);
  EXPECT_EQ(dx[0], 1.0f);  // torch: 2 > 0 passes, whatever live says now
  EXPECT_EQ(dx[1], 1.0f);  // and a NaN gate is open
}

// One plan, several threads, each running it on its own arrays (and some on
// one shared input), every result checked against the reference computed
// before. Under TSan (the sanitize tier) this is the plan's thread-safety check.
TEST(Plan, OnePlanRunsOnManyThreadsAtOnce) {
  const relugrad_dtype d = RELUGRAD_BF16;
  relugrad_options o;
  relugrad_options_init(&o, RELUGRAD_PRESET_ONEDNN);
  o.alpha = 0.25;
  o.threads = 2;  // large runs split over the pool while other threads run too
  PlanPtr plan, mask_plan;
  ASSERT_EQ(relugrad_plan_create(RELUGRAD_OP_RELU_GRAD, d, &o, &plan.p), RELUGRAD_OK);
  ASSERT_EQ(relugrad_plan_create(RELUGRAD_OP_RELU_GRAD_MASK, d, &o, &mask_plan.p), RELUGRAD_OK);
  constexpr int kThreads = 4;
  const size_t sizes[] = {1, 31, 1000, 40000, 200000};
  std::vector<std::vector<unsigned char>> dys, ss, wants, masks;
  for (size_t n : sizes) {
    dys.push_back(Pack(d, RandomBits(d, n, n)));
    ss.push_back(Pack(d, RandomBits(d, n, n + 1)));
    wants.push_back(Reference(d, dys.back(), ss.back(), o));
    masks.emplace_back(static_cast<size_t>(relugrad_mask_bytes(static_cast<int64_t>(n))));
    std::vector<unsigned char> y(dys.back().size());
    ASSERT_EQ(relugrad_relu_forward(d, static_cast<int64_t>(n), ss.back().data(), y.data(),
                                    reinterpret_cast<uint8_t*>(masks.back().data()), &o),
              RELUGRAD_OK);
  }
  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 40 && failures[t].empty(); ++i) {
        const size_t k = static_cast<size_t>(i + t) % (sizeof(sizes) / sizeof(sizes[0]));
        const auto n = static_cast<int64_t>(sizes[k]);
        std::vector<unsigned char> dx(dys[k].size(), 0xAB);
        const bool from_mask = (i + t) % 3 == 0;
        const relugrad_status st =
            from_mask ? relugrad_plan_run(mask_plan.p, n, dys[k].data(), masks[k].data(), dx.data())
                      : relugrad_plan_run(plan.p, n, dys[k].data(), ss[k].data(), dx.data());
        if (st != RELUGRAD_OK) {
          failures[t] =
              std::string("status ") + relugrad_status_name(st) + ": " + relugrad_last_error();
        } else if (dx != wants[k]) {
          failures[t] = (from_mask ? "mask run, n = " : "run, n = ") + std::to_string(n) + ": " +
                        CompareBits(d, wants[k].data(), dx.data(), sizes[k]);
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], "") << "thread " << t;
}

}  // namespace
}  // namespace testing
}  // namespace relugrad
