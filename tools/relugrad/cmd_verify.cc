// relugrad verify: every preset x dtype x SIMD target x thread count on
// special values and random data, bitwise against the scalar reference.
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "check/check_data.h"
#include "core/mask_reference.h"
#include "core/semantics.h"
#include "cli_args.h"
#include "commands.h"
#include "relugrad/relugrad.h"
#include "semantics_flags.h"

namespace relugrad {
namespace cli {
namespace {

struct Case {
  std::string config;
  relugrad_options options;
  relugrad_dtype dtype;
  std::vector<unsigned char> dy, s, expected;
  int64_t n;
  // The mask path: forward(s) must give y_expected and mask_expected, and
  // backward from that mask must give `expected` (the from-s result).
  std::vector<unsigned char> y_expected;
  std::vector<uint8_t> mask_expected;
  // An upper-bounded gate (gate_max) has no mask forward: relu_grad only.
  bool mask_path = true;
};

// Special-value cross product followed by random data long enough to be
// split across threads (more than the grain on every dtype).
Case MakeCase(const check::Config& c, relugrad_dtype d, size_t random_n, uint64_t seed) {
  const auto special = check::SpecialValues(d);
  std::vector<uint64_t> dy_bits, s_bits;
  for (uint64_t g : special) {
    for (uint64_t v : special) {
      dy_bits.push_back(v);
      s_bits.push_back(g);
    }
  }
  const auto rdy = check::RandomBits(d, random_n, seed),
             rs = check::RandomBits(d, random_n, seed + 1);
  dy_bits.insert(dy_bits.end(), rdy.begin(), rdy.end());
  s_bits.insert(s_bits.end(), rs.begin(), rs.end());
  Case k{c.name,
         c.options,
         d,
         check::Pack(d, dy_bits),
         check::Pack(d, s_bits),
         {},
         static_cast<int64_t>(dy_bits.size()),
         {},
         {}};
  k.expected = check::Reference(d, k.dy, k.s, c.options);
  Rules sem;
  if (ResolveOptions(&c.options, &sem) != RELUGRAD_OK)
    throw UsageError(std::string("bad configuration: ") + relugrad_last_error());
  if (sem.HasGateMax()) {
    k.mask_path = false;
    return k;
  }
  k.y_expected.resize(k.s.size());
  k.mask_expected.resize(static_cast<size_t>(relugrad_mask_bytes(k.n)));
  ReferenceForwardRun(ToDtype(d), k.n, k.s.data(), k.y_expected.data(), k.mask_expected.data(),
                      sem);
  return k;
}

// "" when relugrad's mask path agrees with the references, else the first difference.
std::string CheckMaskPath(const Case& k, const relugrad_options& o) {
  std::vector<unsigned char> y(k.s.size(), 0xA5), dx(k.dy.size(), 0xA5);
  std::vector<uint8_t> mask(k.mask_expected.size(), 0xA5);
  relugrad_status st = relugrad_relu_forward(k.dtype, k.n, k.s.data(), y.data(), mask.data(), &o);
  if (st != RELUGRAD_OK) return std::string("forward: ") + relugrad_last_error();
  std::string diff = check::CompareBits(k.dtype, k.y_expected.data(), y.data(), k.n);
  if (!diff.empty()) return "forward y: " + diff;
  if (mask != k.mask_expected) return "forward mask differs from the reference mask";
  st = relugrad_relu_grad_mask(k.dtype, k.n, k.dy.data(), mask.data(), dx.data(), &o);
  if (st != RELUGRAD_OK) return std::string("grad from mask: ") + relugrad_last_error();
  diff = check::CompareBits(k.dtype, k.expected.data(), dx.data(), k.n, k.dy.data(), k.s.data());
  return diff.empty() ? "" : "grad from mask: " + diff;
}

}  // namespace

int VerifyCommand(int argc, char** argv, int first) {
  const std::vector<FlagSpec> specs = {
      {"isa", true, "comma-separated targets to check (default: every attainable one)"},
      {"threads", true, "comma-separated thread counts (default 1,2,3,8)"},
      {"size", true, "random elements per case (default 200003)"},
      {"seed", true, "random seed (default 2024)"},
      {"no-mask", false, "skip the 1-bit mask path (forward + grad from mask)"},
      {"help|h", false, "this help"},
  };
  const Args args(argc, argv, first, specs);
  if (args.Has("help")) {
    std::printf("%s", Usage("verify", specs).c_str());
    return 0;
  }
  std::vector<std::string> targets;
  for (int i = 0; i < relugrad_isa_count(); ++i) targets.emplace_back(relugrad_isa_name(i));
  if (args.Has("isa")) targets = args.GetList("isa", "");
  std::vector<int> threads;
  for (const auto& t : args.GetList("threads", "1,2,3,8")) {
    const long long v = ParseInt(t, "--threads");
    if (v < 0 || v > 4096) throw UsageError("--threads values must be in [0, 4096]");
    threads.push_back(static_cast<int>(v));
  }
  const size_t size = static_cast<size_t>(args.GetInt("size", 200003, 0, 1LL << 30));
  const uint64_t seed = static_cast<uint64_t>(args.GetInt("seed", 2024, 0, 1LL << 62));
  const bool with_mask = !args.Has("no-mask");

  std::vector<Case> cases;
  const relugrad_dtype dtypes[] = {RELUGRAD_F32, RELUGRAD_F16, RELUGRAD_BF16, RELUGRAD_F64};
  auto configs = check::AllConfigs();
  const auto bounded = check::BoundedGateConfigs();
  configs.insert(configs.end(), bounded.begin(), bounded.end());
  for (const auto& c : configs) {
    for (relugrad_dtype d : dtypes) cases.push_back(MakeCase(c, d, size, seed + cases.size()));
  }

  long long passed = 0, failed = 0;
  std::printf(
      "relugrad verify: %zu configurations x 4 dtypes, %zu random + special elements each, seed "
      "%llu%s\n",
      configs.size(), size, static_cast<unsigned long long>(seed),
      with_mask ? "; each check covers relu_grad and the mask path (forward + grad from mask; "
                  "not for the upper-bounded gates, which have no mask forward)"
                : "");
  std::printf("%-8s %-7s %-9s %-9s %-9s %-9s\n", "target", "threads", "f32", "f16", "bf16", "f64");
  for (const auto& target : targets) {
    CheckStatus(relugrad_set_max_isa(target.c_str()), "--isa " + target);
    if (target != relugrad_isa_selected()) {
      throw UsageError("--isa " + target + " did not take effect (selected " +
                       relugrad_isa_selected() + ")");
    }
    for (int t : threads) {
      std::map<relugrad_dtype, std::pair<int, int>> cell;  // passed, total
      std::vector<std::string> failures;
      for (const Case& k : cases) {
        relugrad_options o = k.options;
        o.threads = t;
        std::vector<unsigned char> dx(k.dy.size(), 0xA5);
        const relugrad_status st =
            relugrad_relu_grad(k.dtype, k.n, k.dy.data(), k.s.data(), dx.data(), &o);
        std::string diff =
            st == RELUGRAD_OK
                ? check::CompareBits(k.dtype, k.expected.data(), dx.data(), k.n, k.dy.data(),
                                     k.s.data())
                : std::string("status ") + relugrad_status_name(st) + ": " + relugrad_last_error();
        if (diff.empty() && with_mask && k.mask_path) diff = CheckMaskPath(k, o);
        cell[k.dtype].second++;
        if (diff.empty()) {
          cell[k.dtype].first++;
          ++passed;
        } else {
          ++failed;
          failures.push_back(target + " threads=" + std::to_string(t) + " " + k.config + ": " +
                             diff);
        }
      }
      std::printf("%-8s %-7d", target.c_str(), t);
      for (relugrad_dtype d : dtypes) {
        const std::string s = std::to_string(cell[d].first) + "/" + std::to_string(cell[d].second);
        std::printf(" %-9s", s.c_str());
      }
      std::printf("\n");
      for (const auto& f : failures) std::printf("  FAIL %s\n", f.c_str());
    }
  }
  relugrad_set_max_isa(nullptr);
  std::printf("%lld passed, %lld failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}

}  // namespace cli
}  // namespace relugrad
