// relugrad C++17 API: a thin header-only layer over the C ABI.
//
// Errors are exceptions: relugrad::InvalidArgument (the caller's mistake)
// and relugrad::Unsupported (valid, but not built or not available here),
// both derived from relugrad::Error, which carries the C status and message.
//
//   std::vector<float> dy(n), x(n), dx(n);
//   relugrad::relu_grad<float>(dy, x, dx);                               // torch
//   relugrad::relu_grad<float>(dy, x, dx, relugrad::Options(relugrad::Preset::kTensorflow));
//   relugrad::relu_grad<float>(dy, x, dy);                               // in place
#ifndef RELUGRAD_RELUGRAD_HPP_
#define RELUGRAD_RELUGRAD_HPP_

#include <array>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "relugrad/relugrad.h"

namespace relugrad {

class Error : public std::runtime_error {
 public:
  Error(relugrad_status status, const std::string& message)
      : std::runtime_error(message), status_(status) {}
  relugrad_status status() const { return status_; }

 private:
  relugrad_status status_;
};

class InvalidArgument : public Error {
 public:
  using Error::Error;
};

class Unsupported : public Error {
 public:
  using Error::Error;
};

// Throws the exception matching a non-OK status, with the thread's message.
inline void check(relugrad_status status) {
  if (status == RELUGRAD_OK) return;
  const std::string message = relugrad_last_error();
  if (status == RELUGRAD_INVALID_ARGUMENT) throw InvalidArgument(status, message);
  if (status == RELUGRAD_UNSUPPORTED) throw Unsupported(status, message);
  throw Error(status, message);
}

// 16-bit storage types: raw bits, no arithmetic (ReluGrad needs none).
struct f16 {
  uint16_t bits;
};
struct bf16 {
  uint16_t bits;
};

template <class T>
struct dtype_of;
template <>
struct dtype_of<float> : std::integral_constant<relugrad_dtype, RELUGRAD_F32> {};
template <>
struct dtype_of<double> : std::integral_constant<relugrad_dtype, RELUGRAD_F64> {};
template <>
struct dtype_of<f16> : std::integral_constant<relugrad_dtype, RELUGRAD_F16> {};
template <>
struct dtype_of<bf16> : std::integral_constant<relugrad_dtype, RELUGRAD_BF16> {};

// A pointer and a length (std::span is C++20).
template <class T>
class Span {
 public:
  Span(T* data, size_t size) : data_(data), size_(size) {}
  template <class U, class = std::enable_if_t<std::is_same_v<std::remove_const_t<T>, U>>>
  Span(std::vector<U>& v) : data_(v.data()), size_(v.size()) {}
  template <class U, class = std::enable_if_t<std::is_same_v<std::remove_const_t<T>, U> &&
                                              std::is_const_v<T>>>
  Span(const std::vector<U>& v) : data_(v.data()), size_(v.size()) {}
  template <size_t N>
  Span(T (&a)[N]) : data_(a), size_(N) {}
  T* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  T* data_;
  size_t size_;
};

enum class Preset {
  kTorch = RELUGRAD_PRESET_TORCH,
  kTensorflow = RELUGRAD_PRESET_TENSORFLOW,
  kJax = RELUGRAD_PRESET_JAX,
  kOnednn = RELUGRAD_PRESET_ONEDNN,
  kMindspore = RELUGRAD_PRESET_MINDSPORE,
  kCannRelugrad = RELUGRAD_PRESET_CANN_RELUGRAD,
  kCannRelugradV2 = RELUGRAD_PRESET_CANN_RELUGRAD_V2,
  kCannThresholdGrad = RELUGRAD_PRESET_CANN_THRESHOLD_GRAD,
  kCannRelugradV2Hp = RELUGRAD_PRESET_CANN_RELUGRAD_V2_HP,
};

// Options with chainable setters: Options(Preset::kOnednn).alpha(0.1).threads(1)
class Options {
 public:
  explicit Options(Preset preset = Preset::kTorch) {
    check(relugrad_options_init(&raw_, static_cast<relugrad_preset>(preset)));
  }
  static Options from_name(const std::string& preset) {
    relugrad_preset p;
    check(relugrad_preset_from_name(preset.c_str(), &p));
    return Options(static_cast<Preset>(p));
  }
  Options& gate(relugrad_gate g) {
    raw_.gate = g;
    return *this;
  }
  Options& combine(relugrad_combine c) {
    raw_.combine = c;
    return *this;
  }
  Options& denormals(relugrad_denormals d) {
    raw_.denormals = d;
    return *this;
  }
  Options& threshold_rounding(relugrad_threshold_rounding r) {
    raw_.threshold_rounding = r;
    return *this;
  }
  Options& threshold(double t) {
    raw_.threshold = t;
    return *this;
  }
  Options& alpha(double a) {
    raw_.alpha = a;
    return *this;
  }
  // Upper gate bound (hardtanh: open for threshold < s < h); +inf = none.
  Options& gate_max(double h) {
    raw_.gate_max = h;
    return *this;
  }
  Options& clip(double lo, double hi) {
    raw_.clip = 1;
    raw_.clip_lo = lo;
    raw_.clip_hi = hi;
    return *this;
  }
  Options& no_clip() {
    raw_.clip = 0;
    return *this;
  }
  Options& threads(int n) {
    raw_.threads = n;
    return *this;
  }
  Options& backend(relugrad_backend b) {
    raw_.backend = b;
    return *this;
  }
  Options& stream(void* s) {
    raw_.stream = s;
    return *this;
  }
  Options& stores(relugrad_stores s) {
    raw_.stores = s;
    return *this;
  }
  const relugrad_options& raw() const { return raw_; }
  relugrad_options& raw() { return raw_; }

 private:
  relugrad_options raw_;
};

// Untyped call: n elements of `dtype` (host or device memory per backend).
inline void relu_grad(relugrad_dtype dtype, int64_t n, const void* dy, const void* s, void* dx,
                      const Options& options = Options()) {
  check(relugrad_relu_grad(dtype, n, dy, s, dx, &options.raw()));
}

// Typed call: the three spans must have the same length.
template <class T>
void relu_grad(Span<const T> dy, Span<const T> s, Span<T> dx, const Options& options = Options()) {
  if (dy.size() != s.size() || dy.size() != dx.size()) {
    throw InvalidArgument(RELUGRAD_INVALID_ARGUMENT, "dy, s and dx must have the same length (" +
                                                         std::to_string(dy.size()) + ", " +
                                                         std::to_string(s.size()) + ", " +
                                                         std::to_string(dx.size()) + ")");
  }
  relu_grad(dtype_of<T>::value, static_cast<int64_t>(dy.size()), dy.data(), s.data(), dx.data(),
            options);
}

// Output memory from relugrad_buffer_alloc (pages kept for reuse after the
// Buffer dies; relugrad.h). Move-only; uninitialised; n == 0 holds nothing.
template <class T>
class Buffer {
 public:
  explicit Buffer(size_t n = 0) : size_(n) {
    if (n == 0) return;
    if (n > SIZE_MAX / sizeof(T))
      throw InvalidArgument(RELUGRAD_INVALID_ARGUMENT, "Buffer: size overflows");
    data_ = static_cast<T*>(relugrad_buffer_alloc(n * sizeof(T)));
    if (data_ == nullptr) throw Error(RELUGRAD_INTERNAL_ERROR, relugrad_last_error());
  }
  Buffer(Buffer&& other) noexcept : data_(other.data_), size_(other.size_) {
    other.data_ = nullptr;
    other.size_ = 0;
  }
  Buffer& operator=(Buffer&& other) noexcept {
    if (this != &other) {
      relugrad_buffer_free(data_);
      data_ = other.data_;
      size_ = other.size_;
      other.data_ = nullptr;
      other.size_ = 0;
    }
    return *this;
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() { relugrad_buffer_free(data_); }

  T* data() { return data_; }
  const T* data() const { return data_; }
  size_t size() const { return size_; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  operator Span<T>() { return Span<T>(data_, size_); }
  operator Span<const T>() const { return Span<const T>(data_, size_); }

 private:
  T* data_ = nullptr;
  size_t size_ = 0;
};

// Allocating call: the result lives in a Buffer (cached pages, see above).
template <class T>
Buffer<T> relu_grad(Span<const T> dy, Span<const T> s, const Options& options = Options()) {
  Buffer<T> dx(dy.size());
  relu_grad<T>(dy, s, Span<T>(dx.data(), dx.size()), options);
  return dx;
}

// The scalar reference, same contract (host memory only).
template <class T>
void relu_grad_reference(Span<const T> dy, Span<const T> s, Span<T> dx,
                         const Options& options = Options()) {
  if (dy.size() != s.size() || dy.size() != dx.size()) {
    throw InvalidArgument(RELUGRAD_INVALID_ARGUMENT, "dy, s and dx must have the same length");
  }
  check(relugrad_relu_grad_reference(dtype_of<T>::value, static_cast<int64_t>(dy.size()), dy.data(),
                                     s.data(), dx.data(), &options.raw()));
}

// SIMD dispatch control.
inline std::vector<std::string> isa_available() {
  std::vector<std::string> names;
  for (int i = 0; i < relugrad_isa_count(); ++i) names.emplace_back(relugrad_isa_name(i));
  return names;
}
inline std::string isa_selected() { return relugrad_isa_selected(); }
inline void set_max_isa(const std::string& name) { check(relugrad_set_max_isa(name.c_str())); }

// ---- The 1-bit mask path -----------------------------------------
// relu_forward writes y = relu(x) and a packed bitmask (bit i = gate open
// for element i, LSB-first, mask_bytes(n) bytes, padding bits zero);
// relu_grad_mask computes dx from dy and that mask only. Same options as
// relu_grad; y may alias x and dx may alias dy; the mask aliases nothing.
//   std::vector<uint8_t> mask(relugrad::mask_bytes(x.size()));
//   relugrad::relu_forward<float>(x, y, mask);
//   relugrad::relu_grad_mask<float>(dy, mask, dx);
inline size_t mask_bytes(size_t n) { return n / 8 + (n % 8 != 0 ? 1 : 0); }

template <class T>
void relu_forward(Span<const T> x, Span<T> y, Span<uint8_t> mask,
                  const Options& options = Options()) {
  if (x.size() != y.size() || mask.size() != mask_bytes(x.size())) {
    throw InvalidArgument(
        RELUGRAD_INVALID_ARGUMENT,
        "relu_forward: x and y must have the same length and mask ceil(n/8) bytes (" +
            std::to_string(x.size()) + ", " + std::to_string(y.size()) + ", " +
            std::to_string(mask.size()) + ")");
  }
  check(relugrad_relu_forward(dtype_of<T>::value, static_cast<int64_t>(x.size()), x.data(),
                              y.data(), mask.data(), &options.raw()));
}

template <class T>
void relu_grad_mask(Span<const T> dy, Span<const uint8_t> mask, Span<T> dx,
                    const Options& options = Options()) {
  if (dy.size() != dx.size() || mask.size() != mask_bytes(dy.size())) {
    throw InvalidArgument(
        RELUGRAD_INVALID_ARGUMENT,
        "relu_grad_mask: dy and dx must have the same length and mask ceil(n/8) bytes (" +
            std::to_string(dy.size()) + ", " + std::to_string(dx.size()) + ", " +
            std::to_string(mask.size()) + ")");
  }
  check(relugrad_relu_grad_mask(dtype_of<T>::value, static_cast<int64_t>(dy.size()), dy.data(),
                                mask.data(), dx.data(), &options.raw()));
}
// ---- end of the 1-bit mask path ---------------------------------------------

}  // namespace relugrad

#endif  // RELUGRAD_RELUGRAD_HPP_
