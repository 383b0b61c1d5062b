// --mask-layout flat|blocked, --layout nchw|nhwc, --shape N,C,H,W: the mask layout of
// `relugrad forward --mask-out` and `relugrad run --mask`, and x's layout and logical shape as
// `relugrad mask-layout` takes them. flat (default) is relugrad's own mask (ceil(n/8) bytes,
// every backend); blocked is the 910B's (N, C1, H, W, 16 bits), written and read by the
// AscendC blocked kernels on --backend ascend_twin only.
#ifndef RELUGRAD_TOOLS_MASK_LAYOUT_FLAGS_H_
#define RELUGRAD_TOOLS_MASK_LAYOUT_FLAGS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "ascend/blocked_mask.h"
#include "cli_args.h"
#include "relugrad/relugrad.h"

namespace relugrad {
namespace cli {

struct MaskLayout {
  bool blocked = false;
  relugrad_x_format format = RELUGRAD_X_NCHW;
  BlockedShape shape;
};

std::vector<FlagSpec> MaskLayoutFlagSpecs();

// "nchw"/"NCHW" or "nhwc"/"NHWC"; else a UsageError naming `flag`.
relugrad_x_format ParseXFormat(const std::string& text, const std::string& flag);
// Four dimensions >= 0; else a UsageError naming `flag`.
BlockedShape ParseShape(const std::vector<std::string>& dims, const std::string& flag);

// The flags checked before any file is read: blocked needs --backend ascend_twin, --layout and
// --shape; flat takes neither of those two.
MaskLayout MaskLayoutFromFlags(const Args& args, const relugrad_options& options);

// A 4-D array must have the shape's dimensions in the layout's order, any other one its element
// count; else a UsageError naming `path`.
void CheckArrayShape(const MaskLayout& layout, const std::string& path,
                     const std::vector<int64_t>& array_shape, int64_t count);

// The blocked mask's .npy shape (N, C1, H, W, 2) and byte count.
std::vector<int64_t> BlockedMaskShape(const BlockedShape& shape);
int64_t BlockedMaskBytes(const BlockedShape& shape);

}  // namespace cli
}  // namespace relugrad

#endif  // RELUGRAD_TOOLS_MASK_LAYOUT_FLAGS_H_
