// mask_bench: ReluGrad from the 1-bit mask vs ReluGrad from x (f32), timed
// interleaved in one run (timing noise on shared machines moves medians by
// 10-40% between runs, so only same-run ratios mean anything), next to the
// in-process STREAM triad as the roofline. Then the activation memory a
// ReLU keeps for backward: a tensor vs a mask, computed and measured (RSS).
//
//   mask_bench [--sizes 16M,64M] [--threads 1,2] [--reps 9] [--memory-only]
//
// One line per measurement: name, dtype, n, threads, median ms, GB/s (bytes
// the kernel must move), fraction of the triad's GB/s, and a repro command.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "bench_support/triad.h"
#include "io/aligned_buffer.h"
#include "relugrad/relugrad.h"

namespace {

struct FloatView {
  relugrad::AlignedBuffer& b;
  float* data() { return reinterpret_cast<float*>(b.data()); }
  float& operator[](int64_t i) { return data()[i]; }
};

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::vector<int64_t> ParseList(const char* text) {
  std::vector<int64_t> out;
  std::string s(text);
  size_t pos = 0;
  while (pos <= s.size()) {
    const size_t comma = std::min(s.find(',', pos), s.size());
    std::string item = s.substr(pos, comma - pos);
    int64_t mult = 1;
    if (!item.empty() && (item.back() == 'K' || item.back() == 'M' || item.back() == 'G')) {
      mult = item.back() == 'K' ? 1 << 10 : item.back() == 'M' ? 1 << 20 : int64_t{1} << 30;
      item.pop_back();
    }
    out.push_back(std::atoll(item.c_str()) * mult);
    pos = comma + 1;
  }
  return out;
}

// Current resident set in bytes (/proc/self/statm, second field, pages).
int64_t RssBytes() {
  std::ifstream f("/proc/self/statm");
  int64_t size = 0, resident = 0;
  f >> size >> resident;
  return resident * 4096;
}

void Check(relugrad_status s, const char* what) {
  if (s != RELUGRAD_OK) {
    std::fprintf(stderr, "mask_bench: %s: %s\n", what, relugrad_last_error());
    std::exit(1);
  }
}

void Speed(const std::vector<int64_t>& sizes, const std::vector<int64_t>& threads, int reps) {
  std::printf("%-22s %-5s %10s %3s %10s %8s %9s  %s\n", "impl", "dtype", "n", "thr", "median_ms",
              "GB/s", "of_triad", "repro");
  for (int64_t n : sizes) {
    // 2 MiB-aligned buffers, as large framework tensors are (allocators
    // align to 64+ bytes): streaming stores then cover whole lines.
    relugrad::AlignedBuffer buf[7];
    for (int k = 0; k < 6; ++k) buf[k].Allocate(static_cast<size_t>(n) * 4);
    buf[6].Allocate(static_cast<size_t>(relugrad_mask_bytes(n)));
    FloatView dy{buf[0]}, x{buf[1]}, dx{buf[2]}, a{buf[3]}, b{buf[4]}, c{buf[5]};
    uint8_t* mask = buf[6].data();
    std::memset(dx.data(), 0, static_cast<size_t>(n) * 4);
    uint64_t r = 88172645463325252ull;
    for (int64_t i = 0; i < n; ++i) {  // xorshift: half the gates open
      r ^= r << 13, r ^= r >> 7, r ^= r << 17;
      x[i] = static_cast<float>(static_cast<int64_t>(r % 2001) - 1000) * 1e-3f;
      dy[i] = static_cast<float>(static_cast<int64_t>((r >> 20) % 2001) - 1000) * 1e-3f;
      b[i] = c[i] = 1.0f;
    }
    Check(relugrad_relu_forward(RELUGRAD_F32, n, x.data(), a.data(), mask, nullptr),
          "relu_forward");
    for (int64_t t : threads) {
      relugrad_options o;
      relugrad_options_init(&o, RELUGRAD_PRESET_TORCH);
      o.threads = static_cast<int32_t>(t);
      relugrad_options cached = o;
      cached.stores = RELUGRAD_STORES_CACHED;
      std::vector<double> tx, tm, tt, tn, tf;
      for (int rep = -1; rep < reps; ++rep) {  // rep -1: warm-up, not recorded
        auto t0 = Clock::now();
        Check(relugrad_relu_grad(RELUGRAD_F32, n, dy.data(), x.data(), dx.data(), &o), "relu_grad");
        auto t1 = Clock::now();
        Check(relugrad_relu_grad_mask(RELUGRAD_F32, n, dy.data(), mask, dx.data(), &o),
              "relu_grad_mask");
        auto t2 = Clock::now();
        relugrad::Triad(a.data(), b.data(), c.data(), 0.5f, n, false, static_cast<int>(t));
        auto t3 = Clock::now();
        // A/B: the mask path with ordinary stores (what the streaming buys).
        Check(relugrad_relu_grad_mask(RELUGRAD_F32, n, dy.data(), mask, dx.data(), &cached),
              "relu_grad_mask");
        auto t4 = Clock::now();
        // The forward that produces the mask: y (into a, not x) + mask.
        Check(relugrad_relu_forward(RELUGRAD_F32, n, x.data(), a.data(), mask, &o), "relu_forward");
        auto t5 = Clock::now();
        if (rep >= 0) {
          tf.push_back(Seconds(t4, t5));
          tx.push_back(Seconds(t0, t1));
          tm.push_back(Seconds(t1, t2));
          tt.push_back(Seconds(t2, t3));
          tn.push_back(Seconds(t3, t4));
        }
      }
      const double mx = Median(tx), mm = Median(tm), mt = Median(tt), mn = Median(tn),
                   mf = Median(tf);
      const double triad_gbs = 12.0 * n / mt / 1e9;
      const double x_gbs = 12.0 * n / mx / 1e9;
      const double m_gbs = (8.0 * n + n / 8.0) / mm / 1e9;
      char repro[96];
      std::snprintf(repro, sizeof(repro), "mask_bench --sizes %lld --threads %lld --reps %d",
                    static_cast<long long>(n), static_cast<long long>(t), reps);
      std::printf("%-22s %-5s %10lld %3lld %10.3f %8.2f %9.2f  %s\n", "triad (roofline)", "f32",
                  static_cast<long long>(n), static_cast<long long>(t), mt * 1e3, triad_gbs, 1.0,
                  repro);
      std::printf("%-22s %-5s %10lld %3lld %10.3f %8.2f %9.2f  %s\n", "relu_grad (from x)", "f32",
                  static_cast<long long>(n), static_cast<long long>(t), mx * 1e3, x_gbs,
                  x_gbs / triad_gbs, repro);
      std::printf("%-22s %-5s %10lld %3lld %10.3f %8.2f %9.2f  %s\n", "relu_grad_mask", "f32",
                  static_cast<long long>(n), static_cast<long long>(t), mm * 1e3, m_gbs,
                  m_gbs / triad_gbs, repro);
      std::printf("%-22s %-5s %10lld %3lld %10.3f %8.2f %9.2f  %s\n", "relu_grad_mask (no NT)",
                  "f32", static_cast<long long>(n), static_cast<long long>(t), mn * 1e3,
                  (8.0 * n + n / 8.0) / mn / 1e9, (8.0 * n + n / 8.0) / mn / 1e9 / triad_gbs,
                  repro);
      std::printf("%-22s %-5s %10lld %3lld %10.3f %8.2f %9.2f  %s\n", "relu_forward (y+mask)",
                  "f32", static_cast<long long>(n), static_cast<long long>(t), mf * 1e3,
                  (8.0 * n + n / 8.0) / mf / 1e9, (8.0 * n + n / 8.0) / mf / 1e9 / triad_gbs,
                  repro);
      std::printf(
          "speedup mask vs x: %.2fx (median of per-rep ratios %.2fx; bytes ratio 12/8.125 = "
          "1.48x)\n",
          mx / mm, [&] {
            std::vector<double> ratios;
            for (size_t i = 0; i < tx.size(); ++i) ratios.push_back(tx[i] / tm[i]);
            return Median(ratios);
          }());
      std::fflush(stdout);
    }
  }
}

// The activation memory one model keeps for its ReLUs' backward passes:
// a Transformer FFN block Linear(d, 4d) -> ReLU -> Dropout -> Linear(4d, d)
// in training, where the ReLU output is read back only by ReLU's backward
// (dropout keeps its own mask, the second Linear keeps the dropout output).
// Measured as the RSS growth of keeping, per layer, y (what frameworks keep)
// or the bitmask (what the mask path keeps).
void Memory() {
  const int64_t layers = 12, tokens = 8 * 512, d = 768, n = tokens * 4 * d;
  std::printf(
      "\nactivation memory kept for ReLU backward: %lld layers x %lld tokens x %lld (ffn 4*%lld) "
      "f32\n",
      static_cast<long long>(layers), static_cast<long long>(tokens), static_cast<long long>(4 * d),
      static_cast<long long>(d));
  std::vector<float> x(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>((i * 2654435761u) % 2001) - 1000.0f;
  for (int mode = 0; mode < 2; ++mode) {
    const int64_t before = RssBytes();
    std::vector<std::vector<uint8_t>> kept;
    std::vector<float> scratch(mode == 1 ? static_cast<size_t>(n) : 0);
    std::vector<uint8_t> unused_mask(mode == 0 ? static_cast<size_t>(relugrad_mask_bytes(n)) : 0);
    const int64_t base = RssBytes();
    for (int64_t l = 0; l < layers; ++l) {
      if (mode == 0) {  // keep y (4 bytes/element); the mask computed alongside is not kept
        kept.emplace_back(static_cast<size_t>(n) * 4);  // zero-filled: resident
        Check(relugrad_relu_forward(RELUGRAD_F32, n, x.data(), kept.back().data(),
                                    unused_mask.data(), nullptr),
              "fwd");
      } else {  // keep the mask (1 bit/element); y lives only until the next op has read it
        kept.emplace_back(static_cast<size_t>(relugrad_mask_bytes(n)));
        Check(relugrad_relu_forward(RELUGRAD_F32, n, x.data(), scratch.data(), kept.back().data(),
                                    nullptr),
              "fwd");
      }
    }
    const int64_t grown = RssBytes() - base;
    const double expected = static_cast<double>(layers) *
                            (mode == 0 ? 4.0 * n : static_cast<double>(relugrad_mask_bytes(n)));
    std::printf("  keep %-5s: computed %9.1f MiB, measured RSS growth %9.1f MiB\n",
                mode == 0 ? "y" : "mask", expected / (1 << 20), grown / double(1 << 20));
    (void)before;
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int64_t> sizes = {int64_t{16} << 20, int64_t{64} << 20}, threads = {1, 2};
  int reps = 9;
  bool memory_only = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--sizes" && i + 1 < argc)
      sizes = ParseList(argv[++i]);
    else if (a == "--threads" && i + 1 < argc)
      threads = ParseList(argv[++i]);
    else if (a == "--reps" && i + 1 < argc)
      reps = std::max(1, std::atoi(argv[++i]));
    else if (a == "--memory-only")
      memory_only = true;
    else {
      std::fprintf(stderr,
                   "mask_bench: unknown argument '%s' (--sizes 16M,64M --threads 1,2 --reps 9 "
                   "--memory-only)\n",
                   a.c_str());
      return 1;
    }
  }
  std::printf("relugrad %s, SIMD target %s\n", relugrad_version(), relugrad_isa_selected());
  if (!memory_only) Speed(sizes, threads, reps);
  Memory();
  return 0;
}
