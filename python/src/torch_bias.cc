// relugrad/_relugrad_torch.so, the Linear + ReLU pair with its bias gradient fused into the
// ReLU backward: the fused pass, torch.ops.relugrad_native.relu_grad_bias(dy, y) -> (dx, db), and
// LinearReLU's eager forward and backward node (NativeLinearRelu, torch_native.h; entered from
// torch_python_module.cc).
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
// thread count. They are not torch's sum(0) bits (its cascade order differs): docs/torch.md,
// "Bias-gradient fusion", says what was measured.
//
// The node (relugrad::LinearReluBackward) is C++ for the reason ReLU's is: the engine hands it
// the only reference to a gradient made by the op after it, so dx is written over that gradient
// (WritableInPlace: no allocation, no fresh pages); a Python autograd.Function's gradient argument
// is also held by the interpreter. Its forward is stock's op for op (at::linear, then relu in
// place over linear's own output, which nothing else holds: the same bits as torch.relu into a
// new tensor, one allocation fewer); input and weight gradients are the same mm calls as stock's
// addmm backward, so the same bits.
#include <ATen/Dispatch.h>
#include <ATen/ExpandUtils.h>
#include <ATen/Parallel.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/linear.h>
#include <ATen/ops/mm.h>
#include <ATen/ops/relu.h>
#include <ATen/ops/sum.h>
#include <ATen/ops/threshold_backward.h>
#include <c10/util/bit_cast.h>
#include <torch/csrc/autograd/VariableTypeUtils.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/functions/utils.h>
#include <torch/csrc/autograd/saved_variable.h>
#include <torch/library.h>

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "torch_native.h"
#include "torch_node_api.h"

namespace relugrad_python {
namespace {

constexpr int64_t kBlockRows = 128;  // rows summed in one accumulator before the block sums
// Columns of one tile where the columns are split: a work unit, not a numeric choice (a column's
// order never depends on it).
constexpr int64_t kChunkCols = 1024;

template <typename T>
using BiasBits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;

// dx = y <= 0 ? +0 : dy, branchless so that the column loop vectorizes: dy's bits ANDed with an
// all-ones lane where the gate is open (!(y <= 0): NaN y is open, as in threshold_backward).
template <typename T>
inline T Gate(T dy, T y) {
  const BiasBits<T> lane = BiasBits<T>(0) - static_cast<BiasBits<T>>(!(y <= T(0)));
  return c10::bit_cast<T>(static_cast<BiasBits<T>>(c10::bit_cast<BiasBits<T>>(dy) & lane));
}

// One tile: rows [0, rows) of columns [c0, c1), each dx element added into its column's
// accumulator. Two forms, so that every pointer the loop writes through is unaliased
// (__restrict__) and the column loop vectorizes: dx a tensor of its own, or dx over dy itself
// (the node writes over a gradient only it holds; each element is read before it is written).
template <typename T>
inline void TileBody(const T* __restrict__ dy, const T* __restrict__ y, T* __restrict__ dx,
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
inline void TileInPlaceBody(T* __restrict__ d, const T* __restrict__ y, T* __restrict__ acc,
                            int64_t rows, int64_t cols, int64_t c0, int64_t c1) {
  std::fill(acc + c0, acc + c1, T(0));
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t base = r * cols;
    for (int64_t c = c0; c < c1; ++c) {
      const T v = Gate(d[base + c], y[base + c]);
      d[base + c] = v;
      acc[c] += v;
    }
  }
}

// The loops above compile for the extension's baseline ISA (SSE2 on x86-64) unless cloned: GCC's
// target_clones builds each tile function for AVX-512, AVX2 and the baseline and picks one at load
// time (an ifunc), as relugrad's own kernels pick a Highway target. The bits do not depend on the
// clone: every element is a select and each column's sum keeps its row order.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define RELUGRAD_TILE_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define RELUGRAD_TILE_CLONES
#endif

// Tile(dy, y, dx, ...) per dtype: the in-place body where dx is dy itself, else the other.
#define RELUGRAD_TILE(T)                                                               \
  RELUGRAD_TILE_CLONES void Tile(const T* dy, const T* y, T* dx, T* acc, int64_t rows, \
                                 int64_t cols, int64_t c0, int64_t c1) {               \
    if (dx == dy) {                                                                    \
      TileInPlaceBody<T>(dx, y, acc, rows, cols, c0, c1);                              \
    } else {                                                                           \
      TileBody<T>(dy, y, dx, acc, rows, cols, c0, c1);                                 \
    }                                                                                  \
  }
RELUGRAD_TILE(float)
RELUGRAD_TILE(double)
#undef RELUGRAD_TILE

template <typename T>
void ReluGradBiasKernel(const T* dy, const T* y, T* dx, T* db, int64_t rows, int64_t cols) {
  const int64_t blocks = std::max<int64_t>(1, (rows + kBlockRows - 1) / kBlockRows);
  // Tiles of whole rows keep every stream sequential through its pages (a 1024-column piece of a
  // 4096-column float row is one 4 KiB page, where the prefetchers stop); columns are split only
  // where the row blocks are too few to give every thread two tiles.
  const int64_t chunk_cols =
      blocks >= 2 * at::get_num_threads() ? cols : std::min<int64_t>(cols, kChunkCols);
  const int64_t chunks = (cols + chunk_cols - 1) / chunk_cols;
  // One accumulator row per block; with one block the accumulators are db itself.
  std::vector<T> partial(blocks == 1 ? 0 : static_cast<size_t>(blocks * cols));
  T* sums = blocks == 1 ? db : partial.data();
  at::parallel_for(0, blocks * chunks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const int64_t b = t / chunks, k = t % chunks;
      const int64_t r0 = b * kBlockRows, r1 = std::min(rows, r0 + kBlockRows);
      const int64_t c0 = k * chunk_cols, c1 = std::min(cols, c0 + chunk_cols);
      Tile(dy + r0 * cols, y + r0 * cols, dx + r0 * cols, sums + b * cols, r1 - r0, cols, c0, c1);
    }
  });
  if (blocks == 1) {
    return;
  }
  at::parallel_for(0, chunks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t k = begin; k < end; ++k) {
      const int64_t c0 = k * chunk_cols, c1 = std::min(cols, c0 + chunk_cols);
      std::copy(sums + c0, sums + c1, db + c0);
      for (int64_t b = 1; b < blocks; ++b) {
        for (int64_t c = c0; c < c1; ++c) {
          db[c] += sums[b * cols + c];
        }
      }
    }
  });
}

// The fused pass into dx (dy itself or a new tensor) and db; dy and y contiguous, of one
// float dtype and shape, at least one dim.
void FusedPass(const at::Tensor& dy, const at::Tensor& y, const at::Tensor& dx,
               const at::Tensor& db) {
  const int64_t cols = dy.size(-1);
  const int64_t rows = cols == 0 ? 0 : dy.numel() / cols;
  if (cols == 0) return;
  if (rows == 0) {
    db.zero_();
    return;
  }
  AT_DISPATCH_FLOATING_TYPES(dy.scalar_type(), "relu_grad_bias", [&] {
    ReluGradBiasKernel<scalar_t>(dy.const_data_ptr<scalar_t>(), y.const_data_ptr<scalar_t>(),
                                 dx.mutable_data_ptr<scalar_t>(), db.mutable_data_ptr<scalar_t>(),
                                 rows, cols);
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
  at::Tensor dx = EmptyCpu(dy.sizes(), dy.options());
  at::Tensor db = EmptyCpu({dy.size(-1)}, dy.options());
  FusedPass(dy, y, dx, db);
  return {dx, db};
}

// Backward of y = relu(linear(x, weight, bias)): dx and the bias gradient in the fused pass
// (over the incoming gradient where only this node holds it), then stock's mm calls for the
// input and weight gradients. Under create_graph, or for a gradient the pass cannot read,
// stock's differentiable ops: threshold_backward, sum(0), the same mm calls.
//
// It keeps what stock's addmm keeps: x only when the weight needs a gradient, the weight only
// when x does (a frozen layer keeps no activation of its own), and computes only the gradients
// this backward asks for (task_should_compute_output: autograd.grad of x alone runs no weight mm).
// Each mm is the one stock's mm_mat1_backward / mm_mat2_backward picks from the forward's
// layouts (a column-major operand gets its gradient in column order), so the bits and strides
// are stock's for a weight stored transposed too.
struct LinearReluBackward : public torch::autograd::Node {
  torch::autograd::SavedVariable x;       // defined when the weight needs a gradient
  torch::autograd::SavedVariable weight;  // defined when x needs a gradient
  torch::autograd::SavedVariable y;
  std::vector<int64_t> x_sizes;
  // The forward's operands of addmm(bias, x2, weight.t()) in column-major order (stock's test:
  // strides[0] == 1 and strides[1] == sizes[0]).
  bool x2_column_major = false;
  bool weight_t_column_major = false;

  std::string name() const override { return "relugrad::LinearReluBackward"; }

  void release_variables() override {
    std::lock_guard<std::mutex> lock(mutex_);
    x.reset_data();
    weight.reset_data();
    y.reset_data();
  }

  torch::autograd::variable_list apply(torch::autograd::variable_list&& grads) override {
    std::lock_guard<std::mutex> lock(mutex_);
    const at::Tensor ys = y.unpack(getptr());
    // Moved out, not copied: dx may be written over a gradient only this node holds.
    at::Tensor dy = std::move(grads[0]);
    if (!dy.defined()) return {at::Tensor(), at::Tensor(), at::Tensor()};
    // The kernel reads raw memory: a lazily negated gradient (torch._neg_view) is negated first.
    if (dy.is_neg()) dy = dy.resolve_neg();
    const int64_t cols = ys.size(-1);
    const int64_t rows = RowsOf(ys.sizes());
    at::Tensor dx;
    at::Tensor db;
    if (!at::GradMode::is_enabled() && ReadableOnCpu(dy) && dy.is_contiguous() &&
        ReadableOnCpu(ys) && ys.is_contiguous() && dy.scalar_type() == ys.scalar_type() &&
        dy.sizes() == ys.sizes()) {
      dx = WritableInPlace(dy, ys.strides()) ? dy : EmptyCpu(ys.sizes(), dy.options());
      db = EmptyCpu({cols}, dy.options());
      FusedPass(dy, ys, dx, db);
    } else {
      dx = at::threshold_backward(dy, ys, 0);
    }
    const at::Tensor dx2 = dx.reshape({rows, cols});
    torch::autograd::variable_list out(3);
    if (task_should_compute_output(0)) {
      const at::Tensor w = weight.unpack();
      const at::Tensor g = x2_column_major ? w.t().mm(dx2.t()).t() : dx2.mm(w);
      out[0] = g.reshape(x_sizes);
    }
    if (task_should_compute_output(1)) {
      const at::Tensor xs = x.unpack();
      const at::Tensor x2 = xs.reshape({rows, x_sizes.back()});
      out[1] = weight_t_column_major ? dx2.t().mm(x2) : x2.t().mm(dx2).t();
    }
    // Unfused, the bias gradient is made last, as stock's engine reduces addmm's gradient to the
    // bias's shape after the node (sum_to): under create_graph the order in which the nodes are
    // made is the order the second backward adds their contributions in.
    if (task_should_compute_output(2)) {
      out[2] = db.defined() ? db : at::sum_to(dx2, at::IntArrayRef{cols});
    }
    return out;
  }

  // Rows of the 2-D view addmm sees: every dim but the last, multiplied (zero features too).
  static int64_t RowsOf(at::IntArrayRef sizes) {
    int64_t rows = 1;
    for (size_t d = 0; d + 1 < sizes.size(); ++d) rows *= sizes[d];
    return rows;
  }
};

// Stock's mm_mat*_backward test of a 2-D operand's layout: column-major.
bool ColumnMajor(at::IntArrayRef sizes, at::IntArrayRef strides) {
  return strides[0] == 1 && strides[1] == sizes[0];
}

}  // namespace

at::Tensor NativeLinearRelu(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  TORCH_CHECK(x.scalar_type() == weight.scalar_type() && x.scalar_type() == bias.scalar_type() &&
                  (x.scalar_type() == at::kFloat || x.scalar_type() == at::kDouble),
              "linear_relu: x, weight and bias must be all float32 or all float64");
  TORCH_CHECK(x.dim() >= 1 && weight.dim() == 2 && bias.dim() == 1,
              "linear_relu: x needs at least one dim, weight two, bias one");
  at::Tensor y;
  {
    at::AutoDispatchBelowADInplaceOrView guard;  // stock's ops, recording no history
    y = at::linear(x, weight, bias);
    at::relu_(y);  // over linear's own output: nothing else holds it
  }
  if (torch::autograd::compute_requires_grad(x, weight, bias)) {
    auto node = MakeNode<LinearReluBackward>();
    node->set_next_edges(torch::autograd::collect_next_edges(x, weight, bias));
    SetHistory(y, node, /*inplace=*/false);
    // x2: the 2-D x stock's addmm multiplies (x itself when 2-D, else its rows view).
    const at::Tensor x2 =
        x.dim() == 2 ? x : x.reshape({LinearReluBackward::RowsOf(x.sizes()), x.size(-1)});
    node->x_sizes = x.sizes().vec();
    node->x2_column_major = ColumnMajor(x2.sizes(), x2.strides());
    // weight.t()'s sizes and strides are weight's, swapped.
    node->weight_t_column_major = weight.stride(1) == 1 && weight.stride(0) == weight.size(1);
    if (weight.requires_grad()) node->x = torch::autograd::SavedVariable(x, /*is_output=*/false);
    if (x.requires_grad()) {
      node->weight = torch::autograd::SavedVariable(weight, /*is_output=*/false);
    }
    node->y = torch::autograd::SavedVariable(y, /*is_output=*/true);
    FireCreationHooks(node);
  }
  return y;
}

}  // namespace relugrad_python

TORCH_LIBRARY_FRAGMENT(relugrad_native, m) {
  m.def("relu_grad_bias(Tensor dy, Tensor y) -> (Tensor, Tensor)", &relugrad_python::ReluGradBias);
}
