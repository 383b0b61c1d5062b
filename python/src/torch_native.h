// The eager ReLU of relugrad.torch (torch_native.cc), for its Python entry
// (torch_python_module.cc), and the backward pieces it shares with the fused
// ReLU + Dropout node (torch_dropout.cc).
#pragma once

#include <ATen/Parallel.h>
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <c10/core/DispatchKeySet.h>
#include <c10/util/SmallVector.h>
#include <c10/util/string_view.h>
#include <torch/csrc/autograd/edge.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "relugrad/relugrad.h"

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

// Whether the bound library has the CUDA backend (relugrad_backend_available): NativeRelu serves
// CUDA tensors only then. False before the library is bound.
bool CudaServed();

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

// ATen's grain for elementwise ops (at::internal::GRAIN_SIZE, in the heavy
// ATen/TensorIterator.h): relugrad's calls split exactly when torch's own
// threshold_backward would. Torch's number, not relugrad's.
inline constexpr int64_t kTorchGrain = 32768;

// Calls run(begin, end) over [0, n) split over torch's threads
// (at::parallel_for at kTorchGrain), in parts that start at multiples of
// unit elements.
template <typename Run>
void ForEachUnitPart(int64_t n, int64_t unit, const Run& run) {
  at::parallel_for(0, (n + unit - 1) / unit, std::max<int64_t>(1, kTorchGrain / unit),
                   [&](int64_t begin, int64_t end) { run(begin * unit, std::min(end * unit, n)); });
}

// relugrad's dtype of t (a c10::Error for any other).
relugrad_dtype DtypeOf(const at::Tensor& t);

// An uninitialised contiguous CPU tensor, which its caller writes whole: allocated as
// TensorIterator allocates a structured op's output (at::detail::empty_cpu), without the
// dispatcher's round trip and profiler event of at::empty. options: a CPU device.
at::Tensor EmptyCpu(at::IntArrayRef sizes, const at::TensorOptions& options);

// What a backward node keeps besides its saved tensors: the preset, resolved
// once by the forward, its name for the custom ops of create_graph, and the device.
struct Settings {
  std::string semantics;
  relugrad_preset preset;
  int64_t threads;
  // Where the forward ran, and so where the kernels of the backward run: the CPU, or a CUDA
  // device (on torch's current stream of it when the backward runs).
  at::Device device{at::kCPU};
};

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

// ---- Layouts (TensorIterator's rules; torch_native.cc, "Layouts") --------

// The strides TensorIterator gives a new output of `sizes` from inputs of those sizes with
// these strides (its general rule).
std::vector<int64_t> TiStrides(at::IntArrayRef sizes,
                               std::initializer_list<at::IntArrayRef> operands);
// An uninitialised tensor of `like`'s sizes, dtype and device with the given strides.
at::Tensor EmptyStrided(const at::Tensor& like, at::IntArrayRef strides);
// True when TensorIterator's fast setup serves (dy, s); *out is then its output, uninitialised.
bool FastLayout(const at::Tensor& dy, const at::Tensor& s, at::Tensor* out);
// The strides of threshold_backward(dy, s)'s output; true when dy and s share its storage order.
bool GradOutputStrides(const at::Tensor& dy, const at::Tensor& s, c10::DimVector* strides);
// Dense a and strides b of the same sizes address their elements in the same storage order.
bool SameOrder(const at::Tensor& a, at::IntArrayRef b);
// t itself when it is dense in the storage order `strides`, else a copy in that layout.
at::Tensor InOrder(const at::Tensor& t, at::IntArrayRef strides);

// ---- Kernels on the tensors' device ------------------------------------------

// torch's current stream of a CUDA device, as relugrad_options.stream takes it.
void* CurrentCudaStream(const at::Device& device);

// y and mask = the mask forward of settings' preset over src (dense, y in its storage order,
// y may be src): one launch on CUDA, split over torch's threads on the CPU (settings.device).
void RunForwardMask(const Settings& settings, const at::Tensor& src, const at::Tensor& y,
                    uint8_t* mask);

// relugrad_pack_bits over bytes' storage (contiguous uint8/bool) into bits, on bytes' device.
void PackBits(const at::Tensor& bytes, const at::Tensor& bits);

// relugrad_relu_dropout_grad over dy's storage into dx's (both dense in the planes' order), on
// dy's device; dx may be dy.
void ReluDropoutGrad(const at::Tensor& dy, const at::Tensor& gate, const at::Tensor& keep,
                     double scale, const at::Tensor& dx);

// This thread's plan (created on first use, kept for the thread's life) of a
// one-thread call of op with the torch preset and cached stores: the pieces
// of a fused pass, each small enough to stay in cache. Its mask forward
// writes torch.relu's y (keep_negative_zero).
const relugrad_plan* OneThreadCachedPlan(relugrad_plan_op op, relugrad_dtype dtype);
// relugrad_plan_run / relugrad_plan_run_forward, a c10::Error on failure.
void RunPlan(const relugrad_plan* plan, int64_t n, const void* dy, const void* s, void* dx);
void RunForwardPlan(const relugrad_plan* plan, int64_t n, const void* x, void* y, uint8_t* mask);

// True when the backward may write dx over the incoming gradient: nothing but
// this call holds the tensor or its storage, the storage is torch's allocator's
// for grad's device (the CPU allocator, CUDA's caching allocator), grad covers
// exactly that storage and already has dx_strides.
bool WritableInPlace(const at::Tensor& grad, at::IntArrayRef dx_strides);

// The dispatch keys of a plain CPU tensor: dense CPU memory, its autograd and
// autocast keys. Any other key is a wrapper or a mode the dispatcher must
// route (torch.func's grad and vmap wrappers, functionalization, Python
// subclasses, zero tensors, conjugate and negative views, sparse, nested, meta).
inline const c10::DispatchKeySet kPlainCpuKeys({c10::DispatchKey::CPU,
                                                c10::DispatchKey::ADInplaceOrView,
                                                c10::DispatchKey::AutogradCPU,
                                                c10::DispatchKey::AutocastCPU});
// The same for a plain CUDA tensor.
inline const c10::DispatchKeySet kPlainCudaKeys({c10::DispatchKey::CUDA,
                                                 c10::DispatchKey::ADInplaceOrView,
                                                 c10::DispatchKey::AutogradCUDA,
                                                 c10::DispatchKey::AutocastCUDA});

// Memory the kernels of `device` can read: a defined, plain (kPlainCpuKeys or
// kPlainCudaKeys) strided tensor on that device (a CUDA tensor: that device
// index). A gradient or an unpacked saved tensor may be anything a hook or a
// transform made (a subclass, the BatchedTensor of is_grads_batched, a copy
// on another device): those take the custom ops or torch's ops, which the
// dispatcher routes.
bool ReadableOn(const at::Tensor& t, const at::Device& device);
inline bool ReadableOnCpu(const at::Tensor& t) { return ReadableOn(t, at::Device(at::kCPU)); }

// A saved bit plane as a backward unpacks it (a saved-tensor hook may return
// anything): a plain contiguous uint8 tensor on `device` of at least ceil(n/8)
// bytes, the bytes the kernels read for n elements; else a c10::Error naming
// `what`.
void CheckBitPlane(const at::Tensor& bits, int64_t n, const char* what, const at::Device& device);
inline void CheckBitPlane(const at::Tensor& bits, int64_t n, const char* what) {
  CheckBitPlane(bits, n, what, at::Device(at::kCPU));
}

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
