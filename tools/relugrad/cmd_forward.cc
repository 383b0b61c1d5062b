// relugrad forward --x X.npy -o Y.npy --mask-out M.npy [semantics flags]
//   [--backend ascend_twin --mask-layout blocked --layout nchw|nhwc --shape N,C,H,W]
//
// y = relu(x) with the preset's forward rules, and the 1-bit mask that
// `relugrad run --dy DY.npy --mask M.npy` reads back: a '|u1' array of
// ceil(n/8) bytes, bit i = gate open for element i (LSB first). --backend
// cpu (default) or ascend_twin (the AscendC ReluV2 kernel on the CPU twin).
// With --mask-layout blocked (ascend_twin only) the mask is the 910B's
// (N, C1, H, W, 16) bits, written as a '|u1' array (N, C1, H, W, 2) by the
// blocked ReluV2 kernel from x's layout; y keeps x's layout.
#include <sys/stat.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "cli_args.h"
#include "commands.h"
#include "io/npy.h"
#include "mask_layout_flags.h"
#include "npy_dtype.h"
#include "semantics_flags.h"

namespace relugrad {
namespace cli {
namespace {

std::vector<FlagSpec> ForwardFlags() {
  std::vector<FlagSpec> specs = {
      {"x", true, "forward input .npy"},
      {"output|o", true, "y = relu(x) .npy to write (atomically)"},
      {"mask-out", true, "bitmask .npy to write (atomically): uint8, ceil(n/8) bytes"},
      {"dtype", true, "bf16 to read 2-byte integer/void data as bfloat16; or a check: f16/f32/f64"},
      {"help|h", false, "this help"},
  };
  for (auto& s : MaskLayoutFlagSpecs()) specs.push_back(s);
  for (auto& s : SemanticsFlagSpecs()) specs.push_back(s);
  return specs;
}

// Whether two paths name one file: the same inode where both exist (hard links, symlinks),
// else the same absolute path once "." and ".." and symlinks of the existing part are resolved.
bool SameFile(const std::string& a, const std::string& b) {
  struct stat sa, sb;
  if (::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0)
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  std::error_code ea, eb;
  const std::filesystem::path ca =
      std::filesystem::weakly_canonical(std::filesystem::absolute(a, ea), ea);
  const std::filesystem::path cb =
      std::filesystem::weakly_canonical(std::filesystem::absolute(b, eb), eb);
  return ea || eb ? a == b : ca == cb;
}

}  // namespace

int ForwardCommand(int argc, char** argv, int first) {
  const auto specs = ForwardFlags();
  const Args args(argc, argv, first, specs);
  if (args.Has("help")) {
    std::printf("%s", Usage("forward", specs).c_str());
    return 0;
  }
  const std::string x_path = args.Require("x");
  const std::string y_path = args.Require("output");
  const std::string mask_path = args.Require("mask-out");
  if (SameFile(y_path, mask_path))
    throw UsageError("-o '" + y_path + "' and --mask-out '" + mask_path + "' name the same file");
  const std::string requested = args.Get("dtype");
  if (!requested.empty() && requested != "bf16" && requested != "f16" && requested != "f32" &&
      requested != "f64") {
    throw UsageError("--dtype must be f16, bf16, f32 or f64, got '" + requested + "'");
  }
  relugrad_options options = OptionsFromFlags(args, args.Get("semantics", "torch"));
  ApplyIsaFlag(args);
  // The arrays live in host memory: the backends that compute on it (cpu, and
  // ascend_twin's AscendC kernels) serve the mask path here.
  if (options.backend == RELUGRAD_BACKEND_CUDA) {
    throw UsageError(
        "--backend cuda: forward runs the mask path on host memory (cpu, ascend_twin)");
  }
  if (!relugrad_backend_available(options.backend)) {
    throw UsageError("--backend " + args.Get("backend") +
                     " is not built in this relugrad (see relugrad info)");
  }
  const MaskLayout layout = MaskLayoutFromFlags(args, options);

  npy::Array x;
  std::string error;
  if (!npy::Read(x_path, &x, &error)) throw UsageError(x_path + ": " + error);
  const relugrad_dtype d = DtypeFromDescr(x_path, x.descr, requested);
  std::vector<uint8_t> mask;
  std::vector<int64_t> mask_shape;
  // In place: y overwrites x's buffer.
  if (layout.blocked) {
    CheckArrayShape(layout, x_path, x.shape, x.count);
    mask.resize(static_cast<size_t>(BlockedMaskBytes(layout.shape)));
    mask_shape = BlockedMaskShape(layout.shape);
    CheckStatus(AscendTwinReluForwardBlocked(d, layout.format, layout.shape, x.data.data(),
                                             x.data.data(), mask.data(), &options),
                "relu_forward (blocked mask)");
  } else {
    mask.resize(static_cast<size_t>(relugrad_mask_bytes(x.count)));
    mask_shape = {static_cast<int64_t>(mask.size())};
    CheckStatus(
        relugrad_relu_forward(d, x.count, x.data.data(), x.data.data(), mask.data(), &options),
        "relu_forward");
  }
  // The mask first: if it cannot be written, no y appears either.
  if (!npy::Write(mask_path, "|u1", mask_shape, mask.data(), mask.size(), &error)) {
    throw UsageError(mask_path + ": " + error);
  }
  if (!npy::Write(y_path, x.descr, x.shape, x.data.data(), x.data.size(), &error)) {
    std::remove(mask_path.c_str());
    throw UsageError(y_path + ": " + error);
  }
  return 0;
}

}  // namespace cli
}  // namespace relugrad
