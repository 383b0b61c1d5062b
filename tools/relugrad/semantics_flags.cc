#include "semantics_flags.h"

#include <cstdio>

namespace relugrad {
namespace cli {

namespace {

// "a | b | c": the canonical names of one enum, from the library's table.
std::string Choices(relugrad_enum kind, const char* separator = " | ") {
  std::string list;
  for (int i = 0; i < relugrad_enum_count(kind); ++i) {
    list += (i ? separator : "") + std::string(relugrad_enum_entry(kind, i, nullptr));
  }
  return list;
}

}  // namespace

std::vector<FlagSpec> SemanticsFlagSpecs() {
  return {
      {"semantics", true, "preset (default torch): " + Choices(RELUGRAD_ENUM_PRESET, ", ")},
      {"threshold", true, "threshold t (default 0)"},
      {"gate-max", true,
       "upper gate bound h: open only when also s < h (hardtanh; ReLU6 is --gate-max 6); "
       "default none"},
      {"alpha", true, "closed-gate factor dx = dy*alpha (default 0)"},
      {"keep-negative-zero", false,
       "forward: a closed x = -0 stays -0 (torch.relu) instead of +0 (torch.threshold)"},
      {"clip", true, "clamp passed gradients to LO:HI"},
      {"gate", true, "override: " + Choices(RELUGRAD_ENUM_GATE)},
      {"combine", true, "override: " + Choices(RELUGRAD_ENUM_COMBINE)},
      {"denormals", true, "override: " + Choices(RELUGRAD_ENUM_DENORMALS)},
      {"threshold-rounding", true, "override: " + Choices(RELUGRAD_ENUM_THRESHOLD_ROUNDING)},
      {"threads", true, "worker threads (0 = all cores)"},
      {"stores", true,
       "store hint, same bits: " + Choices(RELUGRAD_ENUM_STORES) + " (default auto)"},
      {"isa", true, "cap SIMD dispatch at this target (see relugrad info)"},
      {"backend", true, "backend (default cpu): " + Choices(RELUGRAD_ENUM_BACKEND)},
  };
}

int32_t ParseEnum(relugrad_enum kind, const std::string& flag, const std::string& name) {
  int32_t value = 0;
  CheckStatus(relugrad_enum_from_name(kind, name.c_str(), &value), "--" + flag);
  if (const char* canonical = relugrad_enum_alias_deprecated(kind, name.c_str())) {
    std::fprintf(stderr, "relugrad: --%s %s is deprecated: use --%s %s\n", flag.c_str(),
                 name.c_str(), flag.c_str(), canonical);
  }
  return value;
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
  return static_cast<relugrad_backend>(ParseEnum(RELUGRAD_ENUM_BACKEND, "backend", name));
}

relugrad_stores ParseStores(const std::string& name) {
  return static_cast<relugrad_stores>(ParseEnum(RELUGRAD_ENUM_STORES, "stores", name));
}

relugrad_options OptionsFromFlags(const Args& args, const std::string& preset_name) {
  relugrad_preset preset;
  CheckStatus(relugrad_preset_from_name(preset_name.c_str(), &preset), "--semantics");
  relugrad_options o;
  CheckStatus(relugrad_options_init(&o, preset), "--semantics");
  o.threshold = args.GetDouble("threshold", o.threshold);
  o.gate_max = args.GetDouble("gate-max", o.gate_max);
  o.alpha = args.GetDouble("alpha", o.alpha);
  o.keep_negative_zero = args.Has("keep-negative-zero") ? 1 : 0;
  if (args.Has("clip")) {
    o.clip = 1;
    ParseClip(args.Get("clip"), &o.clip_lo, &o.clip_hi);
  }
  if (args.Has("gate"))
    o.gate = static_cast<relugrad_gate>(ParseEnum(RELUGRAD_ENUM_GATE, "gate", args.Get("gate")));
  if (args.Has("combine"))
    o.combine = static_cast<relugrad_combine>(
        ParseEnum(RELUGRAD_ENUM_COMBINE, "combine", args.Get("combine")));
  if (args.Has("denormals"))
    o.denormals = static_cast<relugrad_denormals>(
        ParseEnum(RELUGRAD_ENUM_DENORMALS, "denormals", args.Get("denormals")));
  if (args.Has("threshold-rounding"))
    o.threshold_rounding = static_cast<relugrad_threshold_rounding>(ParseEnum(
        RELUGRAD_ENUM_THRESHOLD_ROUNDING, "threshold-rounding", args.Get("threshold-rounding")));
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
