#include "module_plan.h"

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <new>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "module_arrays.h"
#include "relugrad/relugrad.h"

namespace relugrad_python {
namespace {

// ---- Options and Plan: options bound once, one object per call -------------

// relugrad_options as a Python value: built once from keyword arguments,
// validated by the library (a plan create), immutable, compared and hashed
// by its bytes (so -0.0 and 0.0 bounds, which give different bits, differ).
struct PyOptions {
  relugrad_options raw;
};

// Validates `o` as the library does when a plan is created (the message is
// the library's) and returns it as resolved (threads capped).
relugrad_options Validated(const relugrad_options& o) {
  relugrad_plan* plan = nullptr;
  Check(relugrad_plan_create(RELUGRAD_OP_RELU_GRAD, RELUGRAD_F32, &o, &plan));
  relugrad_options resolved;
  relugrad_options_init(&resolved, RELUGRAD_PRESET_TORCH);
  const relugrad_status st = relugrad_plan_get_options(plan, &resolved);
  relugrad_plan_destroy(plan);
  Check(st);
  return resolved;
}

std::string EnumName(relugrad_enum kind, int value) {
  const char* name = relugrad_enum_name(kind, value);
  return name ? name : std::to_string(value);
}

std::string Repr(double v) { return nb::cast<std::string>(nb::repr(nb::float_(v))); }

std::string OptionsRepr(const relugrad_options& o) {
  std::string r =
      "relugrad.Options(gate='" + EnumName(RELUGRAD_ENUM_GATE, o.gate) + "', combine='" +
      EnumName(RELUGRAD_ENUM_COMBINE, o.combine) + "', denormals='" +
      EnumName(RELUGRAD_ENUM_DENORMALS, o.denormals) + "', threshold_rounding='" +
      EnumName(RELUGRAD_ENUM_THRESHOLD_ROUNDING, o.threshold_rounding) +
      "', threshold=" + Repr(o.threshold) + ", alpha=" + Repr(o.alpha) +
      ", clip=" + (o.clip ? "(" + Repr(o.clip_lo) + ", " + Repr(o.clip_hi) + ")" : "None") +
      ", gate_max=" + Repr(o.gate_max) + ", threads=" + std::to_string(o.threads) + ", stores='" +
      EnumName(RELUGRAD_ENUM_STORES, o.stores) + "', backend='" +
      EnumName(RELUGRAD_ENUM_BACKEND, o.backend) + "'";
  if (o.stream != nullptr) r += ", stream=" + std::to_string(reinterpret_cast<uintptr_t>(o.stream));
  if (o.keep_negative_zero != 0) r += ", keep_negative_zero=True";
  return r + ")";
}

bool SameOptions(const relugrad_options& a, const relugrad_options& b) {
  return std::memcmp(&a, &b, sizeof(a)) == 0;
}

size_t HashOptions(const relugrad_options& o) {
  const auto* p = reinterpret_cast<const unsigned char*>(&o);
  uint64_t h = 1469598103934665603ull;  // FNV-1a over the bytes
  for (size_t i = 0; i < sizeof(o); ++i) h = (h ^ p[i]) * 1099511628211ull;
  return static_cast<size_t>(h);
}

// An enum argument given by name (the library's table) or by value.
int EnumArg(relugrad_enum kind, const nb::handle& value, const char* what) {
  if (nb::isinstance<nb::str>(value)) {
    int32_t v = 0;
    Check(relugrad_enum_from_name(kind, nb::cast<std::string>(value).c_str(), &v));
    return static_cast<int>(v);
  }
  if (nb::isinstance<nb::int_>(value) && !nb::isinstance<nb::bool_>(value))
    return nb::cast<int>(value);
  throw nb::type_error((std::string(what) + ": expected a name or an int").c_str());
}

// A resolved plan (relugrad_plan_create) with the options it was made from.
struct PyPlan {
  relugrad_plan* plan = nullptr;
  relugrad_options options{};
  PyPlan() = default;
  PyPlan(const PyPlan&) = delete;
  PyPlan& operator=(const PyPlan&) = delete;
  ~PyPlan() { relugrad_plan_destroy(plan); }
  relugrad_plan_op op() const { return relugrad_plan_get_op(plan); }
  relugrad_dtype dtype() const { return relugrad_plan_get_dtype(plan); }
};

// The dtype of a plan's array: a 16-bit integer view is the plan's own 16-bit
// dtype (NumPy's ml_dtypes.bfloat16 arrives as uint16). The first array must
// hold the plan's dtype, the others the first's.
template <typename A>
void CheckPlanArray(const char* name, const A& a, const PyPlan& p, const char* first) {
  const int want = static_cast<int>(p.dtype());
  const int got = CheckArray(name, a, relugrad_dtype_size(p.dtype()) == 2 ? want : 0);
  if (got == want) return;
  const std::string whose =
      first == nullptr ? std::string("the plan's ") : std::string(first) + "'s ";
  throw nb::type_error((std::string(name) + ": dtype " +
                        relugrad_dtype_name(static_cast<relugrad_dtype>(got)) + " does not match " +
                        whose + relugrad_dtype_name(p.dtype()))
                           .c_str());
}

template <typename A, typename B>
void CheckSameShape(const char* a_name, const A& a, const char* b_name, const B& b) {
  if (ShapeOf(b) != ShapeOf(a)) {
    throw nb::value_error((std::string(b_name) + ": shape " + ShapeString(ShapeOf(b)) +
                           " does not match " + a_name + "'s " + ShapeString(ShapeOf(a)))
                              .c_str());
  }
}

// The plan's backend must be the arrays' (relugrad does not copy between devices).
void CheckPlanDevice(const PyPlan& p, relugrad_backend arrays) {
  if (p.options.backend == arrays) return;
  throw nb::value_error(("the arrays are " + EnumName(RELUGRAD_ENUM_BACKEND, arrays) +
                         " memory, the plan runs on the " +
                         EnumName(RELUGRAD_ENUM_BACKEND, p.options.backend) + " backend")
                            .c_str());
}

// plan(a, b, c): relu_grad (dy, s, out), relu_grad_mask (dy, mask, out),
// relu_forward_mask (x, y, mask). reference: a relu_grad plan's arrays, checked
// alike, computed by the scalar reference on the plan's options instead.
void RunPlan(const PyPlan& p, nb::handle a, nb::handle b, nb::handle c, bool reference = false) {
  const relugrad_plan_op op = p.op();
  relugrad_status status;
  if (op == RELUGRAD_OP_RELU_FORWARD_MASK) {
    const auto x = ImportArray<InArray>("x", a, kInput);
    auto y = ImportArray<OutArray>("y", b, kOutput);
    auto mask = ImportArray<MaskOut>("mask", c, kMaskOut);
    CheckPlanArray("x", x, p, nullptr);
    CheckPlanArray("y", y, p, "x");
    CheckSameShape("x", x, "y", y);
    const int64_t n = static_cast<int64_t>(x.size());
    CheckMask(mask, n, "x");
    CheckPlanDevice(p, Backend("x", x, Named("y", y), Named("mask", mask)));
    const void* xp = x.data();
    void* yp = y.data();
    auto* mp = static_cast<uint8_t*>(mask.data());
    nb::gil_scoped_release release;
    status = relugrad_plan_run_forward(p.plan, n, xp, yp, mp);
  } else {
    const auto dy = ImportArray<InArray>("dy", a, kInput);
    auto out = ImportArray<OutArray>("out", c, kOutput);
    CheckPlanArray("dy", dy, p, nullptr);
    const int64_t n = static_cast<int64_t>(dy.size());
    const void* second;
    relugrad_backend backend;
    if (op == RELUGRAD_OP_RELU_GRAD) {
      const auto s = ImportArray<InArray>("s", b, kInput);
      CheckPlanArray("s", s, p, "dy");
      CheckPlanArray("out", out, p, "dy");
      CheckSameShape("dy", dy, "s", s);
      CheckSameShape("dy", dy, "out", out);
      backend = Backend("dy", dy, Named("s", s), Named("out", out));
      second = s.data();
    } else {
      const auto mask = ImportArray<MaskIn>("mask", b, kMaskIn);
      CheckPlanArray("out", out, p, "dy");
      CheckSameShape("dy", dy, "out", out);
      CheckMask(mask, n, "dy");
      backend = Backend("dy", dy, Named("mask", mask), Named("out", out));
      second = mask.data();
    }
    CheckPlanDevice(p, backend);
    const void* dyp = dy.data();
    void* op_out = out.data();
    nb::gil_scoped_release release;
    status = reference ? relugrad_relu_grad_reference(p.dtype(), n, dyp, second, op_out, &p.options)
                       : relugrad_plan_run(p.plan, n, dyp, second, op_out);
  }
  Check(status);
}
// ---- relugrad.relu_grad's NumPy call in one crossing ---------------------------

// An array's memory through the buffer protocol (NumPy's own export: no capsule, no copy), the
// view released with this object.
class HostBuffer {
 public:
  HostBuffer() = default;
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  ~HostBuffer() {
    if (held_) PyBuffer_Release(&view_);
  }
  // C-contiguous (any stride on a dim of size 1, as IsCContiguous), with its format; writable
  // when asked. False, with no Python error set, where the exporter refuses.
  bool Get(nb::handle h, bool writable) {
    const int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    held_ = PyObject_GetBuffer(h.ptr(), &view_, flags) == 0;
    if (!held_) PyErr_Clear();
    return held_;
  }
  const Py_buffer& view() const { return view_; }

 private:
  Py_buffer view_{};
  bool held_ = false;
};

// The relugrad dtype of a native-endian float buffer ("e", "f", "d"), else 0 (bfloat16, which
// NumPy cannot export, and every other format: the checked path says what is wrong).
int BufferDtype(const Py_buffer& v) {
  const char* f = v.format;
  if (f == nullptr || f[0] == '\0' || f[1] != '\0') return 0;
  switch (f[0]) {
    case 'e':
      return v.itemsize == 2 ? RELUGRAD_F16 : 0;
    case 'f':
      return v.itemsize == 4 ? RELUGRAD_F32 : 0;
    case 'd':
      return v.itemsize == 8 ? RELUGRAD_F64 : 0;
  }
  return 0;
}

bool SameShape(const Py_buffer& a, const Py_buffer& b) {
  if (a.ndim != b.ndim) return false;
  for (int i = 0; i < a.ndim; ++i) {
    if (a.shape[i] != b.shape[i]) return false;
  }
  return true;
}

// relu_grad_numpy(config, dy, s, out): relugrad.relu_grad on NumPy arrays, its checks and its
// run in one call, since on small arrays the crossings are the call's cost. Served: s and out
// of dy's type (the caller has checked that it is numpy.ndarray), C-contiguous, one shape, one
// dtype of float16/float32/float64, out writable. The plan is config.plan(OP_RELU_GRAD, dtype),
// the configuration's one plan lookup; it runs with the GIL released and None is returned, or
// the library's error (overlap) raised as a plan's call raises it. Anything else returns
// NotImplemented before anything runs, and the caller's checked path names the argument at
// fault.
nb::object ReluGradNumpy(nb::handle config, nb::handle dy, nb::handle s, nb::handle out) {
  const nb::object not_served = nb::borrow(Py_NotImplemented);
  if (Py_TYPE(s.ptr()) != Py_TYPE(dy.ptr()) || Py_TYPE(out.ptr()) != Py_TYPE(dy.ptr())) {
    return not_served;
  }
  HostBuffer dy_b, s_b, out_b;
  if (!dy_b.Get(dy, false) || !s_b.Get(s, false) || !out_b.Get(out, true)) return not_served;
  const int dtype = BufferDtype(dy_b.view());
  if (dtype == 0 || BufferDtype(s_b.view()) != dtype || BufferDtype(out_b.view()) != dtype ||
      !SameShape(dy_b.view(), s_b.view()) || !SameShape(dy_b.view(), out_b.view())) {
    return not_served;
  }
  static PyObject* const kPlan = PyUnicode_InternFromString("plan");
  const nb::int_ op_arg(static_cast<int>(RELUGRAD_OP_RELU_GRAD)), dtype_arg(dtype);
  PyObject* const args[] = {config.ptr(), op_arg.ptr(), dtype_arg.ptr()};
  const nb::object plan = nb::steal(PyObject_VectorcallMethod(kPlan, args, 3, nullptr));
  if (!plan.is_valid()) throw nb::python_error();
  PyPlan* p = nullptr;
  if (!nb::try_cast<PyPlan*>(plan, p) || p == nullptr ||
      p->options.backend != RELUGRAD_BACKEND_CPU || static_cast<int>(p->dtype()) != dtype) {
    return not_served;
  }
  const int64_t n = static_cast<int64_t>(dy_b.view().len / dy_b.view().itemsize);
  relugrad_status status;
  {
    nb::gil_scoped_release release;
    status = relugrad_plan_run(p->plan, n, dy_b.view().buf, s_b.view().buf, out_b.view().buf);
  }
  Check(status);
  return nb::none();
}

}  // namespace

void BindOptionsAndPlan(nb::module_& m) {
  m.def("relu_grad_numpy", &ReluGradNumpy, nb::arg("config"), nb::arg("dy"), nb::arg("s"),
        nb::arg("out"),
        "relu_grad_numpy(config, dy, s, out) -> None, or NotImplemented: relugrad.relu_grad's "
        "call on NumPy arrays of one type, dtype (float16/float32/float64) and shape, "
        "C-contiguous, out writable, by config.plan(OP_RELU_GRAD, dtype); NotImplemented, "
        "before anything runs, for anything else.");

  nb::class_<PyOptions>(m, "Options",
                        "relugrad_options bound once: immutable, validated by the library; "
                        "compared and hashed by value.")
      .def(
          "__init__",
          [](PyOptions* self, nb::handle preset, nb::handle gate, nb::handle combine,
             nb::handle denormals, nb::handle threshold_rounding, double threshold, double alpha,
             std::optional<std::pair<double, double>> clip, int threads, nb::handle stores,
             double gate_max, nb::handle backend, uintptr_t stream, bool keep_negative_zero) {
            // The preset's settings, then each argument given; out-of-range enum
            // values pass through for the library to reject with its message.
            relugrad_options o;
            Check(relugrad_options_init(&o, static_cast<relugrad_preset>(EnumArg(
                                                RELUGRAD_ENUM_PRESET, preset, "semantics"))));
            if (!gate.is_none())
              o.gate = static_cast<relugrad_gate>(EnumArg(RELUGRAD_ENUM_GATE, gate, "gate"));
            if (!combine.is_none())
              o.combine =
                  static_cast<relugrad_combine>(EnumArg(RELUGRAD_ENUM_COMBINE, combine, "combine"));
            if (!denormals.is_none())
              o.denormals = static_cast<relugrad_denormals>(
                  EnumArg(RELUGRAD_ENUM_DENORMALS, denormals, "denormals"));
            if (!threshold_rounding.is_none())
              o.threshold_rounding = static_cast<relugrad_threshold_rounding>(EnumArg(
                  RELUGRAD_ENUM_THRESHOLD_ROUNDING, threshold_rounding, "threshold_rounding"));
            o.threshold = threshold;
            o.alpha = alpha;
            o.clip = clip ? 1 : 0;
            o.clip_lo = clip ? clip->first : 0.0;
            o.clip_hi = clip ? clip->second : 0.0;
            o.threads = threads;
            o.stores =
                static_cast<relugrad_stores>(EnumArg(RELUGRAD_ENUM_STORES, stores, "stores"));
            o.gate_max = gate_max;
            o.backend =
                static_cast<relugrad_backend>(EnumArg(RELUGRAD_ENUM_BACKEND, backend, "backend"));
            o.stream = reinterpret_cast<void*>(stream);
            o.keep_negative_zero = keep_negative_zero ? 1 : 0;
            new (self) PyOptions{Validated(o)};
          },
          nb::arg("semantics") = nb::int_(static_cast<int>(RELUGRAD_PRESET_TORCH)), nb::kw_only(),
          nb::arg("gate").none() = nb::none(), nb::arg("combine").none() = nb::none(),
          nb::arg("denormals").none() = nb::none(),
          nb::arg("threshold_rounding").none() = nb::none(), nb::arg("threshold") = 0.0,
          nb::arg("alpha") = 0.0, nb::arg("clip").none() = nb::none(), nb::arg("threads") = 0,
          nb::arg("stores") = nb::int_(static_cast<int>(RELUGRAD_STORES_AUTO)),
          nb::arg("gate_max") = std::numeric_limits<double>::infinity(),
          nb::arg("backend") = nb::int_(static_cast<int>(RELUGRAD_BACKEND_CPU)),
          nb::arg("stream") = 0, nb::arg("keep_negative_zero") = false)
      .def(
          "with_execution",
          [](const PyOptions& self, int backend, uintptr_t stream) {
            relugrad_options o = self.raw;
            o.backend = static_cast<relugrad_backend>(backend);
            o.stream = reinterpret_cast<void*>(stream);
            return PyOptions{Validated(o)};
          },
          nb::arg("backend"), nb::arg("stream") = 0,
          "These options on another backend and stream (the arrays' device decides).")
      .def_prop_ro("gate",
                   [](const PyOptions& o) { return EnumName(RELUGRAD_ENUM_GATE, o.raw.gate); })
      .def_prop_ro(
          "combine",
          [](const PyOptions& o) { return EnumName(RELUGRAD_ENUM_COMBINE, o.raw.combine); })
      .def_prop_ro(
          "denormals",
          [](const PyOptions& o) { return EnumName(RELUGRAD_ENUM_DENORMALS, o.raw.denormals); })
      .def_prop_ro("threshold_rounding",
                   [](const PyOptions& o) {
                     return EnumName(RELUGRAD_ENUM_THRESHOLD_ROUNDING, o.raw.threshold_rounding);
                   })
      .def_prop_ro("threshold", [](const PyOptions& o) { return o.raw.threshold; })
      .def_prop_ro("alpha", [](const PyOptions& o) { return o.raw.alpha; })
      .def_prop_ro("clip",
                   [](const PyOptions& o) -> std::optional<std::pair<double, double>> {
                     if (!o.raw.clip) return std::nullopt;
                     return std::make_pair(o.raw.clip_lo, o.raw.clip_hi);
                   })
      .def_prop_ro("gate_max", [](const PyOptions& o) { return o.raw.gate_max; })
      .def_prop_ro("keep_negative_zero",
                   [](const PyOptions& o) { return o.raw.keep_negative_zero != 0; })
      .def_prop_ro("threads", [](const PyOptions& o) { return o.raw.threads; })
      .def_prop_ro("stores",
                   [](const PyOptions& o) { return EnumName(RELUGRAD_ENUM_STORES, o.raw.stores); })
      .def_prop_ro(
          "backend",
          [](const PyOptions& o) { return EnumName(RELUGRAD_ENUM_BACKEND, o.raw.backend); })
      .def_prop_ro("stream",
                   [](const PyOptions& o) { return reinterpret_cast<uintptr_t>(o.raw.stream); })
      .def("__repr__", [](const PyOptions& o) { return OptionsRepr(o.raw); })
      .def("__eq__",
           [](const PyOptions& a, nb::handle b) {
             return nb::isinstance<PyOptions>(b) &&
                    SameOptions(a.raw, nb::cast<const PyOptions&>(b).raw);
           })
      .def("__hash__", [](const PyOptions& o) { return HashOptions(o.raw); });

  nb::class_<PyPlan>(m, "Plan",
                     "One operator for one dtype with its options resolved once "
                     "(relugrad_plan_create); calls run it (relugrad_plan_run).")
      .def(
          "__init__",
          [](PyPlan* self, nb::handle op, nb::handle dtype, const PyOptions& options) {
            new (self) PyPlan();
            const int o = EnumArg(RELUGRAD_ENUM_PLAN_OP, op, "op");
            const int d = EnumArg(RELUGRAD_ENUM_DTYPE, dtype, "dtype");
            Check(relugrad_plan_create(static_cast<relugrad_plan_op>(o),
                                       static_cast<relugrad_dtype>(d), &options.raw, &self->plan));
            self->options = options.raw;
          },
          nb::arg("op"), nb::arg("dtype"), nb::arg("options"))
      .def(
          "__call__",
          [](const PyPlan& p, nb::handle a, nb::handle b, nb::handle c) { RunPlan(p, a, b, c); },
          nb::arg("a"), nb::arg("b"), nb::arg("c"),
          "relu_grad: (dy, s, out); relu_grad_mask: (dy, mask, out); relu_forward_mask: (x, y, "
          "mask). C-contiguous arrays of the plan's dtype and device, written in place.")
      .def(
          "reference",
          [](const PyPlan& p, nb::handle dy, nb::handle s, nb::handle out) {
            if (p.op() != RELUGRAD_OP_RELU_GRAD)
              throw nb::value_error("reference: the scalar reference computes relu_grad only");
            if (p.options.backend != RELUGRAD_BACKEND_CPU)
              throw nb::value_error("the scalar reference reads CPU memory only; pass CPU arrays");
            RunPlan(p, dy, s, out, /*reference=*/true);
          },
          nb::arg("dy"), nb::arg("s"), nb::arg("out"),
          "A relu_grad plan's call computed by the library's scalar reference "
          "(relugrad_relu_grad_reference, one thread) on the plan's options: the oracle of "
          "__call__.")
      .def(
          "run_host",
          [](const PyPlan& p, uintptr_t a, uintptr_t b, uintptr_t c, int64_t n) {
            // Host memory by address, for callers that checked the arrays
            // themselves (contiguous CPU tensors of the plan's dtype and one
            // shape); the library still checks n, null, alignment and overlap.
            if (p.options.backend != RELUGRAD_BACKEND_CPU)
              throw nb::value_error("run_host: the plan does not run on the cpu backend");
            relugrad_status status;
            {
              nb::gil_scoped_release release;
              status = p.op() == RELUGRAD_OP_RELU_FORWARD_MASK
                           ? relugrad_plan_run_forward(p.plan, n, reinterpret_cast<const void*>(a),
                                                       reinterpret_cast<void*>(b),
                                                       reinterpret_cast<uint8_t*>(c))
                           : relugrad_plan_run(p.plan, n, reinterpret_cast<const void*>(a),
                                               reinterpret_cast<const void*>(b),
                                               reinterpret_cast<void*>(c));
            }
            Check(status);
          },
          nb::arg("a"), nb::arg("b"), nb::arg("c"), nb::arg("n"),
          "The run on host memory given by address (same argument order as __call__).")
      .def_prop_ro("op", [](const PyPlan& p) { return EnumName(RELUGRAD_ENUM_PLAN_OP, p.op()); })
      .def_prop_ro("dtype",
                   [](const PyPlan& p) { return EnumName(RELUGRAD_ENUM_DTYPE, p.dtype()); })
      .def_prop_ro("options", [](const PyPlan& p) { return PyOptions{p.options}; })
      .def_prop_ro(
          "variant", [](const PyPlan& p) { return std::string(relugrad_plan_variant(p.plan)); },
          "The kernel variant the plan runs, chosen at create (`relugrad info --variants`; '' "
          "where the backend has one kernel for the op).")
      .def("__repr__", [](const PyPlan& p) {
        return "relugrad.Plan('" + EnumName(RELUGRAD_ENUM_PLAN_OP, p.op()) + "', '" +
               EnumName(RELUGRAD_ENUM_DTYPE, p.dtype()) + "', " + OptionsRepr(p.options) + ")";
      });
}

}  // namespace relugrad_python
