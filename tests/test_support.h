// Test-only helpers on top of the shared checking vocabulary
// (src/check/check_data.h): the SIMD targets to sweep, a scoped ISA cap and
// the special-value cross product.
#ifndef RELUGRAD_TESTS_TEST_SUPPORT_H_
#define RELUGRAD_TESTS_TEST_SUPPORT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "check/check_data.h"

namespace relugrad {
namespace testing {

using namespace ::relugrad::check;  // NOLINT: the tests' vocabulary

// The SIMD targets to sweep (attainable here), capped one at a time.
std::vector<std::string> TargetsToTest();

// RAII: caps dispatch at a target for the scope, lifts the cap after.
class ScopedIsa {
 public:
  explicit ScopedIsa(const std::string& name);
  ~ScopedIsa();
};

// Every special value of a dtype against every one: element i pairs
// value[i] (dy) with gate[i] (s, or x on the mask path); the value runs
// through SpecialValues fastest. Bits, to Pack.
struct SpecialPairs {
  std::vector<uint64_t> value, gate;
};
SpecialPairs SpecialValuePairs(relugrad_dtype dtype);

}  // namespace testing
}  // namespace relugrad

#endif  // RELUGRAD_TESTS_TEST_SUPPORT_H_
