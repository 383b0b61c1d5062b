// Checks relugrad against the framework outputs stored under tests/golden
// (manifest.tsv: one row per case; see docs/python.md). Every row runs under
// every attainable SIMD target with 1 and 2 threads, and through the scalar
// reference. Bits must match exactly, except NaN-by-class where the manifest
// says so (frameworks whose NaN bits depend on the element's position).
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "io/npy.h"
#include "relugrad/relugrad.h"
#include "test_support.h"

namespace {

struct GoldenCase {
  std::map<std::string, std::string> field;
  std::string Get(const std::string& key) const {
    auto it = field.find(key);
    return it == field.end() ? std::string() : it->second;
  }
};

std::vector<std::string> Split(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  std::string item;
  while (std::getline(ss, item, '\t')) out.push_back(item);
  return out;
}

// manifest.tsv: the framework suites (gen_goldens.py); rounding/manifest.tsv:
// thresholds on rounding boundaries (gen_rounding_goldens.py). Paths in both
// are relative to tests/golden.
std::vector<GoldenCase> LoadManifest(const std::string& name = "manifest.tsv") {
  std::vector<GoldenCase> cases;
  std::ifstream in(std::string(RELUGRAD_GOLDEN_DIR) + "/" + name);
  std::string line;
  if (!std::getline(in, line)) return cases;
  const auto header = Split(line);
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const auto cols = Split(line);
    GoldenCase c;
    for (size_t i = 0; i < header.size() && i < cols.size(); ++i) c.field[header[i]] = cols[i];
    cases.push_back(c);
  }
  return cases;
}

relugrad::npy::Array Load(const std::string& rel) {
  relugrad::npy::Array a;
  std::string error;
  const std::string path = std::string(RELUGRAD_GOLDEN_DIR) + "/" + rel;
  if (!relugrad::npy::Read(path, &a, &error)) ADD_FAILURE() << path << ": " << error;
  return a;
}

uint64_t BitsAt(const void* p, size_t size, int64_t i) {
  uint64_t v = 0;
  std::memcpy(&v, static_cast<const char*>(p) + i * size, size);  // little-endian host
  return v;
}

bool IsNan(relugrad_dtype dtype, uint64_t bits) {
  switch (dtype) {
    case RELUGRAD_F16:
      return (bits & 0x7c00) == 0x7c00 && (bits & 0x03ff) != 0;
    case RELUGRAD_BF16:
      return (bits & 0x7f80) == 0x7f80 && (bits & 0x007f) != 0;
    case RELUGRAD_F32:
      return (bits & 0x7f800000u) == 0x7f800000u && (bits & 0x007fffffu) != 0;
    case RELUGRAD_F64:
      return (bits & 0x7ff0000000000000ull) == 0x7ff0000000000000ull &&
             (bits & 0x000fffffffffffffull) != 0;
  }
  return false;
}

// "key=value,..." settings on top of the preset, for frameworks no preset
// matches (e.g. MindSpore CPU: the jax preset with denormals=ieee), and
// gate_max=h for hardtanh_backward.
void ApplyOverrides(const std::string& text, relugrad_options* o) {
  static const std::map<std::string, std::pair<std::string, int>> kValues = {
      {"zero_if_le", {"gate", RELUGRAD_GATE_ZERO_IF_LE}},
      {"pass_if_gt", {"gate", RELUGRAD_GATE_PASS_IF_GT}},
      {"select", {"combine", RELUGRAD_COMBINE_SELECT}},
      {"multiply", {"combine", RELUGRAD_COMBINE_MULTIPLY}},
      {"ieee", {"denormals", RELUGRAD_DENORMALS_IEEE}},
      {"ftz_daz", {"denormals", RELUGRAD_DENORMALS_FTZ_DAZ}},
      {"compute", {"threshold_rounding", RELUGRAD_THRESHOLD_COMPUTE}},
      {"dtype", {"threshold_rounding", RELUGRAD_THRESHOLD_DTYPE}}};
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos) continue;  // "-": none
    const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    if (key == "gate_max") {  // the one numeric override (hardtanh's upper bound)
      char* end = nullptr;
      o->gate_max = std::strtod(value.c_str(), &end);
      if (end == value.c_str() || *end != '\0')
        ADD_FAILURE() << "manifest override '" << item << "' is not a number";
      continue;
    }
    auto it = kValues.find(value);
    if (it == kValues.end() || it->second.first != key) {
      ADD_FAILURE() << "manifest override '" << item << "' is not a relugrad setting";
      continue;
    }
    if (key == "gate") o->gate = static_cast<relugrad_gate>(it->second.second);
    if (key == "combine") o->combine = static_cast<relugrad_combine>(it->second.second);
    if (key == "denormals") o->denormals = static_cast<relugrad_denormals>(it->second.second);
    if (key == "threshold_rounding")
      o->threshold_rounding = static_cast<relugrad_threshold_rounding>(it->second.second);
  }
}

// gtest prints parameters in failure and listing lines: show the case id.
void PrintTo(const GoldenCase& c, std::ostream* os) { *os << c.Get("id"); }

class Golden : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(Golden, MatchesFramework) {
  const GoldenCase& c = GetParam();
  relugrad_dtype dtype;
  relugrad_preset preset;
  ASSERT_EQ(relugrad_dtype_from_name(c.Get("dtype").c_str(), &dtype), RELUGRAD_OK)
      << c.Get("dtype");
  ASSERT_EQ(relugrad_preset_from_name(c.Get("preset").c_str(), &preset), RELUGRAD_OK)
      << c.Get("preset");
  const bool nan_by_class = c.Get("nan_policy") == "class";
  const auto dy = Load(c.Get("dy"));
  const auto s = Load(c.Get("s"));
  const auto want = Load(c.Get("dx"));
  const size_t size = relugrad_dtype_size(dtype);
  ASSERT_EQ(dy.elem_size, size);
  ASSERT_EQ(s.count, dy.count);
  ASSERT_EQ(want.count, dy.count);
  ASSERT_EQ(std::to_string(dy.count), c.Get("n"));
  relugrad_options o;
  ASSERT_EQ(relugrad_options_init(&o, preset), RELUGRAD_OK);
  // strtod, not stod: stod throws out_of_range for a subnormal double (ERANGE).
  o.threshold = std::strtod(c.Get("threshold").c_str(), nullptr);
  ApplyOverrides(c.Get("overrides"), &o);

  auto check = [&](const std::string& how, relugrad_status status, const std::vector<char>& got) {
    ASSERT_EQ(status, RELUGRAD_OK) << how << ": " << relugrad_last_error();
    int reported = 0;
    for (int64_t i = 0; i < dy.count; ++i) {
      const uint64_t w = BitsAt(want.data.data(), size, i);
      const uint64_t g = BitsAt(got.data(), size, i);
      if (w == g || (nan_by_class && IsNan(dtype, w) && IsNan(dtype, g))) continue;
      ADD_FAILURE() << c.Get("id") << " (" << c.Get("framework") << " " << c.Get("version") << ") "
                    << how << ": element " << i << " dy=0x" << std::hex
                    << BitsAt(dy.data.data(), size, i) << " s=0x" << BitsAt(s.data.data(), size, i)
                    << " framework=0x" << w << " relugrad=0x" << g << std::dec;
      if (++reported == 5) return;
    }
  };

  std::vector<char> got(static_cast<size_t>(dy.count) * size);
  check(
      "reference",
      relugrad_relu_grad_reference(dtype, dy.count, dy.data.data(), s.data.data(), got.data(), &o),
      got);
  for (const std::string& isa : relugrad::testing::TargetsToTest()) {
    relugrad::testing::ScopedIsa cap(isa);
    for (int threads : {1, 2}) {
      o.threads = threads;
      std::fill(got.begin(), got.end(), static_cast<char>(0x5a));
      check(isa + " threads=" + std::to_string(threads),
            relugrad_relu_grad(dtype, dy.count, dy.data.data(), s.data.data(), got.data(), &o),
            got);
    }
  }
}

std::string CaseName(const ::testing::TestParamInfo<GoldenCase>& info) {
  std::string name = info.param.Get("id");
  for (char& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Frameworks, Golden, ::testing::ValuesIn(LoadManifest()), CaseName);
INSTANTIATE_TEST_SUITE_P(ThresholdRounding, Golden,
                         ::testing::ValuesIn(LoadManifest("rounding/manifest.tsv")), CaseName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Golden);

TEST(GoldenManifest, Present) {
  const auto cases = LoadManifest();
  if (cases.empty()) GTEST_SKIP() << "tests/golden/manifest.tsv has no cases: run `make compat`";
  std::map<std::string, int> frameworks;
  for (const auto& c : cases) ++frameworks[c.Get("framework")];
  EXPECT_GE(frameworks.size(), 1u);
  for (const auto& [name, count] : frameworks)
    std::printf("golden: %s %d cases\n", name.c_str(), count);
}

// The rounding-boundary set is committed, so its absence is a failure: at
// least PyTorch 2.x (threshold compared in f32; t converted by torch.full)
// and 1.13 (t converted to the data type) for both 16-bit types.
TEST(GoldenManifest, RoundingBoundariesPresent) {
  std::map<std::string, int> per;
  for (const auto& c : LoadManifest("rounding/manifest.tsv"))
    ++per[c.Get("version") + " " + c.Get("op") + " " + c.Get("dtype")];
  for (const auto& [key, count] : per)
    std::printf("golden rounding: %s %d cases\n", key.c_str(), count);
  EXPECT_GE(per["2.15.0 torch.threshold_backward bf16"], 8);
  EXPECT_GE(per["2.15.0 torch.threshold_backward.t_full bf16"], 8);
  EXPECT_GE(per["2.15.0 torch.threshold_backward.t_full f16"], 8);
  EXPECT_GE(per["1.13.1 torch.threshold_backward bf16"], 8);
}

}  // namespace
