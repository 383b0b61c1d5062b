// The named CPU kernel variants (cpu/variants.inc): one test per row and SIMD
// target, running the row's own block kernel (cached and streaming stores)
// through the shared BlockKernelTester on every configuration of
// GradConfigs() and dtype that selects the row; and the table's own
// properties: the selection is the first row that holds, every row is
// reached by some configuration, names are unique and found by name. The
// same for the mask kernels' rows (cpu/mask_variants.inc backward, with
// MaskGradKernelTester; cpu/mask_forward_variants.inc forward, with
// MaskForwardKernelTester).
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "cpu/scoped_ieee_float.h"
#include "cpu/variants.h"
#include "relugrad/relugrad.h"
#include "support/block_kernel_tester.h"
#include "test_support.h"

namespace relugrad {
namespace testing {
namespace {

struct Selected {
  relugrad_dtype dtype;
  const Config* config;
};

// The (dtype, configuration) pairs of `configs` that `select` maps to `id`,
// at most `per_dtype` per dtype (0: all). Every configuration reaches every
// row's code through the library in kernel_test (mask_kernel_test for the
// mask rows); here each row's own kernel runs on the first few that select it.
template <class Id>
std::vector<Selected> CasesOf(Id id, Id (*select)(Dtype, const KernelParams&),
                              const std::vector<Config>& configs, size_t per_dtype = 0) {
  std::vector<Selected> out;
  for (relugrad_dtype d : kAllDtypes) {
    size_t taken = 0;
    for (const Config& c : configs) {
      if (per_dtype != 0 && taken == per_dtype) break;
      if (select(ToDtype(d), ParamsFor(d, c.options)) == id) {
        out.push_back({d, &c});
        ++taken;
      }
    }
  }
  return out;
}

// For every (dtype, configuration) of `configs`: `select` is the first row
// that holds.
template <class Id>
void ExpectSelectionIsTheFirstThatHolds(const VariantRow<Id>* rows, int count,
                                        Id (*select)(Dtype, const KernelParams&),
                                        const std::vector<Config>& configs) {
  for (relugrad_dtype d : kAllDtypes) {
    for (const Config& c : configs) {
      const KernelParams p = ParamsFor(d, c.options);
      int first = -1;
      for (int i = 0; i < count && first < 0; ++i) {
        if (rows[i].holds(ToDtype(d), p)) first = i;
      }
      EXPECT_EQ(static_cast<int>(select(ToDtype(d), p)), first)
          << c.name << " " << relugrad_dtype_name(d);
    }
  }
}

// Every row is selected by some (dtype, configuration) of `configs` (but the
// x86 rows off x86); ids are in row order, names unique, requirements said,
// and the last row holds for every params.
template <class Id>
void ExpectEveryRowReached(const VariantRow<Id>* rows, int count,
                           Id (*select)(Dtype, const KernelParams&),
                           const std::vector<Config>& configs) {
  std::vector<int> reached(count, 0);
  for (relugrad_dtype d : kAllDtypes) {
    for (const Config& c : configs) {
      const int selected = static_cast<int>(select(ToDtype(d), ParamsFor(d, c.options)));
      if (selected >= 0 && selected < count) ++reached[selected];
    }
  }
  std::set<std::string> names;
  for (int i = 0; i < count; ++i) {
    const VariantRow<Id>& row = rows[i];
    EXPECT_EQ(static_cast<int>(row.id), i);
    EXPECT_TRUE(names.insert(row.name).second) << "duplicate name " << row.name;
    EXPECT_NE(std::string(row.requirement), "") << row.name;
    const bool x86_row = std::string(row.name).find("_x86") != std::string::npos;
    if (RELUGRAD_X86_MXCSR || !x86_row)
      EXPECT_GT(reached[i], 0) << row.name << " (" << row.requirement
                               << ") is selected by no configuration and dtype";
  }
  // Selection always finds a row.
  EXPECT_TRUE(rows[count - 1].holds(Dtype::kF32, KernelParams()));
}

// Rows whose predicate this build can satisfy: the x86 multiply rows need
// x86's MXCSR (UsesFloatMultiplyRule is false elsewhere).
bool ReachableInThisBuild(CpuVariantId id) {
  const std::string name = CpuVariants()[static_cast<int>(id)].name;
  return RELUGRAD_X86_MXCSR || name.find("_x86") == std::string::npos;
}

class VariantTest : public ::testing::TestWithParam<std::tuple<std::string, int>> {
 protected:
  void SetUp() override {
    isa_ = std::make_unique<ScopedIsa>(std::get<0>(GetParam()));
    ASSERT_EQ(std::string(relugrad_isa_selected()), std::get<0>(GetParam()));
  }
  void TearDown() override { isa_.reset(); }
  std::unique_ptr<ScopedIsa> isa_;
};

TEST_P(VariantTest, MatchesReferenceBitForBit) {
  const auto id = static_cast<CpuVariantId>(std::get<1>(GetParam()));
  const CpuVariant& row = CpuVariants()[static_cast<int>(id)];
  const auto configs = GradConfigs();
  const auto cases = CasesOf(id, &SelectCpuVariant, configs, 2);
  if (cases.empty()) {
    ASSERT_FALSE(ReachableInThisBuild(id)) << row.name << " is selected by no configuration";
    GTEST_SKIP() << row.name << ": not reachable in this build";
  }
  for (const Selected& c : cases) {
    for (bool stream : {false, true}) {
      const BlockKernel kernel = CpuVariantKernel(id, ToDtype(c.dtype), stream);
      BlockKernelTester()
          .dtype(c.dtype)
          .options(c.config->options)
          .streaming(stream)
          .large(c.config == cases.front().config)  // the large sweep once per dtype's first
          .Test(kernel,
                std::string(row.name) + (stream ? " (streaming)" : "") + " " + c.config->name);
      if (HasFatalFailure()) return;
    }
  }
}

std::vector<int> AllRows() {
  std::vector<int> rows;
  for (int i = 0; i < kCpuVariantCount; ++i) rows.push_back(i);
  return rows;
}

INSTANTIATE_TEST_SUITE_P(Rows, VariantTest,
                         ::testing::Combine(::testing::ValuesIn(TargetsToTest()),
                                            ::testing::ValuesIn(AllRows())),
                         [](const ::testing::TestParamInfo<std::tuple<std::string, int>>& info) {
                           return std::get<0>(info.param) + "_" +
                                  CpuVariants()[std::get<1>(info.param)].name;
                         });

TEST(VariantTable, EveryRowIsReachedByAConfiguration) {
  ExpectEveryRowReached(CpuVariants(), kCpuVariantCount, &SelectCpuVariant, GradConfigs());
}

TEST(VariantTable, SelectionIsTheFirstRowThatHolds) {
  ExpectSelectionIsTheFirstThatHolds(CpuVariants(), kCpuVariantCount, &SelectCpuVariant,
                                     GradConfigs());
}

TEST(VariantTable, RowsAreInIdOrderWithUniqueNamesFoundByName) {
  std::set<std::string> names;
  for (int i = 0; i < kCpuVariantCount; ++i) {
    const CpuVariant& row = CpuVariants()[i];
    EXPECT_EQ(static_cast<int>(row.id), i);
    EXPECT_TRUE(names.insert(row.name).second) << "duplicate name " << row.name;
    EXPECT_EQ(FindCpuVariant(row.name), &row);
    EXPECT_NE(std::string(row.requirement), "");
  }
  EXPECT_EQ(FindCpuVariant("no_such_variant"), nullptr);
  EXPECT_EQ(FindCpuVariant(nullptr), nullptr);
  EXPECT_EQ(CpuVariantKernel(CpuVariantId::kCount, Dtype::kF32, false), nullptr);
  // The last row holds for every params: selection always finds a row.
  EXPECT_TRUE(CpuVariants()[kCpuVariantCount - 1].holds(Dtype::kF32, KernelParams()));
}

// The backward-from-mask rows (mask_kernel_test runs each configuration
// through them on every target).
TEST(MaskGradVariantTable, EveryRowIsReachedAndSelectionIsTheFirstThatHolds) {
  ExpectSelectionIsTheFirstThatHolds(MaskGradVariants(), kMaskGradVariantCount,
                                     &SelectMaskGradVariant, GradConfigs());
  ExpectEveryRowReached(MaskGradVariants(), kMaskGradVariantCount, &SelectMaskGradVariant,
                        GradConfigs());
  EXPECT_EQ(MaskGradVariantKernel(MaskGradVariantId::kCount, Dtype::kF32), nullptr);
}

// The backward-from-mask rows, each on the first two (dtype, configuration)
// pairs of AllConfigs() that select it, with the shared MaskGradKernelTester.
class MaskGradVariantTest : public VariantTest {};

TEST_P(MaskGradVariantTest, MatchesReferenceBitForBit) {
  const auto id = static_cast<MaskGradVariantId>(std::get<1>(GetParam()));
  const MaskGradVariant& row = MaskGradVariants()[static_cast<int>(id)];
  const auto configs = AllConfigs();
  const auto cases = CasesOf(id, &SelectMaskGradVariant, configs, 2);
  if (cases.empty()) {
    ASSERT_TRUE(std::string(row.name).find("_x86") != std::string::npos && !RELUGRAD_X86_MXCSR)
        << row.name << " is selected by no configuration";
    GTEST_SKIP() << row.name << ": not reachable in this build";
  }
  for (const Selected& c : cases) {
    for (bool stream : {false, true}) {
      MaskGradKernelTester()
          .dtype(c.dtype)
          .options(c.config->options)
          .streaming(stream)
          .large(c.config == cases.front().config)
          .Test(MaskGradVariantKernel(id, ToDtype(c.dtype)),
                std::string(row.name) + (stream ? " (streaming)" : "") + " " + c.config->name);
      if (HasFatalFailure()) return;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Rows, MaskGradVariantTest,
                         ::testing::Combine(::testing::ValuesIn(TargetsToTest()),
                                            ::testing::Range(0, kMaskGradVariantCount)),
                         [](const ::testing::TestParamInfo<std::tuple<std::string, int>>& info) {
                           return std::get<0>(info.param) + "_" +
                                  MaskGradVariants()[std::get<1>(info.param)].name;
                         });

// The forward-with-mask rows (cpu/mask_forward_variants.inc), each on the
// first two (dtype, configuration) pairs of AllConfigs() (the mask ops refuse
// gate_max) that select it, with the shared MaskForwardKernelTester.
class MaskForwardVariantTest : public VariantTest {};

TEST_P(MaskForwardVariantTest, MatchesReferenceBitForBit) {
  const auto id = static_cast<MaskForwardVariantId>(std::get<1>(GetParam()));
  const MaskForwardVariant& row = MaskForwardVariants()[static_cast<int>(id)];
  const auto configs = AllConfigs();
  const auto cases = CasesOf(id, &SelectMaskForwardVariant, configs, 2);
  ASSERT_FALSE(cases.empty()) << row.name << " is selected by no configuration";
  for (const Selected& c : cases) {
    for (bool stream : {false, true}) {
      MaskForwardKernelTester()
          .dtype(c.dtype)
          .options(c.config->options)
          .streaming(stream)
          .large(c.config == cases.front().config)
          .Test(MaskForwardVariantKernel(id, ToDtype(c.dtype)),
                std::string(row.name) + (stream ? " (streaming)" : "") + " " + c.config->name);
      if (HasFatalFailure()) return;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Rows, MaskForwardVariantTest,
                         ::testing::Combine(::testing::ValuesIn(TargetsToTest()),
                                            ::testing::Range(0, kMaskForwardVariantCount)),
                         [](const ::testing::TestParamInfo<std::tuple<std::string, int>>& info) {
                           return std::get<0>(info.param) + "_" +
                                  MaskForwardVariants()[std::get<1>(info.param)].name;
                         });

TEST(MaskForwardVariantTable, EveryRowIsReachedAndSelectionIsTheFirstThatHolds) {
  ExpectSelectionIsTheFirstThatHolds(MaskForwardVariants(), kMaskForwardVariantCount,
                                     &SelectMaskForwardVariant, AllConfigs());
  ExpectEveryRowReached(MaskForwardVariants(), kMaskForwardVariantCount, &SelectMaskForwardVariant,
                        AllConfigs());
  EXPECT_EQ(MaskForwardVariantKernel(MaskForwardVariantId::kCount, Dtype::kF32), nullptr);
}

// The presets' hot paths are the rows their names promise.
TEST(VariantTable, PresetsSelectTheirNamedRows) {
  auto selected = [](relugrad_preset preset, relugrad_dtype d) {
    relugrad_options o;
    relugrad_options_init(&o, preset);
    return std::string(
        CpuVariants()[static_cast<int>(SelectCpuVariant(ToDtype(d), ParamsFor(d, o)))].name);
  };
  EXPECT_EQ(selected(RELUGRAD_PRESET_TORCH, RELUGRAD_F32), "nan_open_zero_gate");
  EXPECT_EQ(selected(RELUGRAD_PRESET_JAX, RELUGRAD_BF16), "raw_gate_nan_closed");
  relugrad_options leaky;
  relugrad_options_init(&leaky, RELUGRAD_PRESET_ONEDNN);
  leaky.alpha = 0.25;
  const auto forward = [](const relugrad_options& o, relugrad_dtype d) {
    return std::string(MaskForwardVariants()[static_cast<int>(SelectMaskForwardVariant(
                                                 ToDtype(d), ParamsFor(d, o)))]
                           .name);
  };
  relugrad_options torch;
  relugrad_options_init(&torch, RELUGRAD_PRESET_TORCH);
  EXPECT_EQ(forward(torch, RELUGRAD_F32), "mask_forward_nan_open_zero_gate");
  relugrad_options torch_relu = torch;
  torch_relu.keep_negative_zero = 1;
  EXPECT_EQ(forward(torch_relu, RELUGRAD_F32), "mask_forward_torch_relu");
  EXPECT_EQ(forward(torch_relu, RELUGRAD_BF16), "mask_forward_torch_relu");
  relugrad_options jax_keep;
  relugrad_options_init(&jax_keep, RELUGRAD_PRESET_JAX);
  jax_keep.keep_negative_zero = 1;
  EXPECT_EQ(forward(jax_keep, RELUGRAD_F32), "mask_forward_zero_closed");
  leaky.keep_negative_zero = 1;  // y = x*alpha decides the zero's sign itself
  EXPECT_EQ(forward(leaky, RELUGRAD_F32), "mask_forward_alpha");
  leaky.keep_negative_zero = 0;
  EXPECT_EQ(forward(leaky, RELUGRAD_F32), "mask_forward_alpha");
  EXPECT_EQ(forward(leaky, RELUGRAD_BF16), "mask_forward_alpha16");
}

}  // namespace
}  // namespace testing
}  // namespace relugrad
