// Output of `relugrad bench`: an aligned table for people, JSON lines or CSV
// for scripts (bench/plot.py, bench/report.py read the JSON), and a progress
// line on stderr once a sweep has run for more than a second.
#include <unistd.h>

#include <cstdio>
#include <string>

#include "bench_types.h"
#include "bench_support/timer.h"

namespace relugrad {
namespace cli {
namespace {

double NowSeconds() { return static_cast<double>(Timer::now_ns()) * 1e-9; }

std::string JsonEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

Reporter::Reporter(const BenchConfig& config, int total_points)
    : config_(config), total_(total_points), start_(NowSeconds()), tty_(isatty(2) != 0) {}

std::string Reporter::Repro(const Row& r) const {
  // Triad lines carry no semantics: the point's torch run reproduces them.
  std::string cmd = "relugrad bench --dtype " + r.dtype + " --sizes " + std::to_string(r.n) +
                    " --threads " + std::to_string(r.threads) + " --semantics " +
                    (r.semantics.empty() ? "torch" : r.semantics);
  char mt[32];
  std::snprintf(mt, sizeof(mt), "%g", config_.min_time);
  cmd += std::string(" --min-time ") + mt;
  if (config_.inplace) cmd += " --inplace";
  if (config_.warm) cmd += " --warm";
  if (r.impl.find("alloc") != std::string::npos) cmd += " --alloc";
  if (r.impl.find("mask") != std::string::npos) cmd += " --mask";
  if (r.impl.find("stream") != std::string::npos) cmd += " --stream-ab";
  if (!config_.isa_flag.empty()) cmd += " --isa " + config_.isa_flag;
  if (!config_.stores_flag.empty() && r.impl == "relugrad")
    cmd += " --stores " + config_.stores_flag;
  return cmd;
}

void Reporter::Header() {
  if (config_.format == OutputFormat::kCsv) {
    std::printf(
        "impl,dtype,semantics,n,threads,median_s,gbps,ns_per_element,elements_per_s,roofline_gbps,"
        "ratio,"
        "best_s,isa,inplace,cache,sets,samples,bytes_moved,repro\n");
  } else if (config_.format == OutputFormat::kTable) {
    // ratio: relugrad against the triad with its stores (column "stores"),
    // a triad against the better of the two.
    std::printf("%-18s %-5s %-10s %10s %3s %12s %8s %8s %8s %8s %-9s %6s\n", "impl", "dtype",
                "semantics", "n", "thr", "median", "GB/s", "ns/elem", "triad", "triad_nt", "stores",
                "ratio");
  }
  std::fflush(stdout);
}

void Reporter::Emit(const Row& r) {
  const double gbps = r.Gbps();
  const double ratio = r.paired_ratio >= 0   ? r.paired_ratio
                       : r.roofline_gbps > 0 ? gbps / r.roofline_gbps
                                             : 0;
  const double best_gbps = r.best_s > 0 ? r.bytes_moved / r.best_s / 1e9 : 0;
  const double ns = r.n > 0 ? r.median_s * 1e9 / static_cast<double>(r.n) : 0;
  const double eps = r.median_s > 0 ? static_cast<double>(r.n) / r.median_s : 0;
  const char* cache = config_.warm ? "warm" : "cold";
  if (progress_shown_ && tty_) {
    std::fprintf(stderr, "\r\033[K");
    progress_shown_ = false;
  }
  switch (config_.format) {
    case OutputFormat::kJson:
      std::printf(
          "{\"impl\":\"%s\",\"dtype\":\"%s\",\"semantics\":\"%s\",\"n\":%lld,\"threads\":%d,"
          "\"median_s\":%.9g,\"gbps\":%.5g,\"ns_per_element\":%.5g,\"elements_per_s\":%.5g,"
          "\"roofline_gbps\":%.5g,\"ratio\":%.4f,\"best_s\":%.9g,\"best_gbps\":%.5g,"
          "\"isa\":\"%s\",\"inplace\":%s,\"cache\":\"%s\","
          "\"sets\":%d,\"samples\":%d,\"bytes_moved\":%.0f,\"repro\":\"%s\"}\n",
          r.impl.c_str(), r.dtype.c_str(), r.semantics.c_str(), r.n, r.threads, r.median_s, gbps,
          ns, eps, r.roofline_gbps, ratio, r.best_s, best_gbps, config_.isa.c_str(),
          config_.inplace ? "true" : "false", cache, r.sets, r.samples, r.bytes_moved,
          JsonEscape(Repro(r)).c_str());
      break;
    case OutputFormat::kCsv:
      std::printf(
          "%s,%s,%s,%lld,%d,%.9g,%.5g,%.5g,%.5g,%.5g,%.4f,%.9g,%s,%d,%s,%d,%d,%.0f,\"%s\"\n",
          r.impl.c_str(), r.dtype.c_str(), r.semantics.c_str(), r.n, r.threads, r.median_s, gbps,
          ns, eps, r.roofline_gbps, ratio, r.best_s, config_.isa.c_str(), config_.inplace ? 1 : 0,
          cache, r.sets, r.samples, r.bytes_moved, Repro(r).c_str());
      break;
    case OutputFormat::kTable: {
      char median[32];
      if (r.median_s < 1e-3) {
        std::snprintf(median, sizeof(median), "%.3f us", r.median_s * 1e6);
      } else {
        std::snprintf(median, sizeof(median), "%.3f ms", r.median_s * 1e3);
      }
      std::string stores = r.stores;
      double shown = ratio;
      if (r.impl == "triad") stores = "cached";
      if (r.impl == "triad_nt") stores = "streaming";
      if (r.same_store_ratio >= 0) {
        shown = r.same_store_ratio;
        if (same_points_ == 0 || shown < min_same_) min_same_ = shown;
        if (same_points_ == 0 || shown > max_same_) max_same_ = shown;
        ++same_points_;
      }
      if (stores.empty()) stores = "-";
      std::printf("%-18s %-5s %-10s %10lld %3d %12s %8.1f %8.4f %8.1f %8.1f %-9s %6.2f\n",
                  r.impl.c_str(), r.dtype.c_str(), r.semantics.c_str(), r.n, r.threads, median,
                  gbps, ns, r.triad_gbps, r.triad_nt_gbps, stores.c_str(), shown);
      break;
    }
  }
  std::fflush(stdout);
}

void Reporter::Progress(int done, const std::string& what) {
  const double now = NowSeconds();
  if (now - start_ < 1.0) return;  // short sweeps stay quiet
  if (tty_) {
    std::fprintf(stderr, "\r\033[K[%d/%d] %.0f s  %s", done, total_, now - start_, what.c_str());
    progress_shown_ = true;
  } else if (now - last_progress_ >= 10.0 || done == total_) {
    std::fprintf(stderr, "relugrad bench: %d/%d points, %.0f s, now %s\n", done, total_,
                 now - start_, what.c_str());
    last_progress_ = now;
  }
  std::fflush(stderr);
}

void Reporter::Finish() {
  if (progress_shown_ && tty_) std::fprintf(stderr, "\r\033[K");
  if (config_.format == OutputFormat::kTable && same_points_ > 0) {
    std::printf(
        "relugrad ran at %.2f-%.2f of the triad that stores as it does, at %d points "
        "(1.00: as fast as this machine's memory moves the same bytes)\n",
        min_same_, max_same_, same_points_);
    std::fflush(stdout);
  }
  const double elapsed = NowSeconds() - start_;
  if (elapsed >= 1.0)
    std::fprintf(stderr, "relugrad bench: %d points in %.1f s\n", total_, elapsed);
}

}  // namespace cli
}  // namespace relugrad
