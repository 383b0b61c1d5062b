// relugrad_native::bind and what torch_binding.h declares: the one place the
// torch-native library meets the _relugrad module's C ABI table.
#include "torch_binding.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include <atomic>
#include <cstdint>
#include <vector>

namespace relugrad_python {

std::atomic<const CApiTable*> g_api{nullptr};

namespace {

void Bind(int64_t address) {
  const auto* table = reinterpret_cast<const CApiTable*>(static_cast<uintptr_t>(address));
  TORCH_CHECK(table != nullptr && table->version == kCApiTableVersion &&
                  table->struct_size >= sizeof(CApiTable),
              "relugrad_native: the _relugrad module's entry table does not match this library "
              "(rebuild relugrad)");
  g_api.store(table, std::memory_order_release);
}

}  // namespace

bool CudaServed() {
  const CApiTable* api = g_api.load(std::memory_order_acquire);
  return api != nullptr && api->backend_available(RELUGRAD_BACKEND_CUDA) != 0;
}

relugrad_dtype DtypeOf(const at::Tensor& t) {
  switch (t.scalar_type()) {
    case at::kFloat:
      return RELUGRAD_F32;
    case at::kHalf:
      return RELUGRAD_F16;
    case at::kBFloat16:
      return RELUGRAD_BF16;
    case at::kDouble:
      return RELUGRAD_F64;
    default:
      TORCH_CHECK(false, "relugrad: dtype ", t.scalar_type(),
                  " is not supported (float32, float16, bfloat16, float64)");
  }
}

// relugrad's Python-registered op `name` through the dispatcher (boxed: the
// schema's types are torch.library's to choose), for create_graph.
at::Tensor CallOp(const char* name, std::vector<c10::IValue> stack) {
  static auto& dispatcher = c10::Dispatcher::singleton();
  dispatcher.findSchemaOrThrow(name, "").callBoxed(stack);
  return stack.at(0).toTensor();
}

}  // namespace relugrad_python

TORCH_LIBRARY(relugrad_native, m) { m.def("bind(int c_api_table) -> ()", &relugrad_python::Bind); }
