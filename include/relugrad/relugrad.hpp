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
//
//   relugrad::Plan plan(relugrad::Op::kReluGrad, RELUGRAD_F32, options);  // resolve once
//   for (...) plan.relu_grad<float>(dy, x, dx);                            // run many
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
  // Mask forward: a closed x = -0 gives y = -0 (torch.relu) instead of +0.
  Options& keep_negative_zero(bool keep) {
    raw_.keep_negative_zero = keep ? 1 : 0;
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
  // Options holding `raw` as given (validated when a call or plan uses it).
  static Options from_raw(const relugrad_options& raw) {
    Options o;
    o.raw_ = raw;
    return o;
  }

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

// ---- Plans (relugrad.h "Plans: resolve once, run many") ---------------------
enum class Op {
  kReluGrad = RELUGRAD_OP_RELU_GRAD,
  kReluForwardMask = RELUGRAD_OP_RELU_FORWARD_MASK,
  kReluGradMask = RELUGRAD_OP_RELU_GRAD_MASK,
};

// One operator for one dtype with its options resolved once: the
// constructor throws what the one-shot call would throw for these options
// (InvalidArgument, Unsupported), the runs only the array errors. Move-only;
// a run is const and may run on many threads at once. A moved-from Plan
// holds nothing and its runs throw InvalidArgument.
class Plan {
 public:
  Plan(Op op, relugrad_dtype dtype, const Options& options = Options()) {
    check(relugrad_plan_create(static_cast<relugrad_plan_op>(op), dtype, &options.raw(), &plan_));
  }
  // The plan for element type T (float, double, f16, bf16).
  template <class T>
  static Plan of(Op op, const Options& options = Options()) {
    return Plan(op, dtype_of<T>::value, options);
  }
  Plan(Plan&& other) noexcept : plan_(other.plan_) { other.plan_ = nullptr; }
  Plan& operator=(Plan&& other) noexcept {
    if (this != &other) {
      relugrad_plan_destroy(plan_);
      plan_ = other.plan_;
      other.plan_ = nullptr;
    }
    return *this;
  }
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;
  ~Plan() { relugrad_plan_destroy(plan_); }

  Op op() const { return static_cast<Op>(relugrad_plan_get_op(plan_)); }
  relugrad_dtype dtype() const { return relugrad_plan_get_dtype(plan_); }
  // The options as the plan resolved them (threads capped, defaults filled).
  Options options() const {
    relugrad_options raw;
    check(relugrad_options_init(&raw, RELUGRAD_PRESET_TORCH));
    check(relugrad_plan_get_options(plan_, &raw));
    return Options::from_raw(raw);
  }
  const relugrad_plan* raw() const { return plan_; }

  // Untyped runs: relugrad_plan_run (relu_grad: a = dy, b = s; relu_grad_mask:
  // a = dy, b = mask) and relugrad_plan_run_forward.
  void run(int64_t n, const void* a, const void* b, void* out) const {
    check(relugrad_plan_run(plan_, n, a, b, out));
  }
  void run_forward(int64_t n, const void* x, void* y, uint8_t* mask) const {
    check(relugrad_plan_run_forward(plan_, n, x, y, mask));
  }

  // Typed runs: the lengths as the one-shot calls check them; the plan must
  // be of the run's op and T its dtype.
  template <class T>
  void relu_grad(Span<const T> dy, Span<const T> s, Span<T> dx) const {
    expect<T>(Op::kReluGrad, "relu_grad");
    if (dy.size() != s.size() || dy.size() != dx.size()) {
      throw InvalidArgument(RELUGRAD_INVALID_ARGUMENT, "dy, s and dx must have the same length (" +
                                                           std::to_string(dy.size()) + ", " +
                                                           std::to_string(s.size()) + ", " +
                                                           std::to_string(dx.size()) + ")");
    }
    run(static_cast<int64_t>(dy.size()), dy.data(), s.data(), dx.data());
  }
  template <class T>
  void relu_forward(Span<const T> x, Span<T> y, Span<uint8_t> mask) const {
    expect<T>(Op::kReluForwardMask, "relu_forward");
    if (x.size() != y.size() || mask.size() != mask_bytes(x.size())) {
      throw InvalidArgument(
          RELUGRAD_INVALID_ARGUMENT,
          "relu_forward: x and y must have the same length and mask ceil(n/8) bytes (" +
              std::to_string(x.size()) + ", " + std::to_string(y.size()) + ", " +
              std::to_string(mask.size()) + ")");
    }
    run_forward(static_cast<int64_t>(x.size()), x.data(), y.data(), mask.data());
  }
  template <class T>
  void relu_grad_mask(Span<const T> dy, Span<const uint8_t> mask, Span<T> dx) const {
    expect<T>(Op::kReluGradMask, "relu_grad_mask");
    if (dy.size() != dx.size() || mask.size() != mask_bytes(dy.size())) {
      throw InvalidArgument(
          RELUGRAD_INVALID_ARGUMENT,
          "relu_grad_mask: dy and dx must have the same length and mask ceil(n/8) bytes (" +
              std::to_string(dy.size()) + ", " + std::to_string(dx.size()) + ", " +
              std::to_string(mask.size()) + ")");
    }
    run(static_cast<int64_t>(dy.size()), dy.data(), mask.data(), dx.data());
  }

 private:
  template <class T>
  void expect(Op op, const char* what) const {
    if (plan_ == nullptr) return;  // the run reports it
    if (op != this->op()) {
      throw InvalidArgument(
          RELUGRAD_INVALID_ARGUMENT,
          std::string(what) + ": the plan is for " +
              relugrad_enum_name(RELUGRAD_ENUM_PLAN_OP, relugrad_plan_get_op(plan_)));
    }
    if (dtype_of<T>::value != dtype()) {
      throw InvalidArgument(RELUGRAD_INVALID_ARGUMENT, std::string(what) + ": the plan is for " +
                                                           relugrad_dtype_name(dtype()) +
                                                           ", the arrays hold " +
                                                           relugrad_dtype_name(dtype_of<T>::value));
    }
  }

  relugrad_plan* plan_ = nullptr;
};

}  // namespace relugrad

#endif  // RELUGRAD_RELUGRAD_HPP_
