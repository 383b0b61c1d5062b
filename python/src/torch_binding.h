// The torch-native library's link to relugrad: the C ABI entry table the
// _relugrad module lends it (c_api_table.h, bound once at relugrad.torch's
// import by relugrad_native::bind, torch_binding.cc), the error check every
// call goes through, relugrad's dtype of a tensor, and the dispatcher call to
// relugrad's Python-registered ops.
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>

#include <atomic>
#include <vector>

#include "c_api_table.h"
#include "relugrad/relugrad.h"

namespace relugrad_python {

// Set once by relugrad_native::bind, at relugrad.torch's import.
extern std::atomic<const CApiTable*> g_api;

// The bound table (a c10::Error before the bind). Inline: every kernel call reads it.
inline const CApiTable& Api() {
  const CApiTable* api = g_api.load(std::memory_order_acquire);
  TORCH_CHECK(api != nullptr,
              "relugrad_native: not bound; import relugrad.torch instead of loading the library");
  return *api;
}

// A c10::Error carrying relugrad's last error when status is not RELUGRAD_OK.
inline void Check(relugrad_status status) {
  TORCH_CHECK(status == RELUGRAD_OK, "relugrad: ", Api().last_error());
}

// Whether the bound library has the CUDA backend (relugrad_backend_available): NativeRelu serves
// CUDA tensors only then. False before the library is bound.
bool CudaServed();

// relugrad's dtype of t (a c10::Error for any other).
relugrad_dtype DtypeOf(const at::Tensor& t);

// relugrad's Python-registered op `name` through the dispatcher (boxed: the
// schema's types are torch.library's to choose), for create_graph.
at::Tensor CallOp(const char* name, std::vector<c10::IValue> stack);

}  // namespace relugrad_python
