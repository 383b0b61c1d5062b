#include "mask_layout_flags.h"

namespace relugrad {
namespace cli {

std::vector<FlagSpec> MaskLayoutFlagSpecs() {
  return {
      {"mask-layout", true,
       "flat (default: relugrad's mask, ceil(n/8) bytes) or blocked (910B: N,C1,H,W,16 bits; "
       "--backend ascend_twin, with --layout and --shape)"},
      {"layout", true, "with --mask-layout blocked: x's layout, nchw or nhwc"},
      {"shape", true, "with --mask-layout blocked: x's dimensions N,C,H,W (logical order)"},
  };
}

relugrad_x_format ParseXFormat(const std::string& text, const std::string& flag) {
  if (text == "nchw" || text == "NCHW") return RELUGRAD_X_NCHW;
  if (text == "nhwc" || text == "NHWC") return RELUGRAD_X_NHWC;
  throw UsageError(flag + " must be nchw or nhwc, got '" + text + "'");
}

BlockedShape ParseShape(const std::vector<std::string>& dims, const std::string& flag) {
  if (dims.size() != 4) throw UsageError(flag + " needs four dimensions N,C,H,W");
  int64_t d[4];
  for (int i = 0; i < 4; ++i) {
    d[i] = ParseInt(dims[static_cast<size_t>(i)], flag);
    if (d[i] < 0) throw UsageError(flag + " dimensions must be >= 0");
  }
  BlockedShape s;
  s.n = d[0];
  s.c = d[1];
  s.h = d[2];
  s.w = d[3];
  return s;
}

MaskLayout MaskLayoutFromFlags(const Args& args, const relugrad_options& options) {
  MaskLayout m;
  const std::string name = args.Get("mask-layout", "flat");
  if (name != "flat" && name != "blocked")
    throw UsageError("--mask-layout must be flat or blocked, got '" + name + "'");
  m.blocked = name == "blocked";
  if (!m.blocked) {
    if (args.Has("layout") || args.Has("shape"))
      throw UsageError("--layout and --shape describe x for --mask-layout blocked only");
    return m;
  }
  if (options.backend != RELUGRAD_BACKEND_ASCEND_TWIN) {
    throw UsageError(
        "--mask-layout blocked: the 910B blocked mask is written and read by --backend "
        "ascend_twin only (relugrad mask-layout converts a flat mask)");
  }
  m.format = ParseXFormat(args.Require("layout"), "--layout");
  m.shape = ParseShape(args.GetList("shape", ""), "--shape");
  if (m.shape.c < 1) throw UsageError("--shape: the blocked mask needs C >= 1");
  if (BlockedMaskBytes(m.shape) < 0) throw UsageError("--shape: the mask size overflows");
  return m;
}

void CheckArrayShape(const MaskLayout& layout, const std::string& path,
                     const std::vector<int64_t>& array_shape, int64_t count) {
  const BlockedShape& s = layout.shape;
  const bool nhwc = layout.format == RELUGRAD_X_NHWC;
  const std::vector<int64_t> want =
      nhwc ? std::vector<int64_t>{s.n, s.h, s.w, s.c} : std::vector<int64_t>{s.n, s.c, s.h, s.w};
  // BlockedShapeElements is -1 for a shape that overflows: never an array's count.
  const bool match =
      array_shape.size() == 4 ? array_shape == want : count == BlockedShapeElements(s);
  if (!match) {
    std::string have;
    for (int64_t d : array_shape) have += (have.empty() ? "" : ",") + std::to_string(d);
    throw UsageError(path + ": shape (" + have + ") is not --shape " + std::to_string(s.n) + "," +
                     std::to_string(s.c) + "," + std::to_string(s.h) + "," + std::to_string(s.w) +
                     " in " + (nhwc ? "NHWC" : "NCHW") + " order");
  }
}

std::vector<int64_t> BlockedMaskShape(const BlockedShape& s) {
  return {s.n, (s.c + 15) / 16, s.h, s.w, 2};
}

int64_t BlockedMaskBytes(const BlockedShape& s) {
  return relugrad_mask_blocked_bytes(s.n, s.c, s.h, s.w);
}

}  // namespace cli
}  // namespace relugrad
