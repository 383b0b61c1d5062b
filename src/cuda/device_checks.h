// Host-side checks shared by every CUDA entry point: is there a device, which
// one is current, how large may a grid be, and can the device use a pointer.
// Each returns RELUGRAD_OK or sets the last error (core/error.h).
#ifndef RELUGRAD_CUDA_DEVICE_CHECKS_H_
#define RELUGRAD_CUDA_DEVICE_CHECKS_H_

#include <cuda_runtime_api.h>

#include <cstdint>
#include <initializer_list>

#include "relugrad/relugrad.h"

namespace relugrad {
namespace cuda {

struct LaunchTarget {
  int device = 0;      // the current device: kernels launch there
  int max_blocks = 1;  // grid cap for the grid-stride kernels
};

// UNSUPPORTED "no CUDA device: ..." when the runtime finds none (no driver,
// no GPU); else the current device and its grid cap (cached per device).
relugrad_status CurrentDevice(LaunchTarget* target);

// INVALID_ARGUMENT unless ptr is device memory of `device`, managed memory,
// or pinned host memory. Ordinary host memory is refused on every machine
// (even with HMM/ATS): a kernel touching it would kill the CUDA context where
// it is not mapped, and host arrays belong to the CPU backend.
relugrad_status CheckDevicePointer(const char* name, const void* ptr, int device);

// Whether `stream` is being captured into a CUDA graph (cudaStreamIsCapturing,
// which is legal during capture). While capturing, the entry points skip
// cudaPointerGetAttributes: a graph is captured once and replayed many times,
// and keeping the capture path to calls that are safe in every capture mode
// (PyTorch captures in the strict global mode) matters more. INVALID_ARGUMENT
// when the runtime rejects the stream (e.g. the legacy default stream while
// another stream captures).
relugrad_status StreamCapturing(void* stream, bool* capturing);

struct NamedPointer {
  const char* name;
  const void* ptr;
};

// The checks every entry point runs before a launch, in this order: a device
// (UNSUPPORTED without one, even for n == 0), then for n > 0 and unless the
// stream is being captured, each operand on that device.
relugrad_status CheckLaunch(int64_t n, void* stream, std::initializer_list<NamedPointer> operands,
                            LaunchTarget* target);

// INTERNAL_ERROR naming the kernel when a launch failed.
relugrad_status LaunchFailed(const char* kernel, long long n, void* stream, int device,
                             cudaError_t e);

}  // namespace cuda
}  // namespace relugrad

#endif  // RELUGRAD_CUDA_DEVICE_CHECKS_H_
