// Running the relugrad CLI from a test: a scratch folder per test binary,
// the command's exit status, stdout and stderr, and small file helpers.
// RELUGRAD_CLI_PATH is set by the test target (the built CLI).
#ifndef RELUGRAD_TESTS_CLI_HARNESS_H_
#define RELUGRAD_TESTS_CLI_HARNESS_H_

#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace relugrad {
namespace testing {

struct CliResult {
  int status;
  std::string out, err;
};

inline std::string ScratchDir() {
  static const std::string dir = [] {
    char tmpl[] = "/tmp/relugrad-cli-test-XXXXXX";
    const char* made = mkdtemp(tmpl);
    return std::string(made ? made : "/tmp");
  }();
  return dir;
}

inline std::string Slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Runs `relugrad <args>` through the shell (args may redirect or chain).
inline CliResult RunCli(const std::string& args) {
  const std::string out = ScratchDir() + "/.stdout", err = ScratchDir() + "/.stderr";
  const std::string cmd = std::string(RELUGRAD_CLI_PATH) + " " + args + " >" + out + " 2>" + err;
  const int raw = std::system(cmd.c_str());
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, Slurp(out), Slurp(err)};
}

inline bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

inline std::string SaveRaw(const std::string& name, const std::string& content) {
  const std::string path = ScratchDir() + "/" + name;
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

}  // namespace testing
}  // namespace relugrad

#endif  // RELUGRAD_TESTS_CLI_HARNESS_H_
