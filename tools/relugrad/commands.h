// The relugrad subcommands; each lives in its own cmd_<name>.cc.
#ifndef RELUGRAD_TOOLS_COMMANDS_H_
#define RELUGRAD_TOOLS_COMMANDS_H_

namespace relugrad {
namespace cli {

// Each returns the process exit status; argv[first] is the first flag.
int RunCommand(int argc, char** argv, int first);
int VerifyCommand(int argc, char** argv, int first);
int InfoCommand(int argc, char** argv, int first);
int BenchCommand(int argc, char** argv, int first);
int ForwardCommand(int argc, char** argv, int first);  // 1-bit mask path
int SoakCommand(int argc, char** argv, int first);     // reliability
int DiffCommand(int argc, char** argv, int first);
int MaskLayoutCommand(int argc, char** argv, int first);  // 910B blocked <-> flat mask

struct Command {
  const char* name;
  int (*run)(int argc, char** argv, int first);
  const char* summary;
};

// The table main() dispatches on (commands.cc).
extern const Command kCommands[];
extern const int kCommandCount;

}  // namespace cli
}  // namespace relugrad

#endif  // RELUGRAD_TOOLS_COMMANDS_H_
