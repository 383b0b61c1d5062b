#include "cli_args.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace relugrad {
namespace cli {
namespace {

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

}  // namespace

Args::Args(int argc, char** argv, int first, const std::vector<FlagSpec>& specs) : specs_(specs) {
  for (int i = first; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0 && !(arg.size() == 2 && arg[0] == '-')) {
      throw UsageError("unexpected argument '" + arg + "' (flags start with --; see --help)");
    }
    std::string name = arg.substr(arg[1] == '-' ? 2 : 1);
    std::string value;
    bool has_inline = false;
    const size_t eq = name.find('=');
    if (eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_inline = true;
    }
    const std::string canonical = Canonical(name);
    if (canonical.empty()) throw UsageError("unknown flag '" + arg + "' (see --help)");
    const FlagSpec* spec = nullptr;
    for (const auto& s : specs_) {
      if (Split(s.name, '|')[0] == canonical) spec = &s;
    }
    if (spec->takes_value && !has_inline) {
      if (i + 1 >= argc) throw UsageError("flag --" + name + " needs a value");
      value = argv[++i];
    } else if (!spec->takes_value && has_inline) {
      throw UsageError("flag --" + name + " takes no value");
    }
    if (values_.count(canonical)) throw UsageError("flag --" + name + " given twice");
    values_[canonical] = value;
  }
}

std::string Args::Canonical(const std::string& name) const {
  for (const auto& s : specs_) {
    const auto aliases = Split(s.name, '|');
    for (const auto& a : aliases) {
      if (a == name) return aliases[0];
    }
  }
  return "";
}

bool Args::Has(const std::string& name) const { return values_.count(name) != 0; }

std::string Args::Get(const std::string& name, const std::string& fallback) const {
  const auto it = values_.find(name);
  return it == values_.end() ? fallback : it->second;
}

std::string Args::Require(const std::string& name) const {
  if (!Has(name)) throw UsageError("missing required flag --" + name);
  return Get(name);
}

double Args::GetDouble(const std::string& name, double fallback) const {
  return Has(name) ? ParseDouble(Get(name), "--" + name) : fallback;
}

long long Args::GetInt(const std::string& name, long long fallback, long long lo,
                       long long hi) const {
  if (!Has(name)) return fallback;
  const long long v = ParseInt(Get(name), "--" + name);
  if (v < lo || v > hi) {
    throw UsageError("--" + name + " must be in [" + std::to_string(lo) + ", " +
                     std::to_string(hi) + "], got " + std::to_string(v));
  }
  return v;
}

std::vector<std::string> Args::GetList(const std::string& name, const std::string& fallback) const {
  std::vector<std::string> out;
  for (const auto& item : Split(Get(name, fallback), ',')) {
    if (item.empty()) throw UsageError("--" + name + " has an empty list item");
    out.push_back(item);
  }
  return out;
}

double ParseDouble(const std::string& text, const std::string& what) {
  if (text.empty()) throw UsageError(what + ": empty number");
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (*end != '\0') throw UsageError(what + ": '" + text + "' is not a number");
  // ERANGE also flags underflow, whose result (a subnormal or zero, rounded
  // to nearest) is the number written: only overflow is refused.
  if (errno == ERANGE && std::isinf(v))
    throw UsageError(what + ": '" + text + "' overflows a double");
  return v;
}

long long ParseInt(const std::string& text, const std::string& what) {
  if (text.empty()) throw UsageError(what + ": empty integer");
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (*end != '\0' || errno == ERANGE)
    throw UsageError(what + ": '" + text + "' is not an integer");
  return v;
}

long long ParseSize(const std::string& text, const std::string& what) {
  if (text.empty()) throw UsageError(what + ": empty size");
  long long mult = 1;
  std::string digits = text;
  const char last = static_cast<char>(std::toupper(static_cast<unsigned char>(text.back())));
  if (last == 'K' || last == 'M' || last == 'G') {
    mult = last == 'K' ? (1LL << 10) : last == 'M' ? (1LL << 20) : (1LL << 30);
    digits = text.substr(0, text.size() - 1);
  }
  const long long v = ParseInt(digits, what);
  if (v < 0 || v > (1LL << 40) / mult)
    throw UsageError(what + ": size '" + text + "' out of range");
  return v * mult;
}

std::string Usage(const std::string& command, const std::vector<FlagSpec>& specs) {
  std::string out = "usage: relugrad " + command + " [flags]\n";
  for (const auto& s : specs) {
    std::string names;
    for (const auto& a : Split(s.name, '|')) names += (names.empty() ? "--" : ", --") + a;
    if (s.takes_value) names += " VALUE";
    out +=
        "  " + names + std::string(names.size() < 28 ? 28 - names.size() : 1, ' ') + s.help + "\n";
  }
  return out;
}

}  // namespace cli
}  // namespace relugrad
