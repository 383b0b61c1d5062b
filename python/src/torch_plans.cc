#include "torch_plans.h"

#include <c10/core/Stream.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include <cstdint>
#include <vector>

#include "torch_binding.h"

namespace relugrad_python {
namespace {

// The plans this thread's calls run, one per configuration (op, dtype,
// preset, the threads and store hint the launch policy gives a CPU part, or
// the CUDA stream a launch goes to: a plan's options hold its stream),
// created on first use and kept for the thread's life: a training step
// repeats a handful of configurations, so every call after the first runs a
// resolved plan (relugrad.h, "Plans") and never re-validates its options.
// Per thread, so no lock: autograd's backward runs on its own threads. At
// most kMaxPlans are kept, the oldest dropped first: a program that makes a
// new CUDA stream per step must not grow the list without bound.
class ThreadPlans {
 public:
  ThreadPlans() = default;
  ThreadPlans(const ThreadPlans&) = delete;
  ThreadPlans& operator=(const ThreadPlans&) = delete;
  ~ThreadPlans() {
    const CApiTable* api = g_api.load(std::memory_order_acquire);
    if (api == nullptr) return;  // no plan was ever created
    for (const Entry& e : entries_) api->plan_destroy(e.plan);
  }

  // stream: nullptr for a CPU plan, else the CUDA stream (torch's, never the legacy default
  // stream's null handle: torch's default stream of a device is a real cudaStream_t).
  const relugrad_plan* Get(relugrad_plan_op op, relugrad_dtype dtype, relugrad_preset preset,
                           int32_t threads, relugrad_stores stores, void* stream = nullptr,
                           bool cuda = false) {
    for (const Entry& e : entries_) {
      if (e.op == op && e.dtype == dtype && e.preset == preset && e.threads == threads &&
          e.stores == stores && e.stream == stream && e.cuda == cuda)
        return e.plan;
    }
    const CApiTable& api = Api();
    relugrad_options options;
    Check(api.options_init(&options, preset));
    options.threads = threads;
    options.stores = stores;
    if (cuda) {
      options.backend = RELUGRAD_BACKEND_CUDA;
      options.stream = stream;
    }
    // The torch preset's mask forward writes torch.relu's y: on the CPU -0
    // kept (clamp_min's bits there), on CUDA +0 (CUDA's relu writes +0 for
    // x = -0). Every other op ignores the field.
    options.keep_negative_zero = preset == RELUGRAD_PRESET_TORCH && !cuda ? 1 : 0;
    relugrad_plan* plan = nullptr;
    Check(api.plan_create(op, dtype, &options, &plan));
    if (entries_.size() >= kMaxPlans) {
      api.plan_destroy(entries_.front().plan);
      entries_.erase(entries_.begin());
    }
    entries_.push_back({op, dtype, preset, threads, stores, stream, cuda, plan});
    return plan;
  }

 private:
  static constexpr size_t kMaxPlans = 64;
  struct Entry {
    relugrad_plan_op op;
    relugrad_dtype dtype;
    relugrad_preset preset;
    int32_t threads;
    relugrad_stores stores;
    void* stream;
    bool cuda;
    relugrad_plan* plan;
  };
  std::vector<Entry> entries_;
};

ThreadPlans& ThisThreadsPlans() {
  thread_local ThreadPlans plans;
  return plans;
}

}  // namespace

CallPlan Plan(const Settings& settings, relugrad_plan_op op, int64_t n, relugrad_dtype dtype,
              const void* out) {
  if (settings.device.is_cuda()) {
    const c10::Stream stream =
        c10::impl::getDeviceGuardImpl(c10::DeviceType::CUDA)->getStream(settings.device);
    CallPlan plan;
    plan.plan = ThisThreadsPlans().Get(op, dtype, settings.preset, 0, RELUGRAD_STORES_AUTO,
                                       stream.native_handle(), /*cuda=*/true);
    plan.split = false;
    plan.part_unit = 1;
    return plan;
  }
  const CApiTable& api = Api();
  relugrad_host_split how;
  Check(api.cpu_host_split(dtype, n, static_cast<int32_t>(settings.threads),
                           static_cast<int32_t>(at::get_num_threads()), kTorchGrain, out, &how));
  CallPlan plan;
  plan.plan = ThisThreadsPlans().Get(op, dtype, settings.preset, how.threads, how.stores);
  plan.split = how.split != 0;
  plan.part_unit = how.part_unit_elems;
  return plan;
}

void* CurrentCudaStream(const at::Device& device) {
  return c10::impl::getDeviceGuardImpl(c10::DeviceType::CUDA)->getStream(device).native_handle();
}

void RunForwardMask(const Settings& settings, const at::Tensor& src, const at::Tensor& y,
                    uint8_t* mask) {
  const int64_t n = src.numel();
  const relugrad_dtype dtype = DtypeOf(src);
  const int64_t size = static_cast<int64_t>(src.element_size());
  const auto* x_p = static_cast<const char*>(src.const_data_ptr());
  auto* y_p = static_cast<char*>(y.mutable_data_ptr());
  const CallPlan plan = Plan(settings, RELUGRAD_OP_RELU_FORWARD_MASK, n, dtype, y_p);
  ForEachPart(plan, n, [&](int64_t begin, int64_t end) {
    Check(Api().plan_run_forward(plan.plan, end - begin, x_p + begin * size, y_p + begin * size,
                                 mask + begin / 8));
  });
}

namespace {

// The options of a one-shot call of the fused dropout planes' functions on `device`: the CPU
// backend (torch's threads) or CUDA on torch's current stream of the device.
relugrad_options PlanesOptions(const at::Device& device) {
  relugrad_options options;
  Check(Api().options_init(&options, RELUGRAD_PRESET_TORCH));
  if (device.is_cuda()) {
    options.backend = RELUGRAD_BACKEND_CUDA;
    options.stream = CurrentCudaStream(device);
  } else {
    options.threads = static_cast<int32_t>(at::get_num_threads());
  }
  return options;
}

}  // namespace

void PackBits(const at::Tensor& bytes, const at::Tensor& bits) {
  const relugrad_options options = PlanesOptions(bytes.device());
  Check(Api().pack_bits(bytes.numel(), static_cast<const uint8_t*>(bytes.const_data_ptr()),
                        static_cast<uint8_t*>(bits.mutable_data_ptr()), &options));
}

void ReluDropoutGrad(const at::Tensor& dy, const at::Tensor& gate, const at::Tensor& keep,
                     double scale, const at::Tensor& dx) {
  const relugrad_options options = PlanesOptions(dy.device());
  Check(Api().relu_dropout_grad(DtypeOf(dy), dy.numel(), dy.const_data_ptr(),
                                static_cast<const uint8_t*>(gate.const_data_ptr()),
                                static_cast<const uint8_t*>(keep.const_data_ptr()), scale,
                                dx.mutable_data_ptr(), &options));
}

const relugrad_plan* OneThreadCachedPlan(relugrad_plan_op op, relugrad_dtype dtype) {
  return ThisThreadsPlans().Get(op, dtype, RELUGRAD_PRESET_TORCH, 1, RELUGRAD_STORES_CACHED);
}

void RunPlan(const relugrad_plan* plan, int64_t n, const void* dy, const void* s, void* dx) {
  Check(Api().plan_run(plan, n, dy, s, dx));
}

void RunForwardPlan(const relugrad_plan* plan, int64_t n, const void* x, void* y, uint8_t* mask) {
  Check(Api().plan_run_forward(plan, n, x, y, mask));
}

// True when the backward may write dx over the incoming gradient: nothing but
// this call holds the tensor or its storage (the engine moved it in; a post
// hook, a retained or stashed gradient, the profiler's inputs or a live view
// would hold a second reference: torch's own rule, is_tensor_stealable, by
// which AccumulateGrad takes a gradient without a copy), the storage is torch's
// allocator's for grad's device (not a NumPy array, a DLPack import or another
// owner's blob), grad covers
// exactly that storage, and it already has dx's strides. dx = grad then costs

}  // namespace relugrad_python
