// relugrad/_relugrad_torch.so, ReLUDropout's backward: torch.ops.relugrad_native.relu_dropout_backward.
//
// dx = gate ? dy * noise : +0, with noise = keep ? scale : +0, from the two bit planes that
// relugrad/_dropout.py's forward packs (relugrad's relu_forward mask format: 1 bit per element,
// LSB first, in dy's C order). This is stock's mul backward (grad * noise) followed by
// threshold_backward, in one pass that reads dy and two bits and writes dx, where the torch-op
// composition makes four passes over n elements. Why here and not in the Highway kernels: the
// product must be torch's own IEEE multiply (a dropped element gives dy * 0: -0 for negative dy,
// NaN for inf/NaN dy, with dy's payload as x86 mul returns it), which a plain multiply of
// float/double is; reduced-precision dtypes stay on the torch-op path, where torch's rounding
// applies. Under create_graph the Python path serves (differentiable ops).
#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <torch/library.h>

#include <algorithm>
#include <cstdint>

namespace relugrad_python {
namespace {

at::Tensor ReluDropoutBackward(const at::Tensor& dy, const at::Tensor& gate, const at::Tensor& keep,
                               double scale) {
  TORCH_CHECK(dy.device().is_cpu() && dy.layout() == at::kStrided && dy.is_contiguous(),
              "relu_dropout_backward: dy must be a contiguous CPU tensor");
  TORCH_CHECK(dy.scalar_type() == at::kFloat || dy.scalar_type() == at::kDouble,
              "relu_dropout_backward: dy must be float32 or float64, got ", dy.scalar_type());
  const int64_t n = dy.numel();
  const int64_t bytes = (n + 7) / 8;
  for (const at::Tensor* plane : {&gate, &keep}) {
    TORCH_CHECK(plane->device().is_cpu() && plane->scalar_type() == at::kByte &&
                    plane->is_contiguous() && plane->numel() == bytes,
                "relu_dropout_backward: each bit plane must be a contiguous CPU uint8 tensor of ",
                bytes, " bytes for ", n, " elements");
  }
  at::Tensor dx = at::empty(dy.sizes(), dy.options());
  const uint8_t* g = gate.const_data_ptr<uint8_t>();
  const uint8_t* k = keep.const_data_ptr<uint8_t>();
  AT_DISPATCH_FLOATING_TYPES(dy.scalar_type(), "relu_dropout_backward", [&] {
    // scale is the kept noise value of this dtype (exact in scalar_t): the cast does not round.
    const scalar_t s = static_cast<scalar_t>(scale);
    const scalar_t* src = dy.const_data_ptr<scalar_t>();
    scalar_t* dst = dx.mutable_data_ptr<scalar_t>();
    // Parts of whole bytes: no two threads share a byte of either plane.
    at::parallel_for(0, bytes, 4096, [&](int64_t begin, int64_t end) {
      for (int64_t byte = begin; byte < end; ++byte) {
        const int64_t base = byte * 8;
        const int count = static_cast<int>(std::min<int64_t>(8, n - base));
        const unsigned gb = g[byte], kb = k[byte];
        for (int j = 0; j < count; ++j) {
          const scalar_t noise = ((kb >> j) & 1u) ? s : scalar_t(0);
          const scalar_t product = src[base + j] * noise;
          dst[base + j] = ((gb >> j) & 1u) ? product : scalar_t(0);
        }
      }
    });
  });
  return dx;
}

}  // namespace
}  // namespace relugrad_python

TORCH_LIBRARY_FRAGMENT(relugrad_native, m) {
  m.def("relu_dropout_backward(Tensor dy, Tensor gate, Tensor keep, float scale) -> Tensor",
        &relugrad_python::ReluDropoutBackward);
}
