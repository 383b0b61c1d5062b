// The checking vocabulary shared by the tests, `relugrad verify` and
// `relugrad soak`: special values per dtype, the semantics configurations
// every check sweeps, seeded random fill, the reference into a buffer, and a
// bitwise comparison that names the first mismatch.
#ifndef RELUGRAD_CHECK_CHECK_DATA_H_
#define RELUGRAD_CHECK_CHECK_DATA_H_

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/dtype_traits.h"
#include "relugrad/relugrad.h"

namespace relugrad {
namespace check {

constexpr relugrad_dtype kAllDtypes[] = {RELUGRAD_F32, RELUGRAD_F16, RELUGRAD_BF16, RELUGRAD_F64};

// Bit patterns that stress the rules: +-0, +-inf, quiet and signalling NaNs
// with payloads (both signs), +-max, +-min normal, subnormals, +-1, values
// equal to and adjacent to the thresholds the configurations use.
std::vector<uint64_t> SpecialValues(relugrad_dtype dtype);

struct Config {
  std::string name;
  relugrad_options options;
};

// Every preset with defaults, plus thresholds 0.75/-1.5/0.1, both threshold
// roundings, alpha, clip, each denormal mode with each gate/combine, and
// keep_negative_zero.
std::vector<Config> AllConfigs();

// Gates with an upper bound (gate_max: ReLU6, hardtanh) over the presets,
// both roundings, DAZ, signed-zero and subnormal bounds, a bound beyond f32,
// alpha and clip. Kept apart from AllConfigs: relu_grad serves them on every
// backend, the mask forward answers UNSUPPORTED.
std::vector<Config> BoundedGateConfigs();

// Every configuration relu_grad takes on the CPU and CUDA backends:
// AllConfigs, then BoundedGateConfigs.
std::vector<Config> GradConfigs();

// Seeded bits: a mix of special values and random finite values of both
// signs (never all zeros), so gates open and close.
std::vector<uint64_t> RandomBits(relugrad_dtype dtype, size_t n, uint64_t seed);

// Packs bit patterns into a byte buffer of the dtype's element size.
std::vector<unsigned char> Pack(relugrad_dtype dtype, const std::vector<uint64_t>& bits);
uint64_t BitsAt(relugrad_dtype dtype, const void* base, size_t i);

// "" when equal; otherwise a message naming the first differing element.
std::string CompareBits(relugrad_dtype dtype, const void* expected, const void* actual, size_t n,
                        const void* dy = nullptr, const void* s = nullptr);

std::string Hex(uint64_t v);

// Runs the reference into a fresh buffer.
std::vector<unsigned char> Reference(relugrad_dtype dtype, const std::vector<unsigned char>& dy,
                                     const std::vector<unsigned char>& s,
                                     const relugrad_options& o);

}  // namespace check
}  // namespace relugrad

#endif  // RELUGRAD_CHECK_CHECK_DATA_H_
