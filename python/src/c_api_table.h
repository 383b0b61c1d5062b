// The C ABI entry points that relugrad's torch-native library calls, handed
// over by address from the _relugrad module.
//
// Why a table and not a link: both extension modules would otherwise link
// their own static copy of the library, and one process would then hold two
// thread pools, two buffer caches and two profilers. The _relugrad module
// owns the one library; _relugrad_torch borrows its entry points (the
// pattern of NumPy's C-API capsule).
#ifndef RELUGRAD_PYTHON_SRC_C_API_TABLE_H_
#define RELUGRAD_PYTHON_SRC_C_API_TABLE_H_

#include <cstdint>

#include "relugrad/relugrad.h"

namespace relugrad_python {

// Bump when a field changes; the borrower refuses any other version. Fields
// are only ever appended within a version; struct_size says which fields the
// lender filled.
inline constexpr int32_t kCApiTableVersion = 3;

struct CApiTable {
  int32_t version;
  uint32_t struct_size;  // sizeof(CApiTable) where it was filled
  decltype(&relugrad_options_init) options_init;
  decltype(&relugrad_preset_from_name) preset_from_name;
  decltype(&relugrad_relu_grad) relu_grad;
  decltype(&relugrad_relu_forward) relu_forward;
  decltype(&relugrad_relu_grad_mask) relu_grad_mask;
  decltype(&relugrad_last_error) last_error;
  decltype(&relugrad_cpu_host_split) cpu_host_split;
  // Plans (relugrad.h "Plans: resolve once, run many"): a torch module
  // creates one per configuration and runs it on every call.
  decltype(&relugrad_plan_create) plan_create;
  decltype(&relugrad_plan_destroy) plan_destroy;
  decltype(&relugrad_plan_run) plan_run;
  decltype(&relugrad_plan_run_forward) plan_run_forward;
  // Whether the lender was built with a backend (the torch-native path serves CUDA tensors only
  // where it has the CUDA one).
  decltype(&relugrad_backend_available) backend_available;
  // The fused ReLU + dropout's planes (relugrad.h, "ReLU followed by dropout").
  decltype(&relugrad_pack_bits) pack_bits;
  decltype(&relugrad_relu_dropout_grad) relu_dropout_grad;
};

}  // namespace relugrad_python

#endif  // RELUGRAD_PYTHON_SRC_C_API_TABLE_H_
