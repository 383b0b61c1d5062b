// relugrad.Options and relugrad.Plan of relugrad._relugrad: options bound once
// (a relugrad_options, validated by the library, compared and hashed by its
// bytes) and one plan per op and dtype, whose runs take the arrays only.
// module_plan.cc.
#pragma once

#include <nanobind/nanobind.h>

namespace relugrad_python {

// Adds the Options and Plan classes to m.
void BindOptionsAndPlan(nanobind::module_& m);

}  // namespace relugrad_python
