// How relugrad.torch's calls run relugrad's kernels: the plans each thread
// keeps (one per configuration, created on first use), the split of a CPU
// call over torch's intra-op threads, the launch on torch's current stream
// of a CUDA device, and the one-shot calls of the fused dropout's planes.
// torch_plans.cc.
#pragma once

#include <ATen/Parallel.h>
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "relugrad/relugrad.h"

namespace relugrad_python {

// ATen's grain for elementwise ops (at::internal::GRAIN_SIZE, in the heavy
// ATen/TensorIterator.h): relugrad's calls split exactly when torch's own
// threshold_backward would. Torch's number, not relugrad's.
inline constexpr int64_t kTorchGrain = 32768;

// Calls run(begin, end) over [0, n) split over torch's threads
// (at::parallel_for at kTorchGrain), in parts that start at multiples of
// unit elements.
template <typename Run>
void ForEachUnitPart(int64_t n, int64_t unit, const Run& run) {
  at::parallel_for(0, (n + unit - 1) / unit, std::max<int64_t>(1, kTorchGrain / unit),
                   [&](int64_t begin, int64_t end) { run(begin * unit, std::min(end * unit, n)); });
}

// What a backward node keeps besides its saved tensors: the preset, resolved
// once by the forward, its name for the custom ops of create_graph, and the device.
struct Settings {
  std::string semantics;
  relugrad_preset preset;
  int64_t threads;
  // Where the forward ran, and so where the kernels of the backward run: the CPU, or a CUDA
  // device (on torch's current stream of it when the backward runs).
  at::Device device{at::kCPU};
};

// How one call runs: relugrad's options, whether it is split over torch's
// threads, and on which multiple of elements its parts start (decided once,
// used by ForEachPart).
//
// With threads = 0 a call is split over torch's own intra-op threads, not
// relugrad's pool: inside a torch program torch's OpenMP threads spin on the
// cores after each parallel region, and a second pool waking on the same
// cores made 2-thread steps up to 2x slower than nn.ReLU's. Whether to
// split and which stores each part gets are relugrad's launch policy's
// (relugrad_cpu_host_split; the rule: docs/design.md, "One CPU launch
// policy").
struct CallPlan {
  const relugrad_plan* plan;  // the library's plan of each part's call
  bool split;
  int64_t part_unit;
};

// The plan of a call of op over n elements of dtype with `settings`. `out`:
// the call's output, whose pages' residency the store choice reads (CPU). On
// a CUDA device (settings.device) one launch on torch's current stream of that
// device: the caller's stream, as for torch's own ops, which the autograd
// engine also sets for a backward node (the forward's stream).
CallPlan Plan(const Settings& settings, relugrad_plan_op op, int64_t n, relugrad_dtype dtype,
              const void* out);

// Calls run(begin, end) over [0, n): once, or over torch's threads (with
// at::parallel_for) when the plan splits. Parts start at multiples of the
// plan's unit: no two parts share a byte of the 1-bit mask, and in torch's
// 64-byte-aligned allocations no two share a cache line of any array.
template <typename Run>
void ForEachPart(const CallPlan& plan, int64_t n, const Run& run) {
  if (!plan.split) {
    run(0, n);
    return;
  }
  ForEachUnitPart(n, plan.part_unit, run);
}

// torch's current stream of a CUDA device, as relugrad_options.stream takes it.
void* CurrentCudaStream(const at::Device& device);

// y and mask = the mask forward of settings' preset over src (dense, y in its storage order,
// y may be src): one launch on CUDA, split over torch's threads on the CPU (settings.device).
void RunForwardMask(const Settings& settings, const at::Tensor& src, const at::Tensor& y,
                    uint8_t* mask);

// relugrad_pack_bits over bytes' storage (contiguous uint8/bool) into bits, on bytes' device.
void PackBits(const at::Tensor& bytes, const at::Tensor& bits);

// relugrad_relu_dropout_grad over dy's storage into dx's (both dense in the planes' order), on
// dy's device; dx may be dy.
void ReluDropoutGrad(const at::Tensor& dy, const at::Tensor& gate, const at::Tensor& keep,
                     double scale, const at::Tensor& dx);

// This thread's plan (created on first use, kept for the thread's life) of a
// one-thread call of op with the torch preset and cached stores: the pieces
// of a fused pass, each small enough to stay in cache. Its mask forward
// writes torch.relu's y (keep_negative_zero).
const relugrad_plan* OneThreadCachedPlan(relugrad_plan_op op, relugrad_dtype dtype);
// relugrad_plan_run / relugrad_plan_run_forward, a c10::Error on failure.
void RunPlan(const relugrad_plan* plan, int64_t n, const void* dy, const void* s, void* dx);
void RunForwardPlan(const relugrad_plan* plan, int64_t n, const void* x, void* y, uint8_t* mask);

}  // namespace relugrad_python
