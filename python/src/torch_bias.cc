// relugrad/_relugrad_torch.so, the Linear + ReLU backward's fused pass:
// torch.ops.relugrad_native.relu_grad_bias(dy, y) -> (dx, db).
//
// dx = y <= 0 ? +0 : dy (threshold_backward(dy, y, 0): the torch preset, a NaN y passes dy) and
// db = the column sums of dx over every dim but the last (Linear's bias gradient, which stock
// computes as dx.sum(0) in a second pass over dx). One pass reads dy and y, writes dx and adds
// each dx element into its column's accumulator while it is in a register.
//
// The order of the sums is fixed by the shape alone, never by the thread count: rows are cut
// into blocks of kBlockRows, and within a block each column is summed row after row in the
// accumulation type (float for float32, double for float64); the block sums of a column are then
// added in block order and rounded once to the dtype. Threads take (row block, column chunk)
// tiles, and a column chunk never changes a column's order, so the bits are the same for any
// thread count. They are not torch's sum(0) bits (its cascade order differs): docs/python.md,
// "Bias-gradient fusion", says what was measured.
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
#include <vector>

namespace relugrad_python {
namespace {

constexpr int64_t kBlockRows = 128;   // rows summed in one accumulator before the block sums
constexpr int64_t kChunkCols = 1024;  // columns of one tile: a work unit, not a numeric choice

template <typename T>
using BiasBits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;

// dx = y <= 0 ? +0 : dy, branchless so that the column loop vectorizes: dy's bits ANDed with an
// all-ones lane where the gate is open (!(y <= 0): NaN y is open, as in threshold_backward).
template <typename T>
inline T Gate(T dy, T y) {
  const BiasBits<T> lane = BiasBits<T>(0) - static_cast<BiasBits<T>>(!(y <= T(0)));
  return c10::bit_cast<T>(static_cast<BiasBits<T>>(c10::bit_cast<BiasBits<T>>(dy) & lane));
}

// The pointers never alias (dx and the sums are fresh tensors): __restrict__ lets the column
// loop vectorize.
template <typename T>
void Tile(const T* __restrict__ dy, const T* __restrict__ y, T* __restrict__ dx,
          T* __restrict__ acc, int64_t rows, int64_t cols, int64_t c0, int64_t c1) {
  std::fill(acc + c0, acc + c1, T(0));
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t base = r * cols;
    for (int64_t c = c0; c < c1; ++c) {
      const T v = Gate(dy[base + c], y[base + c]);
      dx[base + c] = v;
      acc[c] += v;
    }
  }
}

template <typename T>
void ReluGradBiasKernel(const T* dy, const T* y, T* dx, T* db, int64_t rows, int64_t cols) {
  const int64_t blocks = std::max<int64_t>(1, (rows + kBlockRows - 1) / kBlockRows);
  const int64_t chunks = (cols + kChunkCols - 1) / kChunkCols;
  // One accumulator row per block; with one block the accumulators are db itself.
  std::vector<T> partial(blocks == 1 ? 0 : static_cast<size_t>(blocks * cols));
  T* sums = blocks == 1 ? db : partial.data();
  at::parallel_for(0, blocks * chunks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const int64_t b = t / chunks, k = t % chunks;
      const int64_t r0 = b * kBlockRows, r1 = std::min(rows, r0 + kBlockRows);
      const int64_t c0 = k * kChunkCols, c1 = std::min(cols, c0 + kChunkCols);
      Tile<T>(dy + r0 * cols, y + r0 * cols, dx + r0 * cols, sums + b * cols, r1 - r0, cols, c0,
              c1);
    }
  });
  if (blocks == 1) {
    return;
  }
  at::parallel_for(0, chunks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t k = begin; k < end; ++k) {
      const int64_t c0 = k * kChunkCols, c1 = std::min(cols, c0 + kChunkCols);
      std::copy(sums + c0, sums + c1, db + c0);
      for (int64_t b = 1; b < blocks; ++b) {
        for (int64_t c = c0; c < c1; ++c) {
          db[c] += sums[b * cols + c];
        }
      }
    }
  });
}

std::tuple<at::Tensor, at::Tensor> ReluGradBias(const at::Tensor& dy_in, const at::Tensor& y_in) {
  // The kernel reads raw memory: lazily negated tensors (torch._neg_view) are negated first.
  const at::Tensor dy = dy_in.resolve_neg();
  const at::Tensor y = y_in.resolve_neg();
  TORCH_CHECK(dy.dim() >= 1, "relu_grad_bias: dy must have at least one dim (the features)");
  TORCH_CHECK(dy.device().is_cpu() && y.device().is_cpu() && dy.layout() == at::kStrided &&
                  y.layout() == at::kStrided && dy.is_contiguous() && y.is_contiguous(),
              "relu_grad_bias: dy and y must be contiguous CPU tensors");
  TORCH_CHECK(dy.sizes() == y.sizes(), "relu_grad_bias: y has shape ", y.sizes(), ", dy has ",
              dy.sizes());
  TORCH_CHECK(dy.scalar_type() == y.scalar_type(), "relu_grad_bias: y is ", y.scalar_type(),
              ", dy is ", dy.scalar_type());
  TORCH_CHECK(dy.scalar_type() == at::kFloat || dy.scalar_type() == at::kDouble,
              "relu_grad_bias: dy must be float32 or float64, got ", dy.scalar_type());
  const int64_t cols = dy.size(-1);
  const int64_t rows = cols == 0 ? 0 : dy.numel() / cols;
  at::Tensor dx = at::empty(dy.sizes(), dy.options());
  at::Tensor db = at::empty({cols}, dy.options());
  if (cols == 0) {
    return {dx, db};
  }
  if (rows == 0) {
    db.zero_();
    return {dx, db};
  }
  AT_DISPATCH_FLOATING_TYPES(dy.scalar_type(), "relu_grad_bias", [&] {
    ReluGradBiasKernel<scalar_t>(dy.const_data_ptr<scalar_t>(), y.const_data_ptr<scalar_t>(),
                                 dx.mutable_data_ptr<scalar_t>(), db.mutable_data_ptr<scalar_t>(),
                                 rows, cols);
  });
  return {dx, db};
}

}  // namespace
}  // namespace relugrad_python

TORCH_LIBRARY_FRAGMENT(relugrad_native, m) {
  m.def("relu_grad_bias(Tensor dy, Tensor y) -> (Tensor, Tensor)", &relugrad_python::ReluGradBias);
}
