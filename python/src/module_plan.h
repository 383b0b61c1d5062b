// relugrad.Options and relugrad.Plan of relugrad._relugrad: options bound once
// (a relugrad_options, validated by the library, compared and hashed by its
// bytes) and one plan per op and dtype, whose runs take the arrays only; and
// relu_grad_numpy, relugrad.relu_grad's NumPy call in one crossing. module_plan.cc.
#pragma once

#include <nanobind/nanobind.h>

namespace relugrad_python {

// Adds the Options and Plan classes and relu_grad_numpy to m.
void BindOptionsAndPlan(nanobind::module_& m);

}  // namespace relugrad_python
