#include "test_support.h"

#include <stdexcept>

#include "relugrad/relugrad.h"

namespace relugrad {
namespace testing {

std::vector<std::string> TargetsToTest() {
  std::vector<std::string> names;
  for (int i = 0; i < relugrad_isa_count(); ++i) names.emplace_back(relugrad_isa_name(i));
  return names;
}

ScopedIsa::ScopedIsa(const std::string& name) {
  if (relugrad_set_max_isa(name.c_str()) != RELUGRAD_OK) {
    throw std::runtime_error("cannot select ISA " + name + ": " + relugrad_last_error());
  }
}

ScopedIsa::~ScopedIsa() { relugrad_set_max_isa(nullptr); }

SpecialPairs SpecialValuePairs(relugrad_dtype dtype) {
  const auto special = SpecialValues(dtype);
  SpecialPairs pairs;
  for (uint64_t g : special) {
    for (uint64_t v : special) {
      pairs.value.push_back(v);
      pairs.gate.push_back(g);
    }
  }
  return pairs;
}

}  // namespace testing
}  // namespace relugrad
