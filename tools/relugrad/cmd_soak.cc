// relugrad soak: random ReluGrad calls for a set duration (10m, 24h, ...),
// every result checked against the scalar reference, with resident memory
// watched for growth after a warm-up.
//
// Each call draws: a dtype; a size (tiny: 0..512 elements, medium: up to
// 1M elements, large: 4 MiB up to --max-bytes per array, bounded by the
// memory the machine has available); a configuration (every one of
// check::AllConfigs(), then randomly perturbed threshold/alpha/clip/
// denormals); byte offsets of dy, s and dx (element-aligned, 0..63 bytes
// past a page start, chosen independently); in-place aliasing (dx == dy or
// dx == s); a thread count (0 = all cores up to 2 x cores + 1); a store hint
// (options.stores, which must not change a bit); and a SIMD
// target cap (between calls, never during one: relugrad_set_max_isa is not
// for concurrent use).
//
// Checking: results of up to --full-check elements (default 4M) are
// compared bit for bit with relugrad_relu_grad_reference over the whole
// array. For larger arrays the reference runs on windows whose inputs are
// copied before the call (so in-place calls are checked too): the first and
// last 4096 elements, 4096 elements around every block boundary the thread
// count can produce, and 64 random windows of 1024 elements. The
// reference is the oracle of every test; a faster "oracle" such as the
// kernel on another SIMD target would share the code under test.
// 64 guard bytes on both sides of every operand are checked after each
// call, catching out-of-bounds writes even without a sanitizer.
//
// Leak check: the operands are mmap'd per call (soak_support.h) and glibc's
// mmap threshold is pinned, so the resident set measured between calls is
// the library's and the tool's small state. The largest value seen during
// the warm-up (10% of the duration, 3 s to 2 min, and at least 20 calls) is the baseline; any later
// value above baseline + --rss-growth (default 32 MiB) fails the run.
#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "check/check_data.h"
#include "cli_args.h"
#include "commands.h"
#include "relugrad/relugrad.h"
#include "semantics_flags.h"
#include "soak_support.h"

namespace relugrad {
namespace cli {
namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kGuard = 64;
constexpr unsigned char kGuardByte = 0xA5;

enum class Alias { kNone, kDy, kS };
enum SizeClass { kTiny = 0, kMedium = 1, kLarge = 2 };
const char* const kSizeClassNames[] = {"tiny", "medium", "large"};

struct Case {
  uint64_t index = 0;
  relugrad_dtype dtype = RELUGRAD_F32;
  int64_t n = 0;
  SizeClass size_class = kTiny;
  std::string config;
  relugrad_options options{};
  size_t dy_off = 0, s_off = 0, dx_off = 0;  // bytes past the guard
  Alias alias = Alias::kNone;
  std::string isa;
};

std::string Describe(const Case& c) {
  char buf[512];
  const relugrad_options& o = c.options;
  std::snprintf(buf, sizeof(buf),
                "case %llu: %s n=%lld (%s) config=%s gate=%d combine=%d denormals=%d rounding=%d "
                "threshold=%.17g "
                "alpha=%.17g clip=%d[%.17g,%.17g] threads=%d stores=%d offsets dy+%zu s+%zu dx+%zu "
                "alias=%s isa=%s",
                static_cast<unsigned long long>(c.index), relugrad_dtype_name(c.dtype),
                static_cast<long long>(c.n), kSizeClassNames[c.size_class], c.config.c_str(),
                o.gate, o.combine, o.denormals, o.threshold_rounding, o.threshold, o.alpha, o.clip,
                o.clip_lo, o.clip_hi, o.threads, o.stores, c.dy_off, c.s_off, c.dx_off,
                c.alias == Alias::kNone ? "none"
                : c.alias == Alias::kDy ? "dx=dy"
                                        : "dx=s",
                c.isa.c_str());
  return buf;
}

// Everything a call needs, drawn from one generator per case so that a
// case is reproducible from (seed, index) alone.
class CaseMaker {
 public:
  CaseMaker(uint64_t seed, size_t max_bytes, int max_threads)
      : seed_(seed),
        max_bytes_(max_bytes),
        max_threads_(max_threads),
        configs_(check::AllConfigs()) {
    for (int i = 0; i < relugrad_isa_count(); ++i) isas_.emplace_back(relugrad_isa_name(i));
  }

  Case Make(uint64_t index, std::mt19937_64& rng) const {
    Case c;
    c.index = index;
    c.dtype = check::kAllDtypes[rng() % 4];
    const size_t es = relugrad_dtype_size(c.dtype);
    const uint64_t pick = rng() % 100;
    c.size_class = pick < 55 ? kTiny : pick < 85 ? kMedium : kLarge;
    if (index == 0) c.size_class = kLarge;  // warm the pool's every worker first
    const double cap = static_cast<double>(MaxBytesNow() / es);  // elements
    switch (c.size_class) {
      case kTiny:
        c.n = static_cast<int64_t>(rng() % 513);
        break;
      case kMedium:
        c.n = static_cast<int64_t>(LogUniform(rng, 513, std::min<double>(1 << 20, cap)));
        break;
      case kLarge:
        c.n = static_cast<int64_t>(LogUniform(rng, std::min((4.0 * (1 << 20)) / es, cap), cap));
        break;
    }
    c.n = std::min(c.n, static_cast<int64_t>(cap));
    const auto& base = configs_[rng() % configs_.size()];
    c.config = base.name;
    c.options = base.options;
    Perturb(rng, &c);
    c.options.threads = index == 0 ? max_threads_ : static_cast<int>(rng() % (max_threads_ + 1));
    c.options.stores =
        static_cast<relugrad_stores>(rng() % 3);  // a speed hint: the bits must not move
    const auto offset = [&] { return (rng() % (64 / es)) * es; };
    c.dy_off = offset();
    c.s_off = offset();
    c.dx_off = offset();
    const uint64_t a = rng() % 8;
    c.alias = a == 0 ? Alias::kDy : a == 1 ? Alias::kS : Alias::kNone;
    c.isa = isas_[rng() % isas_.size()];
    return c;
  }

  // Per-array cap: the flag, and an eighth of what the machine has free
  // now (three operands plus headroom for everyone else).
  size_t MaxBytesNow() const {
    const uint64_t avail = AvailableBytes();
    return avail == 0 ? max_bytes_ : std::min<size_t>(max_bytes_, avail / 8);
  }

 private:
  static double LogUniform(std::mt19937_64& rng, double lo, double hi) {
    if (hi <= lo) return lo;
    std::uniform_real_distribution<double> u(std::log(lo), std::log(hi));
    return std::floor(std::exp(u(rng)));
  }

  // Moves the configuration off the fixed table, keeping it valid.
  static void Perturb(std::mt19937_64& rng, Case* c) {
    relugrad_options& o = c->options;
    std::uniform_real_distribution<double> u(-4.0, 4.0);
    bool changed = false;
    if (rng() % 4 == 0) {
      const double picks[] = {0.0, -0.0, u(rng), 1e-40, -1e-40, 6e-8, 65504.0, -65504.0, 1e-3};
      o.threshold = picks[rng() % 9];
      o.threshold_rounding = static_cast<relugrad_threshold_rounding>(rng() % 2);
      changed = true;
    }
    if (rng() % 4 == 0) {
      const double picks[] = {0.0, u(rng), 1e-30, -1e-30, 1e30};
      o.alpha = picks[rng() % 5];
      changed = true;
    }
    if (rng() % 5 == 0) {
      o.clip = 1;
      double lo = u(rng), hi = u(rng);
      if (lo > hi) std::swap(lo, hi);
      if (rng() % 4 == 0) lo = hi;  // a one-point range
      o.clip_lo = lo;
      o.clip_hi = hi;
      changed = true;
    }
    if (rng() % 5 == 0) {
      o.denormals = static_cast<relugrad_denormals>(rng() % 2);
      o.gate = static_cast<relugrad_gate>(rng() % 2);
      o.combine = static_cast<relugrad_combine>(rng() % 2);
      changed = true;
    }
    if (changed) c->config += "+random";
  }

  uint64_t seed_;
  size_t max_bytes_;
  int max_threads_;
  std::vector<check::Config> configs_;
  std::vector<std::string> isas_;
};

// One operand: guard | offset | n elements | guard, in its own mapping.
struct Operand {
  MappedBuffer buf;
  size_t offset = 0, bytes = 0;
  unsigned char* data() { return buf.data() + kGuard + offset; }
};

Operand MakeOperand(size_t offset, size_t bytes) {
  Operand op;
  op.buf = MappedBuffer(kGuard + offset + bytes + kGuard);
  op.offset = offset;
  op.bytes = bytes;
  std::memset(op.buf.data(), kGuardByte, kGuard + offset);
  std::memset(op.buf.data() + kGuard + offset + bytes, kGuardByte, kGuard);
  return op;
}

bool GuardsIntact(Operand& op) {
  const unsigned char* p = op.buf.data();
  for (size_t i = 0; i < kGuard + op.offset; ++i) {
    if (p[i] != kGuardByte) return false;
  }
  const unsigned char* q = op.data() + op.bytes;
  for (size_t i = 0; i < kGuard; ++i) {
    if (q[i] != kGuardByte) return false;
  }
  return true;
}

// Random data, fast enough for hundreds of MiB: a palette of special and
// random values (check::RandomBits) indexed by xorshift64*.
void Fill(relugrad_dtype d, unsigned char* p, int64_t n, uint64_t seed) {
  const size_t es = relugrad_dtype_size(d);
  const auto palette = check::Pack(d, check::RandomBits(d, 4096, seed));
  uint64_t x = seed | 1;
  for (int64_t i = 0; i < n; ++i) {
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    const size_t k = static_cast<size_t>((x * 0x2545F4914F6CDD1Dull) >> 52);  // 0..4095
    std::memcpy(p + static_cast<size_t>(i) * es, palette.data() + k * es, es);
  }
}

struct Window {
  int64_t begin, end;
};

// Windows for arrays too large for a full reference pass (see the top).
std::vector<Window> CheckWindows(int64_t n, int threads, std::mt19937_64& rng) {
  std::vector<Window> w;
  const auto add = [&](int64_t b, int64_t e) {
    w.push_back({std::max<int64_t>(0, b), std::min(n, e)});
  };
  add(0, 4096);
  add(n - 4096, n);
  const int t_max = threads == 0 ? relugrad_default_threads() : threads;
  for (int t = 2; t <= t_max; ++t) {  // any block count the plan may pick
    for (int b = 1; b < t; ++b) {
      const int64_t edge = static_cast<int64_t>(static_cast<double>(n) * b / t);
      add(edge - 2048, edge + 2048);
    }
  }
  for (int i = 0; i < 64; ++i) {
    const int64_t b = static_cast<int64_t>(rng() % static_cast<uint64_t>(n));
    add(b, b + 1024);
  }
  std::sort(w.begin(), w.end(), [](const Window& a, const Window& b) { return a.begin < b.begin; });
  std::vector<Window> merged;
  for (const Window& x : w) {
    if (!merged.empty() && x.begin <= merged.back().end) {
      merged.back().end = std::max(merged.back().end, x.end);
    } else {
      merged.push_back(x);
    }
  }
  return merged;
}

struct Stats {
  uint64_t calls = 0, checked_elements = 0, full_checks = 0, window_checks = 0;
  double bytes = 0;  // dy + s + dx traffic of the calls under test
  uint64_t by_dtype[5] = {}, by_class[3] = {}, aliased = 0;
  int64_t largest_n_bytes = 0;
};

// Runs one case; "" on success, else the failure.
std::string RunCase(const Case& c, size_t full_check, std::mt19937_64& rng, Stats* stats) {
  const relugrad_dtype d = c.dtype;
  const size_t es = relugrad_dtype_size(d);
  const size_t bytes = static_cast<size_t>(c.n) * es;
  Operand dy = MakeOperand(c.dy_off, bytes), s = MakeOperand(c.s_off, bytes);
  Operand dx_own;
  if (c.alias == Alias::kNone) dx_own = MakeOperand(c.dx_off, bytes);
  Fill(d, dy.data(), c.n, rng());
  Fill(d, s.data(), c.n, rng());
  Operand& dx = c.alias == Alias::kDy ? dy : c.alias == Alias::kS ? s : dx_own;
  if (c.alias == Alias::kNone)
    std::memset(dx.data(), 0x5C, bytes);  // stale bits must be overwritten

  // Expected values, computed before the call because in place destroys an input.
  const bool full = static_cast<size_t>(c.n) <= full_check;
  std::vector<Window> windows =
      full ? std::vector<Window>{{0, c.n}} : CheckWindows(c.n, c.options.threads, rng);
  size_t total = 0;
  for (const Window& w : windows) total += static_cast<size_t>(w.end - w.begin);
  MappedBuffer in_dy(total * es), in_s(total * es), expected(total * es);
  {
    size_t at = 0;
    for (const Window& w : windows) {
      const size_t len = static_cast<size_t>(w.end - w.begin) * es,
                   off = static_cast<size_t>(w.begin) * es;
      std::memcpy(in_dy.data() + at, dy.data() + off, len);
      std::memcpy(in_s.data() + at, s.data() + off, len);
      at += len;
    }
    if (total > 0 &&
        relugrad_relu_grad_reference(d, static_cast<int64_t>(total), in_dy.data(), in_s.data(),
                                     expected.data(), &c.options) != RELUGRAD_OK) {
      return std::string("the reference rejected valid options: ") + relugrad_last_error();
    }
  }

  const relugrad_status st = relugrad_relu_grad(d, c.n, dy.data(), s.data(), dx.data(), &c.options);
  if (st != RELUGRAD_OK)
    return std::string("status ") + relugrad_status_name(st) + ": " + relugrad_last_error();
  if (!GuardsIntact(dy) || !GuardsIntact(s) || (c.alias == Alias::kNone && !GuardsIntact(dx))) {
    return "a write landed outside the operands (guard bytes changed)";
  }
  size_t at = 0;
  for (const Window& w : windows) {
    const size_t len = static_cast<size_t>(w.end - w.begin);
    std::string diff = check::CompareBits(d, expected.data() + at * es,
                                          dx.data() + static_cast<size_t>(w.begin) * es, len,
                                          in_dy.data() + at * es, in_s.data() + at * es);
    if (!diff.empty()) return "window at element " + std::to_string(w.begin) + ": " + diff;
    at += len;
  }
  stats->calls++;
  stats->checked_elements += total;
  (full ? stats->full_checks : stats->window_checks)++;
  stats->bytes += 3.0 * static_cast<double>(bytes);
  stats->by_dtype[d]++;
  stats->by_class[c.size_class]++;
  if (c.alias != Alias::kNone) stats->aliased++;
  stats->largest_n_bytes = std::max<int64_t>(stats->largest_n_bytes, static_cast<int64_t>(bytes));
  return "";
}

struct RssSample {
  double t;
  uint64_t rss;
};

}  // namespace

int SoakCommand(int argc, char** argv, int first) {
  const std::vector<FlagSpec> specs = {
      {"duration", true, "how long to run: 90s, 10m, 24h, 1h30m (default 10m)"},
      {"calls", true, "stop after this many calls, if sooner (default: no limit)"},
      {"seed", true, "random seed (default: from the clock; printed for replay)"},
      {"max-bytes", true,
       "largest array in bytes, K/M/G suffixes (default 256M; capped at 1/8 of available memory)"},
      {"full-check", true, "arrays up to this many elements are checked in full (default 4M)"},
      {"rss-growth", true, "allowed resident-memory growth after warm-up, K/M/G (default 32M)"},
      {"max-threads", true, "largest thread count drawn (default 2 x cores + 1)"},
      {"progress", true,
       "progress display: auto (bar on a terminal, a line every 10 s otherwise), bar, lines, none"},
      {"help|h", false, "this help"},
  };
  const Args args(argc, argv, first, specs);
  if (args.Has("help")) {
    std::printf("%s", Usage("soak", specs).c_str());
    return 0;
  }
  const double duration = ParseDuration(args.Get("duration", "10m"), "--duration");
  const long long max_calls = args.GetInt("calls", 0, 0, 1LL << 62);
  const uint64_t seed =
      args.Has("seed")
          ? static_cast<uint64_t>(args.GetInt("seed", 0, 0, 1LL << 62))
          : static_cast<uint64_t>(Clock::now().time_since_epoch().count()) & ((1ULL << 62) - 1);
  const long long max_bytes = ParseSize(args.Get("max-bytes", "256M"), "--max-bytes");
  if (max_bytes < 4096) throw UsageError("--max-bytes must be at least 4K");
  const long long full_check = ParseSize(args.Get("full-check", "4M"), "--full-check");
  const long long rss_growth = ParseSize(args.Get("rss-growth", "32M"), "--rss-growth");
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int max_threads = static_cast<int>(args.GetInt("max-threads", 2 * cores + 1, 1, 4096));
  std::string progress = args.Get("progress", "auto");
  if (progress != "auto" && progress != "bar" && progress != "lines" && progress != "none") {
    throw UsageError("--progress must be auto, bar, lines or none, got '" + progress + "'");
  }
  if (progress == "auto") progress = ::isatty(2) ? "bar" : "lines";

  // Big allocations always via mmap, so freed memory leaves the resident
  // set and the leak bound measures leaks, not heap fragmentation.
  mallopt(M_MMAP_THRESHOLD, 256 * 1024);
  mallopt(M_TRIM_THRESHOLD, 1024 * 1024);

  const CaseMaker maker(seed, static_cast<size_t>(max_bytes), max_threads);
  const double warmup = std::min(120.0, std::max(3.0, duration * 0.1));
  std::printf(
      "relugrad soak: duration %s, seed %llu, arrays up to %s (now), threads 0..%d, full check up "
      "to %lld elements,\n"
      "  RSS bound: baseline (largest during the %.0f s warm-up) + %s\n",
      FormatHms(duration).c_str(), static_cast<unsigned long long>(seed),
      FormatBytes(static_cast<double>(maker.MaxBytesNow())).c_str(), max_threads, full_check,
      warmup, FormatBytes(static_cast<double>(rss_growth)).c_str());
  std::fflush(stdout);

  Stats stats;
  std::vector<RssSample> curve;
  uint64_t baseline = 0, peak_idle = 0, last_rss = 0;
  const auto start = Clock::now();
  double next_curve = 0, next_line = 10, next_bar = 0;
  std::string failure;
  Case failed_case;
  const auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  const auto status_text = [&](double t) {
    char buf[256];
    const double frac = std::min(1.0, t / duration);
    std::snprintf(buf, sizeof(buf), "%5.1f%% %s / %s ETA %s | calls %llu | %s | RSS %s", 100 * frac,
                  FormatHms(t).c_str(), FormatHms(duration).c_str(),
                  FormatHms(std::max(0.0, duration - t)).c_str(),
                  static_cast<unsigned long long>(stats.calls), FormatBytes(stats.bytes).c_str(),
                  FormatBytes(static_cast<double>(last_rss)).c_str());
    return std::string(buf);
  };

  for (uint64_t index = 0;; ++index) {
    const double t = elapsed();
    if (t >= duration || (max_calls > 0 && static_cast<long long>(index) >= max_calls)) break;
    std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + index);
    const Case c = maker.Make(index, rng);
    // Between calls only: dispatch is process-wide and not for concurrent use.
    CheckStatus(relugrad_set_max_isa(c.isa.c_str()), "--isa " + c.isa);
    failure = RunCase(c, static_cast<size_t>(full_check), rng, &stats);
    if (!failure.empty()) {
      failed_case = c;
      break;
    }
    last_rss = ResidentBytes();
    const double now = elapsed();
    // The warm-up is a time *and* at least 20 calls: a slow first call
    // (a huge array, or running under Valgrind) must not leave it empty.
    if (now < warmup || index < 20) {
      baseline = std::max(baseline, last_rss);
    } else {
      peak_idle = std::max(peak_idle, last_rss);
      if (last_rss > baseline + static_cast<uint64_t>(rss_growth)) {
        failure = "resident memory grew to " + FormatBytes(static_cast<double>(last_rss)) +
                  " after the warm-up (baseline " + FormatBytes(static_cast<double>(baseline)) +
                  ", bound +" + FormatBytes(static_cast<double>(rss_growth)) + ")";
        failed_case = c;
        break;
      }
    }
    if (now >= next_curve) {
      curve.push_back({now, last_rss});
      next_curve = now + std::max(1.0, duration / 20);  // about 20 samples, never a burst
    }
    if (progress == "bar" && now >= next_bar) {
      const int width = 24, filled = static_cast<int>(width * std::min(1.0, now / duration));
      std::fprintf(stderr, "\r[%s%s] %s ", std::string(filled, '#').c_str(),
                   std::string(width - filled, '.').c_str(), status_text(now).c_str());
      next_bar = now + 0.25;
    } else if (progress == "lines" && now >= next_line) {
      std::fprintf(stderr, "soak: %s\n", status_text(now).c_str());
      next_line += 10;
    }
  }
  relugrad_set_max_isa(nullptr);
  const double total = elapsed();
  curve.push_back({total, last_rss});
  if (progress == "bar")
    std::fprintf(stderr, "\r[%s] %s\n", std::string(24, '#').c_str(), status_text(total).c_str());

  std::printf(
      "soak summary: %llu calls in %s, %s moved, %llu elements checked against the reference "
      "(%llu calls in full, %llu on windows)\n",
      static_cast<unsigned long long>(stats.calls), FormatHms(total).c_str(),
      FormatBytes(stats.bytes).c_str(), static_cast<unsigned long long>(stats.checked_elements),
      static_cast<unsigned long long>(stats.full_checks),
      static_cast<unsigned long long>(stats.window_checks));
  std::printf(
      "  dtypes: f32 %llu, f16 %llu, bf16 %llu, f64 %llu | sizes: tiny %llu, medium %llu, large "
      "%llu "
      "(largest array %s) | in place %llu\n",
      static_cast<unsigned long long>(stats.by_dtype[RELUGRAD_F32]),
      static_cast<unsigned long long>(stats.by_dtype[RELUGRAD_F16]),
      static_cast<unsigned long long>(stats.by_dtype[RELUGRAD_BF16]),
      static_cast<unsigned long long>(stats.by_dtype[RELUGRAD_F64]),
      static_cast<unsigned long long>(stats.by_class[0]),
      static_cast<unsigned long long>(stats.by_class[1]),
      static_cast<unsigned long long>(stats.by_class[2]),
      FormatBytes(static_cast<double>(stats.largest_n_bytes)).c_str(),
      static_cast<unsigned long long>(stats.aliased));
  std::printf(
      "  RSS between calls: baseline %s, largest after warm-up %s, final %s (bound %s)\n  RSS "
      "curve:",
      FormatBytes(static_cast<double>(baseline)).c_str(),
      FormatBytes(static_cast<double>(peak_idle)).c_str(),
      FormatBytes(static_cast<double>(last_rss)).c_str(),
      FormatBytes(static_cast<double>(baseline + static_cast<uint64_t>(rss_growth))).c_str());
  for (const RssSample& r : curve)
    std::printf(" %s=%s", FormatHms(r.t).c_str(), FormatBytes(static_cast<double>(r.rss)).c_str());
  std::printf("\n");
  if (!failure.empty()) {
    std::printf("FAIL (seed %llu) %s\n  %s\n", static_cast<unsigned long long>(seed),
                Describe(failed_case).c_str(), failure.c_str());
    std::fprintf(stderr, "relugrad soak: FAIL: %s\n", failure.c_str());
    return 1;
  }
  std::printf("PASS\n");
  return 0;
}

}  // namespace cli
}  // namespace relugrad
