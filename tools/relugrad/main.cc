// relugrad: the command-line tool. Errors print one line on stderr and exit 1.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "cli_args.h"
#include "commands.h"
#include "relugrad/relugrad.h"

namespace {

void PrintHelp() {
  std::printf(
      "relugrad %s: exact ReLU backward at memory speed\n\nusage: relugrad COMMAND [flags]\n\n",
      relugrad_version());
  for (int i = 0; i < relugrad::cli::kCommandCount; ++i) {
    std::printf("  %-8s %s\n", relugrad::cli::kCommands[i].name,
                relugrad::cli::kCommands[i].summary);
  }
  std::printf("\n`relugrad COMMAND --help` lists a command's flags.\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0 ||
      std::strcmp(argv[1], "help") == 0) {
    PrintHelp();
    return argc < 2 ? 1 : 0;
  }
  if (std::strcmp(argv[1], "--version") == 0) {
    std::printf("relugrad %s\n", relugrad_version());
    return 0;
  }
  for (int i = 0; i < relugrad::cli::kCommandCount; ++i) {
    if (std::strcmp(argv[1], relugrad::cli::kCommands[i].name) == 0) {
      try {
        return relugrad::cli::kCommands[i].run(argc, argv, 2);
      } catch (const relugrad::cli::UsageError& e) {
        std::fprintf(stderr, "relugrad %s: %s\n", argv[1], e.what());
        return 1;
      } catch (const std::bad_alloc&) {
        std::fprintf(stderr, "relugrad %s: out of memory\n", argv[1]);
        return 1;
      } catch (const std::exception& e) {
        std::fprintf(stderr, "relugrad %s: %s\n", argv[1], e.what());
        return 1;
      }
    }
  }
  std::fprintf(stderr, "relugrad: unknown command '%s' (try relugrad --help)\n", argv[1]);
  return 1;
}
