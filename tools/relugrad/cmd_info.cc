// relugrad info: version, build options, SIMD targets, threads, backends.
// relugrad info --variants [semantics flags] [--dtype D]: the CPU kernel's
// named variants in priority order, each with what it requires, and the one
// the given options select per dtype.
#include <cstdio>
#include <string>

#include "cli_args.h"
#include "core/error.h"
#include "core/semantics.h"
#include "cpu/variants.h"
#include "commands.h"
#include "relugrad/relugrad.h"
#include "semantics_flags.h"

namespace relugrad {
namespace cli {

namespace {

// The variant rows, and which one the options select for each dtype (or the
// one --dtype names).
int PrintVariants(const Args& args) {
  const relugrad_options o = OptionsFromFlags(args, args.Get("semantics", "torch"));
  Rules sem;
  CheckStatus(ResolveOptions(&o, &sem), "options");
  std::vector<relugrad_dtype> dtypes = {RELUGRAD_F32, RELUGRAD_F16, RELUGRAD_BF16, RELUGRAD_F64};
  if (args.Has("dtype")) {
    int32_t d = 0;
    CheckStatus(relugrad_enum_from_name(RELUGRAD_ENUM_DTYPE, args.Get("dtype").c_str(), &d),
                "--dtype");
    dtypes = {static_cast<relugrad_dtype>(d)};
  }
  std::printf("cpu_variants: %d, first that holds is selected (simd target %s)\n", kCpuVariantCount,
              relugrad_isa_selected());
  for (int i = 0; i < kCpuVariantCount; ++i) {
    const CpuVariant& row = CpuVariants()[i];
    std::printf("  %2d %-30s %s\n", i, row.name, row.requirement);
  }
  std::printf("mask_grad_variants: %d, first that holds is selected\n", kMaskGradVariantCount);
  for (int i = 0; i < kMaskGradVariantCount; ++i) {
    const MaskGradVariant& row = MaskGradVariants()[i];
    std::printf("  %2d %-30s %s\n", i, row.name, row.requirement);
  }
  std::printf("mask_forward_variants: %d, first that holds is selected\n",
              kMaskForwardVariantCount);
  for (int i = 0; i < kMaskForwardVariantCount; ++i) {
    const MaskForwardVariant& row = MaskForwardVariants()[i];
    std::printf("  %2d %-30s %s\n", i, row.name, row.requirement);
  }
  for (relugrad_dtype d : dtypes) {
    const KernelParams p = MakeKernelParams(ToDtype(d), sem);
    std::printf(
        "selected %s: %s, mask: %s, mask forward: %s\n", relugrad_dtype_name(d),
        CpuVariants()[static_cast<int>(SelectCpuVariant(ToDtype(d), p))].name,
        MaskGradVariants()[static_cast<int>(SelectMaskGradVariant(ToDtype(d), p))].name,
        MaskForwardVariants()[static_cast<int>(SelectMaskForwardVariant(ToDtype(d), p))].name);
  }
  return 0;
}

}  // namespace

int InfoCommand(int argc, char** argv, int first) {
  std::vector<FlagSpec> specs = {
      {"variants", false, "list the CPU kernel variants and the one the options select"},
      {"dtype", true, "with --variants: only this dtype (f16, bf16, f32, f64)"},
      {"help|h", false, "this help"}};
  for (auto& s : SemanticsFlagSpecs()) specs.push_back(s);  // --isa among them
  const Args args(argc, argv, first, specs);
  if (args.Has("help")) {
    std::printf("%s", Usage("info", specs).c_str());
    return 0;
  }
  ApplyIsaFlag(args);
  if (args.Has("variants")) return PrintVariants(args);
  std::printf("%s", relugrad_build_info());
  std::printf("simd_attainable:");
  for (int i = 0; i < relugrad_isa_count(); ++i) std::printf(" %s", relugrad_isa_name(i));
  std::printf("\nsimd_selected: %s\n", relugrad_isa_selected());
  std::printf("threads_default: %d\n", relugrad_default_threads());
  std::printf("presets:");
  for (int i = 0;; ++i) {
    const char* name = relugrad_preset_name(static_cast<relugrad_preset>(i));
    if (std::string(name) == "invalid") break;
    std::printf(" %s", name);
  }
  std::printf("\n");
  return 0;
}

}  // namespace cli
}  // namespace relugrad
