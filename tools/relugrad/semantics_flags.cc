#include "semantics_flags.h"

namespace relugrad {
namespace cli {

std::vector<FlagSpec> SemanticsFlagSpecs() {
  return {
      {"semantics", true,
       "preset: torch (default), tensorflow, jax, onednn, mindspore, cann_relugrad, "
       "cann_relugrad_v2, "
       "cann_threshold_grad, cann_relugrad_v2_hp"},
      {"threshold", true, "threshold t (default 0)"},
      {"gate-max", true,
       "upper gate bound h: open only when also s < h (hardtanh; ReLU6 is --gate-max 6); "
       "default none"},
      {"alpha", true, "closed-gate factor dx = dy*alpha (default 0)"},
      {"clip", true, "clamp passed gradients to LO:HI"},
      {"gate", true, "override: zero_if_le | pass_if_gt"},
      {"combine", true, "override: select | multiply"},
      {"denormals", true, "override: ieee | ftz"},
      {"threshold-rounding", true, "override: compute | dtype"},
      {"threads", true, "worker threads (0 = all cores)"},
      {"stores", true, "store hint, same bits: auto (default) | cached | streaming"},
      {"isa", true, "cap SIMD dispatch at this target (see relugrad info)"},
      {"backend", true, "cpu (default), cuda, ascend-twin"},
  };
}

void CheckStatus(relugrad_status status, const std::string& context) {
  if (status != RELUGRAD_OK) throw UsageError(context + ": " + relugrad_last_error());
}

void ParseClip(const std::string& text, double* lo, double* hi) {
  const size_t colon = text.find(':');
  if (colon == std::string::npos) throw UsageError("--clip wants LO:HI, got '" + text + "'");
  *lo = ParseDouble(text.substr(0, colon), "--clip LO");
  *hi = ParseDouble(text.substr(colon + 1), "--clip HI");
}

relugrad_backend ParseBackend(const std::string& name) {
  if (name == "cpu") return RELUGRAD_BACKEND_CPU;
  if (name == "cuda") return RELUGRAD_BACKEND_CUDA;
  if (name == "ascend-twin") return RELUGRAD_BACKEND_ASCEND_TWIN;
  throw UsageError("unknown backend '" + name + "' (cpu, cuda, ascend-twin)");
}

relugrad_stores ParseStores(const std::string& name) {
  if (name == "auto") return RELUGRAD_STORES_AUTO;
  if (name == "cached") return RELUGRAD_STORES_CACHED;
  if (name == "streaming") return RELUGRAD_STORES_STREAMING;
  throw UsageError("--stores must be auto, cached or streaming, got '" + name + "'");
}

relugrad_options OptionsFromFlags(const Args& args, const std::string& preset_name) {
  relugrad_preset preset;
  CheckStatus(relugrad_preset_from_name(preset_name.c_str(), &preset), "--semantics");
  relugrad_options o;
  CheckStatus(relugrad_options_init(&o, preset), "--semantics");
  o.threshold = args.GetDouble("threshold", o.threshold);
  o.gate_max = args.GetDouble("gate-max", o.gate_max);
  o.alpha = args.GetDouble("alpha", o.alpha);
  if (args.Has("clip")) {
    o.clip = 1;
    ParseClip(args.Get("clip"), &o.clip_lo, &o.clip_hi);
  }
  if (args.Has("gate")) {
    const std::string g = args.Get("gate");
    if (g == "zero_if_le")
      o.gate = RELUGRAD_GATE_ZERO_IF_LE;
    else if (g == "pass_if_gt")
      o.gate = RELUGRAD_GATE_PASS_IF_GT;
    else
      throw UsageError("--gate must be zero_if_le or pass_if_gt, got '" + g + "'");
  }
  if (args.Has("combine")) {
    const std::string c = args.Get("combine");
    if (c == "select")
      o.combine = RELUGRAD_COMBINE_SELECT;
    else if (c == "multiply")
      o.combine = RELUGRAD_COMBINE_MULTIPLY;
    else
      throw UsageError("--combine must be select or multiply, got '" + c + "'");
  }
  if (args.Has("denormals")) {
    const std::string d = args.Get("denormals");
    if (d == "ieee")
      o.denormals = RELUGRAD_DENORMALS_IEEE;
    else if (d == "ftz")
      o.denormals = RELUGRAD_DENORMALS_FTZ_DAZ;
    else
      throw UsageError("--denormals must be ieee or ftz, got '" + d + "'");
  }
  if (args.Has("threshold-rounding")) {
    const std::string r = args.Get("threshold-rounding");
    if (r == "compute")
      o.threshold_rounding = RELUGRAD_THRESHOLD_COMPUTE;
    else if (r == "dtype")
      o.threshold_rounding = RELUGRAD_THRESHOLD_DTYPE;
    else
      throw UsageError("--threshold-rounding must be compute or dtype, got '" + r + "'");
  }
  o.threads = static_cast<int32_t>(args.GetInt("threads", 0, 0, 4096));
  if (args.Has("stores")) o.stores = ParseStores(args.Get("stores"));
  if (args.Has("backend")) o.backend = ParseBackend(args.Get("backend"));
  return o;
}

void ApplyIsaFlag(const Args& args) {
  if (args.Has("isa")) CheckStatus(relugrad_set_max_isa(args.Get("isa").c_str()), "--isa");
}

}  // namespace cli
}  // namespace relugrad
