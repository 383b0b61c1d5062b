// Device-side data fill for the GPU benchmark (fill.cu).
#ifndef RELUGRAD_BENCH_GPU_FILL_H_
#define RELUGRAD_BENCH_GPU_FILL_H_

#include <cuda_runtime_api.h>

#include <cstdint>

// Same numbering as relugrad_dtype.
enum class BenchDtype : int { kF32 = 1, kF16 = 2, kBF16 = 3, kF64 = 4 };

// p[i] = a pseudo-random value in [-1, 1) rounded to dtype, from (seed, i).
cudaError_t FillUniform(BenchDtype dtype, void* p, int64_t n, uint64_t seed, cudaStream_t stream);

#endif  // RELUGRAD_BENCH_GPU_FILL_H_
