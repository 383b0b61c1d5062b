#include "torch_layouts.h"

#include <ATen/EmptyTensor.h>
#include <ATen/ops/empty_strided.h>
#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>
#include <c10/core/MemoryFormat.h>
#include <c10/util/strides.h>
#include <torch/csrc/autograd/variable.h>

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace relugrad_python {

at::Tensor EmptyCpu(at::IntArrayRef sizes, const at::TensorOptions& options) {
  TORCH_INTERNAL_ASSERT(options.device().is_cpu());
  return at::detail::empty_cpu(sizes, options);
}

// ---- Layouts ----------------------------------------------------------------
// Every result has the strides PyTorch's own op gives it: ReLU's backward is
// threshold_backward(grad, result, 0), a TensorIterator binary op, and the
// forward torch.relu(x) a unary one. TensorIterator's fast setup
// (compute_fast_setup_type) is mirrored here, since it costs a few flag reads:
// all operands contiguous -> contiguous; all channels_last -> channels_last;
// all non-overlapping and dense with equal strides -> those strides. In those
// cases every operand has one storage order and the kernel runs once over
// the storage. Any other case gets TensorIterator's general rule
// (reorder_dimensions, allocate_or_resize_outputs), TiStrides (ti_strides.h,
// the rule relugrad._relugrad.ti_strides exposes to the custom ops); the tests
// compare both with PyTorch's own results.

// An uninitialised tensor of `like`'s sizes on `like`'s device with the given strides,
// which its caller writes whole. On the CPU it is allocated as TensorIterator allocates a
// structured op's output (threshold_backward's, clamp_min's): at::detail::empty_strided_cpu,
// without the dispatcher's round trip and profiler event of at::empty_strided.
at::Tensor EmptyStrided(const at::Tensor& like, at::IntArrayRef strides) {
  if (like.device().is_cpu())
    return at::detail::empty_strided_cpu(like.sizes(), strides, like.options());
  return at::empty_strided(like.sizes(), strides, like.options());
}

// The strides TensorIterator's fast setup gives the output of (dy, s): true
// and *strides set when it serves them.
bool FastStrides(const at::Tensor& dy, const at::Tensor& s, c10::DimVector* strides) {
  if (dy.is_contiguous() && s.is_contiguous()) {
    *strides = c10::contiguous_strides(dy.sizes());
  } else if (dy.is_contiguous(at::MemoryFormat::ChannelsLast) &&
             s.is_contiguous(at::MemoryFormat::ChannelsLast)) {
    const std::vector<int64_t> channels_last = c10::get_channels_last_strides_2d(dy.sizes());
    strides->assign(channels_last.begin(), channels_last.end());
  } else if (dy.is_non_overlapping_and_dense() && s.is_non_overlapping_and_dense() &&
             dy.strides() == s.strides()) {
    strides->assign(dy.strides().begin(), dy.strides().end());
  } else {
    return false;
  }
  return true;
}

// True when TensorIterator's fast setup serves (dy, s); *out is then its output.
bool FastLayout(const at::Tensor& dy, const at::Tensor& s, at::Tensor* out) {
  c10::DimVector strides;
  if (!FastStrides(dy, s, &strides)) return false;
  *out = EmptyStrided(dy, strides);
  return true;
}

// The strides of threshold_backward(dy, s)'s output; true when dy and s share
// its storage order (the fast setup). (Its TensorIterator takes s, then dy:
// s's layout leads.)
bool GradOutputStrides(const at::Tensor& dy, const at::Tensor& s, c10::DimVector* strides) {
  if (FastStrides(dy, s, strides)) return true;
  const std::vector<int64_t> general = TiStrides(dy.sizes(), {s.strides(), dy.strides()});
  strides->assign(general.begin(), general.end());
  return false;
}

// threshold_backward(dy, s)'s output, uninitialised; *flat: as GradOutputStrides.
at::Tensor EmptyGradOutput(const at::Tensor& dy, const at::Tensor& s, bool* flat) {
  c10::DimVector strides;
  *flat = GradOutputStrides(dy, s, &strides);
  return EmptyStrided(dy, strides);
}

// Dense tensors a (real) and strides b of the same sizes address their
// elements in the same storage order: equal strides wherever the size is not 1.
bool SameOrder(const at::Tensor& a, at::IntArrayRef b) {
  if (!a.is_non_overlapping_and_dense()) return false;
  for (int64_t d = 0; d < a.dim(); ++d) {
    if (a.size(d) != 1 && a.stride(d) != b[d]) return false;
  }
  return true;
}

// t itself when it is dense in the storage order `strides`, else a copy in that layout.
at::Tensor InOrder(const at::Tensor& t, at::IntArrayRef strides) {
  if (SameOrder(t, strides)) return t;
  at::Tensor copy = EmptyStrided(t, strides);
  copy.copy_(t);
  return copy;
}

bool WritableInPlace(const at::Tensor& grad, at::IntArrayRef dx_strides) {
  if (!torch::autograd::impl::is_tensor_stealable(grad) || grad.requires_grad() ||
      grad.is_inference() || grad.storage_offset() != 0 || grad.strides() != dx_strides) {
    return false;
  }
  const c10::Storage& storage = grad.storage();
  const c10::Allocator* allocator =
      grad.device().is_cpu() ? c10::GetCPUAllocator() : c10::GetAllocator(grad.device().type());
  return storage.use_count() == 1 && storage.allocator() == allocator &&
         storage.nbytes() == static_cast<size_t>(grad.numel()) * grad.element_size();
}

bool ReadableOn(const at::Tensor& t, const at::Device& device) {
  if (!t.defined() || t.layout() != at::kStrided) return false;
  if (device.is_cpu()) return t.device().is_cpu() && kPlainCpuKeys.isSupersetOf(t.key_set());
  return t.device() == device && kPlainCudaKeys.isSupersetOf(t.key_set());
}

void CheckBitPlane(const at::Tensor& bits, int64_t n, const char* what, const at::Device& device) {
  TORCH_CHECK(ReadableOn(bits, device) && bits.scalar_type() == at::kByte && bits.is_contiguous() &&
                  bits.numel() >= (n + 7) / 8,
              "relugrad: the saved ", what, " is not the forward's: ", n,
              " elements need a contiguous uint8 tensor on ", device, " of ", (n + 7) / 8,
              " bytes (a saved-tensor hook must return what it was given)");
}

}  // namespace relugrad_python
