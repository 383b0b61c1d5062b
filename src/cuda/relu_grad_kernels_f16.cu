// The ReluGrad kernels for f16 data (relu_grad_kernels.cuh).
#include "cuda/relu_grad_kernels.cuh"

namespace relugrad {
namespace cuda {

RG_DECLARE_LAUNCH(LaunchReluGradF16) {
  return LaunchMode<Dtype::kF16>(mode, plan, n, dy, s, dx, p, stream, max_blocks, config);
}

}  // namespace cuda
}  // namespace relugrad
