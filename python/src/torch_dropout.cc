// relugrad/_relugrad_torch.so, ReLUDropout's float32/float64 path: the forward
// NativeReluDropout (torch_native.h, entered from torch_python_module.cc) and its
// backward node, relugrad::ReluDropoutBackward.
//
// Backward: dx = gate ? dy * noise : +0, with noise = keep ? scale : +0, from the two bit planes
// the forward packs (relugrad's relu_forward mask format: 1 bit per element, LSB first, in x's
// C order). This is stock's mul backward (grad * noise) followed by threshold_backward, in one
// pass that reads dy and two bits and writes dx, where the torch-op composition makes four
// passes over n elements. Why here and not in the Highway kernels: the product must be torch's
// own IEEE multiply (a dropped element gives dy * 0: -0 for negative dy, NaN for inf/NaN dy,
// with dy's payload as x86 mul returns it), which a plain multiply of float/double is;
// reduced-precision dtypes stay on relugrad/_dropout.py's torch-op composition, where torch's
// rounding applies.
//
// Why a C++ node and not a Python autograd.Function: the engine hands a node the only reference
// to a gradient made by the op after it, so dx can be written over it (WritableInPlace: no
// allocation, no fresh pages, stores to lines just read), as relugrad.torch.ReLU's backward
// does; a Python Function's gradient argument is also held by the interpreter. A gradient the
// one pass cannot take (not contiguous, under create_graph, memory the kernels cannot read)
// gets stock's two ops over relugrad's mask kernel: noise from the keep bits, grad * noise
// (MulBackward's operand order, so its layout), then the gate (threshold_backward's layout).
#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/full.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/ones.h>
#include <c10/util/bit_cast.h>
#include <c10/util/strides.h>
#include <torch/csrc/autograd/VariableTypeUtils.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/functions/utils.h>
#include <torch/csrc/autograd/saved_variable.h>

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "torch_native.h"

namespace relugrad_python {
namespace {

// The loops below are branchless over 8 elements (one byte of each plane) so that the compiler
// vectorizes them: a selected value is its bits ANDed with an all-ones or all-zero lane mask,
// which gives +0 where not selected, as the ternaries they stand for.
template <typename T>
using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;

template <typename T>
inline Bits<T> Lane(unsigned byte, int j) {
  return Bits<T>(0) - static_cast<Bits<T>>((byte >> j) & 1u);
}

template <typename T>
inline T Select(T v, Bits<T> lane) {
  return c10::bit_cast<T>(static_cast<Bits<T>>(c10::bit_cast<Bits<T>>(v) & lane));
}

// dx may be dy itself (the gradient written over): each group of 8 is read
// whole before any of it is written, so the loops carry no aliasing question.
template <typename T>
void BackwardBytes(const T* dy, unsigned gb, unsigned kb, T s, T* dx, int count) {
  T in[8];
  for (int j = 0; j < count; ++j) in[j] = dy[j];
  for (int j = 0; j < count; ++j) {
    const T product = in[j] * Select(s, Lane<T>(kb, j));  // dy * noise, as stock's mul backward
    in[j] = Select(product, Lane<T>(gb, j));              // threshold_backward's select
  }
  for (int j = 0; j < count; ++j) dx[j] = in[j];
}

template <typename T>
void BackwardParts(const T* dy, const uint8_t* g, const uint8_t* k, T s, T* dx, int64_t n,
                   int64_t bytes) {
  // Parts of whole bytes: no two threads share a byte of either plane.
  at::parallel_for(0, bytes, 4096, [&](int64_t begin, int64_t end) {
    for (int64_t byte = begin; byte < end; ++byte) {
      const int64_t base = byte * 8;
      const int count = static_cast<int>(std::min<int64_t>(8, n - base));
      if (count == 8) {
        BackwardBytes<T>(dy + base, g[byte], k[byte], s, dx + base, 8);
      } else {
        BackwardBytes<T>(dy + base, g[byte], k[byte], s, dx + base, count);
      }
    }
  });
}

template <typename T>
void ForwardBytes(const T* x, T s, T* noise, uint8_t* g, uint8_t* k, int count) {
  unsigned gb = 0, kb = 0;  // padding bits stay 0
  for (int j = 0; j < count; ++j) {
    const T v = x[j];
    const T y = Select(v, Bits<T>(0) - static_cast<Bits<T>>(!(v < T(0))));  // x < 0 ? +0 : x
    const unsigned kept = noise[j] != T(0);
    noise[j] = y * Select(s, Bits<T>(0) - static_cast<Bits<T>>(kept));
    gb |= static_cast<unsigned>(!(y <= T(0))) << j;
    kb |= kept << j;
  }
  *g = static_cast<uint8_t>(gb);
  *k = static_cast<uint8_t>(kb);
}

template <typename T>
void ForwardParts(const T* x, T s, T* noise, uint8_t* g, uint8_t* k, int64_t n, int64_t bytes) {
  at::parallel_for(0, bytes, 4096, [&](int64_t begin, int64_t end) {
    for (int64_t byte = begin; byte < end; ++byte) {
      const int64_t base = byte * 8;
      const int count = static_cast<int>(std::min<int64_t>(8, n - base));
      if (count == 8) {
        ForwardBytes<T>(x + base, s, noise + base, g + byte, k + byte, 8);
      } else {
        ForwardBytes<T>(x + base, s, noise + base, g + byte, k + byte, count);
      }
    }
  });
}

// The one pass into dx (dy itself or a new contiguous tensor): dy contiguous, of dx's dtype.
void BackwardPass(const at::Tensor& dy, const at::Tensor& gate, const at::Tensor& keep,
                  double scale, const at::Tensor& dx) {
  const int64_t n = dy.numel();
  const int64_t bytes = (n + 7) / 8;
  const uint8_t* g = gate.const_data_ptr<uint8_t>();
  const uint8_t* k = keep.const_data_ptr<uint8_t>();
  AT_DISPATCH_FLOATING_TYPES(dy.scalar_type(), "relu_dropout_backward", [&] {
    // scale is the kept noise value of this dtype (exact in scalar_t): the cast does not round.
    BackwardParts<scalar_t>(dy.const_data_ptr<scalar_t>(), g, k, static_cast<scalar_t>(scale),
                            dx.mutable_data_ptr<scalar_t>(), n, bytes);
  });
}

// The forward after stock's draw: noise holds bernoulli_(1 - p)'s 0/1 values; it is overwritten
// with the output y * (noise ? scale : +0), y = torch.relu(x) (x < 0 ? +0 : x, so -0 and NaN pass
// as they are), which is stock's `noise.div_(1 - p)` then `y * noise`; gate gets the bits of
// !(y <= 0) (threshold_backward's open gate), keep those of noise != 0. One pass where the
// composition makes four (relu, div, mul and two packings).
std::tuple<at::Tensor, at::Tensor> ReluDropoutForward(const at::Tensor& x, at::Tensor& noise,
                                                      double scale) {
  TORCH_CHECK(
      x.device().is_cpu() && x.layout() == at::kStrided && x.is_contiguous() &&
          noise.device().is_cpu() && noise.is_contiguous() && noise.sizes() == x.sizes() &&
          noise.scalar_type() == x.scalar_type(),
      "relu_dropout_forward: x and noise must be contiguous CPU tensors of one shape and dtype");
  TORCH_CHECK(x.scalar_type() == at::kFloat || x.scalar_type() == at::kDouble,
              "relu_dropout_forward: x must be float32 or float64, got ", x.scalar_type());
  const int64_t n = x.numel();
  const int64_t bytes = (n + 7) / 8;
  at::Tensor gate = at::empty({bytes}, x.options().dtype(at::kByte));
  at::Tensor keep = at::empty({bytes}, x.options().dtype(at::kByte));
  uint8_t* g = gate.mutable_data_ptr<uint8_t>();
  uint8_t* k = keep.mutable_data_ptr<uint8_t>();
  AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "relu_dropout_forward", [&] {
    ForwardParts<scalar_t>(x.const_data_ptr<scalar_t>(), static_cast<scalar_t>(scale),  // exact
                           noise.mutable_data_ptr<scalar_t>(), g, k, n, bytes);
  });
  return {gate, keep};
}

// ---- The autograd node and the forward ------------------------------------

// Stock's two ops over relugrad's mask kernel, for any gradient: the noise
// rebuilt from the keep bits (keep ? scale : +0), grad * noise as MulBackward
// computes it, then the gate. Differentiable under create_graph (GradFromMask
// takes relugrad's custom op there).
at::Tensor ComposedGrad(const at::Tensor& grad, const at::Tensor& gate, const at::Tensor& keep,
                        double scale) {
  static const Settings kTorch{"torch", RELUGRAD_PRESET_TORCH, 0};
  const c10::DimVector contiguous = c10::contiguous_strides(grad.sizes());
  const std::vector<int64_t> strides(contiguous.begin(), contiguous.end());
  const MaskLayout layout{strides, strides, true};
  const at::Tensor noise =
      GradFromMask(at::full(grad.sizes(), scale, grad.options()), keep, kTorch, layout);
  return GradFromMask(at::mul(grad, noise), gate, kTorch, layout);
}

struct ReluDropoutBackward : public torch::autograd::Node {
  torch::autograd::SavedVariable gate;
  torch::autograd::SavedVariable keep;
  double scale = 0;

  std::string name() const override { return "relugrad::ReluDropoutBackward"; }

  void release_variables() override {
    std::lock_guard<std::mutex> lock(mutex_);
    gate.reset_data();
    keep.reset_data();
  }

  torch::autograd::variable_list apply(torch::autograd::variable_list&& grads) override {
    std::lock_guard<std::mutex> lock(mutex_);
    const at::Tensor g = gate.unpack(getptr());
    const at::Tensor k = keep.unpack(getptr());
    // Moved out, not copied: dx may be written over a gradient only this node holds.
    at::Tensor grad = std::move(grads[0]);
    if (!grad.defined()) return {at::Tensor()};
    // The kernels read raw memory: a lazily negated gradient (torch._neg_view) is negated first.
    if (grad.is_neg()) grad = grad.resolve_neg();
    if (at::GradMode::is_enabled() || !ReadableOnCpu(grad) || !grad.is_contiguous()) {
      return {ComposedGrad(grad, g, k, scale)};
    }
    const at::Tensor dx =
        WritableInPlace(grad, grad.strides()) ? grad : at::empty(grad.sizes(), grad.options());
    BackwardPass(grad, g, k, scale, dx);
    return {dx};
  }
};

}  // namespace

at::Tensor NativeReluDropout(const at::Tensor& x, double p) {
  TORCH_CHECK(x.device().is_cpu() && x.layout() == at::kStrided && x.is_contiguous() &&
                  (x.scalar_type() == at::kFloat || x.scalar_type() == at::kDouble),
              "relu_dropout: x must be a contiguous float32 or float64 CPU tensor");
  TORCH_CHECK(p > 0 && p < 1, "relu_dropout: p must be in (0, 1), got ", p);
  // The kept noise value, by stock's own div_ of a tensor by the Python scalar 1 - p.
  const double scale = at::ones({}, x.options()).div_(1 - p).item<double>();
  at::Tensor out;
  at::Tensor gate;
  at::Tensor keep;
  {
    at::AutoDispatchBelowADInplaceOrView guard;  // the draw and the pass record no history
    // Stock's draw (at::dropout's CPU path): same shape, dtype and layout, same generator.
    out = at::empty_like(x).bernoulli_(1 - p);
    std::tie(gate, keep) = ReluDropoutForward(x, out, scale);
  }
  if (torch::autograd::compute_requires_grad(x)) {
    auto node = c10::make_intrusive<ReluDropoutBackward>();
    node->set_next_edges(torch::autograd::collect_next_edges(x));
    node->scale = scale;
    torch::autograd::set_history(out, node);
    node->gate = torch::autograd::SavedVariable(gate, /*is_output=*/false);
    node->keep = torch::autograd::SavedVariable(keep, /*is_output=*/false);
    torch::autograd::fire_node_creation_hooks(node);
  }
  return out;
}

}  // namespace relugrad_python
