// A small flag parser for the relugrad subcommands: `--name value`,
// `--name=value` and boolean `--name`. Unknown flags and missing values are
// usage errors (exit 1 with one line on stderr), never ignored.
#ifndef RELUGRAD_TOOLS_CLI_ARGS_H_
#define RELUGRAD_TOOLS_CLI_ARGS_H_

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace relugrad {
namespace cli {

// Thrown for any bad command line or input; main() prints "relugrad: <what>".
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct FlagSpec {
  std::string name;  // without dashes; aliases separated by '|', e.g. "x|y"
  bool takes_value = true;
  std::string help;
};

class Args {
 public:
  // Parses argv[first..argc). Throws UsageError.
  Args(int argc, char** argv, int first, const std::vector<FlagSpec>& specs);

  bool Has(const std::string& name) const;
  std::string Get(const std::string& name, const std::string& fallback = "") const;
  std::string Require(const std::string& name) const;
  double GetDouble(const std::string& name, double fallback) const;
  long long GetInt(const std::string& name, long long fallback, long long lo, long long hi) const;
  // Comma-separated list ("1,2" -> {"1", "2"}).
  std::vector<std::string> GetList(const std::string& name, const std::string& fallback) const;

 private:
  std::string Canonical(const std::string& name) const;
  std::vector<FlagSpec> specs_;
  std::map<std::string, std::string> values_;
};

// Strict number parsing ("1e3" ok, "12abc" not).
double ParseDouble(const std::string& text, const std::string& what);
long long ParseInt(const std::string& text, const std::string& what);
// Sizes with K/M/G suffixes (powers of 2): "64K" -> 65536.
long long ParseSize(const std::string& text, const std::string& what);

std::string Usage(const std::string& command, const std::vector<FlagSpec>& specs);

}  // namespace cli
}  // namespace relugrad

#endif  // RELUGRAD_TOOLS_CLI_ARGS_H_
