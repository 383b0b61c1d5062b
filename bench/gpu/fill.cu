// Device-side fill for the GPU benchmark: a counter-based hash gives each
// element a value in [-1, 1) (so about half of the gates open), written in
// the benchmark's dtype. Filling on the device keeps a 1G-element setup to
// milliseconds instead of generating gigabytes on the host.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "fill.h"

namespace {

__device__ __forceinline__ uint64_t Mix(uint64_t x) {  // splitmix64 finaliser
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

__device__ __forceinline__ float Uniform(uint64_t seed, uint64_t i) {
  const uint32_t bits =
      static_cast<uint32_t>(Mix(seed ^ (i * 0xd1342543de82ef95ull)) >> 40);  // 24 bits
  return static_cast<float>(bits) * (2.0f / 16777216.0f) - 1.0f;
}

template <class T>
__device__ __forceinline__ T FromFloat(float v);
template <>
__device__ __forceinline__ float FromFloat<float>(float v) {
  return v;
}
template <>
__device__ __forceinline__ double FromFloat<double>(float v) {
  return v;
}
template <>
__device__ __forceinline__ __half FromFloat<__half>(float v) {
  return __float2half_rn(v);
}
template <>
__device__ __forceinline__ __nv_bfloat16 FromFloat<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}

template <class T>
__global__ void FillKernel(T* p, int64_t n, uint64_t seed) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    p[i] = FromFloat<T>(Uniform(seed, static_cast<uint64_t>(i)));
  }
}

}  // namespace

cudaError_t FillUniform(BenchDtype dtype, void* p, int64_t n, uint64_t seed, cudaStream_t stream) {
  const int threads = 256;
  const int blocks = 4096;
  switch (dtype) {
    case BenchDtype::kF32:
      FillKernel<<<blocks, threads, 0, stream>>>(static_cast<float*>(p), n, seed);
      break;
    case BenchDtype::kF16:
      FillKernel<<<blocks, threads, 0, stream>>>(static_cast<__half*>(p), n, seed);
      break;
    case BenchDtype::kBF16:
      FillKernel<<<blocks, threads, 0, stream>>>(static_cast<__nv_bfloat16*>(p), n, seed);
      break;
    case BenchDtype::kF64:
      FillKernel<<<blocks, threads, 0, stream>>>(static_cast<double*>(p), n, seed);
      break;
  }
  return cudaGetLastError();
}
