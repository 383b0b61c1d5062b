// `relugrad diff` and the semantics flags of `relugrad run` end to end:
// docs/semantics-diff.md is exactly `relugrad diff --all` (so the document
// cannot go stale), each example row of a diff is what the reference gives,
// bad invocations exit 1 with one stderr line, and a threshold on a 16-bit
// rounding boundary reaches `run` as PyTorch converts it.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_harness.h"
#include "io/npy.h"
#include "relugrad/relugrad.h"
#include "test_support.h"

namespace relugrad {
namespace testing {
namespace {

void ExpectOneLineFailure(const std::string& args, const std::string& needle) {
  const CliResult r = RunCli(args);
  EXPECT_EQ(r.status, 1) << args;
  EXPECT_NE(r.err.find(needle), std::string::npos) << args << "\nstderr: " << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1)
      << "stderr must be one line: " << r.err;
  EXPECT_EQ(r.out, "") << args;
}

TEST(CliDiff, DocumentIsTheOutputOfDiffAll) {
  const CliResult r = RunCli("diff --all");
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string doc = Slurp(std::string(RELUGRAD_SOURCE_DIR) + "/docs/semantics-diff.md");
  EXPECT_EQ(doc, r.out) << "docs/semantics-diff.md is stale: regenerate it with "
                           "`build/release/relugrad diff --all > docs/semantics-diff.md`";
}

TEST(CliDiff, BadInvocationsFailWithOneLine) {
  ExpectOneLineFailure("diff --semantics torch,bogus", "unknown semantics preset 'bogus'");
  ExpectOneLineFailure("diff --semantics bogus,torch", "unknown semantics preset 'bogus'");
  ExpectOneLineFailure("diff --semantics torch", "two presets A,B");
  ExpectOneLineFailure("diff --semantics torch,jax,onednn", "two presets A,B");
  ExpectOneLineFailure("diff", "either --semantics A,B or --all");
  ExpectOneLineFailure("diff --all --semantics torch,jax", "either --semantics A,B or --all");
  ExpectOneLineFailure("diff --semantics torch,jax --dtype f8", "unknown dtype 'f8'");
  ExpectOneLineFailure("diff --semantics torch,jax --frobnicate", "frobnicate");
}

struct Row {
  std::string dtype, cls, t, dy, s, a, b;
};

std::vector<Row> Rows(const std::string& text) {
  std::vector<Row> rows;
  std::stringstream ss(text);
  std::string line;
  while (std::getline(ss, line)) {
    if (line.rfind("| ", 0) != 0 || line.rfind("| dtype", 0) == 0) continue;
    std::vector<std::string> cells;
    std::stringstream ls(line.substr(2));
    std::string cell;
    while (std::getline(ls, cell, '|')) {
      cell.erase(0, cell.find_first_not_of(' '));
      cell.erase(cell.find_last_not_of(' ') + 1);
      cells.push_back(cell);
    }
    if (cells.size() >= 7)
      rows.push_back({cells[0], cells[1], cells[2], cells[3], cells[4], cells[5], cells[6]});
  }
  return rows;
}

uint64_t Ref(relugrad_dtype d, const char* preset, double t, uint64_t dy, uint64_t s) {
  relugrad_preset p;
  EXPECT_EQ(relugrad_preset_from_name(preset, &p), RELUGRAD_OK);
  relugrad_options o;
  relugrad_options_init(&o, p);
  o.threshold = t;
  const auto dyv = Pack(d, {dy}), sv = Pack(d, {s});
  return BitsAt(d, Reference(d, dyv, sv, o).data(), 0);
}

TEST(CliDiff, EveryExampleIsWhatTheReferenceGives) {
  int checked = 0;
  for (const char* a : {"torch", "tensorflow", "jax"}) {
    for (const char* b : {"onednn", "mindspore", "tensorflow"}) {
      if (std::string(a) == b) continue;
      const CliResult r = RunCli(std::string("diff --semantics ") + a + "," + b);
      ASSERT_EQ(r.status, 0) << r.err;
      for (const Row& row : Rows(r.out)) {
        relugrad_dtype d;
        ASSERT_EQ(relugrad_dtype_from_name(row.dtype.c_str(), &d), RELUGRAD_OK) << row.dtype;
        const double t = std::strtod(row.t.c_str(), nullptr);
        const uint64_t dy = std::stoull(row.dy, nullptr, 16), s = std::stoull(row.s, nullptr, 16);
        EXPECT_EQ(Hex(Ref(d, a, t, dy, s)), Hex(std::stoull(row.a, nullptr, 16)))
            << a << " " << row.cls;
        EXPECT_EQ(Hex(Ref(d, b, t, dy, s)), Hex(std::stoull(row.b, nullptr, 16)))
            << b << " " << row.cls;
        EXPECT_NE(row.a, row.b) << row.cls;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 50);
}

std::set<std::string> Classes(const std::string& args) {
  const CliResult r = RunCli(args);
  EXPECT_EQ(r.status, 0) << r.err;
  std::set<std::string> out;
  for (const Row& row : Rows(r.out)) out.insert(row.cls);
  return out;
}

TEST(CliDiff, ClassesFollowTheRules) {
  // jax = mindspore + DAZ: they differ exactly where a subnormal meets the gate.
  EXPECT_EQ(Classes("diff --semantics jax,mindspore --dtype f32"),
            (std::set<std::string>{"subnormal gate", "subnormal threshold"}));
  // f16 has no subnormals in its f32 compute type; a subnormal f32 threshold still flushes.
  EXPECT_EQ(Classes("diff --semantics jax,mindspore --dtype f16"),
            (std::set<std::string>{"subnormal threshold"}));
  // torch and mindspore differ only in NaN gates, quiet or signalling
  // (zero_if_le vs pass_if_gt, both select, both IEEE).
  EXPECT_EQ(Classes("diff --semantics torch,mindspore"),
            (std::set<std::string>{"NaN gate", "signalling NaN"}));
  const CliResult same = RunCli("diff --semantics torch,torch");
  EXPECT_EQ(same.status, 0);
  EXPECT_NE(same.out.find("No difference in these input classes."), std::string::npos) << same.out;
}

TEST(CliRun, ThresholdOnARoundingBoundaryRoundsThroughFloat) {
  // bf16, t = 1 + 2^-8 + 2^-40: PyTorch makes t 1.0 (double -> f32 -> bf16),
  // so s = 1.0078125 passes dy = 1.0 (PyTorch 1.13.1 threshold_backward: 0x3f80).
  const std::string dir = ScratchDir();
  std::string error;
  const auto dy = Pack(RELUGRAD_BF16, {0x3f80}), s = Pack(RELUGRAD_BF16, {0x3f81});
  ASSERT_TRUE(npy::Write(dir + "/rdy.npy", "<u2", {1}, dy.data(), dy.size(), &error)) << error;
  ASSERT_TRUE(npy::Write(dir + "/rs.npy", "<u2", {1}, s.data(), s.size(), &error)) << error;
  for (const char* rounding : {"dtype", "compute"}) {
    const CliResult r = RunCli(
        "run --dy " + dir + "/rdy.npy --x " + dir + "/rs.npy -o " + dir +
        "/rdx.npy --dtype bf16 --threshold 1.0039062500009095 --threshold-rounding " + rounding);
    ASSERT_EQ(r.status, 0) << r.err;
    npy::Array got;
    ASSERT_TRUE(npy::Read(dir + "/rdx.npy", &got, &error)) << error;
    EXPECT_EQ(Hex(BitsAt(RELUGRAD_BF16, got.data.data(), 0)), "0x3f80") << rounding;
  }
  // A subnormal double is a number (strtod reports ERANGE for it).
  const CliResult sub = RunCli("run --dy " + dir + "/rdy.npy --x " + dir + "/rs.npy -o " + dir +
                               "/rdx.npy --dtype bf16 --threshold -1e-310");
  EXPECT_EQ(sub.status, 0) << sub.err;
  ExpectOneLineFailure("run --dy " + dir + "/rdy.npy --x " + dir + "/rs.npy -o " + dir +
                           "/rdx.npy --dtype bf16 --threshold 1e999",
                       "overflows a double");
}

TEST(CliRun, EnumFlagsTakeTheLibrarysNames) {
  // f32 dy = 1.0, s = the smallest subnormal, t = 0: IEEE opens the gate, FTZ/DAZ
  // compares s as 0 and closes it.
  const std::string dir = ScratchDir();
  std::string error;
  const auto dy = Pack(RELUGRAD_F32, {0x3f800000}), s = Pack(RELUGRAD_F32, {0x00000001});
  ASSERT_TRUE(npy::Write(dir + "/edy.npy", "<f4", {1}, dy.data(), dy.size(), &error)) << error;
  ASSERT_TRUE(npy::Write(dir + "/es.npy", "<f4", {1}, s.data(), s.size(), &error)) << error;
  const std::string run =
      "run --dy " + dir + "/edy.npy --x " + dir + "/es.npy -o " + dir + "/edx.npy ";
  struct Case {
    const char* flags;
    const char* want;
    const char* note;  // expected on stderr ("" = nothing)
  };
  const Case cases[] = {
      {"--denormals ieee", "0x3f800000", ""},
      {"--denormals ftz_daz", "0x0", ""},
      {"--denormals ftz", "0x0", "--denormals ftz is deprecated: use --denormals ftz_daz"},
      {"--backend ascend_twin", "0x3f800000", ""},
      {"--backend ascend-twin", "0x3f800000",
       "--backend ascend-twin is deprecated: use --backend ascend_twin"},
  };
  for (const Case& c : cases) {
    const CliResult r = RunCli(run + c.flags);
    if (std::string(c.flags).find("ascend") != std::string::npos &&
        !relugrad_backend_available(RELUGRAD_BACKEND_ASCEND_TWIN)) {
      EXPECT_EQ(r.status, 1) << c.flags << ": a build without the twin refuses it";
      continue;
    }
    ASSERT_EQ(r.status, 0) << c.flags << ": " << r.err;
    npy::Array got;
    ASSERT_TRUE(npy::Read(dir + "/edx.npy", &got, &error)) << error;
    EXPECT_EQ(Hex(BitsAt(RELUGRAD_F32, got.data.data(), 0)), c.want) << c.flags;
    if (*c.note) {
      EXPECT_NE(r.err.find(c.note), std::string::npos) << c.flags << ": " << r.err;
    } else {
      EXPECT_EQ(r.err, "") << c.flags;
    }
  }
  ExpectOneLineFailure(run + "--denormals flush", "unknown denormals mode 'flush' (ieee, ftz_daz)");
  ExpectOneLineFailure(run + "--backend npu", "unknown backend 'npu' (cpu, cuda, ascend_twin)");
  ExpectOneLineFailure(run + "--gate le", "unknown gate 'le' (zero_if_le, pass_if_gt)");
}

TEST(CliRun, GateMaxClosesTheUpperBound) {
  // f32 s = {3, 6, 7} with --gate-max 6 (ReLU6): only s = 3 passes dy = 1.
  const std::string dir = ScratchDir();
  std::string error;
  const auto dy = Pack(RELUGRAD_F32, {0x3f800000, 0x3f800000, 0x3f800000});
  const auto s = Pack(RELUGRAD_F32, {0x40400000, 0x40c00000, 0x40e00000});
  ASSERT_TRUE(npy::Write(dir + "/gdy.npy", "<f4", {3}, dy.data(), dy.size(), &error)) << error;
  ASSERT_TRUE(npy::Write(dir + "/gs.npy", "<f4", {3}, s.data(), s.size(), &error)) << error;
  const std::string base =
      "run --dy " + dir + "/gdy.npy --x " + dir + "/gs.npy -o " + dir + "/gdx.npy --dtype f32";
  const CliResult r = RunCli(base + " --gate-max 6");
  ASSERT_EQ(r.status, 0) << r.err;
  npy::Array got;
  ASSERT_TRUE(npy::Read(dir + "/gdx.npy", &got, &error)) << error;
  EXPECT_EQ(Hex(BitsAt(RELUGRAD_F32, got.data.data(), 0)), "0x3f800000");
  EXPECT_EQ(Hex(BitsAt(RELUGRAD_F32, got.data.data(), 1)), "0x0");
  EXPECT_EQ(Hex(BitsAt(RELUGRAD_F32, got.data.data(), 2)), "0x0");
  ExpectOneLineFailure(base + " --gate-max 0", "gate_max (0) must be greater than threshold");
  ExpectOneLineFailure(base + " --gate-max nan", "gate_max is NaN");
}

}  // namespace
}  // namespace testing
}  // namespace relugrad
