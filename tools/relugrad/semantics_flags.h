// The flags that choose semantics, threads, SIMD target and backend, shared
// by run, verify and bench, and their translation to relugrad_options.
#ifndef RELUGRAD_TOOLS_SEMANTICS_FLAGS_H_
#define RELUGRAD_TOOLS_SEMANTICS_FLAGS_H_

#include <string>
#include <vector>

#include "cli_args.h"
#include "relugrad/relugrad.h"

namespace relugrad {
namespace cli {

// Flag specs: --semantics --threshold --alpha --clip --gate --combine
// --denormals --threshold-rounding --threads --isa --backend.
std::vector<FlagSpec> SemanticsFlagSpecs();

// Options for one preset name with the overriding flags applied.
relugrad_options OptionsFromFlags(const Args& args, const std::string& preset_name);

// Applies --isa (dispatch cap) if given. Throws UsageError.
void ApplyIsaFlag(const Args& args);

// "LO:HI" -> clip bounds.
void ParseClip(const std::string& text, double* lo, double* hi);

// Throws UsageError("<context>: <last error>") for a non-OK status.
void CheckStatus(relugrad_status status, const std::string& context);

// A name of one of the library's enums (relugrad_enum_from_name), for --flag.
// Throws UsageError for an unknown name; a deprecated spelling is accepted with
// a note on stderr that names the canonical one.
int32_t ParseEnum(relugrad_enum kind, const std::string& flag, const std::string& name);
relugrad_backend ParseBackend(const std::string& name);
relugrad_stores ParseStores(const std::string& name);

}  // namespace cli
}  // namespace relugrad

#endif  // RELUGRAD_TOOLS_SEMANTICS_FLAGS_H_
