// relugrad run --dy DY.npy --x S.npy -o DX.npy [semantics flags]
#include <cstdio>
#include <string>

#include "cli_args.h"
#include "commands.h"
#include "io/npy.h"
#include "npy_dtype.h"
#include "semantics_flags.h"

namespace relugrad {
namespace cli {
namespace {

std::vector<FlagSpec> RunFlags() {
  std::vector<FlagSpec> specs = {
      {"dy", true, "upstream gradient .npy"},
      {"x|y", true, "gate .npy: forward input x or output y"},
      {"output|o", true, "dx .npy to write (atomically)"},
      {"dtype", true, "bf16 to read 2-byte integer/void data as bfloat16; or a check: f16/f32/f64"},
      {"help|h", false, "this help"},
  };
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
  const std::string s_path = args.Require("x");
  const std::string out_path = args.Require("output");
  const std::string requested = args.Get("dtype");
  if (!requested.empty() && requested != "bf16" && requested != "f16" && requested != "f32" && requested != "f64") {
    throw UsageError("--dtype must be f16, bf16, f32 or f64, got '" + requested + "'");
  }
  // Validate every option before reading possibly large files.
  relugrad_options options = OptionsFromFlags(args, args.Get("semantics", "torch"));
  ApplyIsaFlag(args);
  if (!relugrad_backend_available(options.backend)) {
    throw UsageError("--backend " + args.Get("backend") + " is not built in this relugrad (see relugrad info)");
  }

  npy::Array dy = Load(dy_path);
  npy::Array s = Load(s_path);
  const relugrad_dtype d = DtypeFromDescr(dy_path, dy.descr, requested);
  const relugrad_dtype ds = DtypeFromDescr(s_path, s.descr, requested);
  if (d != ds) {
    throw UsageError(s_path + ": dtype '" + s.descr + "' differs from " + dy_path + "'s '" + dy.descr + "'");
  }
  if (dy.shape != s.shape) throw UsageError(s_path + ": shape differs from " + dy_path + "'s");

  // In place on dy's buffer: dx = ReluGrad(dy, s) needs no third array.
  CheckStatus(relugrad_relu_grad(d, dy.count, dy.data.data(), s.data.data(), dy.data.data(), &options), "relu_grad");
  std::string error;
  if (!npy::Write(out_path, dy.descr, dy.shape, dy.data.data(), dy.data.size(), &error)) {
    throw UsageError(out_path + ": " + error);
  }
  return 0;
}

}  // namespace cli
}  // namespace relugrad
