// `relugrad run`, `verify`, `info` and `bench` end to end. Every bad input gives exit
// status 1, exactly one line on stderr naming the file or flag, and leaves
// no output file behind.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cpu/variants.h"
#include "io/npy.h"
#include "relugrad/relugrad.h"
#include "cli_harness.h"
#include "test_support.h"

namespace relugrad {
namespace testing {
namespace {

std::string Save(const std::string& name, const std::string& descr,
                 const std::vector<int64_t>& shape, const std::vector<unsigned char>& bytes) {
  const std::string path = ScratchDir() + "/" + name;
  std::string error;
  EXPECT_TRUE(npy::Write(path, descr, shape, bytes.data(), bytes.size(), &error)) << error;
  return path;
}

// Expect a clean failure: status 1, one stderr line containing `needle`, no output.
void ExpectCleanFailure(const std::string& args, const std::string& needle,
                        const std::string& output) {
  ::unlink(output.c_str());
  const CliResult r = RunCli(args);
  EXPECT_EQ(r.status, 1) << args;
  EXPECT_NE(r.err.find(needle), std::string::npos) << args << "\nstderr: " << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1)
      << "stderr must be one line: " << r.err;
  EXPECT_FALSE(Exists(output)) << args << " left an output file";
}

TEST(Cli, RunMatchesTheReferenceForEveryDtypeAndPreset) {
  for (relugrad_dtype d : kAllDtypes) {
    const size_t n = 3001;
    const auto dy = Pack(d, RandomBits(d, n, 11)), s = Pack(d, RandomBits(d, n, 12));
    const std::string descr = d == RELUGRAD_F16   ? "<f2"
                              : d == RELUGRAD_F32 ? "<f4"
                              : d == RELUGRAD_F64 ? "<f8"
                                                  : "<u2";
    const std::string pdy = Save(std::string("dy_") + relugrad_dtype_name(d) + ".npy", descr,
                                 {static_cast<int64_t>(n)}, dy);
    const std::string ps = Save(std::string("s_") + relugrad_dtype_name(d) + ".npy", descr,
                                {static_cast<int64_t>(n)}, s);
    struct Case {
      std::string flags;
      relugrad_preset preset;
      double threshold;
    };
    for (const Case& c : {Case{"", RELUGRAD_PRESET_TORCH, 0},
                          Case{"--semantics tensorflow", RELUGRAD_PRESET_TENSORFLOW, 0},
                          Case{"--semantics jax", RELUGRAD_PRESET_JAX, 0},
                          Case{"--threshold 0.75", RELUGRAD_PRESET_TORCH, 0.75},
                          Case{"--threshold -1.5 --threads 2", RELUGRAD_PRESET_TORCH, -1.5}}) {
      const std::string out = ScratchDir() + "/dx.npy";
      const std::string dtype_flag = d == RELUGRAD_BF16 ? " --dtype bf16" : "";
      const CliResult r =
          RunCli("run --dy " + pdy + " --x " + ps + " -o " + out + " " + c.flags + dtype_flag);
      ASSERT_EQ(r.status, 0) << r.err;
      npy::Array got;
      std::string error;
      ASSERT_TRUE(npy::Read(out, &got, &error)) << error;
      EXPECT_EQ(got.descr, descr);
      relugrad_options o;
      relugrad_options_init(&o, c.preset);
      o.threshold = c.threshold;
      const auto expected = Reference(d, dy, s, o);
      EXPECT_EQ(CompareBits(d, expected.data(), got.data.data(), n), "") << c.flags;
    }
  }
}

TEST(Cli, BadInputsFailCleanly) {
  const std::string out = ScratchDir() + "/never.npy";
  const std::vector<unsigned char> four_floats(16, 0x3f);
  const std::string good = Save("good.npy", "<f4", {4}, four_floats);
  const std::string good2 = Save("good2.npy", "<f4", {2, 2}, four_floats);
  const std::string f64 = Save("f64.npy", "<f8", {2}, four_floats);
  const std::string ints = Save("ints.npy", "<i4", {4}, four_floats);
  const std::string u2 = Save("u2.npy", "<u2", {8}, four_floats);
  const std::string be = Save("be.npy", ">f4", {4}, four_floats);
  const std::string fortran =
      SaveRaw("fortran.npy", std::string("\x93NUMPY\x01\x00\x46\x00", 10) +
                                 "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }" +
                                 std::string(70 - 58 - 1, ' ') + "\n" + std::string(16, '\0'));
  const std::string truncated = SaveRaw("truncated.npy", Slurp(good).substr(0, 70));
  const std::string magic = SaveRaw("magic.npy", "PK\x03\x04 definitely a zip file");
  const std::string header =
      SaveRaw("header.npy", std::string("\x93NUMPY\x01\x00\x10\x00", 10) + "{'descr': '<f4'\n");
  const std::string huge = SaveRaw(
      "huge.npy", std::string("\x93NUMPY\x01\x00\x46\x00", 10) +
                      "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999,), }" +
                      std::string(2, ' ') + "\n");
  const std::string base = " -o " + out;
  ExpectCleanFailure("run --dy " + ScratchDir() + "/missing.npy --x " + good + base, "missing.npy",
                     out);
  ExpectCleanFailure("run --dy " + truncated + " --x " + good + base, "truncated", out);
  ExpectCleanFailure("run --dy " + magic + " --x " + good + base, "wrong magic", out);
  ExpectCleanFailure("run --dy " + header + " --x " + good + base, "header", out);
  ExpectCleanFailure("run --dy " + huge + " --x " + good + base, "huge.npy", out);
  ExpectCleanFailure("run --dy " + be + " --x " + good + base, "big-endian", out);
  ExpectCleanFailure("run --dy " + fortran + " --x " + good + base, "Fortran", out);
  ExpectCleanFailure("run --dy " + ints + " --x " + ints + base, "integer", out);
  ExpectCleanFailure("run --dy " + u2 + " --x " + u2 + base, "--dtype bf16", out);
  ExpectCleanFailure("run --dy " + good + " --x " + f64 + base, "differs", out);
  ExpectCleanFailure("run --dy " + good + " --x " + good2 + base, "shape differs", out);
  ExpectCleanFailure("run --dy " + good + " --x " + good + base + " --semantics mxnet", "mxnet",
                     out);
  ExpectCleanFailure("run --dy " + good + " --x " + good + base + " --threshold abc", "--threshold",
                     out);
  ExpectCleanFailure("run --dy " + good + " --x " + good + base + " --clip 2:1", "clip", out);
  ExpectCleanFailure("run --dy " + good + " --x " + good + base + " --clip 5", "LO:HI", out);
  ExpectCleanFailure("run --dy " + good + " --x " + good + base + " --threads -3", "--threads",
                     out);
  ExpectCleanFailure("run --dy " + good + " --x " + good + base + " --isa avx9000", "avx9000", out);
  ExpectCleanFailure("run --dy " + good + " --x " + good + base + " --dtype f99", "--dtype", out);
  ExpectCleanFailure("run --dy " + good + " --x " + good + base + " --bogus", "unknown flag", out);
  ExpectCleanFailure("run --dy " + good + base, "--x", out);
  ExpectCleanFailure(
      "run --dy " + good + " --x " + good + " -o " + ScratchDir() + "/no/such/dir/dx.npy", "dx.npy",
      ScratchDir() + "/no/such/dir/dx.npy");
  ExpectCleanFailure("frobnicate", "unknown command", out);
  // No temporary file survives a failed or successful write.
  const CliResult leftovers =
      RunCli("info >/dev/null; ls -a " + ScratchDir() + " | grep -c relugrad-tmp");
  EXPECT_EQ(leftovers.out, "0\n");
}

TEST(Cli, CudaBackendEitherMatchesOrFailsCleanly) {
  // With a GPU the staged CUDA run must equal the reference; without one (or
  // without the backend built) it must fail like any bad input.
  const relugrad_dtype d = RELUGRAD_F32;
  const size_t n = 1000;
  const auto dy = Pack(d, RandomBits(d, n, 3)), s = Pack(d, RandomBits(d, n, 4));
  const std::string pdy = Save("cuda_dy.npy", "<f4", {static_cast<int64_t>(n)}, dy);
  const std::string ps = Save("cuda_s.npy", "<f4", {static_cast<int64_t>(n)}, s);
  const std::string out = ScratchDir() + "/cuda_dx.npy";
  ::unlink(out.c_str());
  const CliResult r = RunCli("run --backend cuda --dy " + pdy + " --x " + ps + " -o " + out);
  if (r.status == 0) {
    npy::Array got;
    std::string error;
    ASSERT_TRUE(npy::Read(out, &got, &error)) << error;
    relugrad_options o;
    relugrad_options_init(&o, RELUGRAD_PRESET_TORCH);
    EXPECT_EQ(CompareBits(d, Reference(d, dy, s, o).data(), got.data.data(), n), "");
  } else {
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("cuda"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(Exists(out));
  }
}

TEST(Cli, CudaMaskBackwardEitherMatchesOrFailsCleanly) {
  // run --mask on the CUDA backend stages dy and the mask as the plain path does: with a GPU the
  // result equals the CPU backend's mask backward bit for bit; without one it fails cleanly.
  const relugrad_dtype d = RELUGRAD_F32;
  const size_t n = 1003;  // a partial last mask byte
  const auto dy = Pack(d, RandomBits(d, n, 5));
  std::vector<unsigned char> mask(static_cast<size_t>(relugrad_mask_bytes(n)));
  for (size_t i = 0; i < mask.size(); ++i) mask[i] = static_cast<unsigned char>(i * 37 + 11);
  mask.back() &= 0x07;  // bits past n are 0 (1003 = 125 * 8 + 3)
  const std::string pdy = Save("cuda_mask_dy.npy", "<f4", {static_cast<int64_t>(n)}, dy);
  const std::string pm = Save("cuda_mask_m.npy", "|u1", {static_cast<int64_t>(mask.size())}, mask);
  const std::string out = ScratchDir() + "/cuda_mask_dx.npy";
  ::unlink(out.c_str());
  const CliResult r = RunCli("run --backend cuda --mask " + pm + " --dy " + pdy + " -o " + out);
  if (r.status == 0) {
    npy::Array got;
    std::string error;
    ASSERT_TRUE(npy::Read(out, &got, &error)) << error;
    std::vector<unsigned char> want(dy.size());
    relugrad_options o;
    relugrad_options_init(&o, RELUGRAD_PRESET_TORCH);
    ASSERT_EQ(relugrad_relu_grad_mask(d, n, dy.data(), mask.data(), want.data(), &o), RELUGRAD_OK);
    EXPECT_EQ(CompareBits(d, want.data(), got.data.data(), n), "");
  } else {
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("cuda"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(Exists(out));
  }
}

// Field `key` of one JSON line as text ("" when missing): enough for the
// flat objects `relugrad bench --json` prints.
std::string JsonField(const std::string& line, const std::string& key) {
  const std::string tag = "\"" + key + "\":";
  const size_t at = line.find(tag);
  if (at == std::string::npos) return "";
  size_t begin = at + tag.size(), end = begin;
  if (line[begin] == '"') {
    end = line.find('"', ++begin);
  } else {
    end = line.find_first_of(",}", begin);
  }
  return line.substr(begin, end - begin);
}

// The benchmark's schema and row order: every point gives the two triads,
// then relugrad (and the A/B candidates), in this order whatever order the
// samples were taken in, with positive times and the ratio to the better
// triad; cold and warm.
TEST(Cli, BenchPrintsEveryCandidateOfEveryPoint) {
  for (const std::string mode : {"", " --warm"}) {
    const CliResult r = RunCli(
        "bench --json --dtype f32,bf16 --sizes 1000,70K --threads 1,2 --min-time 0 --stream-ab" +
        mode);
    ASSERT_EQ(r.status, 0) << r.err;
    std::vector<std::string> lines;
    std::istringstream in(r.out);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    const std::vector<std::string> impls = {"triad", "triad_nt", "relugrad", "relugrad_stream",
                                            "relugrad_nostream"};
    ASSERT_EQ(lines.size(), 2u * 2u * 2u * impls.size()) << r.out;
    size_t i = 0;
    for (const std::string dtype : {"f32", "bf16"}) {
      for (const std::string n : {"1000", "71680"}) {
        for (const std::string threads : {"1", "2"}) {
          double roof = 0;
          for (const std::string& impl : impls) {
            const std::string& line = lines[i++];
            EXPECT_EQ(JsonField(line, "impl"), impl) << line;
            EXPECT_EQ(JsonField(line, "dtype"), dtype) << line;
            EXPECT_EQ(JsonField(line, "n"), n) << line;
            EXPECT_EQ(JsonField(line, "threads"), threads) << line;
            EXPECT_EQ(JsonField(line, "cache"), mode.empty() ? "cold" : "warm") << line;
            const double median = std::atof(JsonField(line, "median_s").c_str());
            const double gbps = std::atof(JsonField(line, "gbps").c_str());
            EXPECT_GT(median, 0) << line;
            EXPECT_GT(gbps, 0) << line;
            if (roof == 0) roof = std::atof(JsonField(line, "roofline_gbps").c_str());
            EXPECT_EQ(std::atof(JsonField(line, "roofline_gbps").c_str()), roof) << line;
            // ratio: the median over rounds of this sample's GB/s over the
            // better triad's in the same round.
            EXPECT_GT(std::atof(JsonField(line, "ratio").c_str()), 0) << line;
          }
          // The roofline is the better of the two triads.
          const double t0 = std::atof(JsonField(lines[i - impls.size()], "gbps").c_str());
          const double t1 = std::atof(JsonField(lines[i - impls.size() + 1], "gbps").c_str());
          EXPECT_NEAR(roof, std::max(t0, t1), 1e-3 * roof);
        }
      }
    }
  }
}

// The table compares like with like: each relugrad row names the stores it
// used and is read against the triad storing the same way; the table ends
// with one plain line over those rows.
TEST(Cli, BenchTableReadsRelugradAgainstTheSameStores) {
  const CliResult r = RunCli("bench --dtype f32 --sizes 1000,70K --threads 1 --min-time 0");
  ASSERT_EQ(r.status, 0) << r.err;
  std::vector<std::string> lines;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 1u + 2u * 3u + 1u) << r.out;
  EXPECT_NE(lines[0].find("triad_nt"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("stores"), std::string::npos) << lines[0];
  for (size_t i : {3u, 6u}) {
    EXPECT_EQ(lines[i].rfind("relugrad ", 0), 0u) << lines[i];
    EXPECT_TRUE(lines[i].find(" cached ") != std::string::npos ||
                lines[i].find(" streaming ") != std::string::npos)
        << lines[i];
  }
  EXPECT_EQ(lines.back().rfind("relugrad ran at ", 0), 0u) << lines.back();
  EXPECT_NE(lines.back().find("at 2 points"), std::string::npos) << lines.back();
}

TEST(Cli, VerifyAndInfo) {
  const CliResult v =
      RunCli("verify --isa " + std::string(relugrad_isa_name(relugrad_isa_count() - 1)) +
             " --threads 1,2 --size 5000");
  EXPECT_EQ(v.status, 0) << v.out << v.err;
  EXPECT_NE(v.out.find(" 0 failed"), std::string::npos) << v.out;
  const CliResult i = RunCli("info");
  EXPECT_EQ(i.status, 0);
  EXPECT_NE(i.out.find("simd_selected:"), std::string::npos);
  // RELUGRAD_MAX_ISA caps dispatch like --isa does.
  const std::string weakest = relugrad_isa_name(relugrad_isa_count() - 1);
  const CliResult capped = RunCli("info >/dev/null; RELUGRAD_MAX_ISA=" + weakest + " " +
                                  std::string(RELUGRAD_CLI_PATH) + " info");
  EXPECT_NE(capped.out.find("simd_selected: " + weakest), std::string::npos) << capped.out;
  const CliResult help = RunCli("run --help");
  EXPECT_EQ(help.status, 0);
  EXPECT_NE(help.out.find("--semantics"), std::string::npos);
}

// info --variants lists every row of each variant table in priority order,
// and the rows the options select.
TEST(Cli, InfoVariantsListsEveryRowOfEveryTable) {
  const CliResult r = RunCli("info --variants");
  ASSERT_EQ(r.status, 0) << r.err;
  size_t at = 0;
  const auto expect_in_order = [&](const char* name) {
    const size_t found = r.out.find(std::string(" ") + name + " ", at);
    EXPECT_NE(found, std::string::npos) << name << " missing or out of order in:\n" << r.out;
    if (found != std::string::npos) at = found;
  };
  for (int i = 0; i < kCpuVariantCount; ++i) expect_in_order(CpuVariants()[i].name);
  for (int i = 0; i < kMaskGradVariantCount; ++i) expect_in_order(MaskGradVariants()[i].name);
  for (int i = 0; i < kMaskForwardVariantCount; ++i) expect_in_order(MaskForwardVariants()[i].name);
  EXPECT_NE(r.out.find("selected f32: nan_open_zero_gate, mask: mask_plain_select, mask forward: "
                       "mask_forward_nan_open_zero_gate"),
            std::string::npos)
      << r.out;
  const CliResult leaky = RunCli("info --variants --semantics onednn --alpha 0.25 --dtype bf16");
  ASSERT_EQ(leaky.status, 0) << leaky.err;
  EXPECT_NE(leaky.out.find("selected bf16: alpha16_scalar, mask: mask_general, mask forward: "
                           "mask_forward_alpha16"),
            std::string::npos)
      << leaky.out;
}

}  // namespace
}  // namespace testing
}  // namespace relugrad
