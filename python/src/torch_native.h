// The eager ReLU of relugrad.torch (torch_native.cc), for its Python entry
// (torch_python_module.cc), and the backward pieces it shares with the fused
// ReLU + Dropout node (torch_dropout.cc) and LinearReLU's (torch_bias.cc).
// What they all build on comes with it: the link to the library
// (torch_binding.h), the plans and the split over torch's threads
// (torch_plans.h), the layouts and the memory the kernels may take
// (torch_layouts.h).
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/util/string_view.h>
#include <torch/csrc/autograd/edge.h>

#include <cstdint>
#include <vector>

#include "relugrad/relugrad.h"
#include "torch_binding.h"
#include "torch_layouts.h"
#include "torch_plans.h"

namespace relugrad_python {

// y = relu(x) with relugrad's backward recorded as x's autograd history when
// x needs a gradient: the gate on the saved y, or with mask the 1-bit mask
// only. inplace writes x and returns it. x: a plain strided CPU tensor, or a
// plain CUDA tensor where CudaServed() (the kernels then launch on torch's
// current stream of x's device, into memory of torch's caching allocator), of
// relugrad's dtypes (anything else gets a c10::Error). Rules from the preset
// named `semantics`; threads (CPU only): 0 splits over torch's intra-op
// threads, N > 0 runs relugrad's pool with N.
at::Tensor NativeRelu(const at::Tensor& x, c10::string_view semantics, int64_t threads, bool mask,
                      bool inplace);

// out = dropout(relu(x), p) in training, bit for bit stock's given the same
// generator state (stock's own draw, then one pass), with a backward node
// that keeps two bit planes (gate, keep) and writes dx over a gradient only
// it holds. x: a contiguous float32/float64 CPU tensor, 0 < p < 1; torch
// preset, torch's threads. torch_dropout.cc.
at::Tensor NativeReluDropout(const at::Tensor& x, double p);

// y = relu(linear(x, weight, bias)), stock's ops and bits, with a backward node that sums the
// bias gradient in the ReLU pass (a fixed order, not stock's sum(0)) and writes dx over a
// gradient only it holds; input and weight gradients are stock's bits. x, weight, bias: plain
// CPU tensors, all float32 or all float64. torch_bias.cc.
at::Tensor NativeLinearRelu(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias);

// ---- Shared by the backward nodes ------------------------------------------

// The mask's bits follow the storage order of the y the forward wrote
// (mask_strides, always dense); dx gets threshold_backward(grad, result)'s
// layout, result being what nn.ReLU would have saved (y, or x when in place).
struct MaskLayout {
  std::vector<int64_t> mask_strides;
  std::vector<int64_t> result_strides;
  // y dense with the mask in its own order (result_strides == mask_strides):
  // a gradient with exactly those strides is the backward's fast case (dx gets
  // them too, as TensorIterator gives operands of one dense layout).
  bool dense;
};

// dx = relu_grad_mask(grad, mask): threshold_backward(grad, result)'s layout
// and bits, over grad's memory where WritableInPlace allows; under GradMode
// (create_graph) or for memory the kernels cannot read, relugrad's
// differentiable custom op.
at::Tensor GradFromMask(const at::Tensor& grad, const at::Tensor& mask, const Settings& settings,
                        const MaskLayout& layout);

// Under create_graph stock's ReLU backward, threshold_backward(grad, y, 0), is a function of y as
// well, with a zero derivative: the second-order graph reaches x, and a gradient of the first-order
// result with respect to x is zeros. A backward that keeps only bits (the mask, the fused ReLU +
// Dropout) has no y to reach x through. This gives its result dx a node of its own, whose edges
// are dx's history and `input` (the edge to x): the incoming gradient passes on to the first,
// zeros (stock's derivative for y, through y's node: threshold_backward's layout with y's
// strides, result_strides, and their own zero derivative to x) to the second. Outside
// create_graph (GradMode off) dx itself.
at::Tensor WithZeroDerivativeToInput(const at::Tensor& dx, const torch::autograd::Edge& input,
                                     at::IntArrayRef result_strides);

}  // namespace relugrad_python
