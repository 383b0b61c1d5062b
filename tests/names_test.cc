// The enum name tables of the C ABI (relugrad_enum_*): every enumerator has
// exactly one canonical name, names round-trip, the accepted alternatives and
// deprecated spellings map where they should, and bad queries fail cleanly.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "relugrad/relugrad.h"

namespace {

struct Row {
  relugrad_enum kind;
  int32_t value;
  const char* name;
};

// The specification: each enumerator of relugrad.h and its canonical name, in
// declaration order.
const std::vector<Row>& Expected() {
  static const std::vector<Row> rows = {
      {RELUGRAD_ENUM_DTYPE, RELUGRAD_F32, "f32"},
      {RELUGRAD_ENUM_DTYPE, RELUGRAD_F16, "f16"},
      {RELUGRAD_ENUM_DTYPE, RELUGRAD_BF16, "bf16"},
      {RELUGRAD_ENUM_DTYPE, RELUGRAD_F64, "f64"},
      {RELUGRAD_ENUM_PRESET, RELUGRAD_PRESET_TORCH, "torch"},
      {RELUGRAD_ENUM_PRESET, RELUGRAD_PRESET_TENSORFLOW, "tensorflow"},
      {RELUGRAD_ENUM_PRESET, RELUGRAD_PRESET_JAX, "jax"},
      {RELUGRAD_ENUM_PRESET, RELUGRAD_PRESET_ONEDNN, "onednn"},
      {RELUGRAD_ENUM_PRESET, RELUGRAD_PRESET_MINDSPORE, "mindspore"},
      {RELUGRAD_ENUM_PRESET, RELUGRAD_PRESET_CANN_RELUGRAD, "cann_relugrad"},
      {RELUGRAD_ENUM_PRESET, RELUGRAD_PRESET_CANN_RELUGRAD_V2, "cann_relugrad_v2"},
      {RELUGRAD_ENUM_PRESET, RELUGRAD_PRESET_CANN_THRESHOLD_GRAD, "cann_threshold_grad"},
      {RELUGRAD_ENUM_PRESET, RELUGRAD_PRESET_CANN_RELUGRAD_V2_HP, "cann_relugrad_v2_hp"},
      {RELUGRAD_ENUM_GATE, RELUGRAD_GATE_ZERO_IF_LE, "zero_if_le"},
      {RELUGRAD_ENUM_GATE, RELUGRAD_GATE_PASS_IF_GT, "pass_if_gt"},
      {RELUGRAD_ENUM_COMBINE, RELUGRAD_COMBINE_SELECT, "select"},
      {RELUGRAD_ENUM_COMBINE, RELUGRAD_COMBINE_MULTIPLY, "multiply"},
      {RELUGRAD_ENUM_DENORMALS, RELUGRAD_DENORMALS_IEEE, "ieee"},
      {RELUGRAD_ENUM_DENORMALS, RELUGRAD_DENORMALS_FTZ_DAZ, "ftz_daz"},
      {RELUGRAD_ENUM_THRESHOLD_ROUNDING, RELUGRAD_THRESHOLD_COMPUTE, "compute"},
      {RELUGRAD_ENUM_THRESHOLD_ROUNDING, RELUGRAD_THRESHOLD_DTYPE, "dtype"},
      {RELUGRAD_ENUM_BACKEND, RELUGRAD_BACKEND_CPU, "cpu"},
      {RELUGRAD_ENUM_BACKEND, RELUGRAD_BACKEND_CUDA, "cuda"},
      {RELUGRAD_ENUM_BACKEND, RELUGRAD_BACKEND_ASCEND_TWIN, "ascend_twin"},
      {RELUGRAD_ENUM_STORES, RELUGRAD_STORES_AUTO, "auto"},
      {RELUGRAD_ENUM_STORES, RELUGRAD_STORES_CACHED, "cached"},
      {RELUGRAD_ENUM_STORES, RELUGRAD_STORES_STREAMING, "streaming"},
      {RELUGRAD_ENUM_STATUS, RELUGRAD_OK, "ok"},
      {RELUGRAD_ENUM_STATUS, RELUGRAD_INVALID_ARGUMENT, "invalid_argument"},
      {RELUGRAD_ENUM_STATUS, RELUGRAD_UNSUPPORTED, "unsupported"},
      {RELUGRAD_ENUM_STATUS, RELUGRAD_INTERNAL_ERROR, "internal_error"},
      {RELUGRAD_ENUM_PLAN_OP, RELUGRAD_OP_RELU_GRAD, "relu_grad"},
      {RELUGRAD_ENUM_PLAN_OP, RELUGRAD_OP_RELU_FORWARD_MASK, "relu_forward_mask"},
      {RELUGRAD_ENUM_PLAN_OP, RELUGRAD_OP_RELU_GRAD_MASK, "relu_grad_mask"},
  };
  return rows;
}

constexpr int kKinds = RELUGRAD_ENUM_PLAN_OP + 1;

TEST(Names, EveryEnumeratorHasItsCanonicalNameInOrder) {
  std::vector<int> seen(kKinds, 0);
  for (const Row& r : Expected()) {
    const int index = seen[r.kind]++;
    int32_t value = -99;
    const char* name = relugrad_enum_entry(r.kind, index, &value);
    ASSERT_NE(name, nullptr) << r.name;
    EXPECT_STREQ(name, r.name);
    EXPECT_EQ(value, r.value) << r.name;
    EXPECT_STREQ(relugrad_enum_name(r.kind, r.value), r.name);
    int32_t parsed = -99;
    EXPECT_EQ(relugrad_enum_from_name(r.kind, r.name, &parsed), RELUGRAD_OK) << r.name;
    EXPECT_EQ(parsed, r.value) << r.name;
    EXPECT_EQ(relugrad_enum_alias_deprecated(r.kind, r.name), nullptr) << r.name;
  }
  for (int k = 0; k < kKinds; ++k) {
    const auto kind = static_cast<relugrad_enum>(k);
    EXPECT_EQ(relugrad_enum_count(kind), seen[k]) << "kind " << k << " has unlisted entries";
    EXPECT_EQ(relugrad_enum_entry(kind, seen[k], nullptr), nullptr);
    EXPECT_EQ(relugrad_enum_entry(kind, -1, nullptr), nullptr);
  }
}

TEST(Names, EveryPresetNameInitialisesOptions) {
  for (int i = 0; i < relugrad_enum_count(RELUGRAD_ENUM_PRESET); ++i) {
    int32_t value = 0;
    const char* name = relugrad_enum_entry(RELUGRAD_ENUM_PRESET, i, &value);
    relugrad_preset p;
    ASSERT_EQ(relugrad_preset_from_name(name, &p), RELUGRAD_OK) << name;
    EXPECT_EQ(p, value);
    EXPECT_STREQ(relugrad_preset_name(p), name);
    relugrad_options o;
    EXPECT_EQ(relugrad_options_init(&o, p), RELUGRAD_OK) << name;
  }
}

TEST(Names, AlternativesAndDeprecatedSpellings) {
  int32_t v = -1;
  EXPECT_EQ(relugrad_enum_from_name(RELUGRAD_ENUM_DENORMALS, "ftz", &v), RELUGRAD_OK);
  EXPECT_EQ(v, RELUGRAD_DENORMALS_FTZ_DAZ);
  EXPECT_STREQ(relugrad_enum_alias_deprecated(RELUGRAD_ENUM_DENORMALS, "ftz"), "ftz_daz");
  EXPECT_EQ(relugrad_enum_from_name(RELUGRAD_ENUM_BACKEND, "ascend-twin", &v), RELUGRAD_OK);
  EXPECT_EQ(v, RELUGRAD_BACKEND_ASCEND_TWIN);
  EXPECT_STREQ(relugrad_enum_alias_deprecated(RELUGRAD_ENUM_BACKEND, "ascend-twin"), "ascend_twin");
  relugrad_dtype d;
  EXPECT_EQ(relugrad_dtype_from_name("bfloat16", &d), RELUGRAD_OK);
  EXPECT_EQ(d, RELUGRAD_BF16);
  EXPECT_EQ(relugrad_enum_alias_deprecated(RELUGRAD_ENUM_DTYPE, "bfloat16"), nullptr)
      << "a plain alternative is not deprecated";
  // Aliases belong to their own enum only.
  EXPECT_EQ(relugrad_enum_from_name(RELUGRAD_ENUM_GATE, "ftz", &v), RELUGRAD_INVALID_ARGUMENT);
  EXPECT_EQ(relugrad_enum_name(RELUGRAD_ENUM_DENORMALS, 7), nullptr);
}

TEST(Names, UnknownNamesListTheCanonicalOnes) {
  int32_t v = 42;
  EXPECT_EQ(relugrad_enum_from_name(RELUGRAD_ENUM_DENORMALS, "flush", &v),
            RELUGRAD_INVALID_ARGUMENT);
  EXPECT_EQ(v, 42) << "a failed parse leaves the output alone";
  EXPECT_EQ(std::string(relugrad_last_error()), "unknown denormals mode 'flush' (ieee, ftz_daz)");
  EXPECT_EQ(relugrad_enum_from_name(RELUGRAD_ENUM_BACKEND, "npu", &v), RELUGRAD_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(relugrad_last_error()), "unknown backend 'npu' (cpu, cuda, ascend_twin)");
  EXPECT_EQ(relugrad_enum_from_name(RELUGRAD_ENUM_GATE, nullptr, &v), RELUGRAD_INVALID_ARGUMENT);
  EXPECT_EQ(relugrad_enum_from_name(RELUGRAD_ENUM_GATE, "select", nullptr),
            RELUGRAD_INVALID_ARGUMENT);
  const auto bogus = static_cast<relugrad_enum>(kKinds);
  EXPECT_EQ(relugrad_enum_count(bogus), -1);
  EXPECT_EQ(relugrad_enum_entry(bogus, 0, nullptr), nullptr);
  EXPECT_EQ(relugrad_enum_name(bogus, 0), nullptr);
  EXPECT_EQ(relugrad_enum_alias_deprecated(bogus, "ftz"), nullptr);
  EXPECT_EQ(relugrad_enum_from_name(bogus, "ftz", &v), RELUGRAD_INVALID_ARGUMENT);
}

}  // namespace
