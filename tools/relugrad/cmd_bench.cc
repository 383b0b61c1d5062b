// relugrad bench: ReluGrad timed against an in-process STREAM-style triad
// (ordinary and streaming stores), interleaved in the same run, because on
// a shared, noisy machine only ratios measured together mean anything.
//
// Per point (dtype, n, threads): triad, triad_nt, relugrad per preset, and
// on request the allocating path, the mask path and a streaming A/B. Bytes
// moved: 3 n x element size (mask backward: 2 n x element size + n/8).
// The roofline of a point is the better of the two triads (JSON/CSV
// "ratio"). The table compares like with like: relugrad's row is read
// against the triad whose stores match the ones the launch policy chose
// (AUTO keeps a dx that fits the caches cached for the next operation and
// streams larger ones), and both triads' GB/s are printed.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench_operands.h"
#include "bench_support/timer.h"
#include "bench_support/triad.h"
#include "bench_types.h"
#include "cli_args.h"
#include "commands.h"
#include "cpu/launch.h"
#include "cpu/relu_grad_backend.h"
#include "io/aligned_buffer.h"
#include "relugrad/relugrad.h"
#include "semantics_flags.h"

namespace relugrad {
namespace cli {
namespace {

// 4K..256M elements in x4 steps. 256M f32 is 1 GiB per array (6 GiB with
// the triad's arrays): slow to fill but within this machine's 24 GiB; pass
// --sizes to stay smaller.
constexpr const char* kDefaultSizes = "4K,16K,64K,256K,1M,4M,16M,64M,256M";

BenchConfig ParseConfig(const Args& args) {
  BenchConfig c;
  c.min_time = args.GetDouble("min-time", 0.2);
  if (!(c.min_time >= 0 && c.min_time <= 3600))
    throw UsageError("--min-time must be in [0, 3600] seconds");
  for (const auto& name : args.GetList("dtype", "f32")) {
    relugrad_dtype d;
    CheckStatus(relugrad_dtype_from_name(name.c_str(), &d), "--dtype");
    c.dtypes.push_back(d);
  }
  for (const auto& s : args.GetList("sizes", kDefaultSizes)) {
    const long long n = ParseSize(s, "--sizes");
    if (n < 1) throw UsageError("--sizes values must be >= 1");
    c.sizes.push_back(n);
  }
  for (const auto& t : args.GetList("threads", "1,2")) {
    const long long v = ParseInt(t, "--threads");
    if (v < 0 || v > 4096)
      throw UsageError("--threads values must be in [0, 4096] (0 = all cores)");
    c.threads.push_back(static_cast<int>(v));
  }
  for (const auto& p : args.GetList("semantics", "torch")) {
    relugrad_preset preset;
    CheckStatus(relugrad_preset_from_name(p.c_str(), &preset), "--semantics");
    relugrad_options o;
    relugrad_options_init(&o, preset);
    c.presets.emplace_back(p, o);
  }
  c.inplace = args.Has("inplace");
  c.warm = args.Has("warm");
  c.rotate_bytes = static_cast<long long>(args.GetDouble("rotate-mib", 64) * (1 << 20));
  if (c.rotate_bytes < 0) throw UsageError("--rotate-mib must be >= 0");
  c.alloc = args.Has("alloc");
  c.mask = args.Has("mask");
  c.stream_ab = args.Has("stream-ab");
  if (args.Has("stores")) {
    c.stores_flag = args.Get("stores");
    const relugrad_stores stores = ParseStores(c.stores_flag);
    for (auto& preset : c.presets) preset.second.stores = stores;
  }
  if (args.Has("json") && args.Has("csv")) throw UsageError("--json and --csv are exclusive");
  c.format = args.Has("json")  ? OutputFormat::kJson
             : args.Has("csv") ? OutputFormat::kCsv
                               : OutputFormat::kTable;
  c.isa_flag = args.Get("isa", "");
  c.isa = relugrad_isa_selected();
  return c;
}

relugrad_stores StoresOf(const BenchConfig& c, const std::string& preset) {
  for (const auto& p : c.presets)
    if (p.first == preset) return p.second.stores;
  return RELUGRAD_STORES_AUTO;
}

void Check(relugrad_status st, const char* what) {
  if (st != RELUGRAD_OK) CheckStatus(st, what);
}

// The candidates of one point, in the order they are interleaved.
std::vector<Candidate> MakeCandidates(const BenchConfig& c, relugrad_dtype d, long long n, int t,
                                      Operands& ops) {
  std::vector<Candidate> out;
  const double moved = 3.0 * static_cast<double>(ops.bytes());
  const long long tn = ops.triad_n();
  out.push_back({"triad", "", moved, [&ops, tn, t](int k) {
                   Triad(ops.ta(k), ops.tb(k), ops.tc(k), 0.5f, tn, false, t);
                 }});
  out.push_back({"triad_nt", "", moved, [&ops, tn, t](int k) {
                   const int set = ops.triad_nt_set(k);
                   Triad(ops.ta(set), ops.tb(set), ops.tc(set), 0.5f, tn, true, t);
                 }});
  const bool inplace = c.inplace;
  for (const auto& [name, preset_options] : c.presets) {
    relugrad_options o = preset_options;
    o.threads = t;
    out.push_back(
        {"relugrad", name, moved, [&ops, d, n, o, inplace](int k) {
           Check(relugrad_relu_grad(d, n, ops.dy(k), ops.s(k), inplace ? ops.dy(k) : ops.dx(k), &o),
                 "relu_grad");
         }});
    if (c.stream_ab && !inplace) {
      // Same call with the public store hint forced (options.stores):
      // streaming stores at every size, and never.
      relugrad_options streaming = o, cached = o;
      streaming.stores = RELUGRAD_STORES_STREAMING;
      cached.stores = RELUGRAD_STORES_CACHED;
      out.push_back({"relugrad_stream", name, moved, [&ops, d, n, streaming](int k) {
                       Check(relugrad_relu_grad(d, n, ops.dy(k), ops.s(k), ops.dx(k), &streaming),
                             "relu_grad");
                     }});
      out.push_back({"relugrad_nostream", name, moved, [&ops, d, n, cached](int k) {
                       Check(relugrad_relu_grad(d, n, ops.dy(k), ops.s(k), ops.dx(k), &cached),
                             "relu_grad");
                     }});
    }
    if (c.alloc) {
      // The CLI-style allocating path: a fresh output per call, 2 MiB-aligned
      // (AlignedBuffer; huge pages only with RELUGRAD_HUGEPAGES=1) vs plain
      // malloc. Fresh memory costs a page fault per page on first write.
      const size_t bytes = ops.bytes();
      out.push_back({"relugrad_alloc", name, moved, [&ops, d, n, o, bytes](int k) {
                       AlignedBuffer fresh;
                       if (!fresh.Allocate(bytes)) throw UsageError("out of memory");
                       Check(relugrad_relu_grad(d, n, ops.dy(k), ops.s(k), fresh.data(), &o),
                             "relu_grad");
                     }});
      // The library's allocating path (relugrad_buffer_alloc, what Python
      // without out= uses): after the first call the cache hands back a
      // block whose pages are mapped.
      out.push_back({"relugrad_pool", name, moved, [&ops, d, n, o, bytes](int k) {
                       void* block = relugrad_buffer_alloc(bytes);
                       if (block == nullptr) throw UsageError(relugrad_last_error());
                       Check(relugrad_relu_grad(d, n, ops.dy(k), ops.s(k), block, &o), "relu_grad");
                       Check(relugrad_buffer_free(block), "buffer_free");
                     }});
      if (bytes <= (size_t{256} << 20)) {  // beyond: seconds per call, nothing new to learn
        out.push_back({"relugrad_alloc4k", name, moved, [&ops, d, n, o, bytes](int k) {
                         void* fresh = std::malloc(bytes);
                         if (fresh == nullptr) throw UsageError("out of memory");
                         Check(relugrad_relu_grad(d, n, ops.dy(k), ops.s(k), fresh, &o),
                               "relu_grad");
                         std::free(fresh);
                       }});
      }
    }
#ifdef RELUGRAD_BENCH_HAVE_MASK
    if (c.mask) {
      // Backward from the 1-bit mask: reads dy and n/8 mask bytes.
      const double mask_moved =
          2.0 * static_cast<double>(ops.bytes()) + static_cast<double>(n) / 8.0;
      for (int k = 0; k < ops.sets(); ++k) {  // masks from a real forward pass
        Check(relugrad_relu_forward(d, n, ops.s(k), ops.dx(k), ops.mask(k), &o), "relu_forward");
      }
      out.push_back({"relugrad_mask", name, mask_moved, [&ops, d, n, o, inplace](int k) {
                       Check(relugrad_relu_grad_mask(d, n, ops.dy(k), ops.mask(k),
                                                     inplace ? ops.dy(k) : ops.dx(k), &o),
                             "relu_grad_mask");
                     }});
    }
#endif
  }
  return out;
}

}  // namespace

int BenchCommand(int argc, char** argv, int first) {
  std::vector<FlagSpec> specs = {
      {"dtype", true, "comma list of f32,f16,bf16,f64 (default f32)"},
      {"sizes", true,
       std::string("comma list with K/M/G suffixes (default ") + kDefaultSizes + ")"},
      {"threads", true, "comma list of thread counts, 0 = all cores (default 1,2)"},
      {"semantics", true, "comma list of presets (default torch)"},
      {"inplace", false, "dx = dy"},
      {"min-time", true, "seconds of samples per implementation per point (default 0.2)"},
      {"warm", false, "keep one operand set (in-cache timing; default rotates sets: cold caches)"},
      {"rotate-mib", true,
       "cold mode: footprint of the rotated operand sets in MiB (default 64 = 2x L3)"},
      {"alloc", false, "also the allocating path: a fresh output per call (huge pages and malloc)"},
      {"mask", false, "also backward from a 1-bit mask (relugrad_relu_grad_mask)"},
      {"stream-ab", false,
       "also --stores streaming (relugrad_stream) and cached (relugrad_nostream)"},
      {"stores", true, "store hint of the relugrad candidate: auto (default), cached, streaming"},
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
  BenchConfig config = ParseConfig(args);
#ifndef RELUGRAD_BENCH_HAVE_MASK
  if (config.mask) throw UsageError("--mask: this build has no mask path");
#endif
  const int total =
      static_cast<int>(config.dtypes.size() * config.sizes.size() * config.threads.size());
  Reporter report(config, total);
  report.Header();
  int done = 0;
  for (relugrad_dtype d : config.dtypes) {
    for (long long n : config.sizes) {
      report.Progress(
          done, std::string(relugrad_dtype_name(d)) + " n=" + std::to_string(n) + " (filling)");
      Operands ops(d, n, config.warm, config.rotate_bytes, config.mask,
                   1000 + static_cast<uint64_t>(n));
      for (int t : config.threads) {
        report.Progress(done, std::string(relugrad_dtype_name(d)) + " n=" + std::to_string(n) +
                                  " threads=" + std::to_string(t));
        const std::vector<Candidate> candidates = MakeCandidates(config, d, n, t, ops);
        const auto samples = TimeInterleaved(candidates, ops.sets(), config.min_time);
        const double moved = 3.0 * static_cast<double>(ops.bytes());
        const double roof =
            moved / std::min(timing::median(samples[0]), timing::median(samples[1])) / 1e9;
        for (size_t i = 0; i < candidates.size(); ++i) {
          Row row;
          row.impl = candidates[i].impl;
          row.dtype = relugrad_dtype_name(d);
          row.semantics = candidates[i].semantics;
          row.n = n;
          row.threads = t;
          row.median_s = timing::median(samples[i]);
          row.best_s = *std::min_element(samples[i].begin(), samples[i].end());
          row.samples = static_cast<int>(samples[i].size());
          row.bytes_moved = candidates[i].bytes_moved;
          row.roofline_gbps = roof;
          row.sets = ops.sets();
          std::vector<double> ratios;  // per round: GB/s over the better triad's GB/s
          for (size_t r = 0; r < samples[i].size(); ++r) {
            const double triad_s = std::min(samples[0][r], samples[1][r]);
            ratios.push_back((row.bytes_moved / samples[i][r]) / (moved / triad_s));
          }
          row.paired_ratio = timing::median(ratios);
          row.triad_gbps = moved / timing::median(samples[0]) / 1e9;
          row.triad_nt_gbps = moved / timing::median(samples[1]) / 1e9;
          if (candidates[i].impl == "relugrad") {
            // The decision the call made (dx's pages are resident after the
            // timed rounds, as they were during them).
            const relugrad_stores hint = StoresOf(config, candidates[i].semantics);
            const LaunchDecision ld =
                Decide(LaunchPolicy::ForThisMachine(), LaunchOp::kReluGrad, n,
                       static_cast<int>(relugrad_dtype_size(d)), t, hint, config.inplace,
                       config.inplace ? ops.dy(0) : ops.dx(0), nullptr);
            const size_t same = ld.stream ? 1 : 0;
            row.stores = ld.stream ? "streaming" : "cached";
            std::vector<double> same_ratios;
            for (size_t r = 0; r < samples[i].size(); ++r)
              same_ratios.push_back(samples[same][r] / samples[i][r]);
            row.same_store_ratio = timing::median(same_ratios);
          }
          report.Emit(row);
        }
        ++done;
      }
    }
  }
  report.Progress(done, "done");
  report.Finish();
  return 0;
}

}  // namespace cli
}  // namespace relugrad
