// relugrad/_relugrad_torch.so, ReLUDropout's float32/float64 kernels:
// torch.ops.relugrad_native.relu_dropout_forward and relu_dropout_backward.
//
// Backward: dx = gate ? dy * noise : +0, with noise = keep ? scale : +0, from the two bit planes
// that relugrad/_dropout.py's forward packs (relugrad's relu_forward mask format: 1 bit per
// element, LSB first, in dy's C order). This is stock's mul backward (grad * noise) followed by
// threshold_backward, in one pass that reads dy and two bits and writes dx, where the torch-op
// composition makes four passes over n elements. Why here and not in the Highway kernels: the
// product must be torch's own IEEE multiply (a dropped element gives dy * 0: -0 for negative dy,
// NaN for inf/NaN dy, with dy's payload as x86 mul returns it), which a plain multiply of
// float/double is; reduced-precision dtypes stay on the torch-op path, where torch's rounding
// applies. Under create_graph the Python path serves (differentiable ops).
#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <c10/util/bit_cast.h>
#include <torch/library.h>

#include <algorithm>
#include <cstdint>
#include <tuple>
#include <type_traits>

namespace relugrad_python {
namespace {

// The loops below are branchless over 8 elements (one byte of each plane) so that the compiler
// vectorizes them: a selected value is its bits ANDed with an all-ones or all-zero lane mask,
// which gives +0 where not selected, as the ternaries they stand for.
template <typename T>
using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;

template <typename T>
inline Bits<T> Lane(unsigned byte, int j) {
  return Bits<T>(0) - static_cast<Bits<T>>((byte >> j) & 1u);
}

template <typename T>
inline T Select(T v, Bits<T> lane) {
  return c10::bit_cast<T>(static_cast<Bits<T>>(c10::bit_cast<Bits<T>>(v) & lane));
}

template <typename T>
void BackwardBytes(const T* dy, unsigned gb, unsigned kb, T s, T* dx, int count) {
  for (int j = 0; j < count; ++j) {
    const T product = dy[j] * Select(s, Lane<T>(kb, j));  // dy * noise, as stock's mul backward
    dx[j] = Select(product, Lane<T>(gb, j));              // threshold_backward's select
  }
}

template <typename T>
void BackwardParts(const T* dy, const uint8_t* g, const uint8_t* k, T s, T* dx, int64_t n,
                   int64_t bytes) {
  // Parts of whole bytes: no two threads share a byte of either plane.
  at::parallel_for(0, bytes, 4096, [&](int64_t begin, int64_t end) {
    for (int64_t byte = begin; byte < end; ++byte) {
      const int64_t base = byte * 8;
      const int count = static_cast<int>(std::min<int64_t>(8, n - base));
      if (count == 8) {
        BackwardBytes<T>(dy + base, g[byte], k[byte], s, dx + base, 8);
      } else {
        BackwardBytes<T>(dy + base, g[byte], k[byte], s, dx + base, count);
      }
    }
  });
}

template <typename T>
void ForwardBytes(const T* x, T s, T* noise, uint8_t* g, uint8_t* k, int count) {
  unsigned gb = 0, kb = 0;  // padding bits stay 0
  for (int j = 0; j < count; ++j) {
    const T v = x[j];
    const T y = Select(v, Bits<T>(0) - static_cast<Bits<T>>(!(v < T(0))));  // x < 0 ? +0 : x
    const unsigned kept = noise[j] != T(0);
    noise[j] = y * Select(s, Bits<T>(0) - static_cast<Bits<T>>(kept));
    gb |= static_cast<unsigned>(!(y <= T(0))) << j;
    kb |= kept << j;
  }
  *g = static_cast<uint8_t>(gb);
  *k = static_cast<uint8_t>(kb);
}

template <typename T>
void ForwardParts(const T* x, T s, T* noise, uint8_t* g, uint8_t* k, int64_t n, int64_t bytes) {
  at::parallel_for(0, bytes, 4096, [&](int64_t begin, int64_t end) {
    for (int64_t byte = begin; byte < end; ++byte) {
      const int64_t base = byte * 8;
      const int count = static_cast<int>(std::min<int64_t>(8, n - base));
      if (count == 8) {
        ForwardBytes<T>(x + base, s, noise + base, g + byte, k + byte, 8);
      } else {
        ForwardBytes<T>(x + base, s, noise + base, g + byte, k + byte, count);
      }
    }
  });
}

at::Tensor ReluDropoutBackward(const at::Tensor& dy_in, const at::Tensor& gate,
                               const at::Tensor& keep, double scale) {
  // The kernel reads raw memory: a lazily negated gradient (torch._neg_view) is negated first.
  const at::Tensor dy = dy_in.resolve_neg();
  TORCH_CHECK(dy.device().is_cpu() && dy.layout() == at::kStrided && dy.is_contiguous(),
              "relu_dropout_backward: dy must be a contiguous CPU tensor");
  TORCH_CHECK(dy.scalar_type() == at::kFloat || dy.scalar_type() == at::kDouble,
              "relu_dropout_backward: dy must be float32 or float64, got ", dy.scalar_type());
  const int64_t n = dy.numel();
  const int64_t bytes = (n + 7) / 8;
  for (const at::Tensor* plane : {&gate, &keep}) {
    TORCH_CHECK(plane->device().is_cpu() && plane->scalar_type() == at::kByte &&
                    plane->is_contiguous() && plane->numel() == bytes,
                "relu_dropout_backward: each bit plane must be a contiguous CPU uint8 tensor of ",
                bytes, " bytes for ", n, " elements");
  }
  at::Tensor dx = at::empty(dy.sizes(), dy.options());
  const uint8_t* g = gate.const_data_ptr<uint8_t>();
  const uint8_t* k = keep.const_data_ptr<uint8_t>();
  AT_DISPATCH_FLOATING_TYPES(dy.scalar_type(), "relu_dropout_backward", [&] {
    // scale is the kept noise value of this dtype (exact in scalar_t): the cast does not round.
    BackwardParts<scalar_t>(dy.const_data_ptr<scalar_t>(), g, k, static_cast<scalar_t>(scale),
                            dx.mutable_data_ptr<scalar_t>(), n, bytes);
  });
  return dx;
}

// The forward after stock's draw: noise holds bernoulli_(1 - p)'s 0/1 values; it is overwritten
// with the output y * (noise ? scale : +0), y = torch.relu(x) (x < 0 ? +0 : x, so -0 and NaN pass
// as they are), which is stock's `noise.div_(1 - p)` then `y * noise`; gate gets the bits of
// !(y <= 0) (threshold_backward's open gate), keep those of noise != 0. One pass where the
// composition makes four (relu, div, mul and two packings).
std::tuple<at::Tensor, at::Tensor> ReluDropoutForward(const at::Tensor& x, at::Tensor& noise,
                                                      double scale) {
  TORCH_CHECK(
      x.device().is_cpu() && x.layout() == at::kStrided && x.is_contiguous() &&
          noise.device().is_cpu() && noise.is_contiguous() && noise.sizes() == x.sizes() &&
          noise.scalar_type() == x.scalar_type(),
      "relu_dropout_forward: x and noise must be contiguous CPU tensors of one shape and dtype");
  TORCH_CHECK(x.scalar_type() == at::kFloat || x.scalar_type() == at::kDouble,
              "relu_dropout_forward: x must be float32 or float64, got ", x.scalar_type());
  const int64_t n = x.numel();
  const int64_t bytes = (n + 7) / 8;
  at::Tensor gate = at::empty({bytes}, x.options().dtype(at::kByte));
  at::Tensor keep = at::empty({bytes}, x.options().dtype(at::kByte));
  uint8_t* g = gate.mutable_data_ptr<uint8_t>();
  uint8_t* k = keep.mutable_data_ptr<uint8_t>();
  AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "relu_dropout_forward", [&] {
    ForwardParts<scalar_t>(x.const_data_ptr<scalar_t>(), static_cast<scalar_t>(scale),  // exact
                           noise.mutable_data_ptr<scalar_t>(), g, k, n, bytes);
  });
  return {gate, keep};
}

}  // namespace
}  // namespace relugrad_python

TORCH_LIBRARY_FRAGMENT(relugrad_native, m) {
  m.def("relu_dropout_backward(Tensor dy, Tensor gate, Tensor keep, float scale) -> Tensor",
        &relugrad_python::ReluDropoutBackward);
  m.def("relu_dropout_forward(Tensor x, Tensor(a!) noise, float scale) -> (Tensor, Tensor)",
        &relugrad_python::ReluDropoutForward);
}
