// relugrad diff --semantics A,B: where two presets give different bits.
// For each dtype and each input class (NaN gate, signed-zero gates, a gate
// equal to the threshold, inf/NaN dy on a closed gate, signalling NaNs,
// subnormal gate, dy and threshold) it runs the scalar reference on the
// class's candidate pairs under both presets and prints the first pair whose
// results differ, bits in hex. `--all` prints every pair of presets; its
// output is docs/semantics-diff.md (tests/cli/semantics_cli_test.cc keeps it equal).
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cli_args.h"
#include "commands.h"
#include "core/dtype_traits.h"
#include "core/float_convert.h"
#include "relugrad/relugrad.h"
#include "semantics_flags.h"

namespace relugrad {
namespace cli {
namespace {

struct Pair {
  uint64_t dy, s;
};

struct InputClass {
  const char* name;
  double threshold;  // applied to both presets for this class
  std::vector<Pair> pairs;
};

struct Bits {
  uint64_t sign, inf, quiet, min_normal;
};

// The bit fields the input classes are built from, as the kernels' DtypeTraits define them.
template <Dtype D>
Bits TraitsBits() {
  using Tr = DtypeTraits<D>;
  return {Tr::kSign, Tr::kInf, Tr::kQuiet, Tr::kMinNormal};
}

Bits BitsOf(relugrad_dtype d) {
  switch (d) {
    case RELUGRAD_F16:
      return TraitsBits<Dtype::kF16>();
    case RELUGRAD_BF16:
      return TraitsBits<Dtype::kBF16>();
    case RELUGRAD_F32:
      return TraitsBits<Dtype::kF32>();
    case RELUGRAD_F64:
      return TraitsBits<Dtype::kF64>();
  }
  return {};
}

std::vector<InputClass> Classes(relugrad_dtype d) {
  const Bits b = BitsOf(d);
  auto v = [&](double x) { return DoubleToBitsRne(ToDtype(d), x); };
  const uint64_t one = v(1.0), m3 = v(-3.0), m1 = v(-1.0), pz = 0, nz = b.sign;
  const uint64_t qnan = b.inf | b.quiet, nqnan_p = b.sign | b.inf | b.quiet | 0x5;
  const uint64_t snan = b.inf | 0x1, nsnan = b.sign | b.inf | 0x3;
  const uint64_t min_sub = 1, max_sub = b.min_normal - 1, nmin_sub = b.sign | 1;
  // A threshold that is subnormal in the compute type (f32, or f64 for f64).
  const double sub_t = d == RELUGRAD_F64 ? -1e-310 : -1e-40;
  return {
      {"NaN gate", 0.0, {{one, qnan}, {m3, qnan}, {one, b.sign | qnan}, {one, qnan | 0x5}}},
      {"-0 gate", 0.0, {{one, nz}, {m3, nz}, {nz, nz}}},
      {"+0 gate", 0.0, {{one, pz}, {m3, pz}, {nz, pz}}},
      {"gate == threshold (0.75)", 0.75, {{one, v(0.75)}, {m3, v(0.75)}}},
      {"inf or NaN dy, closed gate",
       0.0,
       {{b.inf, m1}, {b.sign | b.inf, m1}, {qnan, m1}, {nqnan_p, m1}}},
      {"signalling NaN",
       0.0,
       {{snan, one}, {nsnan, one}, {snan, m1}, {nsnan, m1}, {one, snan}, {m3, nsnan}}},
      {"subnormal gate", 0.0, {{one, min_sub}, {m3, max_sub}, {one, nmin_sub}}},
      {"subnormal dy", 0.0, {{max_sub, one}, {nmin_sub, one}, {max_sub, m1}, {nmin_sub, m1}}},
      {"subnormal threshold", sub_t, {{one, pz}, {m3, nz}, {one, nmin_sub}}},
  };
}

uint64_t One(relugrad_dtype d, const relugrad_options& o, const Pair& p) {
  unsigned char dy[8] = {}, s[8] = {}, dx[8] = {};
  const size_t size = relugrad_dtype_size(d);
  std::memcpy(dy, &p.dy, size);  // little-endian host
  std::memcpy(s, &p.s, size);
  CheckStatus(relugrad_relu_grad_reference(d, 1, dy, s, dx, &o), "reference");
  uint64_t out = 0;
  std::memcpy(&out, dx, size);
  return out;
}

std::string Hex(relugrad_dtype d, uint64_t bits) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "0x%0*llx", static_cast<int>(2 * relugrad_dtype_size(d)),
                static_cast<unsigned long long>(bits));
  return buf;
}

relugrad_options PresetOptions(const std::string& name) {
  relugrad_preset p;
  CheckStatus(relugrad_preset_from_name(name.c_str(), &p), "--semantics");
  relugrad_options o;
  CheckStatus(relugrad_options_init(&o, p), "--semantics");
  return o;
}

// The markdown section for one pair of presets.
std::string DiffSection(const std::string& a, const std::string& b,
                        const std::vector<relugrad_dtype>& dtypes) {
  const relugrad_options oa = PresetOptions(a), ob = PresetOptions(b);
  std::string rows;
  for (relugrad_dtype d : dtypes) {
    for (const InputClass& c : Classes(d)) {
      relugrad_options ta = oa, tb = ob;
      ta.threshold = tb.threshold = c.threshold;
      for (const Pair& p : c.pairs) {
        const uint64_t ra = One(d, ta, p), rb = One(d, tb, p);
        if (ra == rb) continue;
        char t[32];
        std::snprintf(t, sizeof(t), "%g", c.threshold);
        rows += std::string("| ") + relugrad_dtype_name(d) + " | " + c.name + " | " + t + " | " +
                Hex(d, p.dy) + " | " + Hex(d, p.s) + " | " + Hex(d, ra) + " | " + Hex(d, rb) +
                " |\n";
        break;  // one example per class
      }
    }
  }
  std::string out = "## " + a + " vs " + b + "\n\n";
  if (rows.empty()) return out + "No difference in these input classes.\n";
  return out + "| dtype | input class | t | dy | s | " + a + " | " + b +
         " |\n|---|---|---|---|---|---|---|\n" + rows;
}

std::vector<std::string> AllPresets() {
  std::vector<std::string> names;
  for (int i = 0;; ++i) {
    const char* name = relugrad_preset_name(static_cast<relugrad_preset>(i));
    if (std::strcmp(name, "invalid") == 0) break;
    names.push_back(name);
  }
  return names;
}

}  // namespace

int DiffCommand(int argc, char** argv, int first) {
  const std::vector<FlagSpec> specs = {
      {"semantics", true, "two presets A,B to compare"},
      {"all", false, "every pair of presets (the text of docs/semantics-diff.md)"},
      {"dtype", true, "dtypes to compare (default f32,f64,f16,bf16)"},
      {"help|h", false, "this help"}};
  const Args args(argc, argv, first, specs);
  if (args.Has("help")) {
    std::printf("%s", Usage("diff", specs).c_str());
    return 0;
  }
  std::vector<relugrad_dtype> dtypes;
  for (const std::string& name : args.GetList("dtype", "f32,f64,f16,bf16")) {
    relugrad_dtype d;
    CheckStatus(relugrad_dtype_from_name(name.c_str(), &d), "--dtype");
    dtypes.push_back(d);
  }
  if (args.Has("all") == args.Has("semantics"))
    throw UsageError("give either --semantics A,B or --all");
  if (args.Has("semantics")) {
    const std::vector<std::string> names = args.GetList("semantics", "");
    if (names.size() != 2)
      throw UsageError("--semantics wants two presets A,B, got '" + args.Get("semantics") + "'");
    std::printf("%s", DiffSection(names[0], names[1], dtypes).c_str());
    return 0;
  }
  const std::vector<std::string> presets = AllPresets();
  std::string out =
      "# Where the presets differ\n\n"
      "Generated by `relugrad diff --all` (tests/cli/semantics_cli_test.cc regenerates it and "
      "compares). For\n"
      "each pair of presets, dtype and input class: the first candidate pair (dy, s) on which the "
      "two\n"
      "presets give different bits, with the threshold t both used, from the scalar reference; a "
      "class\n"
      "not listed gives the same bits under both. Bits are hex patterns of the dtype.\n";
  for (size_t i = 0; i < presets.size(); ++i) {
    for (size_t j = i + 1; j < presets.size(); ++j)
      out += "\n" + DiffSection(presets[i], presets[j], dtypes);
  }
  std::printf("%s", out.c_str());
  return 0;
}

}  // namespace cli
}  // namespace relugrad
