// The one name table of every enum in relugrad.h. The CLI, the Python package
// and `info` read these tables (through relugrad_enum_*), so a name is spelled
// here and nowhere else; error messages list the canonical names from the same
// rows.
#include <cstring>
#include <string>

#include "core/error.h"
#include "relugrad/relugrad.h"

namespace {

struct Name {
  const char* name;
  int32_t value;
};

// An accepted spelling that is not the canonical one. deprecated: callers are
// told to use the canonical name; otherwise it is a plain alternative.
struct Alias {
  const char* name;
  int32_t value;
  bool deprecated;
};

struct Table {
  const char* what;  // the noun in "unknown <what> 'x' (...)"
  const Name* names;
  int count;
  const Alias* aliases;
  int alias_count;
};

constexpr Name kDtypes[] = {
    {"f32", RELUGRAD_F32}, {"f16", RELUGRAD_F16}, {"bf16", RELUGRAD_BF16}, {"f64", RELUGRAD_F64}};
constexpr Alias kDtypeAliases[] = {{"float32", RELUGRAD_F32, false},
                                   {"float16", RELUGRAD_F16, false},
                                   {"bfloat16", RELUGRAD_BF16, false},
                                   {"float64", RELUGRAD_F64, false}};
constexpr Name kPresets[] = {{"torch", RELUGRAD_PRESET_TORCH},
                             {"tensorflow", RELUGRAD_PRESET_TENSORFLOW},
                             {"jax", RELUGRAD_PRESET_JAX},
                             {"onednn", RELUGRAD_PRESET_ONEDNN},
                             {"mindspore", RELUGRAD_PRESET_MINDSPORE},
                             {"cann_relugrad", RELUGRAD_PRESET_CANN_RELUGRAD},
                             {"cann_relugrad_v2", RELUGRAD_PRESET_CANN_RELUGRAD_V2},
                             {"cann_threshold_grad", RELUGRAD_PRESET_CANN_THRESHOLD_GRAD},
                             {"cann_relugrad_v2_hp", RELUGRAD_PRESET_CANN_RELUGRAD_V2_HP}};
constexpr Name kGates[] = {{"zero_if_le", RELUGRAD_GATE_ZERO_IF_LE},
                           {"pass_if_gt", RELUGRAD_GATE_PASS_IF_GT}};
constexpr Name kCombines[] = {{"select", RELUGRAD_COMBINE_SELECT},
                              {"multiply", RELUGRAD_COMBINE_MULTIPLY}};
constexpr Name kDenormals[] = {{"ieee", RELUGRAD_DENORMALS_IEEE},
                               {"ftz_daz", RELUGRAD_DENORMALS_FTZ_DAZ}};
constexpr Alias kDenormalsAliases[] = {{"ftz", RELUGRAD_DENORMALS_FTZ_DAZ, true}};
constexpr Name kThresholdRoundings[] = {{"compute", RELUGRAD_THRESHOLD_COMPUTE},
                                        {"dtype", RELUGRAD_THRESHOLD_DTYPE}};
constexpr Name kBackends[] = {{"cpu", RELUGRAD_BACKEND_CPU},
                              {"cuda", RELUGRAD_BACKEND_CUDA},
                              {"ascend_twin", RELUGRAD_BACKEND_ASCEND_TWIN}};
constexpr Alias kBackendAliases[] = {{"ascend-twin", RELUGRAD_BACKEND_ASCEND_TWIN, true}};
constexpr Name kStores[] = {{"auto", RELUGRAD_STORES_AUTO},
                            {"cached", RELUGRAD_STORES_CACHED},
                            {"streaming", RELUGRAD_STORES_STREAMING}};
constexpr Name kPlanOps[] = {{"relu_grad", RELUGRAD_OP_RELU_GRAD},
                             {"relu_forward_mask", RELUGRAD_OP_RELU_FORWARD_MASK},
                             {"relu_grad_mask", RELUGRAD_OP_RELU_GRAD_MASK}};
constexpr Name kStatuses[] = {{"ok", RELUGRAD_OK},
                              {"invalid_argument", RELUGRAD_INVALID_ARGUMENT},
                              {"unsupported", RELUGRAD_UNSUPPORTED},
                              {"internal_error", RELUGRAD_INTERNAL_ERROR}};

template <size_t N>
constexpr int Count(const Name (&)[N]) {
  return static_cast<int>(N);
}
template <size_t N>
constexpr int Count(const Alias (&)[N]) {
  return static_cast<int>(N);
}

// Indexed by relugrad_enum.
const Table kTables[] = {
    {"dtype", kDtypes, Count(kDtypes), kDtypeAliases, Count(kDtypeAliases)},
    {"semantics preset", kPresets, Count(kPresets), nullptr, 0},
    {"gate", kGates, Count(kGates), nullptr, 0},
    {"combine rule", kCombines, Count(kCombines), nullptr, 0},
    {"denormals mode", kDenormals, Count(kDenormals), kDenormalsAliases, Count(kDenormalsAliases)},
    {"threshold rounding", kThresholdRoundings, Count(kThresholdRoundings), nullptr, 0},
    {"backend", kBackends, Count(kBackends), kBackendAliases, Count(kBackendAliases)},
    {"stores hint", kStores, Count(kStores), nullptr, 0},
    {"status", kStatuses, Count(kStatuses), nullptr, 0},
    {"plan op", kPlanOps, Count(kPlanOps), nullptr, 0},
};

const Table* Find(relugrad_enum kind) {
  const int k = static_cast<int>(kind);
  if (k < 0 || k >= static_cast<int>(sizeof(kTables) / sizeof(kTables[0]))) return nullptr;
  return &kTables[k];
}

const Alias* FindAlias(const Table& t, const char* name) {
  for (int i = 0; i < t.alias_count; ++i) {
    if (std::strcmp(t.aliases[i].name, name) == 0) return &t.aliases[i];
  }
  return nullptr;
}

std::string CanonicalList(const Table& t) {
  std::string list;
  for (int i = 0; i < t.count; ++i) list += (i ? ", " : "") + std::string(t.names[i].name);
  return list;
}

// The typed shorthands (relugrad_dtype_from_name, ...) over the generic table.
template <typename Enum>
relugrad_status TypedFromName(relugrad_enum kind, const char* name, Enum* out) {
  int32_t v = 0;
  if (out == nullptr) return relugrad::Fail(RELUGRAD_INVALID_ARGUMENT, "NULL argument");
  const relugrad_status st = relugrad_enum_from_name(kind, name, &v);
  if (st == RELUGRAD_OK) *out = static_cast<Enum>(v);
  return st;
}

const char* NameOrInvalid(relugrad_enum kind, int32_t value) {
  const char* name = relugrad_enum_name(kind, value);
  return name ? name : "invalid";
}

}  // namespace

extern "C" {

int relugrad_enum_count(relugrad_enum kind) {
  const Table* t = Find(kind);
  return t ? t->count : -1;
}

const char* relugrad_enum_entry(relugrad_enum kind, int index, int32_t* value) {
  const Table* t = Find(kind);
  if (t == nullptr || index < 0 || index >= t->count) return nullptr;
  if (value != nullptr) *value = t->names[index].value;
  return t->names[index].name;
}

const char* relugrad_enum_name(relugrad_enum kind, int32_t value) {
  const Table* t = Find(kind);
  if (t == nullptr) return nullptr;
  for (int i = 0; i < t->count; ++i) {
    if (t->names[i].value == value) return t->names[i].name;
  }
  return nullptr;
}

relugrad_status relugrad_enum_from_name(relugrad_enum kind, const char* name, int32_t* value) {
  const Table* t = Find(kind);
  if (t == nullptr)
    return relugrad::Fail(RELUGRAD_INVALID_ARGUMENT, "%d is not a relugrad_enum",
                          static_cast<int>(kind));
  if (name == nullptr || value == nullptr)
    return relugrad::Fail(RELUGRAD_INVALID_ARGUMENT, "NULL argument");
  for (int i = 0; i < t->count; ++i) {
    if (std::strcmp(t->names[i].name, name) == 0) {
      *value = t->names[i].value;
      return RELUGRAD_OK;
    }
  }
  if (const Alias* a = FindAlias(*t, name)) {
    *value = a->value;
    return RELUGRAD_OK;
  }
  return relugrad::Fail(RELUGRAD_INVALID_ARGUMENT, "unknown %s '%s' (%s)", t->what, name,
                        CanonicalList(*t).c_str());
}

const char* relugrad_enum_alias_deprecated(relugrad_enum kind, const char* name) {
  const Table* t = Find(kind);
  if (t == nullptr || name == nullptr) return nullptr;
  const Alias* a = FindAlias(*t, name);
  return a != nullptr && a->deprecated ? relugrad_enum_name(kind, a->value) : nullptr;
}

relugrad_status relugrad_dtype_from_name(const char* name, relugrad_dtype* out) {
  return TypedFromName(RELUGRAD_ENUM_DTYPE, name, out);
}

const char* relugrad_dtype_name(relugrad_dtype dtype) {
  return NameOrInvalid(RELUGRAD_ENUM_DTYPE, dtype);
}

relugrad_status relugrad_preset_from_name(const char* name, relugrad_preset* out) {
  return TypedFromName(RELUGRAD_ENUM_PRESET, name, out);
}

const char* relugrad_preset_name(relugrad_preset preset) {
  return NameOrInvalid(RELUGRAD_ENUM_PRESET, preset);
}

}  // extern "C"
