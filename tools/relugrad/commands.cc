#include "commands.h"

namespace relugrad {
namespace cli {

const Command kCommands[] = {
    {"run", RunCommand, "compute dx from .npy files: --dy DY.npy --x S.npy -o DX.npy"},
    {"forward", ForwardCommand,
     "relu forward with a 1-bit mask: --x X.npy -o Y.npy --mask-out M.npy"},
    {"verify", VerifyCommand,
     "self-check every preset x dtype x SIMD target x threads against the reference"},
    {"bench", BenchCommand, "time ReluGrad against an in-process STREAM-style triad"},
    {"soak", SoakCommand,
     "random calls for --duration (10m, 24h), all checked, RSS watched for leaks"},
    {"diff", DiffCommand, "where two presets give different bits: --semantics A,B (or --all)"},
    {"mask-layout", MaskLayoutCommand,
     "convert a ReluV2 mask: --to blocked|flat --layout nchw|nhwc --shape N,C,H,W --mask M.npy -o "
     "OUT.npy"},
    {"info", InfoCommand, "version, build options, SIMD targets, threads, backends"},
};
const int kCommandCount = sizeof(kCommands) / sizeof(kCommands[0]);

}  // namespace cli
}  // namespace relugrad
