// The ReluGrad kernels for bf16 data (relu_grad_kernels.cuh).
#include "cuda/relu_grad_kernels.cuh"

namespace relugrad {
namespace cuda {

RG_DECLARE_LAUNCH(LaunchReluGradBF16) {
  return LaunchMode<Dtype::kBF16>(mode, plan, n, dy, s, dx, p, stream, max_blocks, config);
}

}  // namespace cuda
}  // namespace relugrad
