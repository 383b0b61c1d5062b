// Test-only helpers on top of the shared checking vocabulary
// (src/check/check_data.h): the SIMD targets to sweep and a scoped ISA cap.
#ifndef RELUGRAD_TESTS_TEST_SUPPORT_H_
#define RELUGRAD_TESTS_TEST_SUPPORT_H_

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

}  // namespace testing
}  // namespace relugrad

#endif  // RELUGRAD_TESTS_TEST_SUPPORT_H_
