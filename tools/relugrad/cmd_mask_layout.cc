// relugrad mask-layout --to blocked|flat --layout nchw|nhwc --shape N,C,H,W --mask M.npy -o OUT.npy
//
// Converts a 1-bit ReluV2 mask between relugrad's flat layout (x's element order, '|u1',
// ceil(N*C*H*W/8) bytes) and the 910B blocked layout CANN's ReluV2 writes (N, C1, H, W, 16 bits,
// written as a '|u1' array of shape (N, C1, H, W, 2)); relugrad.h, "The ReluV2 mask of Ascend
// 910B". The input must hold exactly the layout's byte count; it is read whole before the output
// is written (atomically), so -o may name the input.
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "cli_args.h"
#include "commands.h"
#include "io/npy.h"
#include "mask_layout_flags.h"
#include "relugrad/relugrad.h"
#include "semantics_flags.h"

namespace relugrad {
namespace cli {

int MaskLayoutCommand(int argc, char** argv, int first) {
  const std::vector<FlagSpec> specs = {
      {"to", true, "blocked (flat -> 910B blocked) or flat (blocked -> flat)"},
      {"layout", true, "x's layout: nchw or nhwc"},
      {"shape", true, "x's dimensions N,C,H,W (logical order, whatever the layout)"},
      {"mask", true, "input mask .npy (uint8)"},
      {"output|o", true, "output mask .npy to write (atomically)"},
      {"help|h", false, "this help"},
  };
  const Args args(argc, argv, first, specs);
  if (args.Has("help")) {
    std::printf("%s", Usage("mask-layout", specs).c_str());
    return 0;
  }
  const std::string to = args.Require("to");
  if (to != "blocked" && to != "flat")
    throw UsageError("--to must be blocked or flat, got '" + to + "'");
  const relugrad_x_format format = ParseXFormat(args.Require("layout"), "--layout");
  const BlockedShape shape = ParseShape(args.GetList("shape", ""), "--shape");
  const int64_t d[4] = {shape.n, shape.c, shape.h, shape.w};
  const std::string in_path = args.Require("mask");
  const std::string out_path = args.Require("output");

  const int64_t blocked_bytes = relugrad_mask_blocked_bytes(d[0], d[1], d[2], d[3]);
  if (blocked_bytes < 0) throw UsageError("--shape: the mask size overflows");
  const int64_t flat_bytes = relugrad_mask_bytes(d[0] * d[1] * d[2] * d[3]);
  npy::Array in;
  std::string error;
  if (!npy::Read(in_path, &in, &error)) throw UsageError(in_path + ": " + error);
  if (in.elem_size != 1 || (in.descr != "|u1" && in.descr != "<u1" && in.descr != "|b1"))
    throw UsageError(in_path + ": a mask is uint8 ('|u1'), got '" + in.descr + "'");
  const int64_t want = to == "blocked" ? flat_bytes : blocked_bytes;
  if (in.count != want)
    throw UsageError(in_path + ": " + std::to_string(in.count) + " bytes, the " +
                     (to == "blocked" ? "flat" : "blocked") + " mask of this shape has " +
                     std::to_string(want));
  const auto* src = reinterpret_cast<const uint8_t*>(in.data.data());
  std::vector<uint8_t> out(static_cast<size_t>(to == "blocked" ? blocked_bytes : flat_bytes));
  std::vector<int64_t> out_shape;
  if (to == "blocked") {
    CheckStatus(relugrad_mask_to_blocked(format, d[0], d[1], d[2], d[3], src, out.data()),
                "mask_to_blocked");
    out_shape = BlockedMaskShape(shape);
  } else {
    CheckStatus(relugrad_mask_from_blocked(format, d[0], d[1], d[2], d[3], src, out.data()),
                "mask_from_blocked");
    out_shape = {flat_bytes};
  }
  if (!npy::Write(out_path, "|u1", out_shape, out.data(), out.size(), &error))
    throw UsageError(out_path + ": " + error);
  return 0;
}

}  // namespace cli
}  // namespace relugrad
