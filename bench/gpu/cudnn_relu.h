// cuDNN's ReLU backward (legacy cudnnActivationBackward, CUDNN_ACTIVATION_RELU)
// on a flat array, as a benchmark peer. Without cuDNN at build time
// (RELUGRAD_BENCH_HAVE_CUDNN undefined) every call reports "not built".
#ifndef RELUGRAD_BENCH_GPU_CUDNN_RELU_H_
#define RELUGRAD_BENCH_GPU_CUDNN_RELU_H_

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "fill.h"

class CudnnRelu {
 public:
  CudnnRelu();
  ~CudnnRelu();
  CudnnRelu(const CudnnRelu&) = delete;
  CudnnRelu& operator=(const CudnnRelu&) = delete;

  // "" when usable, else why not (no cuDNN, handle creation failed, ...).
  const std::string& error() const { return error_; }
  std::string version() const;

  // dx = relu'(x) * dy with y = x = s (same buffer): the gate input as
  // relugrad's s. Returns "" or the cuDNN status string.
  std::string Backward(BenchDtype dtype, int64_t n, const void* dy, const void* s, void* dx,
                       cudaStream_t stream);

 private:
  std::string error_;
  void* handle_ = nullptr;
  void* activation_ = nullptr;
  void* tensor_ = nullptr;
};

#endif  // RELUGRAD_BENCH_GPU_CUDNN_RELU_H_
