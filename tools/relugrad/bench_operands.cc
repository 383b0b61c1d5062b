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

// A 64K-element block of random bits for relugrad's inputs: fresh bits
// without paying for a random draw per element of a 3 GiB footprint.
std::vector<unsigned char> RandomBlock(relugrad_dtype d, uint64_t seed) {
  return check::Pack(d, check::RandomBits(d, 1 << 16, seed));
}

// The triad's inputs: ordinary finite floats (no NaN or subnormal
// arithmetic, which could be slower than the memory system).
std::vector<unsigned char> FloatBlock(uint64_t seed) {
  std::mt19937 rng(static_cast<uint32_t>(seed));
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<unsigned char> block((size_t{1} << 16) * sizeof(float));
  for (size_t i = 0; i < block.size(); i += sizeof(float)) {
    const float v = dist(rng);
    std::memcpy(block.data() + i, &v, sizeof(v));
  }
  return block;
}

// Writes bytes [begin, end) of p with `block` tiled from offset 0 (or zeros
// when block is empty).
void FillRange(unsigned char* p, size_t begin, size_t end,
               const std::vector<unsigned char>& block) {
  if (block.empty()) {
    std::memset(p + begin, 0, end - begin);
    return;
  }
  for (size_t off = begin; off < end;) {
    const size_t in_block = off % block.size();
    const size_t len = std::min(block.size() - in_block, end - off);
    std::memcpy(p + off, block.data() + in_block, len);
    off += len;
  }
}

}  // namespace

Operands::Operands(relugrad_dtype dtype, long long n, bool warm, long long rotate_bytes, bool mask,
                   uint64_t seed) {
  const size_t es = relugrad_dtype_size(dtype);
  bytes_ = static_cast<size_t>(n) * es;
  stride_ = std::max<size_t>(64, (bytes_ + 63) / 64 * 64);
  const long long footprint = 3LL * static_cast<long long>(stride_);
  sets_ = warm ? 1
               : static_cast<int>(
                     std::clamp<long long>((rotate_bytes + footprint - 1) / footprint, 1, 1 << 16));
  // One set of a footprint a few times the L3 is not cold: the L3 still
  // holds part of it on the next call (docs/design.md, "Measurement flaws").
  // Two sets up to 8x the L3; beyond, what stays is negligible.
  if (!warm && sets_ == 1 && footprint < (256LL << 20)) sets_ = 2;
  triad_n_ = static_cast<long long>((bytes_ + 3) / 4);
  const size_t total = stride_ * static_cast<size_t>(sets_);
  const size_t triad_total = 2 * total;  // the triad's sets, then the streaming triad's
  mask_stride_ = (static_cast<size_t>(n) + 7) / 8 + 64;
  if (!dy_.Allocate(total) || !s_.Allocate(total) || !dx_.Allocate(total) ||
      !ta_.Allocate(triad_total) || !tb_.Allocate(triad_total) || !tc_.Allocate(triad_total) ||
      (mask && !mask_.Allocate(mask_stride_ * static_cast<size_t>(sets_)))) {
    throw UsageError("out of memory for n = " + std::to_string(n) + " (" + std::to_string(sets_) +
                     " sets)");
  }
  // First touch places the pages, and where they land can matter: arrays
  // touched first can read slower than arrays touched later (docs/design.md,
  // "Measurement flaws"). So relugrad's arrays and the triad's are touched interleaved,
  // 2 MiB at a time, and the comparison does not depend on allocation order.
  const std::vector<unsigned char> dy_block = RandomBlock(dtype, seed),
                                   s_block = RandomBlock(dtype, seed + 1);
  const std::vector<unsigned char> tb_block = FloatBlock(seed + 2), tc_block = FloatBlock(seed + 3),
                                   zeros;
  constexpr size_t kChunk = size_t{2} << 20;
  for (size_t off = 0; off < total; off += kChunk) {
    const size_t end = std::min(total, off + kChunk);
    FillRange(dy_.data(), off, end, dy_block);
    FillRange(tb_.data(), off, end, tb_block);
    FillRange(s_.data(), off, end, s_block);
    FillRange(tc_.data(), off, end, tc_block);
    FillRange(dx_.data(), off, end, zeros);  // fault the outputs in before timing
    FillRange(ta_.data(), off, end, zeros);
    FillRange(tb_.data(), total + off, total + end, tb_block);  // the streaming triad's sets
    FillRange(tc_.data(), total + off, total + end, tc_block);
    FillRange(ta_.data(), total + off, total + end, zeros);
  }
  if (mask) std::memset(mask_.data(), 0, mask_stride_ * static_cast<size_t>(sets_));
}

}  // namespace cli
}  // namespace relugrad
