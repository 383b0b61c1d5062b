// The arrays of relugrad._relugrad's calls: imported without a copy (DLPack or
// the buffer protocol, nb::ndarray), checked (dtype, C order, device, the
// mask's size) with errors that name the argument, and relugrad's status
// turned into Python's exceptions. module_arrays.cc.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "relugrad/relugrad.h"

namespace relugrad_python {

namespace nb = nanobind;

// Any device: CPU arrays go to the CPU backend, CUDA (and CUDA managed)
// arrays to the CUDA backend with the caller's stream (Backend() below).
using InArray = nb::ndarray<nb::ro>;
using OutArray = nb::ndarray<>;

// DLPack's dtype -> relugrad dtype; 0 when unsupported. A 16-bit unsigned
// integer view is accepted only when the caller names the dtype explicitly
// (NumPy cannot export ml_dtypes.bfloat16 through DLPack, so the Python
// layer passes a uint16 view plus dtype="bf16").
int DtypeOf(const nb::dlpack::dtype& t, int declared);
// "float16", "bfloat", ... for an error message.
std::string DescribeDtype(const nb::dlpack::dtype& t);

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

std::string ShapeString(const std::vector<size_t>& s);

template <typename A>
int CheckArray(const char* name, const A& a, int declared) {
  const int dtype = DtypeOf(a.dtype(), declared);
  if (dtype == 0) {
    throw nb::type_error((std::string(name) + ": dtype " + DescribeDtype(a.dtype()) +
                          " is not supported (float16, bfloat16, float32, float64)")
                             .c_str());
  }
  if (!IsCContiguous(a)) {
    throw nb::value_error((std::string(name) +
                           ": array is not C-contiguous; pass a contiguous "
                           "array (e.g. numpy.ascontiguousarray or tensor.contiguous())")
                              .c_str());
  }
  return dtype;
}

// Raises the Python exception of a failed status (ValueError for an invalid
// argument, RuntimeError otherwise) with relugrad's last error.
void Check(relugrad_status status);

// DLPack device types (dlpack.h): the ones relugrad has a backend for.
constexpr int kDLCPU = 1, kDLCUDA = 2, kDLCUDAHost = 3, kDLCUDAManaged = 13;

template <typename A>
std::string DeviceString(const A& a) {
  return "device type " + std::to_string(a.device_type()) + " id " + std::to_string(a.device_id());
}

// The backend every array of one call must share. Pinned host memory
// (kDLCUDAHost) is ordinary CPU-addressable memory. All arrays must be on the
// same device: relugrad does not copy between devices.
template <typename First, typename... Rest>
relugrad_backend Backend(const char* first_name, const First& first, const Rest&... rest) {
  const int type = first.device_type();
  relugrad_backend backend;
  if (type == kDLCPU || type == kDLCUDAHost) {
    backend = RELUGRAD_BACKEND_CPU;
  } else if (type == kDLCUDA || type == kDLCUDAManaged) {
    backend = RELUGRAD_BACKEND_CUDA;
  } else {
    throw nb::value_error((std::string(first_name) + ": " + DeviceString(first) +
                           " is neither the CPU (1) nor CUDA (2, 13)")
                              .c_str());
  }
  auto same = [&](const char* name, const auto& a) {
    const bool cpu_like = a.device_type() == kDLCPU || a.device_type() == kDLCUDAHost;
    const bool ok = backend == RELUGRAD_BACKEND_CPU
                        ? cpu_like
                        : (a.device_type() == type && a.device_id() == first.device_id());
    if (!ok) {
      throw nb::value_error((std::string(name) + ": " + DeviceString(a) + " differs from " +
                             first_name + "'s " + DeviceString(first) +
                             "; all arrays of a call must be on one device")
                                .c_str());
    }
  };
  (same(rest.first, rest.second), ...);
  if (backend == RELUGRAD_BACKEND_CUDA && !relugrad_backend_available(RELUGRAD_BACKEND_CUDA)) {
    throw nb::builtin_exception(
        nb::exception_type::runtime_error,
        (std::string(first_name) +
         ": a CUDA array needs relugrad's CUDA backend, which this build lacks")
            .c_str());
  }
  return backend;
}

template <typename A>
std::pair<const char*, const A&> Named(const char* name, const A& a) {
  return {name, a};
}

using MaskIn = nb::ndarray<uint8_t, nb::ro>;
using MaskOut = nb::ndarray<uint8_t>;

// A packed mask: uint8 (enforced by the ndarray type), C order, exactly
// ceil(n/8) bytes (any shape: a flat (ceil(n/8),) array is what we allocate).
template <typename M>
void CheckMask(const M& mask, int64_t n, const char* data_name) {
  if (!IsCContiguous(mask)) throw nb::value_error("mask: array is not C-contiguous");
  const int64_t want = relugrad_mask_bytes(n);
  if (static_cast<int64_t>(mask.size()) != want) {
    throw nb::value_error(("mask: has " + std::to_string(mask.size()) + " bytes, " + data_name +
                           " has " + std::to_string(n) +
                           " elements (needs ceil(n/8) = " + std::to_string(want) + ")")
                              .c_str());
  }
}

// One array argument of a plan run, imported without conversion (a copy would
// leave a written result in a temporary); what it cannot be is named.
template <typename T>
T ImportArray(const char* name, nb::handle h, const char* expected) {
  T array;
  if (!nb::try_cast<T>(h, array, /*convert=*/false)) {
    throw nb::type_error((std::string(name) + ": expected " + expected + ", got " +
                          nb::cast<std::string>(nb::str(h.type().attr("__qualname__"))))
                             .c_str());
  }
  return array;
}

constexpr const char* kInput = "an array (NumPy, DLPack or the buffer protocol)";
constexpr const char* kOutput = "a writable array (NumPy, DLPack; not read-only)";
constexpr const char* kMaskIn = "a uint8 array";
constexpr const char* kMaskOut = "a writable uint8 array";

}  // namespace relugrad_python
