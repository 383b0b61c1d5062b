// Version, SIMD dispatch control and build facts for `relugrad info`.
#include <cctype>
#include <string>
#include <vector>

#include "core/backend.h"
#include "core/error.h"
#include "cpu/launch.h"
#include "cpu/relu_grad_backend.h"
#include "hwy/highway.h"
#include "isa/isa.h"
#include "relugrad/relugrad.h"

#define RG_STR2(x) #x
#define RG_STR(x) RG_STR2(x)

namespace {
// Stable storage for the strings handed out through the C ABI.
const std::vector<std::string>& IsaNames() {
  static const std::vector<std::string> names = relugrad::AttainableIsas();
  return names;
}
}  // namespace

extern "C" {

const char* relugrad_version(void) {
  return RG_STR(RELUGRAD_VERSION_MAJOR) "." RG_STR(RELUGRAD_VERSION_MINOR) "." RG_STR(
      RELUGRAD_VERSION_PATCH);
}

int relugrad_isa_count(void) { return static_cast<int>(IsaNames().size()); }

const char* relugrad_isa_name(int index) {
  if (index < 0 || index >= relugrad_isa_count()) return nullptr;
  return IsaNames()[static_cast<size_t>(index)].c_str();
}

const char* relugrad_isa_selected(void) {
  relugrad::ApplyIsaEnvironmentOnce();
  thread_local std::string selected;
  selected = relugrad::SelectedIsa();
  return selected.c_str();
}

relugrad_status relugrad_set_max_isa(const char* name) {
  relugrad::ClearLastError();
  relugrad::ApplyIsaEnvironmentOnce();  // so a later first call cannot undo this cap
  return relugrad::SetMaxIsa(name);
}

int relugrad_default_threads(void) { return relugrad::DefaultThreads(); }

int relugrad_backend_available(relugrad_backend backend) {
  const relugrad::BackendOps* ops = relugrad::FindBackendOps(backend);
  return ops != nullptr && ops->built ? 1 : 0;
}

const char* relugrad_build_info(void) {
  static const std::string info = [] {
    std::string s;
    s += std::string("version: ") + relugrad_version() + "\n";
    s += std::string("compiler: ") + __VERSION__ + "\n";
    s += std::string("highway: ") +
         RG_STR(HWY_MAJOR) "." RG_STR(HWY_MINOR) "." RG_STR(HWY_PATCH) "\n";
    std::string compiled;
    // reliability: an unsigned shift; 1 << 63 on int64_t is UB (UBSan).
    for (uint64_t ubit = 1; ubit != 0; ubit <<= 1) {
      const int64_t bit = static_cast<int64_t>(ubit);
      if ((HWY_TARGETS | HWY_STATIC_TARGET) & bit) {
        std::string name = hwy::TargetName(bit);
        for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        compiled += (compiled.empty() ? "" : " ") + name;
      }
    }
    s += "simd_compiled: " + compiled + "\n";
    s += "simd_default_cap: " + relugrad::DefaultIsaCapDescription() + "\n";
    s += std::string("backend_cuda: ") +
         (relugrad::CudaBackendOps().built ? "built" : "not built") + "\n";
    s += std::string("backend_ascend_twin: ") +
         (relugrad::AscendTwinBackendOps().built ? "built" : "not built") + "\n";
    s += "threads_grain_bytes: " + std::to_string(relugrad::kCpuGrainBytes) + "\n";
    // The launch policy's thresholds and the caches they came from (cpu/launch.h).
    const relugrad::LaunchPolicy& launch = relugrad::LaunchPolicy::ForThisMachine();
    s += "cpu_launch: l2_bytes=" + std::to_string(launch.l2_bytes) +
         " l3_bytes=" + std::to_string(launch.l3_bytes) +
         " stream_one_block=" + std::to_string(launch.stream_bytes_one_block) +
         " stream_split=" + std::to_string(launch.stream_bytes_split) +
         " mask_stream=" + std::to_string(launch.mask_stream_bytes) +
         " prefault_piece=" + std::to_string(launch.prefault_piece_bytes) +
         " wake=" + std::to_string(launch.wake_bytes) + "\n";
    return s;
  }();
  return info.c_str();
}

}  // extern "C"
