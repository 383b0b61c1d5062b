// Compiled (not linked) at configure time against the torch the package is
// built on, once with RELUGRAD_TORCH_INTRUSIVE_NODES=1 and, if that fails,
// once with 0: the first form that compiles is the one the native sources
// are built with (python/src/torch_node_api.h); where neither does, the
// package is built without them. It uses the autograd API those sources
// rely on, in the same forms.
#include <ATen/core/Tensor.h>
#include <torch/csrc/autograd/VariableTypeUtils.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/functions/utils.h>
#include <torch/csrc/autograd/saved_variable.h>
#include <torch/csrc/autograd/variable.h>
#include <torch/library.h>

#include "torch_node_api.h"

namespace {

struct ProbeNode : public torch::autograd::Node {
  torch::autograd::SavedVariable saved;
  torch::autograd::variable_list apply(torch::autograd::variable_list&& grads) override {
    const at::Tensor s = saved.unpack(getptr());
    return {torch::autograd::impl::is_tensor_stealable(grads[0]) ? grads[0] : s};
  }
};

}  // namespace

void RelugradTorchNativeProbe(const at::Tensor& x, at::Tensor& y, bool inplace) {
  const bool needs_grad = torch::autograd::compute_requires_grad(x);
  torch::autograd::check_inplace(x, needs_grad);
  auto node = relugrad_python::MakeNode<ProbeNode>();
  node->set_next_edges(torch::autograd::collect_next_edges(x));
  const auto attached = relugrad_python::SetHistory(y, node, inplace);
  node->saved = torch::autograd::SavedVariable(y, /*is_output=*/true);
  torch::autograd::increment_version(y);
  relugrad_python::FireCreationHooks(attached);
}
