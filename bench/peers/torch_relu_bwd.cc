// Peer driver: PyTorch's CPU ReLU backward from C++ (libtorch, from the
// .venv's torch wheel), `at::threshold_backward_out` with threshold 0 into
// a preallocated grad_input: the "PyTorch threshold_backward out=, C++"
// row of the performance targets, without Python's per-call cost. Timed and printed like
// onednn_relu_bwd (peer_driver.h), so bench/report.py lines them up.
//
//   torch_relu_bwd --dtype f32,bf16,f16 --sizes 4K,1M --threads 1,2 [--min-time 0.2] [--warm]
//
// Also `torch_alloc_cpp`: at::threshold_backward allocating its result
// (PyTorch's allocating entry point, minus Python), and `relugrad_torchbuf`:
// relugrad on the very same buffers right after ATen, a control for where
// this process's pages landed (first-touch placement moves bandwidth by
// measurably: docs/design.md, "Measurement flaws"). Threads: at::set_num_threads
// and relugrad's options.threads.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/version.h>

#include <cstdio>
#include <string>
#include <vector>

#include "peer_driver.h"
#include "relugrad/relugrad.h"

int main(int argc, char** argv) {
  const peer::Args args = peer::ParseArgs(argc, argv, "torch_relu_bwd");
  const std::string version = std::string("torch-") + TORCH_VERSION;
  for (const std::string& dt : peer::Split(args.dtypes)) {
    at::ScalarType type;
    if (dt == "f32")
      type = at::kFloat;
    else if (dt == "bf16")
      type = at::kBFloat16;
    else if (dt == "f16")
      type = at::kHalf;
    else if (dt == "f64")
      type = at::kDouble;
    else {
      std::fprintf(stderr, "torch_relu_bwd: unknown dtype %s\n", dt.c_str());
      return 1;
    }
    for (const std::string& size : peer::Split(args.sizes)) {
      const long long n = peer::ParseSize(size);
      peer::Operands ops(n, dt, args);
      if (!ops.ok()) {
        std::fprintf(stderr, "torch_relu_bwd: out of memory at n=%lld\n", n);
        return 1;
      }
      const int sets = ops.sets;
      // Tensors over our buffers (no copy): the same memory layout as
      // relugrad bench and onednn_relu_bwd use.
      std::vector<at::Tensor> t_dy, t_s, t_dx;
      const auto options = at::TensorOptions().dtype(type);
      for (int k = 0; k < sets; ++k) {
        t_dy.push_back(at::from_blob(ops.dy_at(k), {n}, options));
        t_s.push_back(at::from_blob(ops.s_at(k), {n}, options));
        t_dx.push_back(at::from_blob(ops.dx_at(k), {n}, options));
      }
      for (const std::string& ts : peer::Split(args.threads)) {
        const int t = std::atoi(ts.c_str());
        at::set_num_threads(t);
        int k = 0;
        peer::TimeAndPrint("torch_out_cpp", "torch", version.c_str(), dt, n, t, sets, args,
                           "torch_relu_bwd", [&] {
                             at::threshold_backward_out(t_dx[k], t_dy[k], t_s[k], 0.0);
                             k = k + 1 == sets ? 0 : k + 1;
                           });
        relugrad_options o;
        relugrad_options_init(&o, RELUGRAD_PRESET_TORCH);
        o.threads = t;
        const relugrad_dtype rd = dt == "f32"    ? RELUGRAD_F32
                                  : dt == "bf16" ? RELUGRAD_BF16
                                  : dt == "f16"  ? RELUGRAD_F16
                                                 : RELUGRAD_F64;
        k = 0;
        char rg_version[64];
        std::snprintf(rg_version, sizeof(rg_version), "relugrad-%s", relugrad_version());
        peer::TimeAndPrint("relugrad_torchbuf", "torch", rg_version, dt, n, t, sets, args,
                           "torch_relu_bwd", [&] {
                             relugrad_relu_grad(rd, n, ops.dy_at(k), ops.s_at(k), ops.dx_at(k), &o);
                             k = k + 1 == sets ? 0 : k + 1;
                           });
        if (n >= (1LL << 20)) {  // the allocating call matters where page faults do
          k = 0;
          peer::TimeAndPrint("torch_alloc_cpp", "torch", version.c_str(), dt, n, t, sets, args,
                             "torch_relu_bwd", [&] {
                               at::Tensor r = at::threshold_backward(t_dy[k], t_s[k], 0.0);
                               k = k + 1 == sets ? 0 : k + 1;
                             });
        }
      }
    }
  }
  return 0;
}
