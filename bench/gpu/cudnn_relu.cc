#include "cudnn_relu.h"

#include <limits>

#if defined(RELUGRAD_BENCH_HAVE_CUDNN)
#include <cudnn.h>
#endif

#if defined(RELUGRAD_BENCH_HAVE_CUDNN)

namespace {

cudnnHandle_t H(void* p) { return static_cast<cudnnHandle_t>(p); }
cudnnActivationDescriptor_t A(void* p) { return static_cast<cudnnActivationDescriptor_t>(p); }
cudnnTensorDescriptor_t T(void* p) { return static_cast<cudnnTensorDescriptor_t>(p); }

cudnnDataType_t CudnnType(BenchDtype d) {
  switch (d) {
    case BenchDtype::kF32:
      return CUDNN_DATA_FLOAT;
    case BenchDtype::kF16:
      return CUDNN_DATA_HALF;
    case BenchDtype::kBF16:
      return CUDNN_DATA_BFLOAT16;
    case BenchDtype::kF64:
      return CUDNN_DATA_DOUBLE;
  }
  return CUDNN_DATA_FLOAT;
}

}  // namespace

CudnnRelu::CudnnRelu() {
  cudnnHandle_t h = nullptr;
  cudnnStatus_t st = cudnnCreate(&h);
  if (st != CUDNN_STATUS_SUCCESS) {
    error_ = std::string("cudnnCreate: ") + cudnnGetErrorString(st);
    return;
  }
  handle_ = h;
  cudnnActivationDescriptor_t a = nullptr;
  st = cudnnCreateActivationDescriptor(&a);
  if (st == CUDNN_STATUS_SUCCESS) {
    activation_ = a;
    // coef (clipping threshold) is unused for RELU; NaN propagation is part
    // of what the semantics probe observes.
    st = cudnnSetActivationDescriptor(a, CUDNN_ACTIVATION_RELU, CUDNN_PROPAGATE_NAN, 0.0);
  }
  if (st == CUDNN_STATUS_SUCCESS) {
    cudnnTensorDescriptor_t t = nullptr;
    st = cudnnCreateTensorDescriptor(&t);
    if (st == CUDNN_STATUS_SUCCESS) tensor_ = t;
  }
  if (st != CUDNN_STATUS_SUCCESS) error_ = std::string("cuDNN setup: ") + cudnnGetErrorString(st);
}

CudnnRelu::~CudnnRelu() {
  if (tensor_ != nullptr) cudnnDestroyTensorDescriptor(T(tensor_));
  if (activation_ != nullptr) cudnnDestroyActivationDescriptor(A(activation_));
  if (handle_ != nullptr) cudnnDestroy(H(handle_));
}

std::string CudnnRelu::version() const {
  const size_t v = cudnnGetVersion();
  return std::to_string(v / 10000) + "." + std::to_string((v / 100) % 100) + "." +
         std::to_string(v % 100);
}

std::string CudnnRelu::Backward(BenchDtype dtype, int64_t n, const void* dy, const void* s,
                                void* dx, cudaStream_t stream) {
  if (!error_.empty()) return error_;
  if (n > std::numeric_limits<int>::max()) return "n exceeds cuDNN's int dimensions";
  // A flat array as an NCHW tensor of shape (1, 1, 1, n).
  cudnnStatus_t st = cudnnSetTensor4dDescriptor(T(tensor_), CUDNN_TENSOR_NCHW, CudnnType(dtype), 1,
                                                1, 1, static_cast<int>(n));
  if (st != CUDNN_STATUS_SUCCESS)
    return std::string("cudnnSetTensor4dDescriptor: ") + cudnnGetErrorString(st);
  st = cudnnSetStream(H(handle_), stream);
  if (st != CUDNN_STATUS_SUCCESS) return std::string("cudnnSetStream: ") + cudnnGetErrorString(st);
  // Scaling factors are float for half/bf16/float tensors, double for double.
  const float one_f = 1.0f, zero_f = 0.0f;
  const double one_d = 1.0, zero_d = 0.0;
  const bool dbl = dtype == BenchDtype::kF64;
  st = cudnnActivationBackward(H(handle_), A(activation_),
                               dbl ? static_cast<const void*>(&one_d) : &one_f, T(tensor_), s,
                               T(tensor_), dy, T(tensor_), s,
                               dbl ? static_cast<const void*>(&zero_d) : &zero_f, T(tensor_), dx);
  if (st != CUDNN_STATUS_SUCCESS)
    return std::string("cudnnActivationBackward: ") + cudnnGetErrorString(st);
  return "";
}

#else  // !RELUGRAD_BENCH_HAVE_CUDNN

CudnnRelu::CudnnRelu() : error_("cuDNN was not found when the benchmark was built") {}
CudnnRelu::~CudnnRelu() = default;
std::string CudnnRelu::version() const { return "none"; }
std::string CudnnRelu::Backward(BenchDtype, int64_t, const void*, const void*, void*,
                                cudaStream_t) {
  return error_;
}

#endif
