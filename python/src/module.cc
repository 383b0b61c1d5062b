// relugrad._relugrad: the nanobind layer over the C ABI (relugrad.h).
//
// This layer only moves pointers: arrays arrive through DLPack or the buffer
// protocol without a copy (nb::ndarray), are checked (CPU, dtype, C order,
// equal shapes) with errors that name the argument, and the C entry point
// runs with the GIL released. Allocation of results and "return the same kind
// of array" live in python/relugrad/_api.py, where each framework's own
// allocator is at hand.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "relugrad/relugrad.h"

namespace nb = nanobind;

namespace {

using InArray = nb::ndarray<nb::ro, nb::device::cpu>;
using OutArray = nb::ndarray<nb::device::cpu>;

// DLPack's dtype -> relugrad dtype; 0 when unsupported. A 16-bit unsigned
// integer view is accepted only when the caller names the dtype explicitly
// (NumPy cannot export ml_dtypes.bfloat16 through DLPack, so the Python
// layer passes a uint16 view plus dtype="bf16").
int DtypeOf(const nb::dlpack::dtype& t, int declared) {
  if (t.lanes != 1) return 0;
  if (declared != 0) {
    const size_t want = relugrad_dtype_size(static_cast<relugrad_dtype>(declared));
    const bool raw_bits = t.code == static_cast<uint8_t>(nb::dlpack::dtype_code::UInt) ||
                          t.code == static_cast<uint8_t>(nb::dlpack::dtype_code::Int);
    if (raw_bits && t.bits == want * 8) return declared;
  }
  if (t.code == static_cast<uint8_t>(nb::dlpack::dtype_code::Float)) {
    switch (t.bits) {
      case 16: return RELUGRAD_F16;
      case 32: return RELUGRAD_F32;
      case 64: return RELUGRAD_F64;
    }
  }
  if (t.code == static_cast<uint8_t>(nb::dlpack::dtype_code::Bfloat) && t.bits == 16) return RELUGRAD_BF16;
  return 0;
}

std::string DescribeDtype(const nb::dlpack::dtype& t) {
  static const char* kCodes[] = {"int", "uint", "float", "opaque", "bfloat", "complex", "bool"};
  const char* code = t.code < 7 ? kCodes[t.code] : "code";
  return std::string(code) + std::to_string(t.bits) + (t.lanes != 1 ? "x" + std::to_string(t.lanes) : "");
}

// C order with every stride checked (dimensions of extent 1 may carry any
// stride, as NumPy and PyTorch both produce such views of contiguous data).
template <typename A>
bool IsCContiguous(const A& a) {
  if (a.size() == 0) return true;  // no element is addressed; producers differ on its strides
  int64_t expected = 1;
  for (size_t i = a.ndim(); i-- > 0;) {
    if (a.shape(i) != 1 && a.stride(i) != expected) return false;
    expected *= static_cast<int64_t>(a.shape(i));
  }
  return true;
}

template <typename A>
std::vector<size_t> ShapeOf(const A& a) {
  std::vector<size_t> s(a.ndim());
  for (size_t i = 0; i < a.ndim(); ++i) s[i] = a.shape(i);
  return s;
}

std::string ShapeString(const std::vector<size_t>& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + (s.size() == 1 ? ",)" : ")");
}

template <typename A>
int CheckArray(const char* name, const A& a, int declared) {
  const int dtype = DtypeOf(a.dtype(), declared);
  if (dtype == 0) {
    throw nb::type_error((std::string(name) + ": dtype " + DescribeDtype(a.dtype()) +
                          " is not supported (float16, bfloat16, float32, float64)").c_str());
  }
  if (!IsCContiguous(a)) {
    throw nb::value_error((std::string(name) + ": array is not C-contiguous; pass a contiguous "
                           "array (e.g. numpy.ascontiguousarray or tensor.contiguous())").c_str());
  }
  return dtype;
}

void Check(relugrad_status status) {
  if (status == RELUGRAD_OK) return;
  const std::string message = relugrad_last_error();
  switch (status) {
    case RELUGRAD_INVALID_ARGUMENT: throw nb::value_error(message.c_str());
    case RELUGRAD_UNSUPPORTED: throw nb::builtin_exception(nb::exception_type::runtime_error, ("unsupported: " + message).c_str());
    default: throw std::runtime_error(message);
  }
}

struct CallOptions {
  int preset = RELUGRAD_PRESET_TORCH;
  int gate = -1;  // -1: keep the preset's choice
  int combine = -1;
  int denormals = -1;
  int threshold_rounding = -1;
  double threshold = 0.0;
  double alpha = 0.0;
  bool clip = false;
  double clip_lo = 0.0, clip_hi = 0.0;
  int threads = 0;
};

relugrad_options MakeOptions(const CallOptions& c) {
  relugrad_options o;
  Check(relugrad_options_init(&o, static_cast<relugrad_preset>(c.preset)));
  // Out-of-range enums pass through: the library rejects them with its message.
  if (c.gate >= 0) o.gate = static_cast<relugrad_gate>(c.gate);
  if (c.combine >= 0) o.combine = static_cast<relugrad_combine>(c.combine);
  if (c.denormals >= 0) o.denormals = static_cast<relugrad_denormals>(c.denormals);
  if (c.threshold_rounding >= 0) o.threshold_rounding = static_cast<relugrad_threshold_rounding>(c.threshold_rounding);
  o.threshold = c.threshold;
  o.alpha = c.alpha;
  o.clip = c.clip ? 1 : 0;
  o.clip_lo = c.clip_lo;
  o.clip_hi = c.clip_hi;
  o.threads = c.threads;
  return o;
}

// dx = ReluGrad(dy, s) into out (which may be dy or s itself).
// declared[i]: the dtype the Python layer vouches for when it passes raw
// 16-bit views (NumPy bfloat16), else 0; one per array since a call may mix
// producers (a JAX bf16 dy arrives as DLPack bfloat, its NumPy result as uint16).
void ReluGradInto(const InArray& dy, const InArray& s, OutArray& out, const int declared[3],
                  const CallOptions& call, bool reference) {
  const int dt = CheckArray("dy", dy, declared[0]);
  const int st = CheckArray("s", s, declared[1]);
  const int ot = CheckArray("out", out, declared[2]);
  if (st != dt) {
    throw nb::type_error((std::string("s: dtype ") + relugrad_dtype_name(static_cast<relugrad_dtype>(st)) +
                          " does not match dy's " + relugrad_dtype_name(static_cast<relugrad_dtype>(dt))).c_str());
  }
  if (ot != dt) {
    throw nb::type_error((std::string("out: dtype ") + relugrad_dtype_name(static_cast<relugrad_dtype>(ot)) +
                          " does not match dy's " + relugrad_dtype_name(static_cast<relugrad_dtype>(dt))).c_str());
  }
  const auto shape = ShapeOf(dy);
  if (ShapeOf(s) != shape) {
    throw nb::value_error(("s: shape " + ShapeString(ShapeOf(s)) + " does not match dy's " + ShapeString(shape)).c_str());
  }
  if (ShapeOf(out) != shape) {
    throw nb::value_error(("out: shape " + ShapeString(ShapeOf(out)) + " does not match dy's " + ShapeString(shape)).c_str());
  }
  const relugrad_options options = MakeOptions(call);
  const auto dtype = static_cast<relugrad_dtype>(dt);
  const int64_t n = static_cast<int64_t>(dy.size());
  const void* dy_p = dy.data();
  const void* s_p = s.data();
  void* out_p = out.data();
  relugrad_status status;
  {
    // The buffers stay alive: the caller's Python objects hold them.
    nb::gil_scoped_release release;
    status = reference ? relugrad_relu_grad_reference(dtype, n, dy_p, s_p, out_p, &options)
                       : relugrad_relu_grad(dtype, n, dy_p, s_p, out_p, &options);
  }
  Check(status);
}

std::vector<std::string> IsaNames() {
  std::vector<std::string> names;
  for (int i = 0; i < relugrad_isa_count(); ++i) names.emplace_back(relugrad_isa_name(i));
  return names;
}

}  // namespace

NB_MODULE(_relugrad, m) {
  m.doc() = "Low-level bindings of the relugrad C ABI; use the relugrad package instead.";

  m.def(
      "relu_grad_into",
      [](const InArray& dy, const InArray& s, OutArray out, int dy_dtype, int s_dtype, int out_dtype, int preset, int gate,
         int combine, int denormals, int threshold_rounding, double threshold, double alpha, bool clip,
         double clip_lo, double clip_hi, int threads, bool reference) {
        CallOptions c;
        c.preset = preset;
        c.gate = gate;
        c.combine = combine;
        c.denormals = denormals;
        c.threshold_rounding = threshold_rounding;
        c.threshold = threshold;
        c.alpha = alpha;
        c.clip = clip;
        c.clip_lo = clip_lo;
        c.clip_hi = clip_hi;
        c.threads = threads;
        const int declared[3] = {dy_dtype, s_dtype, out_dtype};
        ReluGradInto(dy, s, out, declared, c, reference);
      },
      nb::arg("dy").noconvert(), nb::arg("s").noconvert(), nb::arg("out").noconvert(),
      nb::arg("dy_dtype"), nb::arg("s_dtype"), nb::arg("out_dtype"), nb::arg("preset"), nb::arg("gate"), nb::arg("combine"),
      nb::arg("denormals"), nb::arg("threshold_rounding"), nb::arg("threshold"), nb::arg("alpha"),
      nb::arg("clip"), nb::arg("clip_lo"), nb::arg("clip_hi"), nb::arg("threads"), nb::arg("reference"),
      "Computes into out; every argument already checked by relugrad._api.");

  m.def("version", &relugrad_version);
  m.def("build_info", &relugrad_build_info);
  m.def("isa_names", &IsaNames, "SIMD targets compiled in and attainable here, best first.");
  m.def("isa_selected", &relugrad_isa_selected);
  m.def("set_max_isa", [](std::optional<std::string> name) {
    Check(relugrad_set_max_isa(name ? name->c_str() : nullptr));
  }, nb::arg("name").none());
  m.def("default_threads", &relugrad_default_threads);
  m.def("backend_available", [](int backend) {
    return relugrad_backend_available(static_cast<relugrad_backend>(backend)) != 0;
  });
  m.def("preset_from_name", [](const std::string& name) {
    relugrad_preset p;
    Check(relugrad_preset_from_name(name.c_str(), &p));
    return static_cast<int>(p);
  });
  m.def("dtype_from_name", [](const std::string& name) {
    relugrad_dtype d;
    Check(relugrad_dtype_from_name(name.c_str(), &d));
    return static_cast<int>(d);
  });
  m.def("preset_options", [](int preset) {
    relugrad_options o;
    Check(relugrad_options_init(&o, static_cast<relugrad_preset>(preset)));
    nb::dict d;
    d["gate"] = static_cast<int>(o.gate);
    d["combine"] = static_cast<int>(o.combine);
    d["denormals"] = static_cast<int>(o.denormals);
    d["threshold_rounding"] = static_cast<int>(o.threshold_rounding);
    return d;
  }, "The preset's enum settings (gate, combine, denormals, threshold_rounding).");

  m.attr("F32") = static_cast<int>(RELUGRAD_F32);
  m.attr("F16") = static_cast<int>(RELUGRAD_F16);
  m.attr("BF16") = static_cast<int>(RELUGRAD_BF16);
  m.attr("F64") = static_cast<int>(RELUGRAD_F64);
  m.attr("BACKEND_CPU") = static_cast<int>(RELUGRAD_BACKEND_CPU);
  m.attr("BACKEND_CUDA") = static_cast<int>(RELUGRAD_BACKEND_CUDA);
  m.attr("BACKEND_ASCEND_TWIN") = static_cast<int>(RELUGRAD_BACKEND_ASCEND_TWIN);
}
