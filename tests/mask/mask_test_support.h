// Shared helpers of the mask suites (guarded placement: support/guarded.h):
// the mask reference into fresh buffers, and checks that name
// the first differing element or mask bit.
#ifndef RELUGRAD_TESTS_MASK_MASK_TEST_SUPPORT_H_
#define RELUGRAD_TESTS_MASK_MASK_TEST_SUPPORT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "relugrad/relugrad.h"
#include "support/guarded.h"
#include "test_support.h"

namespace relugrad {
namespace testing {

using Bytes = std::vector<unsigned char>;

// The reference of the mask path (core/mask_reference.h) into fresh buffers.
void ReferenceForward(relugrad_dtype d, const Bytes& x, const relugrad_options& o, Bytes* y,
                      Bytes* mask);
Bytes ReferenceGradMask(relugrad_dtype d, const Bytes& dy, const Bytes& mask,
                        const relugrad_options& o);

// "" when equal, else the first differing byte/bit.
std::string CompareMask(const Bytes& expected, const unsigned char* actual, size_t n);

// A random mask of ceil(n/8) bytes with zero padding bits.
Bytes RandomMask(size_t n, uint64_t seed);

}  // namespace testing
}  // namespace relugrad

#endif  // RELUGRAD_TESTS_MASK_MASK_TEST_SUPPORT_H_
