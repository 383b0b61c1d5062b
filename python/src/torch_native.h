// The eager ReLU of relugrad.torch (torch_native.cc), for its Python entry
// (torch_python_module.cc).
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/util/string_view.h>

#include <cstdint>

namespace relugrad_python {

// y = relu(x) with relugrad's backward recorded as x's autograd history when
// x needs a gradient: the gate on the saved y, or with mask the 1-bit mask
// only. inplace writes x and returns it. x: a plain strided CPU tensor of
// relugrad's dtypes (anything else gets a c10::Error). Rules from the preset
// named `semantics`; threads: 0 splits over torch's intra-op threads, N > 0
// runs relugrad's pool with N.
at::Tensor NativeRelu(const at::Tensor& x, c10::string_view semantics, int64_t threads, bool mask,
                      bool inplace);

}  // namespace relugrad_python
