// `relugrad forward` and `relugrad run --mask` end to end: results against
// the mask reference, the round trip forward -> run --mask == run --x, and
// bad inputs failing cleanly (exit 1, one stderr line, no output file).
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "io/npy.h"
#include "mask_test_support.h"
#include "relugrad/relugrad.h"

namespace relugrad {
namespace testing {
namespace {

struct Result {
  int status;
  std::string err;
};

std::string Dir() {
  static const std::string dir = [] {
    char tmpl[] = "/tmp/relugrad-mask-cli-XXXXXX";
    return std::string(mkdtemp(tmpl));
  }();
  return dir;
}

Result Cli(const std::string& args) {
  const std::string err = Dir() + "/stderr.txt";
  const std::string cmd = std::string(RELUGRAD_CLI_PATH) + " " + args + " >/dev/null 2>" + err;
  const int raw = std::system(cmd.c_str());
  std::ifstream f(err);
  std::stringstream ss;
  ss << f.rdbuf();
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, ss.str()};
}

bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

std::string Save(const std::string& name, const std::string& descr,
                 const std::vector<int64_t>& shape, const Bytes& bytes) {
  const std::string path = Dir() + "/" + name;
  std::string error;
  EXPECT_TRUE(npy::Write(path, descr, shape, bytes.data(), bytes.size(), &error)) << error;
  return path;
}

npy::Array Load(const std::string& path) {
  npy::Array a;
  std::string error;
  EXPECT_TRUE(npy::Read(path, &a, &error)) << path << ": " << error;
  return a;
}

std::string Descr(relugrad_dtype d) {
  return d == RELUGRAD_F16 ? "<f2" : d == RELUGRAD_F32 ? "<f4" : d == RELUGRAD_F64 ? "<f8" : "<u2";
}

void ExpectCleanFailure(const std::string& args, const std::string& needle,
                        const std::vector<std::string>& outputs) {
  for (const auto& o : outputs) ::unlink(o.c_str());
  const Result r = Cli(args);
  EXPECT_EQ(r.status, 1) << args;
  EXPECT_NE(r.err.find(needle), std::string::npos) << args << "\nstderr: " << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1)
      << "stderr must be one line: " << r.err;
  for (const auto& o : outputs) EXPECT_FALSE(Exists(o)) << args << " left " << o;
}

TEST(MaskCli, ForwardThenRunMaskMatchesReferenceAndRunX) {
  for (relugrad_dtype d : kAllDtypes) {
    const size_t n = 2 * 3 * 167;  // not a multiple of 8: a padded last byte
    const Bytes x = Pack(d, RandomBits(d, n, 21)), dy = Pack(d, RandomBits(d, n, 22));
    const std::string name = relugrad_dtype_name(d);
    const std::string px = Save("x_" + name + ".npy", Descr(d), {2, 3, 167}, x);
    const std::string pdy = Save("dy_" + name + ".npy", Descr(d), {2, 3, 167}, dy);
    const std::string dtype_flag = d == RELUGRAD_BF16 ? " --dtype bf16" : "";
    struct Case {
      std::string flags;
      relugrad_preset preset;
      double threshold, alpha;
      bool keep_negative_zero = false;
    };
    for (const Case& c :
         {Case{"", RELUGRAD_PRESET_TORCH, 0, 0},
          Case{"--keep-negative-zero", RELUGRAD_PRESET_TORCH, 0, 0, true},
          Case{"--semantics tensorflow", RELUGRAD_PRESET_TENSORFLOW, 0, 0},
          Case{"--semantics jax --threads 2", RELUGRAD_PRESET_JAX, 0, 0},
          Case{"--threshold 0.75", RELUGRAD_PRESET_TORCH, 0.75, 0},
          Case{"--semantics onednn --alpha 0.25", RELUGRAD_PRESET_ONEDNN, 0, 0.25}}) {
      relugrad_options o;
      relugrad_options_init(&o, c.preset);
      o.threshold = c.threshold;
      o.alpha = c.alpha;
      o.keep_negative_zero = c.keep_negative_zero ? 1 : 0;
      const std::string py = Dir() + "/y.npy", pm = Dir() + "/m.npy", pdx = Dir() + "/dx.npy",
                        pdx2 = Dir() + "/dx2.npy";
      Result r =
          Cli("forward --x " + px + " -o " + py + " --mask-out " + pm + " " + c.flags + dtype_flag);
      ASSERT_EQ(r.status, 0) << r.err;
      Bytes ey, em;
      ReferenceForward(d, x, o, &ey, &em);
      const npy::Array y = Load(py), m = Load(pm);
      EXPECT_EQ(y.descr, Descr(d));
      EXPECT_EQ(y.shape, (std::vector<int64_t>{2, 3, 167}));
      EXPECT_EQ(CompareBits(d, ey.data(), y.data.data(), n), "") << name << " " << c.flags;
      EXPECT_EQ(m.descr, "|u1");
      EXPECT_EQ(m.shape, (std::vector<int64_t>{static_cast<int64_t>(em.size())}));
      EXPECT_EQ(CompareMask(em, m.data.data(), n), "") << name << " " << c.flags;

      r = Cli("run --dy " + pdy + " --mask " + pm + " -o " + pdx + " " + c.flags + dtype_flag);
      ASSERT_EQ(r.status, 0) << r.err;
      r = Cli("run --dy " + pdy + " --x " + px + " -o " + pdx2 + " " + c.flags + dtype_flag);
      ASSERT_EQ(r.status, 0) << r.err;
      const npy::Array dx = Load(pdx), dx2 = Load(pdx2);
      EXPECT_EQ(dx.shape, (std::vector<int64_t>{2, 3, 167}));
      EXPECT_EQ(dx.descr, Descr(d));
      const Bytes edx = ReferenceGradMask(d, dy, em, o);
      EXPECT_EQ(CompareBits(d, edx.data(), dx.data.data(), n), "") << name << " " << c.flags;
      EXPECT_EQ(CompareBits(d, dx2.data.data(), dx.data.data(), n), "")
          << name << " " << c.flags << ": --mask != --x";
    }
  }
}

TEST(MaskCli, BadInputsFailCleanly) {
  const Bytes four(16, 0x3f);
  const std::string good = Save("good.npy", "<f4", {4}, four);
  const std::string twelve = Save("twelve.npy", "<f4", {12}, Bytes(48, 0x3f));
  const std::string mask1 = Save("mask1.npy", "|u1", {1}, Bytes(1, 0x0f));
  const std::string mask3 = Save("mask3.npy", "|u1", {3}, Bytes(3, 0));
  const std::string mask_i2 = Save("mask_i2.npy", "<i2", {1}, Bytes(2, 0));
  const std::string ints = Save("ints.npy", "<i4", {4}, four);
  const std::string out = Dir() + "/never.npy", mout = Dir() + "/never_mask.npy";
  const std::string missing = Dir() + "/missing.npy";
  const std::string bad_dir = Dir() + "/no/such/dir/y.npy";

  // forward
  ExpectCleanFailure("forward --x " + missing + " -o " + out + " --mask-out " + mout, "missing.npy",
                     {out, mout});
  ExpectCleanFailure("forward --x " + ints + " -o " + out + " --mask-out " + mout, "integer",
                     {out, mout});
  ExpectCleanFailure("forward --x " + good + " --mask-out " + mout, "output", {mout});
  ExpectCleanFailure("forward --x " + good + " -o " + out, "mask-out", {out});
  ExpectCleanFailure("forward --x " + good + " -o " + out + " --mask-out " + out, "same file",
                     {out});
  // The same file by other spellings, not yet existing: "dir/./name", and a bare name against
  // "./name" (in the working directory).
  ExpectCleanFailure("forward --x " + good + " -o " + out + " --mask-out " + Dir() + "/./never.npy",
                     "same file", {out});
  ExpectCleanFailure("forward --x " + good + " -o never_here.npy --mask-out ./never_here.npy",
                     "same file", {"never_here.npy"});
  ExpectCleanFailure(
      "forward --x " + good + " -o " + out + " --mask-out " + mout + " --semantics pytorch",
      "semantics", {out, mout});
  ExpectCleanFailure(
      "forward --x " + good + " -o " + out + " --mask-out " + mout + " --threshold nan",
      "threshold", {out, mout});
  ExpectCleanFailure("forward --x " + good + " -o " + out + " --mask-out " + mout + " --bogus 1",
                     "bogus", {out, mout});
  ExpectCleanFailure("forward --x " + good + " -o " + bad_dir + " --mask-out " + mout, "y.npy",
                     {mout});
  ExpectCleanFailure("forward --x " + good + " -o " + out + " --mask-out " + bad_dir, "y.npy",
                     {out});

  // run --mask
  ExpectCleanFailure("run --dy " + twelve + " --mask " + mask1 + " -o " + out,
                     "needs ceil(n/8) = 2", {out});
  ExpectCleanFailure("run --dy " + good + " --mask " + mask3 + " -o " + out, "mask has 3 bytes",
                     {out});
  ExpectCleanFailure("run --dy " + good + " --mask " + mask_i2 + " -o " + out, "uint8", {out});
  ExpectCleanFailure("run --dy " + good + " --mask " + good + " -o " + out, "uint8", {out});
  ExpectCleanFailure("run --dy " + good + " --mask " + missing + " -o " + out, "missing.npy",
                     {out});
  ExpectCleanFailure("run --dy " + good + " --mask " + mask1 + " --x " + good + " -o " + out,
                     "not both", {out});
  ExpectCleanFailure("run --dy " + ints + " --mask " + mask1 + " -o " + out, "integer", {out});
  ExpectCleanFailure("run --dy " + good + " --mask " + mask1 + " -o " + bad_dir, "y.npy", {});

  // And the good case works: mask 0x0f opens all four.
  const Result r = Cli("run --dy " + good + " --mask " + mask1 + " -o " + out);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(Exists(out));
}

}  // namespace
}  // namespace testing
}  // namespace relugrad
