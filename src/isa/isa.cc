#include "isa/isa.h"

#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "core/error.h"
#include "hwy/targets.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

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

// AMD family 19h with AVX-512 is Zen 4 (Zen 3, the same family, has none),
// which executes 512-bit operations as two 256-bit halves: Zen 4 prefers
// AVX2 for these kernels, so there the default is AVX2; set_max_isa("avx3")
// or RELUGRAD_MAX_ISA=avx3 still selects AVX-512. Other CPUs keep Highway's
// best target. docs/design.md, "AVX2 vs AVX-512 on Zen 4".
#if HWY_ARCH_X86
bool IsAmdZen4() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(0, &a, &b, &c, &d)) return false;
  const bool amd = b == 0x68747541 && d == 0x69746e65 && c == 0x444d4163;  // "AuthenticAMD"
  if (!amd || !__get_cpuid(1, &a, &b, &c, &d)) return false;
  const unsigned base_family = (a >> 8) & 0xf;
  const unsigned family = base_family == 0xf ? base_family + ((a >> 20) & 0xff) : base_family;
  return family == 0x19;
}
#endif  // HWY_ARCH_X86: elsewhere the default is Highway's best target

// The target the default selection stops at (0: Highway's best). Computed
// once (CPUID traps to the hypervisor in a VM: microseconds).
int64_t DefaultCap() {
  static const int64_t cap = [] {
#if HWY_ARCH_X86
    // No Highway query here: it could be called while a cap is in force.
    if ((HWY_TARGETS & HWY_AVX2) != 0 && IsAmdZen4() && __builtin_cpu_supports("avx2")) {
      return static_cast<int64_t>(HWY_AVX2);
    }
#endif
    return int64_t{0};
  }();
  return cap;
}

}  // namespace

std::string DefaultIsaCapDescription() {
  return DefaultCap() == 0 ? "none (best attainable)"
                           : "avx2 (AMD Zen 4: AVX2 measured faster than AVX-512)";
}

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
  if (name == nullptr || name[0] == '\0' || Lower(name) == "best") {  // the default selection
    const int64_t cap = DefaultCap();
    if (cap != 0) hwy::SetSupportedTargetsForTest(all & ~(cap - 1));
    hwy::GetChosenTarget().Update(hwy::SupportedTargets());
    return RELUGRAD_OK;
  }
  const std::string wanted = Lower(name);
  int64_t cap = 0;
  // reliability: shift an unsigned bit; shifting a signed 1 into
  // bit 63 and beyond is undefined (UBSan flagged it).
  for (uint64_t ubit = 1; ubit != 0 && cap == 0; ubit <<= 1) {
    const int64_t bit = static_cast<int64_t>(ubit);
    if ((HWY_TARGETS | HWY_STATIC_TARGET) & bit && Lower(hwy::TargetName(bit)) == wanted) cap = bit;
  }
  if (cap == 0) {
    std::string known;
    for (const auto& n : AttainableIsas()) known += (known.empty() ? "" : ", ") + n;
    return Fail(RELUGRAD_INVALID_ARGUMENT,
                "unknown SIMD target '%s' (this build and CPU offer: %s)", name, known.c_str());
  }
  // Keep the cap and every weaker target (higher bit = weaker in Highway).
  const int64_t allowed = all & ~(cap - 1);
  if ((allowed & cap) == 0) {
    return Fail(RELUGRAD_UNSUPPORTED, "SIMD target '%s' is compiled in but this CPU cannot run it",
                name);
  }
  hwy::SetSupportedTargetsForTest(allowed);
  hwy::GetChosenTarget().Update(hwy::SupportedTargets());
  return RELUGRAD_OK;
}

void ApplyIsaEnvironmentOnce() {
  // Every call passes here: after the first, one acquire load instead of
  // std::call_once's library call.
  static std::atomic<bool> applied{false};
  if (applied.load(std::memory_order_acquire)) return;
  static std::once_flag once;
  std::call_once(once, [] {
    const char* env = std::getenv("RELUGRAD_MAX_ISA");
    if (env != nullptr && env[0] != '\0') {
      if (SetMaxIsa(env) == RELUGRAD_OK) return;
      // A bad cap must not silently run something else: report once.
      std::fprintf(stderr, "relugrad: ignoring RELUGRAD_MAX_ISA: %s\n", LastError());
      ClearLastError();
    }
    SetMaxIsa(nullptr);  // the default selection (DefaultCap)
  });
  applied.store(true, std::memory_order_release);
}

}  // namespace relugrad
