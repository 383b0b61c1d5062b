// Host <-> device staging for `relugrad run --backend cuda`: the CUDA
// backend takes device pointers only, while the CLI holds .npy data in host
// memory. Built against cudart when the library has the CUDA backend;
// otherwise every call reports that CUDA is not built.
#ifndef RELUGRAD_TOOLS_DEVICE_STAGING_H_
#define RELUGRAD_TOOLS_DEVICE_STAGING_H_

#include <cstddef>
#include <functional>
#include <vector>

namespace relugrad {
namespace cli {

struct HostSpan {
  void* data;
  size_t bytes;
};

// Copies every input to fresh device buffers, calls run(device pointers),
// synchronises, and copies device buffer `result_index` back into
// inputs[result_index] (in place on the host). Throws UsageError on any CUDA
// failure with the runtime's message.
void RunOnDevice(const std::vector<HostSpan>& inputs, size_t result_index,
                 const std::function<void(const std::vector<void*>&)>& run);

}  // namespace cli
}  // namespace relugrad

#endif  // RELUGRAD_TOOLS_DEVICE_STAGING_H_
