// The tensors relugrad.torch's kernels take and give: every result has the
// layout PyTorch's own op gives it (TensorIterator's rules, mirrored), and
// the kernels read or write only memory they may (plain strided tensors of
// the device; a gradient only this call holds). torch_layouts.cc.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <c10/core/DispatchKeySet.h>
#include <c10/util/SmallVector.h>

#include <cstdint>
#include <initializer_list>
#include <vector>

#include "ti_strides.h"

namespace relugrad_python {

// An uninitialised contiguous CPU tensor, which its caller writes whole: allocated as
// TensorIterator allocates a structured op's output (at::detail::empty_cpu), without the
// dispatcher's round trip and profiler event of at::empty. options: a CPU device.
at::Tensor EmptyCpu(at::IntArrayRef sizes, const at::TensorOptions& options);

// The strides TensorIterator gives a new output of `sizes` from inputs of those sizes with
// these strides (its general rule: TensorIteratorStrides, ti_strides.h).
inline std::vector<int64_t> TiStrides(at::IntArrayRef sizes,
                                      std::initializer_list<at::IntArrayRef> operands) {
  return TensorIteratorStrides(sizes, operands);
}
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
// threshold_backward(dy, s)'s output, uninitialised; *flat: as GradOutputStrides.
at::Tensor EmptyGradOutput(const at::Tensor& dy, const at::Tensor& s, bool* flat);

// ---- Memory the kernels may read and write ----------------------------------

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

}  // namespace relugrad_python
