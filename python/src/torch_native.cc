// relugrad/_relugrad_torch.so: relugrad.torch.ReLU's eager forward and
// backward in C++: NativeRelu (torch_native.h), called from Python through
// the module function of torch_python_module.cc; its backward is an autograd
// Node of this file (see Autograd nodes). The binding to the library, the
// plans and the layouts it uses are torch_binding.cc, torch_plans.cc and
// torch_layouts.cc.
//
// Why C++: with torch.autograd.Function in Python, a small ReLU's forward +
// backward cost far more than nn.ReLU's, and most of it was Python:
// Function.apply's context object, then the autograd engine calling back into
// the interpreter for backward (docs/design.md, "Torch-native ReLU").
// Here forward is one C++ call and backward never enters Python.
//
// Scope: eager, plain, strided CPU tensors of relugrad's four float dtypes, and the same on a
// CUDA device where the library has the CUDA backend (PlainCpu and PlainCuda in
// torch_python_module.cc decide); relugrad/torch/modules.py sends everything else elsewhere
// (custom ops, torch's own ops). A CUDA call is the CPU call's code with two differences, both in
// Plan (torch_plans.cc): one launch over the whole tensor on torch's current stream of its device
// (no split over host threads), and plans keyed by that stream; memory comes from torch's allocator
// for the device (the caching allocator on CUDA), so nothing here synchronises. Results have the
// layouts of PyTorch's own ops (torch_layouts.cc, "Layouts"). Under create_graph the backward calls
// relugrad's torch.library ops, whose autograd formulas make it differentiable again. The library
// is the _relugrad module's, reached through c_api_table.h, not a second copy.
#include <ATen/Parallel.h>
#include <ATen/core/Tensor.h>
#include <ATen/EmptyTensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_strided.h>
#include <ATen/ops/relu.h>
#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>
#include <c10/core/DeviceGuard.h>
#include <c10/core/Stream.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/core/MemoryFormat.h>
#include <c10/util/strides.h>
#include <torch/csrc/autograd/VariableTypeUtils.h>
#include <torch/csrc/autograd/anomaly_mode.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/functions/utils.h>
#include <torch/csrc/autograd/saved_variable.h>
#include <torch/csrc/autograd/variable.h>

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "torch_native.h"
#include "torch_node_api.h"

namespace relugrad_python {
namespace {

using torch::autograd::variable_list;

at::Tensor GradFromGate(const at::Tensor& grad, const at::Tensor& y, const Settings& settings) {
  if (at::GradMode::is_enabled()) {  // create_graph=True: keep it differentiable
    return CallOp("relugrad::relu_grad", {grad, y, settings.semantics, 0.0, 0.0, settings.threads});
  }
  TORCH_CHECK(grad.scalar_type() == y.scalar_type() && grad.sizes() == y.sizes(),
              "relugrad: the incoming gradient does not match the saved output");
  if (!ReadableOn(grad, settings.device) || !ReadableOn(y, settings.device)) {
    // Not memory relugrad's kernels can read: the custom op decides (its fallbacks).
    return CallOp("relugrad::relu_grad", {grad, y, settings.semantics, 0.0, 0.0, settings.threads});
  }
  c10::DimVector strides;
  const bool flat = GradOutputStrides(grad, y, &strides);
  if (!flat && settings.preset == RELUGRAD_PRESET_TORCH &&
      !(grad.is_non_overlapping_and_dense() && y.is_non_overlapping_and_dense())) {
    // A broadcast (expanded) or overlapping operand, which the kernels could read only after
    // InOrder copied it whole (slower than stock: docs/design.md, "Torch-native ReLU"): the torch
    // preset's backward is threshold_backward itself, which reads it where it is.
    return at::threshold_backward(grad, y, 0);
  }
  const at::Tensor dx = flat && WritableInPlace(grad, strides) ? grad : EmptyStrided(grad, strides);
  const at::Tensor dy = flat ? grad : InOrder(grad, dx.strides());
  const at::Tensor s = flat ? y : InOrder(y, dx.strides());
  const relugrad_dtype dtype = DtypeOf(dy);
  const int64_t size = static_cast<int64_t>(dy.element_size());
  const auto* dy_p = static_cast<const char*>(dy.const_data_ptr());
  const auto* s_p = static_cast<const char*>(s.const_data_ptr());
  auto* dx_p = static_cast<char*>(dx.mutable_data_ptr());
  const CallPlan plan = Plan(settings, RELUGRAD_OP_RELU_GRAD, dx.numel(), dtype, dx_p);
  ForEachPart(plan, dx.numel(), [&](int64_t begin, int64_t end) {
    const int64_t at = begin * size;
    Check(Api().plan_run(plan.plan, end - begin, dy_p + at, s_p + at, dx_p + at));
  });
  return dx;
}

}  // namespace

at::Tensor GradFromMask(const at::Tensor& grad, const at::Tensor& mask, const Settings& settings,
                        const MaskLayout& layout) {
  if (at::GradMode::is_enabled() || !ReadableOn(grad, settings.device) ||
      !ReadableOn(mask, settings.device)) {
    c10::List<int64_t> order;
    std::vector<int64_t> dims(layout.mask_strides.size());
    for (size_t d = 0; d < dims.size(); ++d) dims[d] = static_cast<int64_t>(d);
    std::stable_sort(dims.begin(), dims.end(), [&](int64_t a, int64_t b) {
      return layout.mask_strides[a] > layout.mask_strides[b];
    });
    for (int64_t d : dims) order.push_back(d);
    return CallOp("relugrad::relu_grad_mask",
                  {grad, mask, settings.semantics, settings.threads, order});
  }
  CheckBitPlane(mask, grad.numel(), "mask", settings.device);
  at::Tensor dx;
  at::Tensor dy;
  // Equal sizes and the strides of a dense layout: grad is dense too.
  if (layout.dense && grad.strides() == at::IntArrayRef(layout.mask_strides)) {
    dx =
        WritableInPlace(grad, layout.mask_strides) ? grad : EmptyStrided(grad, layout.mask_strides);
    dy = grad;
  } else {
    // a meta tensor: only its sizes and strides are read
    const at::Tensor result =
        at::empty_strided(grad.sizes(), layout.result_strides, grad.options().device(at::kMeta));
    bool flat = false;
    dx = EmptyGradOutput(grad, result, &flat);
    dy = InOrder(grad, layout.mask_strides);
  }
  // dx in the mask's order: dx itself, or a temporary copied into dx after.
  const bool direct = SameOrder(dx, layout.mask_strides);
  at::Tensor target =
      direct ? dx : (dy.is_same(grad) ? EmptyStrided(grad, layout.mask_strides) : dy);
  const relugrad_dtype dtype = DtypeOf(dy);
  const int64_t size = static_cast<int64_t>(dy.element_size());
  const auto* dy_p = static_cast<const char*>(dy.const_data_ptr());
  const auto* mask_p = static_cast<const uint8_t*>(mask.const_data_ptr());
  auto* dx_p = static_cast<char*>(target.mutable_data_ptr());
  const CallPlan plan = Plan(settings, RELUGRAD_OP_RELU_GRAD_MASK, dy.numel(), dtype, dx_p);
  ForEachPart(plan, dy.numel(), [&](int64_t begin, int64_t end) {
    Check(Api().plan_run(plan.plan, end - begin, dy_p + begin * size, mask_p + begin / 8,
                         dx_p + begin * size));
  });
  if (!direct) dx.copy_(target);
  return dx;
}

namespace {

// The node WithZeroDerivativeToInput puts on dx: the gradient to dx's own history, zeros to x.
// Stock sends zeros_like(grad) back through y's ReluBackward0, whose threshold_backward(zeros, y,
// 0) makes them: +0 in that op's layout (y's strides count), and under create_graph with a history
// that reaches x again, so a derivative of any order through it is zeros. These zeros are made
// the same way: that layout, and under create_graph this node again on them.
struct ZeroDerivativeToInputBackward : public torch::autograd::Node {
  c10::DimVector result_strides;  // y's, as nn.ReLU would have saved it

  std::string name() const override { return "relugrad::BitsGradBackward"; }

  variable_list apply(variable_list&& grads) override {
    at::Tensor grad = std::move(grads[0]);
    if (!grad.defined()) return {at::Tensor(), at::Tensor()};
    // a meta tensor: only its sizes and strides are read
    const at::Tensor result =
        at::empty_strided(grad.sizes(), result_strides, grad.options().device(at::kMeta));
    bool flat = false;
    at::Tensor zeros = EmptyGradOutput(grad, result, &flat);
    zeros.zero_();
    return {std::move(grad), WithZeroDerivativeToInput(zeros, next_edge(1), result_strides)};
  }
};

}  // namespace

at::Tensor WithZeroDerivativeToInput(const at::Tensor& dx, const torch::autograd::Edge& input,
                                     at::IntArrayRef result_strides) {
  if (!at::GradMode::is_enabled() || !input.is_valid()) return dx;
  auto node = MakeNode<ZeroDerivativeToInputBackward>();
  node->result_strides = c10::DimVector(result_strides);
  node->set_next_edges({torch::autograd::impl::gradient_edge(dx), input});
  at::Tensor out = dx.detach();  // the same memory; its history is the node's alone
  torch::autograd::set_history(out, node);
  FireCreationHooks(node);
  return out;
}

namespace {

// ---- Autograd nodes ----------------------------------------------------------
// ReLU's backward is a torch::autograd::Node written here, the way PyTorch's
// generated ReluBackward0 is, not a torch::autograd::Function: a Function's
// bookkeeping (its context's saved_data map of IValues, wrapped outputs, input
// and output info, a demangled type name per profiled call) cost about as much
// as the whole n = 16 ReLU (docs/design.md, "Torch-native ReLU").
// A node keeps what backward reads, as members: the saved tensor (a
// SavedVariable, so saved-tensor hooks, version checks and "backward through
// the graph a second time" behave as for ReluBackward0) and the settings.

// A backward node that keeps one saved tensor and the settings; Derived
// supplies Name() and Grad(grad, saved). Both ReLU nodes share this: the
// lock, the unpack (torch's error when the graph was already freed) and the
// undefined incoming gradient are handled once.
template <typename Derived>
struct SavedTensorNode : public torch::autograd::Node {
  torch::autograd::SavedVariable saved;
  Settings settings;

  // A node whose gradient flows to x's history.
  static NodePtr<Derived> For(const at::Tensor& x, Settings settings) {
    auto node = MakeNode<Derived>();
    node->set_next_edges(torch::autograd::collect_next_edges(x));
    node->settings = std::move(settings);
    return node;
  }

  std::string name() const override { return Derived::Name(); }

  void release_variables() override {
    std::lock_guard<std::mutex> lock(mutex_);
    saved.reset_data();
  }

  variable_list apply(variable_list&& grads) override {
    std::lock_guard<std::mutex> lock(mutex_);
    // The engine runs a CUDA node on its device's thread with that device current; the guard
    // keeps the launch there whoever calls apply.
    c10::OptionalDeviceGuard device_guard;
    if (settings.device.is_cuda()) device_guard.reset_device(settings.device);
    const at::Tensor s = saved.unpack(getptr());
    static_cast<const Derived*>(this)->CheckSaved();  // as unpack checks, before any gradient
    // Moved out, not copied: the backward may write over a gradient only it holds.
    at::Tensor grad = std::move(grads[0]);
    if (!grad.defined()) return {at::Tensor()};
    // The kernels read raw memory: a lazily negated gradient (torch._neg_view) is negated first.
    if (grad.is_neg()) grad = grad.resolve_neg();
    return {static_cast<const Derived*>(this)->Grad(grad, s)};
  }
};

// Backward of y = relu(x): the gate reads the saved y (x's values after relu_ in place).
struct ReluBackward : public SavedTensorNode<ReluBackward> {
  static const char* Name() { return "relugrad::ReluBackward"; }
  void CheckSaved() const {}  // y's SavedVariable checks its version itself
  at::Tensor Grad(const at::Tensor& grad, const at::Tensor& y) const {
    return GradFromGate(grad, y, settings);
  }
};

// Backward from the saved 1-bit mask the forward wrote (y itself is not kept).
// y's version is checked as stock's SavedVariable checks the y it keeps: the
// mask would give the right gradient after y changed in place, but stock
// raises there, and so does this node (the same message, this node's name).
struct ReluMaskBackward : public SavedTensorNode<ReluMaskBackward> {
  MaskLayout layout;
  // Shared with y and its views; disabled where the mask was saved through saved-tensor hooks
  // (autograd checks no version of a hooked save, so neither does this node there).
  c10::VariableVersion y_version{c10::VariableVersion::DISABLED};
  uint32_t saved_version = 0;
  c10::DimVector y_sizes;  // for the error message; small (no allocation up to 5 dims)
  at::TensorOptions y_options;

  static const char* Name() { return "relugrad::ReluMaskBackward"; }
  at::Tensor Grad(const at::Tensor& grad, const at::Tensor& mask) const {
    return WithZeroDerivativeToInput(GradFromMask(grad, mask, settings, layout), next_edge(0),
                                     layout.result_strides);
  }

  void CheckSaved() const {
    if (!y_version.enabled()) return;
    const uint32_t current = y_version.current_version();
    if (current == saved_version) return;
    std::ostringstream message;
    message << "one of the variables needed for gradient computation has been modified by an "
               "inplace operation: ["
            << at::empty({0}, y_options).toString() << " " << at::IntArrayRef(y_sizes)
            << "], which is output 0 of " << Name() << ", is at version " << current
            << "; expected version " << saved_version << " instead.";
    if (!torch::autograd::AnomalyMode::is_enabled()) {
      message << " Hint: enable anomaly detection to find the operation that failed to compute "
                 "its gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).";
    } else {
      message << " Hint: the backtrace further above shows the operation that failed to compute "
                 "its gradient. The variable in question was changed in there or anywhere later. "
                 "Good luck!";
    }
    TORCH_CHECK(false, message.str());
  }
};

// Attaches `node` as the history of `result`: a new output's (set_history),
// or x's after an in-place write (rebase_history: through a view, the
// CopySlices node that wraps it). The node's saved state must be set by
// `save` before the creation hooks see it. Returns nothing: result now
// carries the history.
template <typename NodeT, typename Save>
void Attach(const NodePtr<NodeT>& node, const at::Tensor& result, bool inplace, const Save& save) {
  const NodePtr<torch::autograd::Node> attached = SetHistory(result, node, inplace);
  save();
  FireCreationHooks(attached);
}

// y = relu(x) by torch's own relu (out of place or in place); backward gates on y.
at::Tensor ReluGate(at::Tensor x, Settings settings, bool inplace) {
  const bool needs_grad = torch::autograd::compute_requires_grad(x);
  if (inplace) torch::autograd::check_inplace(x, needs_grad);
  NodePtr<ReluBackward> node;
  if (needs_grad) node = ReluBackward::For(x, std::move(settings));
  at::Tensor y;
  if (inplace) {
    at::AutoDispatchBelowAutograd guard;  // ADInplaceOrView still bumps x's version
    y = at::relu_(x);
  } else {
    at::AutoDispatchBelowADInplaceOrView guard;
    y = at::relu(x);
  }
  if (node) {
    Attach(node, y, inplace, [&] {
      node->saved = torch::autograd::SavedVariable(y, /*is_output=*/true, inplace && y.is_view());
    });
  }
  return y;
}

// relugrad's forward writes y and the 1-bit mask; only the mask is kept.
// y has torch.relu(x)'s layout; the kernel runs over x's storage when x is
// dense (y then shares x's storage order), else over a copy of x in y's layout.
at::Tensor ReluMask(at::Tensor x, Settings settings, bool inplace) {
  const bool needs_grad = torch::autograd::compute_requires_grad(x);
  if (!needs_grad && settings.preset == RELUGRAD_PRESET_TORCH &&
      (x.is_cuda() || x.scalar_type() == at::kFloat || x.scalar_type() == at::kDouble)) {
    // Nothing records a backward, and the torch preset's y is torch.relu's own (on the CPU for
    // 32 and 64 bits: -0 and NaN payloads kept; on CUDA every dtype): torch's op, no mask.
    return ReluGate(std::move(x), std::move(settings), inplace);
  }
  if (inplace) torch::autograd::check_inplace(x, needs_grad);
  // The node takes x's history before anything writes x, as ReluGate's and
  // torch's own in-place ops do: a view's history is read at its current
  // version, so after the version bump below rebase_history renews it
  // (through the base's CopySlices) instead of keeping the view's old node.
  NodePtr<ReluMaskBackward> node;
  if (needs_grad) node = ReluMaskBackward::For(x, settings);
  at::Tensor y;  // what the kernel writes: y's layout, maybe src itself
  at::Tensor mask;
  std::vector<int64_t> mask_strides;
  {
    at::AutoDispatchBelowADInplaceOrView guard;  // the copies below record no history
    at::Tensor src = x;                          // what the kernel reads, dense
    if (inplace && x.is_non_overlapping_and_dense()) {
      y = x;
    } else if (!FastLayout(x, x, &y)) {
      // TensorIterator's layout for a non-dense x, from its meta kernel.
      src = EmptyStrided(x, TiStrides(x.sizes(), {x.strides()}));
      src.copy_(x);
      y = src;
    }
    const int64_t n = src.numel();
    const relugrad_dtype dtype = DtypeOf(src);
    const int64_t size = static_cast<int64_t>(src.element_size());
    const auto* x_p = static_cast<const char*>(src.const_data_ptr());
    auto* y_p = static_cast<char*>(y.mutable_data_ptr());
    const CallPlan plan = Plan(settings, RELUGRAD_OP_RELU_FORWARD_MASK, n, dtype, y_p);
    if (needs_grad || x.is_cuda()) {
      // On CUDA a mask only y is wanted from (another preset's y) is a temporary of the caching
      // allocator, returned to it, still in the stream's order, when this scope ends.
      mask = x.is_cuda() ? at::empty({(n + 7) / 8}, src.options().dtype(at::kByte))
                         : EmptyCpu({(n + 7) / 8}, src.options().dtype(at::kByte));
      auto* mask_p = static_cast<uint8_t*>(mask.mutable_data_ptr());
      ForEachPart(plan, n, [&](int64_t begin, int64_t end) {
        Check(Api().plan_run_forward(plan.plan, end - begin, x_p + begin * size, y_p + begin * size,
                                     mask_p + begin / 8));
      });
    } else {
      // Only y is wanted on the CPU (the preset's y, which torch's ops do not give): the kernel's
      // bits go to a scratch on the stack, reused chunk by chunk; no mask tensor is made or kept.
      constexpr int64_t kScratchBytes = 2048;
      ForEachPart(plan, n, [&](int64_t begin, int64_t end) {
        alignas(64) uint8_t scratch[kScratchBytes];
        for (int64_t at = begin; at < end; at += kScratchBytes * 8) {
          const int64_t count = std::min<int64_t>(end - at, kScratchBytes * 8);
          Check(
              Api().plan_run_forward(plan.plan, count, x_p + at * size, y_p + at * size, scratch));
        }
      });
    }
    mask_strides = y.strides().vec();
    if (inplace && !y.is_same(x)) x.copy_(y);  // a non-dense x gets y's values in its own layout
  }
  if (inplace) {
    torch::autograd::increment_version(x);  // the kernel wrote x's memory directly
    y = x;
  }
  if (node) {
    node->layout = {
        mask_strides, y.strides().vec(),
        y.is_non_overlapping_and_dense() && y.strides() == at::IntArrayRef(mask_strides)};
    Attach(node, y, inplace, [&] {
      node->saved = torch::autograd::SavedVariable(mask, /*is_output=*/false);
      if (!node->saved.has_hooks()) {
        node->y_version = torch::autograd::impl::version_counter(y);
        node->saved_version = node->y_version.current_version();
      }
      node->y_sizes = c10::DimVector(y.sizes());
      node->y_options = y.options();
    });
  }
  return y;
}

}  // namespace

at::Tensor NativeRelu(const at::Tensor& x, c10::string_view semantics, int64_t threads, bool mask,
                      bool inplace) {
  TORCH_CHECK(x.device().is_cpu() || (x.is_cuda() && CudaServed()),
              "relugrad_native: CPU tensors, or CUDA tensors where relugrad was built with its "
              "CUDA backend; got one on ",
              x.device());
  DtypeOf(x);  // the clear error for other dtypes, before anything is written
  TORCH_CHECK(threads >= 0,
              "relugrad: threads must be 0 (torch's threads) or a positive count, got ", threads);
  Settings settings{std::string(semantics.data(), semantics.size()), RELUGRAD_PRESET_TORCH, threads,
                    x.device()};
  Check(Api().preset_from_name(settings.semantics.c_str(), &settings.preset));
  c10::OptionalDeviceGuard device_guard;  // CUDA: launches and allocations on x's device
  if (x.is_cuda()) device_guard.reset_device(x.device());
  return mask ? ReluMask(x, std::move(settings), inplace)
              : ReluGate(x, std::move(settings), inplace);
}

}  // namespace relugrad_python
