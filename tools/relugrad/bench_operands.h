// Operands of one benchmark point: `sets` copies of dy, s, dx (and 2 x sets
// of the triads' b, c, a moving the same bytes: one half per triad) in
// arenas of huge-page-backed memory, filled with fresh random bits (never
// zeros). Cold mode rotates through enough sets that the footprint exceeds
// the caches, so a call never finds the operands its predecessor left in
// cache.
#ifndef RELUGRAD_TOOLS_BENCH_OPERANDS_H_
#define RELUGRAD_TOOLS_BENCH_OPERANDS_H_

#include <cstddef>
#include <cstdint>

#include "io/aligned_buffer.h"
#include "relugrad/relugrad.h"

namespace relugrad {
namespace cli {

class Operands {
 public:
  // Throws UsageError when memory is short.
  Operands(relugrad_dtype dtype, long long n, bool warm, long long rotate_bytes, bool mask,
           uint64_t seed);

  int sets() const { return sets_; }
  size_t bytes() const { return bytes_; }
  long long triad_n() const { return triad_n_; }
  unsigned char* dy(int set) { return dy_.data() + static_cast<size_t>(set) * stride_; }
  unsigned char* s(int set) { return s_.data() + static_cast<size_t>(set) * stride_; }
  unsigned char* dx(int set) { return dx_.data() + static_cast<size_t>(set) * stride_; }
  uint8_t* mask(int set) { return mask_.data() + static_cast<size_t>(set) * mask_stride_; }
  // The triad's arrays of set `set`. The streaming triad has sets of its
  // own (triad_nt_set), so no two of triad, triad_nt and relugrad share
  // operands: a candidate that follows one on the same arrays finds part of
  // them in the L3 (docs/design.md, "Who ran just before").
  int triad_nt_set(int set) const { return sets_ + set; }
  float* ta(int set) {
    return reinterpret_cast<float*>(ta_.data() + static_cast<size_t>(set) * stride_);
  }
  float* tb(int set) {
    return reinterpret_cast<float*>(tb_.data() + static_cast<size_t>(set) * stride_);
  }
  float* tc(int set) {
    return reinterpret_cast<float*>(tc_.data() + static_cast<size_t>(set) * stride_);
  }

 private:
  int sets_ = 1;
  size_t bytes_ = 0, stride_ = 0, mask_stride_ = 0;
  long long triad_n_ = 0;
  AlignedBuffer dy_, s_, dx_, mask_, ta_, tb_, tc_;
};

}  // namespace cli
}  // namespace relugrad

#endif  // RELUGRAD_TOOLS_BENCH_OPERANDS_H_
