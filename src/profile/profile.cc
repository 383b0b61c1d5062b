#include "profile/profile.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <tuple>

#include "hwy/targets.h"
#include "isa/isa.h"

namespace relugrad {
namespace profile {
namespace {

constexpr size_t kMaxSamples = 4096;            // per configuration, for the median
constexpr size_t kMaxEvents = size_t{1} << 21;  // trace slices kept (~100 MiB of JSON)

// Static or interned strings: compared by address, no allocation per call.
struct Key {
  const char *op, *dtype, *rule, *isa;
  int threads;
  int64_t n_bucket;
  bool operator<(const Key& o) const {
    return std::tie(op, dtype, rule, isa, threads, n_bucket) <
           std::tie(o.op, o.dtype, o.rule, o.isa, o.threads, o.n_bucket);
  }
};

struct Stats {
  int64_t calls = 0, elements = 0;
  double bytes = 0, total_s = 0;
  int streaming_calls = 0;
  std::vector<double> samples;  // reservoir of call durations
  uint64_t rng = 0x9e3779b97f4a7c15ull;
};

struct Event {
  const char* name;  // static string
  std::string label;
  int64_t ts_ns, dur_ns;
  int tid;
  int64_t n, elements;
  int block;  // -1: a call
};

struct State {
  std::mutex mutex;
  std::map<Key, Stats> stats;
  std::vector<Event> events;
  size_t dropped = 0;
  std::string trace_path;
};

State& Global() {
  static State* s = new State();  // leaked: used from atexit handlers
  return *s;
}

const char* DtypeName(Dtype d) {
  switch (d) {
    case Dtype::kF32:
      return "f32";
    case Dtype::kF16:
      return "f16";
    case Dtype::kBF16:
      return "bf16";
    case Dtype::kF64:
      return "f64";
  }
  return "?";
}

// The selected SIMD target's name, interned. SelectedIsa() runs CPUID,
// which traps to the hypervisor in a VM (microseconds): recompute only when
// Highway's chosen target changes (relugrad_set_max_isa).
const char* CurrentIsa() {
  static std::mutex mutex;
  static std::map<size_t, std::string>* names = new std::map<size_t, std::string>();
  const size_t index = hwy::GetChosenTarget().GetIndex();
  std::lock_guard<std::mutex> lock(mutex);
  auto it = names->find(index);
  if (it == names->end()) it = names->emplace(index, SelectedIsa()).first;
  return it->second.c_str();
}

int ThreadId() {
  thread_local const int tid = static_cast<int>(syscall(SYS_gettid));
  return tid;
}

thread_local int t_blocks = 1;
thread_local bool t_streaming = false;

void AtExit() {
  if (g_mode == Mode::kSummary) {
    std::fputs(SummaryTable().c_str(), stderr);
  } else if (g_mode == Mode::kTrace) {
    const std::string path = Global().trace_path;
    if (!WriteTrace(path))
      std::fprintf(stderr, "relugrad: RELUGRAD_PROFILE: cannot write %s\n", path.c_str());
  }
}

Mode ModeFromEnvironment() {
  const char* env = std::getenv("RELUGRAD_PROFILE");
  if (env == nullptr || env[0] == '\0' || std::strcmp(env, "0") == 0) return Mode::kOff;
  Mode mode = Mode::kSummary;
  if (std::strcmp(env, "1") != 0) {
    mode = Mode::kTrace;
    Global().trace_path = env;
  }
  std::atexit(AtExit);
  return mode;
}

int64_t Bucket(int64_t n) {
  int64_t b = 1;
  while (b <= n / 2) b *= 2;
  return n <= 0 ? 0 : b;
}

std::string SizeLabel(int64_t n) {
  char buf[32];
  if (n >= (int64_t{1} << 20) && n % (int64_t{1} << 20) == 0)
    std::snprintf(buf, sizeof(buf), "%" PRId64 "M", n >> 20);
  else if (n >= 1024 && n % 1024 == 0)
    std::snprintf(buf, sizeof(buf), "%" PRId64 "K", n >> 10);
  else
    std::snprintf(buf, sizeof(buf), "%" PRId64, n);
  return buf;
}

}  // namespace

Mode g_mode = ModeFromEnvironment();

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void NoteBackend(int blocks, bool streaming) {
  t_blocks = blocks;
  t_streaming = streaming;
}

void CallScope::Begin(const char* op, Dtype dtype, int64_t n, double bytes, const char* rule) {
  op_ = op;
  dtype_ = dtype;
  n_ = n;
  bytes_ = bytes;
  rule_ = rule;
  t_blocks = 1;
  t_streaming = false;
  start_ns_ = NowNs();
}

void CallScope::End() {
  const int64_t end_ns = NowNs();
  const double seconds = static_cast<double>(end_ns - start_ns_) * 1e-9;
  Key key{op_, DtypeName(dtype_), rule_, CurrentIsa(), t_blocks, Bucket(n_)};
  State& g = Global();
  std::lock_guard<std::mutex> lock(g.mutex);
  Stats& s = g.stats[key];
  ++s.calls;
  s.elements += n_;
  s.bytes += bytes_;
  s.total_s += seconds;
  s.streaming_calls += t_streaming ? 1 : 0;
  if (s.samples.size() < kMaxSamples) {
    s.samples.push_back(seconds);
  } else {  // reservoir sampling keeps the median representative
    s.rng ^= s.rng << 13, s.rng ^= s.rng >> 7, s.rng ^= s.rng << 17;
    const uint64_t slot = s.rng % static_cast<uint64_t>(s.calls);
    if (slot < kMaxSamples) s.samples[slot] = seconds;
  }
  if (g_mode == Mode::kTrace) {
    if (g.events.size() < kMaxEvents) {
      g.events.push_back({op_, std::string(DtypeName(dtype_)) + " n=" + SizeLabel(n_) + " " + rule_,
                          start_ns_, end_ns - start_ns_, ThreadId(), n_, n_, -1});
    } else {
      ++g.dropped;
    }
  }
}

void RecordBlock(int block, int64_t begin_ns, int64_t end_ns, int64_t elements) {
  if (g_mode != Mode::kTrace) return;
  State& g = Global();
  const int tid = ThreadId();
  std::lock_guard<std::mutex> lock(g.mutex);
  // The pool runs a block as chunks (thread_pool.h): consecutive chunks of
  // one block on one thread extend that thread's slice, so a trace shows a
  // slice per block and thread, and a second one where a thread took over
  // part of another's block.
  const size_t look_back = std::min<size_t>(g.events.size(), 8);
  for (size_t i = g.events.size(); i > g.events.size() - look_back; --i) {
    Event& e = g.events[i - 1];
    if (e.tid != tid) continue;
    if (e.block == block && e.block >= 0 && begin_ns >= e.ts_ns + e.dur_ns &&
        begin_ns - (e.ts_ns + e.dur_ns) < 5000) {
      e.dur_ns = end_ns - e.ts_ns;
      e.elements += elements;
      return;
    }
    break;  // this thread's latest event is something else
  }
  if (g.events.size() < kMaxEvents) {
    g.events.push_back({"block", "block " + std::to_string(block), begin_ns, end_ns - begin_ns, tid,
                        0, elements, block});
  } else {
    ++g.dropped;
  }
}

void SetModeForTest(Mode mode, const std::string& trace_path) {
  std::lock_guard<std::mutex> lock(Global().mutex);
  g_mode = mode;
  Global().trace_path = trace_path;
}

void ResetForTest() {
  State& g = Global();
  std::lock_guard<std::mutex> lock(g.mutex);
  g.stats.clear();
  g.events.clear();
  g.dropped = 0;
}

std::vector<ConfigStats> Snapshot() {
  State& g = Global();
  std::lock_guard<std::mutex> lock(g.mutex);
  std::vector<ConfigStats> out;
  for (const auto& [k, s] : g.stats) {
    ConfigStats c;
    c.op = k.op;
    c.dtype = k.dtype;
    c.rule = k.rule;
    c.isa = k.isa;
    c.threads = k.threads;
    c.n_bucket = k.n_bucket;
    c.calls = s.calls;
    c.elements = s.elements;
    c.bytes = s.bytes;
    c.total_s = s.total_s;
    c.streaming_calls = s.streaming_calls;
    std::vector<double> v = s.samples;
    if (!v.empty()) {
      std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
      c.median_s = v[v.size() / 2];
    }
    out.push_back(c);
  }
  return out;
}

std::string SummaryTable() {
  const auto stats = Snapshot();
  std::string out =
      "relugrad profile (RELUGRAD_PROFILE=1): per configuration; GB/s = bytes / total time\n";
  char line[512];
  std::snprintf(line, sizeof(line), "%-15s %-5s %-20s %-6s %3s %8s %10s %12s %10s %11s %8s %7s\n",
                "op", "dtype", "rule", "isa", "thr", "n", "calls", "elements", "total_ms",
                "median_us", "GB/s", "stream");
  out += line;
  for (const auto& c : stats) {
    const double gbps = c.total_s > 0 ? c.bytes / c.total_s / 1e9 : 0;
    std::snprintf(line, sizeof(line),
                  "%-15s %-5s %-20s %-6s %3d %8s %10" PRId64 " %12" PRId64
                  " %10.3f %11.3f %8.2f %7d\n",
                  c.op.c_str(), c.dtype.c_str(), c.rule.c_str(), c.isa.c_str(), c.threads,
                  (">=" + SizeLabel(c.n_bucket)).c_str(), c.calls, c.elements, c.total_s * 1e3,
                  c.median_s * 1e6, gbps, c.streaming_calls);
    out += line;
  }
  if (stats.empty()) out += "(no calls)\n";
  return out;
}

bool WriteTrace(const std::string& path) {
  State& g = Global();
  std::lock_guard<std::mutex> lock(g.mutex);
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return false;
  const int pid = static_cast<int>(getpid());
  std::fprintf(f,
               "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"relugrad\",\"dropped_"
               "events\":%zu},"
               "\"traceEvents\":[\n",
               g.dropped);
  int64_t origin = g.events.empty() ? 0 : g.events.front().ts_ns;
  for (const Event& e : g.events) origin = std::min(origin, e.ts_ns);
  bool first = true;
  for (const Event& e : g.events) {
    // Chrome's trace format counts microseconds; keep ns precision as decimals.
    std::fprintf(f,
                 "%s{\"name\":\"%s "
                 "%s\",\"cat\":\"relugrad\",\"ph\":\"X\",\"ts\":%.3f,\"dur\":%.3f,\"pid\":%d,"
                 "\"tid\":%d,\"args\":{\"elements\":%" PRId64 "%s}}",
                 first ? "" : ",\n", e.name, e.label.c_str(),
                 static_cast<double>(e.ts_ns - origin) / 1e3, static_cast<double>(e.dur_ns) / 1e3,
                 pid, e.tid, e.elements,
                 e.block >= 0 ? (",\"block\":" + std::to_string(e.block)).c_str() : "");
    first = false;
  }
  std::fprintf(f, "\n]}\n");
  return std::fclose(f) == 0;
}

}  // namespace profile
}  // namespace relugrad
