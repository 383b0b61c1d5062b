// Inputs and options shared by the Ascend twin suites.
#ifndef RELUGRAD_TESTS_ASCEND_ASCEND_TEST_UTIL_H_
#define RELUGRAD_TESTS_ASCEND_ASCEND_TEST_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/dtype_traits.h"
#include "core/semantics.h"
#include "relugrad/relugrad.h"

namespace rg_ascend_test {

// A named option set: a preset plus overrides (the last ones with an upper
// gate bound, check::BoundedGateConfigs).
struct Config {
  std::string name;
  relugrad_options options;
};
std::vector<Config> Configs();

// n elements of raw bits for dtype: special values (signed zeros, infs,
// quiet/signalling NaNs of both signs, subnormals, values at and around
// 0, +-0.5, +-1.25, +-2) mixed with random patterns, seeded.
std::vector<uint8_t> MakeBits(relugrad::Dtype dtype, int64_t n, uint32_t seed);

relugrad::KernelParams ParamsFor(relugrad::Dtype dtype, const relugrad_options& options,
                                 relugrad::Rules* semantics);

// First index where a and b differ (element-wise) or -1.
int64_t FirstDiff(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b, int elem);

}  // namespace rg_ascend_test

#endif  // RELUGRAD_TESTS_ASCEND_ASCEND_TEST_UTIL_H_
