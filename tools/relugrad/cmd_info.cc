// relugrad info: version, build options, SIMD targets, threads, backends.
#include <cstdio>
#include <string>

#include "cli_args.h"
#include "commands.h"
#include "relugrad/relugrad.h"
#include "semantics_flags.h"

namespace relugrad {
namespace cli {

int InfoCommand(int argc, char** argv, int first) {
  const std::vector<FlagSpec> specs = {{"isa", true, "apply a dispatch cap first"},
                                       {"help|h", false, "this help"}};
  const Args args(argc, argv, first, specs);
  if (args.Has("help")) {
    std::printf("%s", Usage("info", specs).c_str());
    return 0;
  }
  ApplyIsaFlag(args);
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
