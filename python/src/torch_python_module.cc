// relugrad._relugrad_torch as a Python module: relu(x, semantics, threads,
// mask, inplace), the entry of relugrad.torch.ReLU's eager forward
// (NativeRelu, torch_native.h), relu_dropout(x, p), ReLUDropout's
// (NativeReluDropout), and linear_relu(x, weight, bias), LinearReLU's
// (NativeLinearRelu).
//
// Why a module function and not a torch.ops operator: a torch.ops call parses
// its Python arguments against the op's schema into a boxed stack of IValues
// and calls the op through the dispatcher, more per call than torch.relu's
// generated binding; for small tensors that was most of the gap to nn.ReLU's
// forward (docs/design.md, "A Python entry for the eager ReLU"). This function reads its
// five arguments directly, decides itself whether x is the plain case NativeRelu serves (PlainCpu:
// one key-set test in C++ instead of eight Python attribute reads) and calls it. Like torch's own
// bindings it releases the GIL while the op runs, records a profiler event under the op's name and
// raises the Python exception torch would for a c10::Error. A plain CUDA tensor (PlainCuda) takes
// the same entry where the library has the CUDA backend (CudaServed); in a build without it, the
// torch preset gets torch's own relu here. Anything else returns NotImplemented: relugrad.torch
// then takes its other paths (custom ops, torch's own ops).
//
// Plain CPython rather than nanobind: the tensor crosses with torch's own
// THPVariable_Unpack / THPVariable_Wrap (libtorch_python), for which
// nanobind has no caster, and four scalar arguments need no binding library.
#include <ATen/ops/relu.h>
#include <ATen/record_function.h>
#include <torch/csrc/Exceptions.h>
#include <c10/core/impl/TorchDispatchModeTLS.h>
#include <torch/csrc/autograd/VariableTypeUtils.h>
#include <torch/csrc/autograd/python_variable.h>
#include <torch/csrc/jit/frontend/tracer.h>
#include <torch/csrc/python_headers.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "torch_native.h"

namespace {

// Releases the GIL for a scope (reacquired on exit, exceptions included).
class GilReleased {
 public:
  GilReleased() : state_(PyEval_SaveThread()) {}
  GilReleased(const GilReleased&) = delete;
  GilReleased& operator=(const GilReleased&) = delete;
  ~GilReleased() { PyEval_RestoreThread(state_); }

 private:
  PyThreadState* state_;
};

// A torch.Tensor or nn.Parameter itself (no subclass), strided and dense on a
// device of `device_type` with only `keys`, of relugrad's dtypes, with no
// forward-mode tangent (relugrad's nodes have no forward formula: a dual x
// takes Python's path), no TorchDispatchMode active and no jit.trace
// recording (which must see an op). Python asks first only what only Python
// knows: whether dynamo is tracing (torch.export's other tracers run under a
// dispatch mode or on subclasses and are refused here).
bool Plain(PyObject* object, const c10::DispatchKeySet& keys, c10::DeviceType device_type) {
  if (!THPVariable_CheckExact(object)) return false;
  const at::Tensor& x = THPVariable_Unpack(object);
  // Raw bits, backend bits included (a tensor on another device has other ones).
  if (!x.defined() || !keys.isSupersetOf(x.key_set())) return false;
  const at::ScalarType dtype = x.scalar_type();
  return x.device().type() == device_type && x.layout() == at::kStrided &&
         (dtype == at::kFloat || dtype == at::kHalf || dtype == at::kBFloat16 ||
          dtype == at::kDouble) &&
         !x._fw_grad(/*level=*/0).defined() && c10::impl::TorchDispatchModeTLS::stack_len() == 0 &&
         !torch::jit::tracer::isTracing();
}

// NativeRelu's case on the CPU.
bool PlainCpu(PyObject* object) {
  return Plain(object, relugrad_python::kPlainCpuKeys, c10::DeviceType::CPU);
}

// Plain's case on a CUDA device: NativeRelu's where the library has the CUDA backend.
bool PlainCuda(PyObject* object) {
  return Plain(object, relugrad_python::kPlainCudaKeys, c10::DeviceType::CUDA);
}

constexpr const char* kSignature =
    "relu(x: Tensor, semantics: str, threads: int, mask: bool, inplace: bool)";

PyObject* Relu(PyObject* /*module*/, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_TH_ERRORS
  if (nargs != 5) {
    PyErr_Format(PyExc_TypeError, "%s takes 5 arguments, got %zd", kSignature, nargs);
    return nullptr;
  }
  Py_ssize_t semantics_size = 0;
  const char* semantics = PyUnicode_AsUTF8AndSize(args[1], &semantics_size);
  if (semantics == nullptr) return nullptr;
  const long long threads = PyLong_AsLongLong(args[2]);
  if (threads == -1 && PyErr_Occurred()) return nullptr;
  const int mask = PyObject_IsTrue(args[3]);
  if (mask < 0) return nullptr;
  const int inplace = PyObject_IsTrue(args[4]);
  if (inplace < 0) return nullptr;
  // The CUDA case is asked only after the CPU one, which is the hot one on a CPU host.
  if (!PlainCpu(args[0])) {
    if (!PlainCuda(args[0])) Py_RETURN_NOTIMPLEMENTED;
    if (!relugrad_python::CudaServed()) {
      // A build without the CUDA backend: the torch preset is stock's relu with stock's node,
      // served here so that it costs no more Python than nn.ReLU's forward; the other presets
      // take Python's path (its one warning, then torch's ops).
      if (c10::string_view(semantics, static_cast<size_t>(semantics_size)) != "torch") {
        Py_RETURN_NOTIMPLEMENTED;
      }
      at::Tensor x = THPVariable_Unpack(args[0]);  // a handle: relu_ writes through it
      at::Tensor y;
      {
        GilReleased no_gil;
        y = inplace != 0 ? at::relu_(x) : at::relu(x);  // through autograd: ReluBackward0
      }
      return THPVariable_Wrap(std::move(y));
    }
  }
  const at::Tensor& x = THPVariable_Unpack(args[0]);  // args[0] outlives the call
  at::Tensor y;
  {
    GilReleased no_gil;
    RECORD_FUNCTION(inplace ? "relugrad_native::relu_" : "relugrad_native::relu",
                    std::vector<c10::IValue>({x}));
    y = relugrad_python::NativeRelu(
        x, c10::string_view(semantics, static_cast<size_t>(semantics_size)),
        static_cast<int64_t>(threads), mask != 0, inplace != 0);
  }
  // In place, y is x's TensorImpl: THPVariable_Wrap returns x's own Python object.
  return THPVariable_Wrap(std::move(y));
  END_HANDLE_TH_ERRORS
}

constexpr const char* kDropoutSignature = "relu_dropout(x: Tensor, p: float)";

// ReLUDropout's fused training forward (NativeReluDropout): x a plain
// contiguous float32/float64 CPU tensor, or a plain CUDA tensor of any of
// relugrad's dtypes where the library has the CUDA backend, else
// NotImplemented (Python then composes torch's ops with relugrad's mask
// kernels on the CPU, or calls the two modules on CUDA). Python has checked the
// module's side: training, 0 < p < 1, the torch preset, torch's threads.
PyObject* ReluDropout(PyObject* /*module*/, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_TH_ERRORS
  if (nargs != 2) {
    PyErr_Format(PyExc_TypeError, "%s takes 2 arguments, got %zd", kDropoutSignature, nargs);
    return nullptr;
  }
  const double p = PyFloat_AsDouble(args[1]);
  if (p == -1.0 && PyErr_Occurred()) return nullptr;
  if (PlainCpu(args[0])) {
    const at::Tensor& x = THPVariable_Unpack(args[0]);
    if (!x.is_contiguous() || (x.scalar_type() != at::kFloat && x.scalar_type() != at::kDouble)) {
      Py_RETURN_NOTIMPLEMENTED;
    }
  } else if (!PlainCuda(args[0]) || !relugrad_python::CudaServed()) {
    Py_RETURN_NOTIMPLEMENTED;
  }
  const at::Tensor& x = THPVariable_Unpack(args[0]);  // args[0] outlives the call
  at::Tensor out;
  {
    GilReleased no_gil;
    RECORD_FUNCTION("relugrad_native::relu_dropout", std::vector<c10::IValue>({x}));
    out = relugrad_python::NativeReluDropout(x, p);
  }
  return THPVariable_Wrap(std::move(out));
  END_HANDLE_TH_ERRORS
}

constexpr const char* kLinearReluSignature = "linear_relu(x: Tensor, weight: Tensor, bias: Tensor)";

// LinearReLU's fused training forward (NativeLinearRelu): x contiguous, x, weight and bias plain
// CPU tensors, all float32 or all float64; else NotImplemented (Python then runs F.linear and
// relugrad's ReLU: stock's bits). Python has checked the module's side: training, a bias,
// autograd recording.
PyObject* LinearRelu(PyObject* /*module*/, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_TH_ERRORS
  if (nargs != 3) {
    PyErr_Format(PyExc_TypeError, "%s takes 3 arguments, got %zd", kLinearReluSignature, nargs);
    return nullptr;
  }
  if (!PlainCpu(args[0]) || !PlainCpu(args[1]) || !PlainCpu(args[2])) Py_RETURN_NOTIMPLEMENTED;
  // The arguments outlive the call.
  const at::Tensor& x = THPVariable_Unpack(args[0]);
  const at::Tensor& weight = THPVariable_Unpack(args[1]);
  const at::Tensor& bias = THPVariable_Unpack(args[2]);
  const at::ScalarType dtype = x.scalar_type();
  if ((dtype != at::kFloat && dtype != at::kDouble) || weight.scalar_type() != dtype ||
      bias.scalar_type() != dtype || !x.is_contiguous() || x.dim() < 1 || weight.dim() != 2 ||
      bias.dim() != 1) {
    Py_RETURN_NOTIMPLEMENTED;
  }
  at::Tensor y;
  {
    GilReleased no_gil;
    RECORD_FUNCTION("relugrad_native::linear_relu", std::vector<c10::IValue>({x, weight, bias}));
    y = relugrad_python::NativeLinearRelu(x, weight, bias);
  }
  return THPVariable_Wrap(std::move(y));
  END_HANDLE_TH_ERRORS
}

constexpr const char* kPlainSignature = "plain(x: Tensor, cuda: bool)";

// The plain-tensor rule of the entries above, for relugrad.torch's fused modules to ask before
// their own checks: PlainCpu(x), or with cuda true PlainCuda(x) too. One rule in one language.
PyObject* PlainTest(PyObject* /*module*/, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_TH_ERRORS
  if (nargs != 2) {
    PyErr_Format(PyExc_TypeError, "%s takes 2 arguments, got %zd", kPlainSignature, nargs);
    return nullptr;
  }
  const int cuda = PyObject_IsTrue(args[1]);
  if (cuda < 0) return nullptr;
  if (PlainCpu(args[0]) || (cuda != 0 && PlainCuda(args[0]))) Py_RETURN_TRUE;
  Py_RETURN_FALSE;
  END_HANDLE_TH_ERRORS
}

// Whether relu serves plain CUDA tensors with relugrad's kernels (the bound library has the CUDA
// backend): what a test without a GPU can ask of the routing.
PyObject* CudaServed(PyObject* /*module*/, PyObject* /*unused*/) {
  if (relugrad_python::CudaServed()) Py_RETURN_TRUE;
  Py_RETURN_FALSE;
}

PyMethodDef g_methods[] = {
    {"relu", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&Relu)), METH_FASTCALL,
     "relu(x, semantics, threads, mask, inplace) -> Tensor, or NotImplemented where x is not a "
     "plain CPU tensor or a plain CUDA tensor this build serves: relugrad.torch.ReLU's eager "
     "forward."},
    {"relu_dropout", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&ReluDropout)),
     METH_FASTCALL,
     "relu_dropout(x, p) -> Tensor, or NotImplemented where x is neither a plain contiguous "
     "float32/float64 CPU tensor nor a plain CUDA tensor this build serves: ReLUDropout's fused "
     "training forward."},
    {"linear_relu", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&LinearRelu)),
     METH_FASTCALL,
     "linear_relu(x, weight, bias) -> Tensor, or NotImplemented where the three are not plain "
     "CPU tensors of one float32/float64 dtype with x contiguous: LinearReLU's fused training "
     "forward."},
    {"plain", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&PlainTest)),
     METH_FASTCALL,
     "plain(x, cuda) -> bool: x is the plain tensor the entries serve: a torch.Tensor or "
     "nn.Parameter itself, strided (any strides), in CPU memory with only its autograd and "
     "autocast keys (cuda: or CUDA memory likewise), of float16/bfloat16/float32/float64, with "
     "no forward-mode tangent, no TorchDispatchMode active, no jit.trace recording."},
    {"cuda_served", &CudaServed, METH_NOARGS,
     "cuda_served() -> bool: relu serves plain CUDA tensors with relugrad's kernels (a build with "
     "the CUDA backend, once bound); False: the torch preset gets torch's relu there."},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef g_module = {PyModuleDef_HEAD_INIT,
                        "_relugrad_torch",
                        "relugrad.torch's torch-native ReLU (built against one torch version).",
                        -1,
                        g_methods,
                        nullptr,
                        nullptr,
                        nullptr,
                        nullptr};

}  // namespace

// Importing the module also registers the library's torch.ops operators (its
// TORCH_LIBRARY blocks run when the shared library loads).
PyMODINIT_FUNC PyInit__relugrad_torch() { return PyModule_Create(&g_module); }
