// The ReluGrad kernels for f64 data (relu_grad_kernels.cuh).
#include "cuda/relu_grad_kernels.cuh"

namespace relugrad {
namespace cuda {

RG_DECLARE_LAUNCH(LaunchReluGradF64) {
  return LaunchMode<Dtype::kF64>(mode, plan, n, dy, s, dx, p, stream, max_blocks, config);
}

}  // namespace cuda
}  // namespace relugrad
