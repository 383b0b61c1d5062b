// Hostile input to the CLI beyond tests/cli/cli_test.cc: empty files,
// directories and devices as inputs, absurd header lengths and versions,
// negative/too many dimensions, trailing bytes, garbage headers, outputs
// that cannot be written (a directory, an over-long name), repeated and
// valueless flags, non-finite numbers, and every `soak` flag. Each gives
// exit status 1, one line on stderr naming the problem, no output file and
// no temporary file left behind. Also: valid edge files (0-d, empty,
// format versions 2 and 3, output over an input) work, and a short soak passes.
#include <gtest/gtest.h>

#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "io/npy.h"
#include "relugrad/relugrad.h"
#include "cli_harness.h"
#include "test_support.h"

namespace relugrad {
namespace testing {
namespace {

// A .npy file with a hand-written header dict (padded, any version).
std::string Npy(const std::string& name, const std::string& dict, const std::string& payload,
                int version = 1) {
  std::string h = dict;
  const size_t pre = version == 1 ? 10 : 12;
  while ((pre + h.size() + 1) % 64 != 0) h += ' ';
  h += '\n';
  std::string file("\x93NUMPY", 6);
  file += static_cast<char>(version);
  file += '\0';
  const uint32_t len = static_cast<uint32_t>(h.size());
  file += static_cast<char>(len & 0xff);
  file += static_cast<char>((len >> 8) & 0xff);
  if (version != 1) {
    file += static_cast<char>((len >> 16) & 0xff);
    file += static_cast<char>((len >> 24) & 0xff);
  }
  return SaveRaw(name, file + h + payload);
}

// No ".relugrad-tmp-*" file may survive a failed write.
int TempFilesIn(const std::string& dir) {
  int count = 0;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      if (std::strncmp(e->d_name, ".relugrad-tmp-", 14) == 0) ++count;
    }
    closedir(d);
  }
  return count;
}

void ExpectCleanFailure(const std::string& args, const std::string& needle,
                        const std::string& output) {
  ::unlink(output.c_str());
  const CliResult r = RunCli(args);
  EXPECT_EQ(r.status, 1) << args << "\nstderr: " << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << args << "\nstderr: " << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1)
      << args << "\nstderr must be one line: " << r.err;
  EXPECT_FALSE(Exists(output)) << args << " left an output file";
  EXPECT_EQ(TempFilesIn(ScratchDir()), 0) << args << " left a temporary file";
}

const std::string kF4x4 = "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }";

TEST(HostileCli, MalformedAndHostileFilesFailCleanly) {
  const std::string out = ScratchDir() + "/never.npy";
  const std::string good = Npy("good.npy", kF4x4, std::string(16, '\x3f'));
  const std::string empty = SaveRaw("empty.npy", "");
  const std::string magic_only = SaveRaw("magic_only.npy", std::string("\x93NUMPY", 6));
  std::string huge_len("\x93NUMPY\x02\x00\xff\xff\xff\xff", 12);
  const std::string huge_header = SaveRaw("huge_header.npy", huge_len + "{}");
  const std::string version9 =
      SaveRaw("v9.npy", std::string("\x93NUMPY\x09\x00\x10\x00", 10) + std::string(16, ' '));
  const std::string negative = Npy(
      "neg.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (-4,), }", std::string(16, 0));
  std::string dims65 = "{'descr': '<f4', 'fortran_order': False, 'shape': (";
  for (int i = 0; i < 65; ++i) dims65 += "1,";
  const std::string many = Npy("dims65.npy", dims65 + "), }", std::string(4, 0));
  const std::string overflow =
      Npy("overflow.npy",
          "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4), }", "");
  const std::string trailing = Npy("trailing.npy", kF4x4, std::string(17, 0));
  const std::string nul =
      Npy("nul.npy", std::string("{'descr': '<f4'\0, 'fortran_order': False, 'shape': (4,), }", 58),
          std::string(16, 0));
  const std::string structured =
      Npy("structured.npy", "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (4,), }",
          std::string(16, 0));
  const std::string dupkey =
      Npy("dupkey.npy",
          "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (4,), 'extra': 1}",
          std::string(16, 0));
  const std::string hugedescr =
      Npy("hugedescr.npy", "{'descr': '<f99999999999', 'fortran_order': False, 'shape': (4,), }",
          std::string(16, 0));
  const std::string complexd =
      Npy("complex.npy", "{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }",
          std::string(16, 0));
  const std::string base = " -o " + out;
  ExpectCleanFailure("run --dy " + empty + " --x " + good + base, "truncated", out);
  ExpectCleanFailure("run --dy " + magic_only + " --x " + good + base, "truncated", out);
  ExpectCleanFailure("run --dy " + huge_header + " --x " + good + base, "implausibly large", out);
  ExpectCleanFailure("run --dy " + version9 + " --x " + good + base, "version 9", out);
  ExpectCleanFailure("run --dy " + negative + " --x " + good + base, "negative", out);
  ExpectCleanFailure("run --dy " + many + " --x " + good + base, "64 dimensions", out);
  ExpectCleanFailure("run --dy " + overflow + " --x " + good + base, "overflow", out);
  ExpectCleanFailure("run --dy " + trailing + " --x " + good + base, "trailing", out);
  ExpectCleanFailure("run --dy " + nul + " --x " + good + base, "nul.npy", out);
  ExpectCleanFailure("run --dy " + structured + " --x " + good + base, "structured", out);
  ExpectCleanFailure("run --dy " + hugedescr + " --x " + good + base, "hugedescr.npy", out);
  ExpectCleanFailure("run --dy " + complexd + " --x " + complexd + base, "complex.npy", out);
  ExpectCleanFailure("run --dy " + dupkey + " --x " + good + base, "dupkey.npy", out);
  ExpectCleanFailure("run --dy " + ScratchDir() + " --x " + good + base, "not a regular file", out);
  ExpectCleanFailure("run --dy /dev/zero --x " + good + base, "not a regular file", out);
  ExpectCleanFailure("run --dy " + good + " --x /dev/null" + base, "not a regular file", out);
}

TEST(HostileCli, UnwritableOutputsFailCleanly) {
  const std::string good = Npy("good.npy", kF4x4, std::string(16, '\x3f'));
  // Output is an existing directory: the rename must fail and the temp go.
  const std::string dir_out = ScratchDir() + "/an_output_dir";
  ::mkdir(dir_out.c_str(), 0755);
  const CliResult r = RunCli("run --dy " + good + " --x " + good + " -o " + dir_out);
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("an_output_dir"), std::string::npos) << r.err;
  EXPECT_EQ(TempFilesIn(ScratchDir()), 0);
  // A file name longer than NAME_MAX.
  const std::string long_name = ScratchDir() + "/" + std::string(300, 'x') + ".npy";
  ExpectCleanFailure("run --dy " + good + " --x " + good + " -o " + long_name, "xxxx", long_name);
  // A path through a regular file.
  ExpectCleanFailure("run --dy " + good + " --x " + good + " -o " + good + "/dx.npy", "dx.npy",
                     good + "/dx.npy");
}

TEST(HostileCli, FlagAbuseFailsCleanly) {
  const std::string out = ScratchDir() + "/never.npy";
  const std::string good = Npy("good.npy", kF4x4, std::string(16, '\x3f'));
  const std::string base = "run --dy " + good + " --x " + good + " -o " + out;
  ExpectCleanFailure(base + " --threads 1 --threads 2", "twice", out);
  ExpectCleanFailure(base + " --threshold", "needs a value", out);
  ExpectCleanFailure(base + " --threshold nan", "threshold", out);
  ExpectCleanFailure(base + " --alpha inf", "alpha", out);
  ExpectCleanFailure(base + " --alpha 1e999", "alpha", out);
  ExpectCleanFailure(base + " --clip 1:nan", "clip", out);
  ExpectCleanFailure(base + " --clip ::", "clip", out);
  ExpectCleanFailure(base + " --threads 99999999999999999999", "--threads", out);
  ExpectCleanFailure(base + " --gate sideways", "sideways", out);
  ExpectCleanFailure(base + " --backend tpu", "tpu", out);
  ExpectCleanFailure(base + " --help=yes", "takes no value", out);
  ExpectCleanFailure(base + " --x " + good, "twice", out);
  ExpectCleanFailure(base + " positional", "positional", out);
  ExpectCleanFailure("verify --threads -1", "--threads", out);
  ExpectCleanFailure("verify --isa nope", "nope", out);
  ExpectCleanFailure("verify --size 1x", "--size", out);
  ExpectCleanFailure("bench --sizes abc", "--sizes", out);
  ExpectCleanFailure("info --verbose", "unknown flag", out);
}

TEST(HostileCli, SoakFlagsAreStrict) {
  const std::string none = ScratchDir() + "/never.npy";
  ExpectCleanFailure("soak --duration 10", "needs a unit", none);
  ExpectCleanFailure("soak --duration 5x", "unknown unit", none);
  ExpectCleanFailure("soak --duration -1m", "not a duration", none);
  ExpectCleanFailure("soak --duration 0s", "must be > 0", none);
  ExpectCleanFailure("soak --duration 400d", "unknown unit", none);
  ExpectCleanFailure("soak --duration 9000h", "at most a year", none);
  ExpectCleanFailure("soak --duration 1.2.3s", "bad number", none);
  ExpectCleanFailure("soak --duration 1m --max-bytes 12", "--max-bytes", none);
  ExpectCleanFailure("soak --duration 1m --progress loud", "--progress", none);
  ExpectCleanFailure("soak --duration 1m --max-threads 0", "--max-threads", none);
  ExpectCleanFailure("soak --duration 1m --rss-growth lots", "--rss-growth", none);
}

TEST(HostileCli, ValidEdgeFilesWork) {
  // A 0-d array, an empty array, format versions 2 and 3, and the output
  // written over one of the inputs (atomic rename makes that safe).
  const std::string scalar =
      Npy("scalar.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (), }",
          std::string("\x00\x00\x80\x3f", 4));
  const std::string zero =
      Npy("zero.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (0,), }", "");
  const std::string v2 = Npy("v2.npy", kF4x4, std::string(16, '\x3f'), 2);
  const std::string v3 = Npy("v3.npy", kF4x4, std::string(16, '\x3f'), 3);
  const std::string out = ScratchDir() + "/dx.npy";
  for (const std::string& in : {scalar, zero, v2, v3}) {
    const CliResult r = RunCli("run --dy " + in + " --x " + in + " -o " + out);
    ASSERT_EQ(r.status, 0) << in << ": " << r.err;
    npy::Array a, b;
    std::string error;
    ASSERT_TRUE(npy::Read(in, &a, &error)) << error;
    ASSERT_TRUE(npy::Read(out, &b, &error)) << error;
    EXPECT_EQ(a.shape, b.shape) << in;
    if (a.count > 0) {
      const std::vector<unsigned char> dy(a.data.data(), a.data.data() + a.data.size());
      relugrad_options o;
      relugrad_options_init(&o, RELUGRAD_PRESET_TORCH);
      const auto expected = Reference(RELUGRAD_F32, dy, dy, o);
      EXPECT_EQ(CompareBits(RELUGRAD_F32, expected.data(), b.data.data(), a.count), "") << in;
    }
  }
  const std::string inplace =
      Npy("inplace.npy", kF4x4, std::string("\x00\x00\x80\xbf", 4) + std::string(12, '\x3f'));
  const CliResult r = RunCli("run --dy " + inplace + " --x " + inplace + " -o " + inplace);
  ASSERT_EQ(r.status, 0) << r.err;
  npy::Array a;
  std::string error;
  ASSERT_TRUE(npy::Read(inplace, &a, &error)) << error;
  uint32_t first;
  std::memcpy(&first, a.data.data(), 4);
  EXPECT_EQ(first, 0u) << "s = -1 closes the gate: dx = +0";
  EXPECT_EQ(TempFilesIn(ScratchDir()), 0);
}

TEST(HostileCli, ShortSoakPasses) {
  const CliResult r = RunCli("soak --duration 3s --max-bytes 8M --seed 7 --progress lines");
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("PASS"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("RSS curve:"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace testing
}  // namespace relugrad
