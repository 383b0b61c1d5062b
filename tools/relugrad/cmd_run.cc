// relugrad run --dy DY.npy --x S.npy -o DX.npy [semantics flags]
// relugrad run --dy DY.npy --mask M.npy -o DX.npy [semantics flags]  (1-bit mask path)
//   [--backend ascend_twin --mask-layout blocked --layout nchw|nhwc --shape N,C,H,W]
//   (the 910B blocked mask of `relugrad forward --mask-layout blocked`; padding bits not read)
#include <cstdint>
#include <cstdio>
#include <string>

#include "cli_args.h"
#include "device_staging.h"
#include "commands.h"
#include "io/npy.h"
#include "mask_layout_flags.h"
#include "npy_dtype.h"
#include "semantics_flags.h"

namespace relugrad {
namespace cli {
namespace {

std::vector<FlagSpec> RunFlags() {
  std::vector<FlagSpec> specs = {
      {"dy", true, "upstream gradient .npy"},
      {"x|y", true, "gate .npy: forward input x or output y"},
      {"mask", true, "instead of --x: the bitmask from relugrad forward ('|u1', ceil(n/8) bytes)"},
      {"output|o", true, "dx .npy to write (atomically)"},
      {"dtype", true, "bf16 to read 2-byte integer/void data as bfloat16; or a check: f16/f32/f64"},
      {"help|h", false, "this help"},
  };
  for (auto& s : MaskLayoutFlagSpecs()) specs.push_back(s);
  for (auto& s : SemanticsFlagSpecs()) specs.push_back(s);
  return specs;
}

npy::Array Load(const std::string& path) {
  npy::Array a;
  std::string error;
  if (!npy::Read(path, &a, &error)) throw UsageError(path + ": " + error);
  return a;
}

}  // namespace

int RunCommand(int argc, char** argv, int first) {
  const auto specs = RunFlags();
  const Args args(argc, argv, first, specs);
  if (args.Has("help")) {
    std::printf("%s", Usage("run", specs).c_str());
    return 0;
  }
  const std::string dy_path = args.Require("dy");
  // ---- 1-bit mask path: --mask replaces --x ----
  if (args.Has("mask") && args.Has("x")) throw UsageError("give --x (or --y) or --mask, not both");
  const bool use_mask = args.Has("mask");
  const std::string s_path = use_mask ? args.Require("mask") : args.Require("x");
  // ---- end of the mask path block ----
  const std::string out_path = args.Require("output");
  const std::string requested = args.Get("dtype");
  if (!requested.empty() && requested != "bf16" && requested != "f16" && requested != "f32" &&
      requested != "f64") {
    throw UsageError("--dtype must be f16, bf16, f32 or f64, got '" + requested + "'");
  }
  // Validate every option before reading possibly large files.
  relugrad_options options = OptionsFromFlags(args, args.Get("semantics", "torch"));
  ApplyIsaFlag(args);
  if (!relugrad_backend_available(options.backend)) {
    throw UsageError("--backend " + args.Get("backend") +
                     " is not built in this relugrad (see relugrad info)");
  }
  const MaskLayout layout = MaskLayoutFromFlags(args, options);
  if (layout.blocked && !use_mask) throw UsageError("--mask-layout blocked needs --mask");

  npy::Array dy = Load(dy_path);
  npy::Array s = Load(s_path);
  const relugrad_dtype d = DtypeFromDescr(dy_path, dy.descr, requested);
  // ---- 1-bit mask path ----
  if (use_mask) {
    if (s.descr != "|u1" && s.descr != "<u1") {
      throw UsageError(s_path + ": a mask must be uint8 ('|u1'), the file holds '" + s.descr + "'");
    }
    const uint8_t* bits = reinterpret_cast<const uint8_t*>(s.data.data());
    if (layout.blocked) {
      CheckArrayShape(layout, dy_path, dy.shape, dy.count);
      const int64_t want = BlockedMaskBytes(layout.shape);
      if (s.count != want) {
        throw UsageError(s_path + ": mask has " + std::to_string(s.count) +
                         " bytes, the blocked mask of --shape has " + std::to_string(want));
      }
      CheckStatus(AscendTwinReluGradMaskBlocked(d, layout.format, layout.shape, dy.data.data(),
                                                bits, dy.data.data(), &options),
                  "relu_grad_mask (blocked mask)");
    } else {
      const int64_t want = relugrad_mask_bytes(dy.count);
      if (s.count != want) {
        throw UsageError(s_path + ": mask has " + std::to_string(s.count) + " bytes, " + dy_path +
                         " has " + std::to_string(dy.count) +
                         " elements (needs ceil(n/8) = " + std::to_string(want) + ")");
      }
      if (options.backend == RELUGRAD_BACKEND_CUDA) {
        // Device pointers only, as for the plain path: stage dy and the mask, in place on dy's
        // copy.
        RunOnDevice({{dy.data.data(), dy.data.size()}, {s.data.data(), s.data.size()}}, 0,
                    [&](const std::vector<void*>& dev) {
                      CheckStatus(relugrad_relu_grad_mask(d, dy.count, dev[0],
                                                          static_cast<const uint8_t*>(dev[1]),
                                                          dev[0], &options),
                                  "relu_grad_mask");
                    });
      } else {
        CheckStatus(
            relugrad_relu_grad_mask(d, dy.count, dy.data.data(), bits, dy.data.data(), &options),
            "relu_grad_mask");
      }
    }
    std::string error;
    if (!npy::Write(out_path, dy.descr, dy.shape, dy.data.data(), dy.data.size(), &error)) {
      throw UsageError(out_path + ": " + error);
    }
    return 0;
  }
  // ---- end of the mask path block ----
  const relugrad_dtype ds = DtypeFromDescr(s_path, s.descr, requested);
  if (d != ds) {
    throw UsageError(s_path + ": dtype '" + s.descr + "' differs from " + dy_path + "'s '" +
                     dy.descr + "'");
  }
  if (dy.shape != s.shape) throw UsageError(s_path + ": shape differs from " + dy_path + "'s");

  // In place on dy's buffer: dx = ReluGrad(dy, s) needs no third array.
  if (options.backend == RELUGRAD_BACKEND_CUDA) {
    // Device pointers only: stage both arrays, compute in place on dy's copy.
    RunOnDevice({{dy.data.data(), dy.data.size()}, {s.data.data(), s.data.size()}}, 0,
                [&](const std::vector<void*>& dev) {
                  CheckStatus(relugrad_relu_grad(d, dy.count, dev[0], dev[1], dev[0], &options),
                              "relu_grad");
                });
  } else {
    CheckStatus(
        relugrad_relu_grad(d, dy.count, dy.data.data(), s.data.data(), dy.data.data(), &options),
        "relu_grad");
  }
  std::string error;
  if (!npy::Write(out_path, dy.descr, dy.shape, dy.data.data(), dy.data.size(), &error)) {
    throw UsageError(out_path + ": " + error);
  }
  return 0;
}

}  // namespace cli
}  // namespace relugrad
