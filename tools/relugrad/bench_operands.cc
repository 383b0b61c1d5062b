#include "bench_operands.h"

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "check/check_data.h"
#include "cli_args.h"

namespace relugrad {
namespace cli {
namespace {

// A random block of 64K elements tiled over the buffer: fresh bits without
// paying for a random draw per element of a 3 GiB footprint.
void FillRandom(relugrad_dtype d, unsigned char* p, size_t bytes, uint64_t seed) {
  const auto block = check::Pack(d, check::RandomBits(d, 1 << 16, seed));
  for (size_t off = 0; off < bytes; off += block.size()) {
    std::memcpy(p + off, block.data(), std::min(block.size(), bytes - off));
  }
}

// The triad's inputs: ordinary finite floats (no NaN or subnormal
// arithmetic, which could be slower than the memory system).
void FillFloats(float* p, size_t n, uint64_t seed) {
  std::mt19937 rng(static_cast<uint32_t>(seed));
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  const size_t period = std::min<size_t>(n, 1 << 16);
  for (size_t i = 0; i < period; ++i) p[i] = dist(rng);
  for (size_t off = period; off < n; off += period) {
    std::memcpy(p + off, p, std::min(period, n - off) * sizeof(float));
  }
}

}  // namespace

Operands::Operands(relugrad_dtype dtype, long long n, bool warm, long long rotate_bytes, bool mask,
                   uint64_t seed) {
  const size_t es = relugrad_dtype_size(dtype);
  bytes_ = static_cast<size_t>(n) * es;
  stride_ = std::max<size_t>(64, (bytes_ + 63) / 64 * 64);
  const long long footprint = 3LL * static_cast<long long>(stride_);
  sets_ = warm ? 1 : static_cast<int>(std::clamp<long long>((rotate_bytes + footprint - 1) / footprint, 1, 1 << 16));
  triad_n_ = static_cast<long long>((bytes_ + 3) / 4);
  const size_t total = stride_ * static_cast<size_t>(sets_);
  mask_stride_ = (static_cast<size_t>(n) + 7) / 8 + 64;
  if (!dy_.Allocate(total) || !s_.Allocate(total) || !dx_.Allocate(total) || !ta_.Allocate(total) ||
      !tb_.Allocate(total) || !tc_.Allocate(total) ||
      (mask && !mask_.Allocate(mask_stride_ * static_cast<size_t>(sets_)))) {
    throw UsageError("out of memory for n = " + std::to_string(n) + " (" + std::to_string(sets_) + " sets)");
  }
  FillRandom(dtype, dy_.data(), total, seed);
  FillRandom(dtype, s_.data(), total, seed + 1);
  std::memset(dx_.data(), 0, total);  // fault the output in before timing
  FillFloats(reinterpret_cast<float*>(tb_.data()), total / 4, seed + 2);
  FillFloats(reinterpret_cast<float*>(tc_.data()), total / 4, seed + 3);
  std::memset(ta_.data(), 0, total);
  if (mask) std::memset(mask_.data(), 0, mask_stride_ * static_cast<size_t>(sets_));
}

}  // namespace cli
}  // namespace relugrad
