// The CUDA backend's host side: is there a device, are the pointers usable
// by it, then one kernel launch on the caller's stream, checked. Arguments
// were validated by the operator layer (api/relu_grad.cc); the rules arrive
// as KernelParams and are only flattened here (device_params.h).
#include <cuda_runtime_api.h>

#include <atomic>
#include <cstdint>

#include "core/backends.h"
#include "core/error.h"
#include "cuda/device_params.h"
#include "cuda/element.h"
#include "cuda/kernels.h"

namespace relugrad {
namespace {

// Grid cap per SM for the grid-stride kernels: 8 blocks of 256 threads fill
// an SM (2048 threads on sm_80/sm_90); 4 such waves keep the per-block share
// of a large n even while bounding the grid for huge n.
constexpr int kBlocksPerSm = 32;

// Per-device facts, looked up once (cudaDeviceGetAttribute is cheap but not
// free, and this sits on the launch path of small calls).
struct DeviceFacts {
  int max_blocks;
};

constexpr int kMaxCachedDevices = 64;
std::atomic<int> g_facts_max_blocks[kMaxCachedDevices];  // 0 = not looked up yet

relugrad_status CudaFail(relugrad_status status, const char* what, cudaError_t e) {
  return Fail(status, "%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
}

relugrad_status GetDeviceFacts(int device, DeviceFacts* facts) {
  if (device >= 0 && device < kMaxCachedDevices) {
    const int cached = g_facts_max_blocks[device].load(std::memory_order_relaxed);
    if (cached > 0) {
      facts->max_blocks = cached;
      return RELUGRAD_OK;
    }
  }
  int sms = 0;
  const cudaError_t e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  if (e != cudaSuccess) return CudaFail(RELUGRAD_INTERNAL_ERROR, "cudaDeviceGetAttribute(MultiProcessorCount)", e);
  facts->max_blocks = (sms > 0 ? sms : 1) * kBlocksPerSm;
  if (device >= 0 && device < kMaxCachedDevices) {
    g_facts_max_blocks[device].store(facts->max_blocks, std::memory_order_relaxed);
  }
  return RELUGRAD_OK;
}

// A host pointer handed to a kernel is an illegal address that kills the
// whole CUDA context, so it is refused here with a readable message. This
// holds even where the GPU could reach pageable memory (HMM/ATS): the same
// call then behaves the same on every machine, and a host array belongs to
// the CPU backend anyway.
relugrad_status CheckDevicePointer(const char* name, const void* ptr, int device) {
  cudaPointerAttributes attr{};
  const cudaError_t e = cudaPointerGetAttributes(&attr, ptr);
  if (e != cudaSuccess) {
    cudaGetLastError();  // not sticky; do not leave it for the caller's next check
    return CudaFail(RELUGRAD_INVALID_ARGUMENT, name, e);
  }
  switch (attr.type) {
    case cudaMemoryTypeDevice:
      if (attr.device != device) {
        return Fail(RELUGRAD_INVALID_ARGUMENT,
                    "%s (%p) is memory of CUDA device %d, but the current device is %d "
                    "(relugrad launches on the current device: call cudaSetDevice first)",
                    name, ptr, attr.device, device);
      }
      return RELUGRAD_OK;
    case cudaMemoryTypeManaged:
    case cudaMemoryTypeHost:  // pinned, mapped into the device's address space
      return RELUGRAD_OK;
    default:  // cudaMemoryTypeUnregistered: ordinary host memory
      return Fail(RELUGRAD_INVALID_ARGUMENT,
                  "%s (%p) is ordinary host memory; the CUDA backend (device %d) needs device, "
                  "managed or pinned memory (use backend = cpu for host arrays)",
                  name, ptr, device);
  }
}

}  // namespace

bool CudaBackendBuilt() { return true; }

relugrad_status CudaReluGrad(Dtype dtype, int64_t n, const void* dy, const void* s, void* dx,
                             const KernelParams& params, const Semantics& semantics) {
  int device_count = 0;
  cudaError_t e = cudaGetDeviceCount(&device_count);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return Fail(RELUGRAD_UNSUPPORTED, "no CUDA device: cudaGetDeviceCount failed: %s (%s)",
                cudaGetErrorString(e), cudaGetErrorName(e));
  }
  if (device_count == 0) {
    return Fail(RELUGRAD_UNSUPPORTED, "no CUDA device: the CUDA runtime reports 0 devices");
  }
  if (n == 0) return RELUGRAD_OK;

  int device = 0;
  e = cudaGetDevice(&device);
  if (e != cudaSuccess) return CudaFail(RELUGRAD_INTERNAL_ERROR, "cudaGetDevice", e);
  DeviceFacts facts{};
  RELUGRAD_RETURN_IF_ERROR(GetDeviceFacts(device, &facts));
  RELUGRAD_RETURN_IF_ERROR(CheckDevicePointer("dy", dy, device));
  RELUGRAD_RETURN_IF_ERROR(CheckDevicePointer("s", s, device));
  RELUGRAD_RETURN_IF_ERROR(CheckDevicePointer("dx", dx, device));

  const cuda::Mode mode = cuda::ModeFor(params);
  const cuda::VectorPlan plan = cuda::PlanVectors(dtype, n, dy, s, dx);
  e = cuda::LaunchReluGrad(dtype, mode, plan, n, dy, s, dx, cuda::ToDeviceParams(params),
                           static_cast<cudaStream_t>(semantics.stream), facts.max_blocks);
  if (e != cudaSuccess) {
    return Fail(RELUGRAD_INTERNAL_ERROR, "CUDA launch of %s (n = %lld, stream %p, device %d) failed: %s (%s)",
                cuda::KernelName(dtype, mode, plan.vector), static_cast<long long>(n), semantics.stream,
                device, cudaGetErrorString(e), cudaGetErrorName(e));
  }
  return RELUGRAD_OK;
}

}  // namespace relugrad
