#include "cuda/device_checks.h"

#include <atomic>

#include "core/error.h"

namespace relugrad {
namespace cuda {
namespace {

// Grid cap per SM for the grid-stride kernels: 8 blocks of 256 threads fill
// an SM (2048 threads on sm_80/sm_90); 4 such waves keep the per-block share
// of a large n even while bounding the grid for huge n.
constexpr int kBlocksPerSm = 32;

// Looked up once per device: cudaDeviceGetAttribute is cheap but not free,
// and this sits on the launch path of small calls.
constexpr int kMaxCachedDevices = 64;
std::atomic<int> g_max_blocks[kMaxCachedDevices];  // 0 = not looked up yet

relugrad_status CudaFail(relugrad_status status, const char* what, cudaError_t e) {
  return Fail(status, "%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
}

}  // namespace

relugrad_status CurrentDevice(LaunchTarget* target) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    cudaGetLastError();  // not sticky: leave nothing for the caller's next check
    return Fail(RELUGRAD_UNSUPPORTED, "no CUDA device: cudaGetDeviceCount failed: %s (%s)",
                cudaGetErrorString(e), cudaGetErrorName(e));
  }
  if (count == 0)
    return Fail(RELUGRAD_UNSUPPORTED, "no CUDA device: the CUDA runtime reports 0 devices");
  e = cudaGetDevice(&target->device);
  if (e != cudaSuccess) return CudaFail(RELUGRAD_INTERNAL_ERROR, "cudaGetDevice", e);
  const int d = target->device;
  if (d >= 0 && d < kMaxCachedDevices) {
    const int cached = g_max_blocks[d].load(std::memory_order_relaxed);
    if (cached > 0) {
      target->max_blocks = cached;
      return RELUGRAD_OK;
    }
  }
  int sms = 0;
  e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, d);
  if (e != cudaSuccess)
    return CudaFail(RELUGRAD_INTERNAL_ERROR, "cudaDeviceGetAttribute(MultiProcessorCount)", e);
  target->max_blocks = (sms > 0 ? sms : 1) * kBlocksPerSm;
  if (d >= 0 && d < kMaxCachedDevices)
    g_max_blocks[d].store(target->max_blocks, std::memory_order_relaxed);
  return RELUGRAD_OK;
}

relugrad_status CheckDevicePointer(const char* name, const void* ptr, int device) {
  cudaPointerAttributes attr{};
  const cudaError_t e = cudaPointerGetAttributes(&attr, ptr);
  if (e != cudaSuccess) {
    cudaGetLastError();
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

relugrad_status StreamCapturing(void* stream, bool* capturing) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  const cudaError_t e = cudaStreamIsCapturing(static_cast<cudaStream_t>(stream), &status);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return Fail(RELUGRAD_INVALID_ARGUMENT, "options.stream (%p) cannot be used now: %s (%s)",
                stream, cudaGetErrorString(e), cudaGetErrorName(e));
  }
  *capturing = status != cudaStreamCaptureStatusNone;
  return RELUGRAD_OK;
}

relugrad_status CheckLaunch(int64_t n, void* stream, std::initializer_list<NamedPointer> operands,
                            LaunchTarget* target) {
  RELUGRAD_RETURN_IF_ERROR(CurrentDevice(target));
  if (n == 0) return RELUGRAD_OK;
  bool capturing = false;
  RELUGRAD_RETURN_IF_ERROR(StreamCapturing(stream, &capturing));
  if (capturing) return RELUGRAD_OK;
  for (const NamedPointer& op : operands)
    RELUGRAD_RETURN_IF_ERROR(CheckDevicePointer(op.name, op.ptr, target->device));
  return RELUGRAD_OK;
}

relugrad_status LaunchFailed(const char* kernel, long long n, void* stream, int device,
                             cudaError_t e) {
  return Fail(RELUGRAD_INTERNAL_ERROR,
              "CUDA launch of %s (n = %lld, stream %p, device %d) failed: %s (%s)", kernel, n,
              stream, device, cudaGetErrorString(e), cudaGetErrorName(e));
}

}  // namespace cuda
}  // namespace relugrad
