// The two forms of torch's C++ autograd node API that the native sources
// build against. torch releases up to 2.14 hold nodes by std::shared_ptr,
// have no node creation hooks, and their rebase_history returns nothing;
// later releases hold nodes by c10::intrusive_ptr, fire creation hooks, and
// rebase_history returns the node the history got (through a view, the
// CopySlices node wrapping it). RELUGRAD_TORCH_INTRUSIVE_NODES (1 or 0) is
// chosen by python/CMakeLists.txt, which compiles a probe of each form
// (python/cmake/torch_native_probe.cc) against the torch it builds on.
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/csrc/autograd/VariableTypeUtils.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/functions/utils.h>

#include <memory>

#ifndef RELUGRAD_TORCH_INTRUSIVE_NODES
#error "RELUGRAD_TORCH_INTRUSIVE_NODES must be defined (python/CMakeLists.txt)"
#endif

namespace relugrad_python {

#if RELUGRAD_TORCH_INTRUSIVE_NODES
template <typename T>
using NodePtr = c10::intrusive_ptr<T>;

template <typename T>
NodePtr<T> MakeNode() {
  return c10::make_intrusive<T>();
}
#else
template <typename T>
using NodePtr = std::shared_ptr<T>;

template <typename T>
NodePtr<T> MakeNode() {
  return std::make_shared<T>();
}
#endif

// Makes `node` the history of `result`: a new output's (set_history), or
// x's after an in-place write (rebase_history). Returns the node the
// creation hooks are to see.
inline NodePtr<torch::autograd::Node> SetHistory(const at::Tensor& result,
                                                 NodePtr<torch::autograd::Node> node,
                                                 bool inplace) {
  if (!inplace) {
    torch::autograd::set_history(result, node);
    return node;
  }
#if RELUGRAD_TORCH_INTRUSIVE_NODES
  return torch::autograd::rebase_history(result, std::move(node));
#else
  torch::autograd::rebase_history(result, node);
  return node;
#endif
}

// Fires torch's node creation hooks for `node`, in the releases that have them.
inline void FireCreationHooks(const NodePtr<torch::autograd::Node>& node) {
#if RELUGRAD_TORCH_INTRUSIVE_NODES
  torch::autograd::fire_node_creation_hooks(node);
#else
  (void)node;
#endif
}

}  // namespace relugrad_python
