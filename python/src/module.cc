// relugrad._relugrad: the nanobind layer over the C ABI (relugrad.h).
//
// Computation crosses this layer as one relugrad.Options (a relugrad_options,
// rules and execution settings, the CUDA stream included) and one
// relugrad.Plan (relugrad_plan_create) per op and dtype; a run passes the
// arrays only. This layer only moves pointers: arrays arrive through DLPack or
// the buffer protocol without a copy (nb::ndarray), or as host addresses
// (Plan.run_host), are checked (device, dtype, C order, equal shapes) with
// errors that name the argument, and the plan runs with the GIL released.
// Choosing the configuration, allocating results and "return the same kind of
// array" live in python/relugrad/ (_options.py, _calls.py), where each
// framework's own allocator is at hand.
//
// This file is the module and its functions over the library as a whole;
// the arrays' import and checks are module_arrays.cc, relugrad.Options,
// relugrad.Plan and relu_grad_numpy (relugrad.relu_grad's NumPy call in one
// crossing, its arrays by the buffer protocol) module_plan.cc.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <new>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "c_api_table.h"
#include "module_arrays.h"
#include "module_plan.h"
#include "relugrad/relugrad.h"
#include "ti_strides.h"

namespace nb = nanobind;
using relugrad_python::Check;
using relugrad_python::CheckArray;
using relugrad_python::InArray;

namespace {

std::vector<std::string> IsaNames() {
  std::vector<std::string> names;
  for (int i = 0; i < relugrad_isa_count(); ++i) names.emplace_back(relugrad_isa_name(i));
  return names;
}

}  // namespace

NB_MODULE(_relugrad, m) {
  m.doc() = "Low-level bindings of the relugrad C ABI; use the relugrad package instead.";
  relugrad_python::BindOptionsAndPlan(m);

  m.def(
      "dtype_of",
      [](const char* name, const InArray& a) {
        // The dtype a plan for this array needs, for producers whose dtype
        // Python cannot read (generic DLPack); raw integer views are no float.
        return CheckArray(name, a, 0);
      },
      nb::arg("name"), nb::arg("array").noconvert(),
      "The relugrad dtype of a float array; TypeError naming `name` for any other.");

  m.def(
      "cached_bytes",
      [](size_t nbytes) {
        // A flat uint8 NumPy array over relugrad_buffer_alloc memory; the
        // capsule hands the block back to relugrad's cache when the last
        // view of it dies, so the next allocating call of that size finds
        // its pages mapped (relugrad.h: "Output memory that keeps its pages").
        void* block = relugrad_buffer_alloc(nbytes);
        if (block == nullptr) throw std::bad_alloc();
        nb::capsule owner(block, [](void* p) noexcept { relugrad_buffer_free(p); });
        const size_t shape[1] = {nbytes};
        return nb::ndarray<nb::numpy, uint8_t, nb::ndim<1>>(block, 1, shape, owner);
      },
      nb::arg("nbytes"), "Uninitialised bytes (nbytes > 0) from relugrad's output buffer cache.");
  m.def("buffer_cache_stats", [] {
    size_t cached = 0, live = 0;
    uint64_t hits = 0, misses = 0;
    relugrad_buffer_cache_stats(&cached, &live, &hits, &misses);
    nb::dict d;
    d["cached_bytes"] = cached;
    d["live_bytes"] = live;
    d["hits"] = hits;
    d["misses"] = misses;
    return d;
  });
  m.def("buffer_cache_trim", &relugrad_buffer_cache_trim,
        "Frees every cached block; returns the bytes freed.");

  m.def("mask_bytes", &relugrad_mask_bytes, nb::arg("n"), "ceil(n/8), or -1 for n < 0.");

  // TensorIterator's rule for a new output's strides (ti_strides.h), here for relugrad.torch's
  // custom ops, which serve where the torch-native library (the rule's other caller) is absent.
  m.def(
      "ti_strides",
      [](const std::vector<int64_t>& shape, const nb::args& operands) {
        std::vector<std::vector<int64_t>> strides;
        strides.reserve(operands.size());
        for (nb::handle operand : operands) {
          strides.push_back(nb::cast<std::vector<int64_t>>(operand));
          if (strides.back().size() != shape.size()) {
            throw nb::value_error(("strides: " + std::to_string(strides.back().size()) +
                                   " strides for a shape of " + std::to_string(shape.size()) +
                                   " dims")
                                      .c_str());
          }
        }
        return relugrad_python::TensorIteratorStrides(shape, strides);
      },
      nb::arg("shape"), nb::arg("strides"),
      "ti_strides(shape, *strides) -> list: the strides TensorIterator gives a new output of "
      "`shape` from inputs of that shape with these strides (its general rule, not its fast "
      "setup).");

  m.def("version", &relugrad_version);
  m.def("build_info", &relugrad_build_info);
  m.def("isa_names", &IsaNames, "SIMD targets compiled in and attainable here, best first.");
  m.def("isa_selected", &relugrad_isa_selected);
  m.def(
      "set_max_isa",
      [](std::optional<std::string> name) {
        Check(relugrad_set_max_isa(name ? name->c_str() : nullptr));
      },
      nb::arg("name").none());
  m.def("default_threads", &relugrad_default_threads);
  m.def("backend_available", [](int backend) {
    return relugrad_backend_available(static_cast<relugrad_backend>(backend)) != 0;
  });
  m.def("preset_from_name", [](const std::string& name) {
    relugrad_preset p;
    Check(relugrad_preset_from_name(name.c_str(), &p));
    return static_cast<int>(p);
  });
  m.def(
      "c_api_table",
      [] {
        static const relugrad_python::CApiTable table = {relugrad_python::kCApiTableVersion,
                                                         sizeof(relugrad_python::CApiTable),
                                                         &relugrad_options_init,
                                                         &relugrad_preset_from_name,
                                                         &relugrad_relu_grad,
                                                         &relugrad_relu_forward,
                                                         &relugrad_relu_grad_mask,
                                                         &relugrad_last_error,
                                                         &relugrad_cpu_host_split,

                                                         &relugrad_plan_create,
                                                         &relugrad_plan_destroy,
                                                         &relugrad_plan_run,
                                                         &relugrad_plan_run_forward,
                                                         &relugrad_backend_available,
                                                         &relugrad_pack_bits,
                                                         &relugrad_relu_dropout_grad};
        return reinterpret_cast<uintptr_t>(&table);
      },
      "Address of this module's C entry points (c_api_table.h), for relugrad's torch-native "
      "library.");
  m.def("dtype_from_name", [](const std::string& name) {
    relugrad_dtype d;
    Check(relugrad_dtype_from_name(name.c_str(), &d));
    return static_cast<int>(d);
  });
  m.def(
      "preset_options",
      [](int preset) {
        relugrad_options o;
        Check(relugrad_options_init(&o, static_cast<relugrad_preset>(preset)));
        nb::dict d;
        d["gate"] = static_cast<int>(o.gate);
        d["combine"] = static_cast<int>(o.combine);
        d["denormals"] = static_cast<int>(o.denormals);
        d["threshold_rounding"] = static_cast<int>(o.threshold_rounding);
        return d;
      },
      "The preset's enum settings (gate, combine, denormals, threshold_rounding).");

  // The library's name tables (relugrad_enum_*): Python spells no enum name itself.
  m.def(
      "enum_table",
      [](int kind) {
        std::vector<std::pair<std::string, int>> rows;
        const auto k = static_cast<relugrad_enum>(kind);
        for (int i = 0; i < relugrad_enum_count(k); ++i) {
          int32_t value = 0;
          const char* name = relugrad_enum_entry(k, i, &value);
          rows.emplace_back(name, static_cast<int>(value));
        }
        return rows;
      },
      nb::arg("kind"), "[(canonical name, value)] of one relugrad_enum, in declaration order.");
  m.def(
      "enum_from_name",
      [](int kind, const std::string& name) {
        const auto k = static_cast<relugrad_enum>(kind);
        int32_t value = 0;
        Check(relugrad_enum_from_name(k, name.c_str(), &value));
        const char* canonical = relugrad_enum_alias_deprecated(k, name.c_str());
        return std::make_pair(static_cast<int>(value),
                              canonical ? std::optional<std::string>(canonical) : std::nullopt);
      },
      nb::arg("kind"), nb::arg("name"),
      "(value, canonical name if `name` is a deprecated spelling else None); unknown names "
      "raise ValueError listing the canonical ones.");
  m.attr("ENUM_DTYPE") = static_cast<int>(RELUGRAD_ENUM_DTYPE);
  m.attr("ENUM_PRESET") = static_cast<int>(RELUGRAD_ENUM_PRESET);
  m.attr("ENUM_GATE") = static_cast<int>(RELUGRAD_ENUM_GATE);
  m.attr("ENUM_COMBINE") = static_cast<int>(RELUGRAD_ENUM_COMBINE);
  m.attr("ENUM_DENORMALS") = static_cast<int>(RELUGRAD_ENUM_DENORMALS);
  m.attr("ENUM_THRESHOLD_ROUNDING") = static_cast<int>(RELUGRAD_ENUM_THRESHOLD_ROUNDING);
  m.attr("ENUM_BACKEND") = static_cast<int>(RELUGRAD_ENUM_BACKEND);
  m.attr("ENUM_STORES") = static_cast<int>(RELUGRAD_ENUM_STORES);
  m.attr("ENUM_STATUS") = static_cast<int>(RELUGRAD_ENUM_STATUS);
  m.attr("ENUM_PLAN_OP") = static_cast<int>(RELUGRAD_ENUM_PLAN_OP);
  m.attr("OP_RELU_GRAD") = static_cast<int>(RELUGRAD_OP_RELU_GRAD);
  m.attr("OP_RELU_FORWARD_MASK") = static_cast<int>(RELUGRAD_OP_RELU_FORWARD_MASK);
  m.attr("OP_RELU_GRAD_MASK") = static_cast<int>(RELUGRAD_OP_RELU_GRAD_MASK);

  m.attr("F32") = static_cast<int>(RELUGRAD_F32);
  m.attr("F16") = static_cast<int>(RELUGRAD_F16);
  m.attr("BF16") = static_cast<int>(RELUGRAD_BF16);
  m.attr("F64") = static_cast<int>(RELUGRAD_F64);
  m.attr("BACKEND_CPU") = static_cast<int>(RELUGRAD_BACKEND_CPU);
  m.attr("BACKEND_CUDA") = static_cast<int>(RELUGRAD_BACKEND_CUDA);
  m.attr("BACKEND_ASCEND_TWIN") = static_cast<int>(RELUGRAD_BACKEND_ASCEND_TWIN);
}
