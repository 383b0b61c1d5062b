// The named CPU kernel variants (cpu/variants.inc): one test per row and SIMD
// target, running the row's own block kernel (cached and streaming stores)
// through the shared BlockKernelTester on every configuration of
// GradConfigs() and dtype that selects the row; and the table's own
// properties: the selection is the first row that holds, every row is
// reached by some configuration, names are unique and found by name.
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

// The (dtype, configuration) pairs of GradConfigs() that select `id`, at
// most `per_dtype` per dtype (0: all). Every configuration reaches every
// row's code through the library in kernel_test; here each row's own
// kernel runs on the first few that select it.
std::vector<Selected> CasesOf(CpuVariantId id, const std::vector<Config>& configs,
                              size_t per_dtype = 0) {
  std::vector<Selected> out;
  for (relugrad_dtype d : kAllDtypes) {
    size_t taken = 0;
    for (const Config& c : configs) {
      if (per_dtype != 0 && taken == per_dtype) break;
      if (SelectCpuVariant(ToDtype(d), ParamsFor(d, c.options)) == id) {
        out.push_back({d, &c});
        ++taken;
      }
    }
  }
  return out;
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
  const auto cases = CasesOf(id, configs, 2);
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
  const auto configs = GradConfigs();
  for (int i = 0; i < kCpuVariantCount; ++i) {
    const auto id = static_cast<CpuVariantId>(i);
    if (!ReachableInThisBuild(id)) continue;
    EXPECT_FALSE(CasesOf(id, configs).empty())
        << CpuVariants()[i].name << " (" << CpuVariants()[i].requirement
        << ") is selected by no configuration of GradConfigs() and dtype";
  }
}

TEST(VariantTable, SelectionIsTheFirstRowThatHolds) {
  for (relugrad_dtype d : kAllDtypes) {
    for (const Config& c : GradConfigs()) {
      const KernelParams p = ParamsFor(d, c.options);
      int first = -1;
      for (int i = 0; i < kCpuVariantCount && first < 0; ++i) {
        if (CpuVariants()[i].holds(ToDtype(d), p)) first = i;
      }
      EXPECT_EQ(static_cast<int>(SelectCpuVariant(ToDtype(d), p)), first)
          << c.name << " " << relugrad_dtype_name(d);
    }
  }
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

// The mask kernel's rows: every one reached, selection the first that holds
// (mask_kernel_test runs each configuration through them on every target).
TEST(MaskGradVariantTable, EveryRowIsReachedAndSelectionIsTheFirstThatHolds) {
  std::vector<int> reached(kMaskGradVariantCount, 0);
  for (relugrad_dtype d : kAllDtypes) {
    for (const Config& c : GradConfigs()) {
      const KernelParams p = ParamsFor(d, c.options);
      int first = -1;
      for (int i = 0; i < kMaskGradVariantCount && first < 0; ++i) {
        if (MaskGradVariants()[i].holds(ToDtype(d), p)) first = i;
      }
      const int selected = static_cast<int>(SelectMaskGradVariant(ToDtype(d), p));
      EXPECT_EQ(selected, first) << c.name << " " << relugrad_dtype_name(d);
      ++reached[selected];
    }
  }
  std::set<std::string> names;
  for (int i = 0; i < kMaskGradVariantCount; ++i) {
    const MaskGradVariant& row = MaskGradVariants()[i];
    EXPECT_EQ(static_cast<int>(row.id), i);
    EXPECT_TRUE(names.insert(row.name).second) << "duplicate name " << row.name;
    const bool x86_row = std::string(row.name).find("_x86") != std::string::npos;
    if (RELUGRAD_X86_MXCSR || !x86_row)
      EXPECT_GT(reached[i], 0) << row.name << " is selected by no configuration";
  }
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
}

}  // namespace
}  // namespace testing
}  // namespace relugrad
