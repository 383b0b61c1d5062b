// relugrad bench: ReluGrad timed against an in-process STREAM-style triad
// (ordinary and streaming stores), interleaved in the same run, because on
// a shared, noisy machine only ratios measured together mean anything.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "check/check_data.h"
#include "cli_args.h"
#include "commands.h"
#include "cpu/triad.h"
#include "io/aligned_buffer.h"
#include "relugrad/relugrad.h"
#include "semantics_flags.h"

namespace relugrad {
namespace cli {
namespace {

using Clock = std::chrono::steady_clock;

// Seconds per call: batches of calls long enough to time (>= 20 us), and
// samples until min_time has passed (at least 5), median of the samples.
double MedianSeconds(const std::function<void()>& call, double min_time) {
  call();  // warm-up: page faults, pool wake-up, dispatch
  int batch = 1;
  for (;;) {
    const auto t0 = Clock::now();
    for (int i = 0; i < batch; ++i) call();
    const double dt = std::chrono::duration<double>(Clock::now() - t0).count();
    if (dt >= 20e-6 || batch >= (1 << 20)) break;
    batch *= 4;
  }
  std::vector<double> samples;
  const auto start = Clock::now();
  while (samples.size() < 5 || std::chrono::duration<double>(Clock::now() - start).count() < min_time) {
    const auto t0 = Clock::now();
    for (int i = 0; i < batch; ++i) call();
    samples.push_back(std::chrono::duration<double>(Clock::now() - t0).count() / batch);
    if (samples.size() >= 100000) break;
  }
  std::nth_element(samples.begin(), samples.begin() + samples.size() / 2, samples.end());
  return samples[samples.size() / 2];
}

// Fresh random data (never zeros): a random block tiled over the buffer.
void Fill(relugrad_dtype d, unsigned char* p, size_t bytes, uint64_t seed) {
  const size_t es = relugrad_dtype_size(d);
  const auto block = check::Pack(d, check::RandomBits(d, 1 << 16, seed));
  for (size_t off = 0; off < bytes; off += block.size()) std::memcpy(p + off, block.data(), std::min(block.size(), bytes - off));
  (void)es;
}

struct Row {
  std::string impl, dtype, semantics;
  long long n;
  int threads;
  double median_s, gbps, roofline_gbps;
};

}  // namespace

int BenchCommand(int argc, char** argv, int first) {
  std::vector<FlagSpec> specs = {
      {"dtype", true, "comma list of f32,f16,bf16,f64 (default f32)"},
      {"sizes", true, "comma list with K/M/G suffixes (default 4K,64K,1M,16M)"},
      {"threads", true, "comma list of thread counts (default 1,2)"},
      {"semantics", true, "comma list of presets (default torch)"},
      {"inplace", false, "dx = dy"},
      {"min-time", true, "seconds per point (default 0.2)"},
      {"json", false, "one JSON object per line"},
      {"csv", false, "CSV output"},
      {"isa", true, "cap SIMD dispatch at this target"},
      {"help|h", false, "this help"},
  };
  const Args args(argc, argv, first, specs);
  if (args.Has("help")) {
    std::printf("%s", Usage("bench", specs).c_str());
    return 0;
  }
  ApplyIsaFlag(args);
  const double min_time = args.GetDouble("min-time", 0.2);
  if (!(min_time >= 0 && min_time <= 3600)) throw UsageError("--min-time must be in [0, 3600] seconds");
  std::vector<relugrad_dtype> dtypes;
  for (const auto& name : args.GetList("dtype", "f32")) {
    relugrad_dtype d;
    CheckStatus(relugrad_dtype_from_name(name.c_str(), &d), "--dtype");
    dtypes.push_back(d);
  }
  std::vector<long long> sizes;
  for (const auto& s : args.GetList("sizes", "4K,64K,1M,16M")) sizes.push_back(ParseSize(s, "--sizes"));
  std::vector<int> threads;
  for (const auto& t : args.GetList("threads", "1,2")) {
    const long long v = ParseInt(t, "--threads");
    if (v < 0 || v > 4096) throw UsageError("--threads values must be in [0, 4096]");
    threads.push_back(static_cast<int>(v));
  }
  std::vector<std::pair<std::string, relugrad_options>> presets;
  for (const auto& p : args.GetList("semantics", "torch")) {
    relugrad_preset preset;
    CheckStatus(relugrad_preset_from_name(p.c_str(), &preset), "--semantics");
    relugrad_options o;
    relugrad_options_init(&o, preset);
    presets.emplace_back(p, o);
  }
  const bool inplace = args.Has("inplace");
  const bool json = args.Has("json"), csv = args.Has("csv");
  const std::string isa = relugrad_isa_selected();

  if (csv) std::printf("impl,dtype,semantics,n,threads,median_s,gbps,ns_per_element,roofline_gbps,ratio,isa\n");
  if (!json && !csv) {
    std::printf("%-16s %-5s %-10s %11s %3s %12s %9s %8s %9s %6s\n", "impl", "dtype", "semantics", "n", "thr",
                "median", "GB/s", "ns/elem", "roof GB/s", "ratio");
  }
  auto emit = [&](const Row& r) {
    const double ratio = r.roofline_gbps > 0 ? r.gbps / r.roofline_gbps : 0;
    const double ns = r.median_s * 1e9 / static_cast<double>(r.n);
    if (json) {
      std::printf("{\"impl\":\"%s\",\"dtype\":\"%s\",\"semantics\":\"%s\",\"n\":%lld,\"threads\":%d,\"median_s\":%.9g,"
                  "\"gbps\":%.4g,\"ns_per_element\":%.4g,\"roofline_gbps\":%.4g,\"ratio\":%.4g,\"isa\":\"%s\","
                  "\"inplace\":%s,\"repro\":\"relugrad bench --dtype %s --sizes %lld --threads %d --semantics %s%s\"}\n",
                  r.impl.c_str(), r.dtype.c_str(), r.semantics.c_str(), r.n, r.threads, r.median_s, r.gbps, ns,
                  r.roofline_gbps, ratio, isa.c_str(), inplace ? "true" : "false", r.dtype.c_str(), r.n, r.threads,
                  r.semantics.empty() ? "torch" : r.semantics.c_str(), inplace ? " --inplace" : "");
    } else if (csv) {
      std::printf("%s,%s,%s,%lld,%d,%.9g,%.4g,%.4g,%.4g,%.4g,%s\n", r.impl.c_str(), r.dtype.c_str(), r.semantics.c_str(),
                  r.n, r.threads, r.median_s, r.gbps, ns, r.roofline_gbps, ratio, isa.c_str());
    } else {
      std::printf("%-16s %-5s %-10s %11lld %3d %10.3f us %9.1f %8.3f %9.1f %6.2f\n", r.impl.c_str(), r.dtype.c_str(),
                  r.semantics.c_str(), r.n, r.threads, r.median_s * 1e6, r.gbps, ns, r.roofline_gbps, ratio);
    }
    std::fflush(stdout);
  };

  for (relugrad_dtype d : dtypes) {
    const size_t es = relugrad_dtype_size(d);
    for (long long n : sizes) {
      const size_t bytes = static_cast<size_t>(n) * es;
      AlignedBuffer dy, s, dx, ta, tb, tc;
      const size_t tn = (bytes + 3) / 4;  // triad floats moving the same bytes
      if (!dy.Allocate(bytes) || !s.Allocate(bytes) || !dx.Allocate(bytes) || !ta.Allocate(tn * 4) ||
          !tb.Allocate(tn * 4) || !tc.Allocate(tn * 4)) {
        throw UsageError("out of memory for n = " + std::to_string(n));
      }
      Fill(d, dy.data(), bytes, 1);
      Fill(d, s.data(), bytes, 2);
      std::memset(dx.data(), 0, bytes);
      Fill(RELUGRAD_F32, tb.data(), tn * 4, 3);
      Fill(RELUGRAD_F32, tc.data(), tn * 4, 4);
      std::memset(ta.data(), 0, tn * 4);
      for (int t : threads) {
        auto* a = reinterpret_cast<float*>(ta.data());
        const auto* b = reinterpret_cast<const float*>(tb.data());
        const auto* c = reinterpret_cast<const float*>(tc.data());
        const double triad = MedianSeconds([&] { Triad(a, b, c, 0.5f, static_cast<int64_t>(tn), false, t); }, min_time);
        const double triad_nt = MedianSeconds([&] { Triad(a, b, c, 0.5f, static_cast<int64_t>(tn), true, t); }, min_time);
        const double moved = 3.0 * static_cast<double>(bytes);
        const double roof = moved / std::min(triad, triad_nt) / 1e9;
        emit({"triad", relugrad_dtype_name(d), "", n, t, triad, moved / triad / 1e9, 0});
        emit({"triad_nt", relugrad_dtype_name(d), "", n, t, triad_nt, moved / triad_nt / 1e9, 0});
        for (auto& [name, options] : presets) {
          relugrad_options o = options;
          o.threads = t;
          void* out = inplace ? dy.data() : dx.data();
          relugrad_status st = RELUGRAD_OK;
          const double sec = MedianSeconds([&] { st = relugrad_relu_grad(d, n, dy.data(), s.data(), out, &o); }, min_time);
          CheckStatus(st, "relu_grad");
          emit({std::string("relugrad_") + isa, relugrad_dtype_name(d), name, n, t, sec, moved / sec / 1e9, roof});
          if (inplace) Fill(d, dy.data(), bytes, 1);  // keep dy from decaying to zeros
        }
      }
    }
  }
  return 0;
}

}  // namespace cli
}  // namespace relugrad
