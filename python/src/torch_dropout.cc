// relugrad/_relugrad_torch.so, ReLUDropout's float32/float64 path: the forward
// NativeReluDropout (torch_native.h, entered from torch_python_module.cc) and its
// backward node, relugrad::ReluDropoutBackward.
//
// Backward: dx = gate ? dy * noise : +0, with noise = keep ? scale : +0, from the two bit planes
// the forward packs (relugrad's relu_forward mask format: 1 bit per element, LSB first, in x's
// C order). This is stock's mul backward (grad * noise) followed by threshold_backward, in one
// pass over memory that reads dy and two bits and writes dx, where the torch-op composition
// makes four. The bits are packed and unpacked by relugrad's Highway mask kernels (through the
// C API table, one-thread plans); the products stay here, as plain multiplies of float/double:
// they must be torch's own IEEE multiply (a dropped element gives dy * 0: -0 for negative dy,
// NaN for inf/NaN dy, with dy's payload as x86 mul returns it). Reduced-precision dtypes stay on
// relugrad/torch/modules.py's torch-op composition (ReLUDropout), where torch's rounding applies.
//
// Why a C++ node and not a Python autograd.Function: the engine hands a node the only reference
// to a gradient made by the op after it, so dx can be written over it (WritableInPlace: no
// allocation, no fresh pages, stores to lines just read), as relugrad.torch.ReLU's backward
// does; a Python Function's gradient argument is also held by the interpreter. A gradient the
// one pass cannot take (not contiguous, under create_graph, memory the kernels cannot read)
// gets stock's two ops over relugrad's mask kernel: noise from the keep bits, grad * noise
// (MulBackward's operand order, so its layout), then the gate (threshold_backward's layout).
//
// CUDA tensors (every float dtype; a build with the CUDA backend) take NativeReluDropoutCuda,
// whose dropout is stock's own: CUDA's dropout is native_dropout, whose keep decisions come from
// Philox with an offset that depends on the launch geometry and the SM count, so relugrad does not
// draw them itself. The forward runs relugrad's mask forward (y = CUDA relu's y, and the gate
// bits), then at::native_dropout(y, p) (stock's output, stock's bool mask, the generator left as
// stock leaves it), then packs the bool mask into the keep plane (relugrad_pack_bits); y and the
// bool mask are dropped, so two bits per element are kept where stock keeps y and a byte. Its
// node computes PyTorch CUDA's native_dropout_backward then threshold_backward in one pass
// (relugrad_relu_dropout_grad) when the gradient has y's layout; any other gradient, and
// create_graph, get stock's two ops themselves over the planes unpacked (their bits, their
// layouts, and differentiable again).
#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/full.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/native_dropout.h>
#include <ATen/ops/native_dropout_backward.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/threshold_backward.h>
#include <c10/core/DeviceGuard.h>
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
#include <utility>

#include "torch_native.h"
#include "torch_node_api.h"

namespace relugrad_python {
namespace {

// Both passes run in chunks of kChunk elements (a multiple of 8: a chunk owns
// whole bytes of both planes), each chunk's steps over memory that stays in
// L1: the bits are packed and unpacked by relugrad's Highway mask kernels
// (one-thread plans), the products are plain loops the compiler vectorizes.
// Only x, dy, the output and the planes cross the memory bus.
constexpr int64_t kChunk = 2048;

// A chunk of scratch for this thread, of kChunk elements of the widest dtype.
void* Scratch() {
  alignas(64) thread_local double scratch[kChunk];
  return scratch;
}

// Runs chunk(begin, end) over [0, n) in chunks of kChunk, split over torch's threads.
template <typename Chunk>
void ForEachChunk(int64_t n, const Chunk& chunk) {
  ForEachUnitPart(n, kChunk, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; c += kChunk) chunk(c, std::min(c + kChunk, end));
  });
}

// dx = gate ? dy * (keep ? s : +0) : +0 over one chunk; dx may be dy itself
// (each element of dy is read before the same element of dx is written).
template <typename T>
void BackwardChunk(const T* dy, const uint8_t* gate, const uint8_t* keep, T s, T* dx, int64_t len,
                   const relugrad_plan* mask_grad) {
  T* noise = static_cast<T*>(Scratch());
  for (int64_t j = 0; j < len; ++j) noise[j] = s;
  RunPlan(mask_grad, len, noise, keep, noise);                    // keep ? s : +0
  for (int64_t j = 0; j < len; ++j) noise[j] = dy[j] * noise[j];  // MulBackward's grad * other
  RunPlan(mask_grad, len, noise, gate, dx);                       // threshold_backward's gate
}

// The forward over one chunk after stock's draw: noise holds
// bernoulli_(1 - p)'s 0/1 values. keep gets the bits of noise != 0 (relugrad's
// forward over the 0/1 values in place leaves them as they are), gate those
// of !(y <= 0) with y = torch.relu(x) in scratch (the torch preset's mask
// forward, -0 and NaN kept), and noise becomes y * (noise * s), stock's
// `noise.div_(1 - p)` (1 / (1 - p) rounded is s, 0 / (1 - p) is +0, as
// noise * s) then `y * noise`.
template <typename T>
void ForwardChunk(const T* x, T s, T* noise, uint8_t* gate, uint8_t* keep, int64_t len,
                  const relugrad_plan* mask_forward) {
  RunForwardPlan(mask_forward, len, noise, noise, keep);
  T* y = static_cast<T*>(Scratch());
  RunForwardPlan(mask_forward, len, x, y, gate);
  for (int64_t j = 0; j < len; ++j) noise[j] = y[j] * (noise[j] * s);
}

// The one pass into dx (dy itself or a new contiguous tensor): dy contiguous, of dx's dtype.
void BackwardPass(const at::Tensor& dy, const at::Tensor& gate, const at::Tensor& keep,
                  double scale, const at::Tensor& dx) {
  const int64_t n = dy.numel();
  const uint8_t* g = gate.const_data_ptr<uint8_t>();
  const uint8_t* k = keep.const_data_ptr<uint8_t>();
  const relugrad_dtype dtype = DtypeOf(dy);
  AT_DISPATCH_FLOATING_TYPES(dy.scalar_type(), "relu_dropout_backward", [&] {
    const scalar_t* in = dy.const_data_ptr<scalar_t>();
    scalar_t* out = dx.mutable_data_ptr<scalar_t>();
    // scale is the kept noise value of this dtype (exact in scalar_t): the cast does not round.
    const scalar_t s = static_cast<scalar_t>(scale);
    ForEachChunk(n, [&](int64_t begin, int64_t end) {
      BackwardChunk<scalar_t>(in + begin, g + begin / 8, k + begin / 8, s, out + begin, end - begin,
                              OneThreadCachedPlan(RELUGRAD_OP_RELU_GRAD_MASK, dtype));
    });
  });
}

// The forward after stock's draw into noise; returns the gate and keep planes.
std::tuple<at::Tensor, at::Tensor> ForwardPass(const at::Tensor& x, const at::Tensor& noise,
                                               double scale) {
  const int64_t n = x.numel();
  const int64_t bytes = (n + 7) / 8;
  at::Tensor gate = EmptyCpu({bytes}, x.options().dtype(at::kByte));
  at::Tensor keep = EmptyCpu({bytes}, x.options().dtype(at::kByte));
  uint8_t* g = gate.mutable_data_ptr<uint8_t>();
  uint8_t* k = keep.mutable_data_ptr<uint8_t>();
  const relugrad_dtype dtype = DtypeOf(x);
  AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "relu_dropout_forward", [&] {
    const scalar_t* in = x.const_data_ptr<scalar_t>();
    scalar_t* out = noise.mutable_data_ptr<scalar_t>();
    const scalar_t s = static_cast<scalar_t>(scale);  // exact, as above
    ForEachChunk(n, [&](int64_t begin, int64_t end) {
      ForwardChunk<scalar_t>(in + begin, s, out + begin, g + begin / 8, k + begin / 8, end - begin,
                             OneThreadCachedPlan(RELUGRAD_OP_RELU_FORWARD_MASK, dtype));
    });
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
      // y was x's C order (the pass serves contiguous x only).
      return {WithZeroDerivativeToInput(ComposedGrad(grad, g, k, scale), next_edge(0),
                                        c10::contiguous_strides(grad.sizes()))};
    }
    CheckBitPlane(g, grad.numel(), "ReLU gate");
    CheckBitPlane(k, grad.numel(), "dropout keep mask");
    const at::Tensor dx =
        WritableInPlace(grad, grad.strides()) ? grad : EmptyCpu(grad.sizes(), grad.options());
    BackwardPass(grad, g, k, scale, dx);
    return {dx};
  }
};

// ---- CUDA -------------------------------------------------------------------

// The settings of the planes' kernels on x's device: the torch preset (the gate is torch.relu's).
Settings TorchOn(const at::Device& device) {
  return Settings{"torch", RELUGRAD_PRESET_TORCH, 0, device};
}

// Stock's two ops over the planes unpacked into y's layout: keep as native_dropout's bool mask,
// the gate as 1/+0 values that threshold_backward gates on exactly as on y (y <= 0 is a closed
// gate, and so is +0; 1 is open). Through the dispatcher, so under create_graph they are
// differentiable as stock's are, and any gradient layout gets stock's result layout.
at::Tensor StockOpsOverPlanes(const at::Tensor& grad, const at::Tensor& gate,
                              const at::Tensor& keep, double scale, at::IntArrayRef y_strides,
                              const at::Device& device) {
  at::Tensor gate_values;
  at::Tensor keep_mask;
  {
    at::NoGradGuard no_grad;  // constants of the backward: no history
    const std::vector<int64_t> strides(y_strides.begin(), y_strides.end());
    const MaskLayout layout{strides, strides, true};
    // A new tensor of ones per call: GradFromMask may write its result over a gradient nothing
    // else holds.
    const auto ones = [&] {
      return at::empty_strided(grad.sizes(), y_strides, grad.options()).fill_(1);
    };
    gate_values = GradFromMask(ones(), gate, TorchOn(device), layout);
    keep_mask = GradFromMask(ones(), keep, TorchOn(device), layout).ne(0);
  }
  return at::threshold_backward(at::native_dropout_backward(grad, keep_mask, scale), gate_values,
                                0);
}

// The strides of stock's dx for this gradient: native_dropout_backward allocates its result as
// empty_like(grad, grad.suggest_memory_format()), and threshold_backward(that, y, 0) gives
// TensorIterator's layout of (y, that). Read from meta tensors (sizes and strides only).
c10::DimVector StockDxStrides(const at::Tensor& grad, at::IntArrayRef y_strides) {
  const at::TensorOptions meta = grad.options().device(at::kMeta);
  const at::Tensor g1 = at::empty(grad.sizes(), meta.memory_format(grad.suggest_memory_format()));
  const at::Tensor y = at::empty_strided(grad.sizes(), y_strides, meta);
  c10::DimVector strides;
  GradOutputStrides(g1, y, &strides);
  return strides;
}

struct ReluDropoutCudaBackward : public torch::autograd::Node {
  torch::autograd::SavedVariable gate;
  torch::autograd::SavedVariable keep;
  double scale = 0;
  c10::DimVector y_strides;  // y's (and the planes' storage order)
  at::Device device{at::kCUDA};

  std::string name() const override { return "relugrad::ReluDropoutBackward"; }

  void release_variables() override {
    std::lock_guard<std::mutex> lock(mutex_);
    gate.reset_data();
    keep.reset_data();
  }

  torch::autograd::variable_list apply(torch::autograd::variable_list&& grads) override {
    std::lock_guard<std::mutex> lock(mutex_);
    c10::OptionalDeviceGuard device_guard;
    device_guard.reset_device(device);
    const at::Tensor g = gate.unpack(getptr());
    const at::Tensor k = keep.unpack(getptr());
    // Moved out, not copied: dx may be written over a gradient only this node holds.
    at::Tensor grad = std::move(grads[0]);
    if (!grad.defined()) return {at::Tensor()};
    if (grad.is_neg()) grad = grad.resolve_neg();
    if (at::GradMode::is_enabled() || !ReadableOn(grad, device) ||
        grad.strides() != at::IntArrayRef(y_strides)) {
      return {WithZeroDerivativeToInput(StockOpsOverPlanes(grad, g, k, scale, y_strides, device),
                                        next_edge(0), y_strides)};
    }
    CheckBitPlane(g, grad.numel(), "ReLU gate", device);
    CheckBitPlane(k, grad.numel(), "dropout keep mask", device);
    const c10::DimVector stock = StockDxStrides(grad, y_strides);
    if (stock != y_strides) {  // stock's result has another layout: its ops give it
      return {StockOpsOverPlanes(grad, g, k, scale, y_strides, device)};
    }
    // grad has y's strides, dense (it equals y's): one pass over the planes' storage order.
    const at::Tensor dx = WritableInPlace(grad, y_strides) ? grad : EmptyStrided(grad, y_strides);
    ReluDropoutGrad(grad, g, k, scale, dx);
    return {dx};
  }
};

at::Tensor NativeReluDropoutCuda(const at::Tensor& x, double p) {
  TORCH_CHECK(x.is_cuda() && x.layout() == at::kStrided && CudaServed(),
              "relu_dropout: a CUDA x needs relugrad's CUDA backend");
  DtypeOf(x);  // the clear error for other dtypes
  c10::OptionalDeviceGuard device_guard;
  device_guard.reset_device(x.device());
  // Stock's scale for the backward (derivatives.yaml: native_dropout_backward(grad, mask,
  // 1.0 / (1.0 - p))), converted to the compute type by the kernel as stock's masked_scale does.
  const double scale = 1.0 / (1.0 - p);
  at::Tensor out;
  at::Tensor gate;
  at::Tensor keep;
  at::Tensor y;
  {
    at::AutoDispatchBelowADInplaceOrView guard;  // the passes and the draw record no history
    at::Tensor src = x;  // what the mask forward reads, dense; y gets torch.relu(x)'s layout
    if (!FastLayout(x, x, &y)) {
      src = EmptyStrided(x, TiStrides(x.sizes(), {x.strides()}));
      src.copy_(x);
      y = src;
    }
    const int64_t bytes = (src.numel() + 7) / 8;
    gate = at::empty({bytes}, x.options().dtype(at::kByte));
    RunForwardMask(TorchOn(x.device()), src, y, gate.mutable_data_ptr<uint8_t>());
    // Stock's dropout of y itself (F.dropout on CUDA is native_dropout): its draw and output.
    // The bool mask has y's strides (empty_like of a dense y), so its storage order is the gate's.
    at::Tensor keep_mask;
    std::tie(out, keep_mask) = at::native_dropout(y, p, /*train=*/true);
    keep = at::empty({bytes}, x.options().dtype(at::kByte));
    PackBits(keep_mask, keep);
  }
  if (torch::autograd::compute_requires_grad(x)) {
    auto node = MakeNode<ReluDropoutCudaBackward>();
    node->set_next_edges(torch::autograd::collect_next_edges(x));
    node->scale = scale;
    node->y_strides = c10::DimVector(y.strides());
    node->device = x.device();
    SetHistory(out, node, /*inplace=*/false);
    node->gate = torch::autograd::SavedVariable(gate, /*is_output=*/false);
    node->keep = torch::autograd::SavedVariable(keep, /*is_output=*/false);
    FireCreationHooks(node);
  }
  return out;
}

}  // namespace

at::Tensor NativeReluDropout(const at::Tensor& x, double p) {
  TORCH_CHECK(p > 0 && p < 1, "relu_dropout: p must be in (0, 1), got ", p);
  if (x.is_cuda()) return NativeReluDropoutCuda(x, p);
  TORCH_CHECK(
      x.device().is_cpu() && x.layout() == at::kStrided && x.is_contiguous() &&
          (x.scalar_type() == at::kFloat || x.scalar_type() == at::kDouble),
      "relu_dropout: x must be a contiguous float32 or float64 CPU tensor, or a CUDA tensor");
  // The kept noise value, by stock's own div_ of a tensor by the Python scalar 1 - p.
  const double scale = at::ones({}, x.options()).div_(1 - p).item<double>();
  at::Tensor out;
  at::Tensor gate;
  at::Tensor keep;
  {
    at::AutoDispatchBelowADInplaceOrView guard;  // the draw and the pass record no history
    // Stock's draw (at::dropout's CPU path): same shape, dtype and layout, same generator.
    out = at::empty_like(x).bernoulli_(1 - p);
    std::tie(gate, keep) = ForwardPass(x, out, scale);
  }
  if (torch::autograd::compute_requires_grad(x)) {
    auto node = MakeNode<ReluDropoutBackward>();
    node->set_next_edges(torch::autograd::collect_next_edges(x));
    node->scale = scale;
    SetHistory(out, node, /*inplace=*/false);
    node->gate = torch::autograd::SavedVariable(gate, /*is_output=*/false);
    node->keep = torch::autograd::SavedVariable(keep, /*is_output=*/false);
    FireCreationHooks(node);
  }
  return out;
}

}  // namespace relugrad_python
