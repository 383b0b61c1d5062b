#include "device_staging.h"

#include <string>

#include "cli_args.h"

#if defined(RELUGRAD_CLI_CUDA)
#include <cuda_runtime.h>
#endif

namespace relugrad {
namespace cli {

#if defined(RELUGRAD_CLI_CUDA)
namespace {

void Check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw UsageError(std::string("--backend cuda: ") + what + " failed: " + cudaGetErrorString(e));
}

// Frees what it allocated, whatever happens in between.
struct DeviceBuffers {
  std::vector<void*> ptrs;
  ~DeviceBuffers() {
    for (void* p : ptrs) cudaFree(p);
  }
};

}  // namespace

void RunOnDevice(const std::vector<HostSpan>& inputs, size_t result_index,
                 const std::function<void(const std::vector<void*>&)>& run) {
  DeviceBuffers buffers;
  for (const HostSpan& in : inputs) {
    void* d = nullptr;
    Check(cudaMalloc(&d, in.bytes == 0 ? 1 : in.bytes), "cudaMalloc");
    buffers.ptrs.push_back(d);
    Check(cudaMemcpy(d, in.data, in.bytes, cudaMemcpyHostToDevice), "copy to device");
  }
  run(buffers.ptrs);
  Check(cudaDeviceSynchronize(), "kernel");
  Check(cudaMemcpy(inputs[result_index].data, buffers.ptrs[result_index],
                   inputs[result_index].bytes, cudaMemcpyDeviceToHost),
        "copy to host");
}

#else

void RunOnDevice(const std::vector<HostSpan>&, size_t,
                 const std::function<void(const std::vector<void*>&)>&) {
  throw UsageError(
      "--backend cuda: the CUDA backend is not built in this relugrad (see relugrad info)");
}

#endif

}  // namespace cli
}  // namespace relugrad
