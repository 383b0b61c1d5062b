#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "core/error.h"
#include "cpu/cpu_kernels.h"
#include "hwy/targets.h"

namespace relugrad {
namespace {

std::string Lower(const char* s) {
  std::string out(s);
  for (char& ch : out) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return out;
}

// Targets this binary has code for and this CPU runs, ignoring any cap.
int64_t UncappedTargets() {
  hwy::SetSupportedTargetsForTest(0);  // 0 = no mock: what the CPU supports
  return hwy::SupportedTargets() & (HWY_TARGETS | HWY_STATIC_TARGET);
}

std::mutex g_isa_mutex;

}  // namespace

std::vector<std::string> AttainableIsas() {
  std::vector<std::string> names;
  for (int64_t t : hwy::SupportedAndGeneratedTargets()) names.push_back(Lower(hwy::TargetName(t)));
  return names;
}

std::string SelectedIsa() {
  const int64_t targets = hwy::SupportedTargets() & (HWY_TARGETS | HWY_STATIC_TARGET);
  return Lower(hwy::TargetName(targets & -targets));  // lowest bit = best target
}

relugrad_status SetMaxIsa(const char* name) {
  std::lock_guard<std::mutex> lock(g_isa_mutex);
  const int64_t all = UncappedTargets();
  if (name == nullptr || name[0] == '\0' || Lower(name) == "best") {
    hwy::GetChosenTarget().Update(hwy::SupportedTargets());
    return RELUGRAD_OK;
  }
  const std::string wanted = Lower(name);
  int64_t cap = 0;
  // reliability (issue 6): shift an unsigned bit; shifting a signed 1 into
  // bit 63 and beyond is undefined (UBSan flagged it).
  for (uint64_t ubit = 1; ubit != 0 && cap == 0; ubit <<= 1) {
    const int64_t bit = static_cast<int64_t>(ubit);
    if ((HWY_TARGETS | HWY_STATIC_TARGET) & bit && Lower(hwy::TargetName(bit)) == wanted) cap = bit;
  }
  if (cap == 0) {
    std::string known;
    for (const auto& n : AttainableIsas()) known += (known.empty() ? "" : ", ") + n;
    return Fail(RELUGRAD_INVALID_ARGUMENT, "unknown SIMD target '%s' (this build and CPU offer: %s)",
                name, known.c_str());
  }
  // Keep the cap and every weaker target (higher bit = weaker in Highway).
  const int64_t allowed = all & ~(cap - 1);
  if ((allowed & cap) == 0) {
    return Fail(RELUGRAD_UNSUPPORTED, "SIMD target '%s' is compiled in but this CPU cannot run it", name);
  }
  hwy::SetSupportedTargetsForTest(allowed);
  hwy::GetChosenTarget().Update(hwy::SupportedTargets());
  return RELUGRAD_OK;
}

void ApplyIsaEnvironmentOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    const char* env = std::getenv("RELUGRAD_MAX_ISA");
    if (env != nullptr && env[0] != '\0' && SetMaxIsa(env) != RELUGRAD_OK) {
      // A bad cap must not silently run something else: report once.
      std::fprintf(stderr, "relugrad: ignoring RELUGRAD_MAX_ISA: %s\n", LastError());
      ClearLastError();
    }
  });
}

}  // namespace relugrad
