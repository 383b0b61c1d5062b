// Measured-only kernel variants (variants.cc): torch semantics, t = 0.
#ifndef RELUGRAD_BENCH_MICRO_VARIANTS_H_
#define RELUGRAD_BENCH_MICRO_VARIANTS_H_
#include <cstddef>
#include <cstdint>
namespace relugrad_micro {
void SelectF32Unroll(int unroll, const uint32_t* dy, const uint32_t* s, uint32_t* dx, size_t n);
void SelectF32Prefetch(int distance, const uint32_t* dy, const uint32_t* s, uint32_t* dx, size_t n);
void Select16ViaF32(bool bf16, const uint16_t* dy, const uint16_t* s, uint16_t* dx, size_t n);
}  // namespace relugrad_micro
#endif
