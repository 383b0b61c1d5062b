// GPU benchmark driver: relugrad's CUDA backend (through the public C ABI)
// against cuDNN's RELU activation backward and a device-to-device copy (the
// roofline), over sizes and dtypes. PyTorch's threshold_backward is measured
// by torch_bench.py in the same run; report.py joins the two.
//
// Every measurement is taken twice:
//   eager: K back-to-back calls on one stream between two CUDA events, as an
//          application issues them (host overhead included when it dominates);
//   graph: the same K calls captured into a CUDA graph and replayed, which
//          leaves only device time (kernel against kernel at small sizes).
// The reported time is the median over --batches batches of the per-call
// time; bytes moved are 3*n*size for ReluGrad (read dy and s, write dx) and
// 2*n*size for the copy.
//
// --probe-cudnn also runs cuDNN on a cross product of special values and
// says which relugrad preset (if any) it matches bit for bit.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "cudnn_relu.h"
#include "fill.h"
#include "relugrad/relugrad.h"

namespace {

struct Args {
  std::vector<int64_t> sizes = {int64_t{64} << 10,  int64_t{256} << 10, int64_t{1} << 20,
                                int64_t{4} << 20,   int64_t{16} << 20,  int64_t{64} << 20,
                                int64_t{256} << 20, int64_t{1} << 30};
  std::vector<BenchDtype> dtypes = {BenchDtype::kF32, BenchDtype::kF16, BenchDtype::kBF16};
  std::string csv;
  double min_ms = 10.0;
  int batches = 5;
  bool probe_cudnn = false;
  bool graphs = true;
  std::string tag;                 // appended to relugrad rows' names (A/B runs)
  std::vector<std::string> impls;  // empty: all
};

const char* DtypeName(BenchDtype d) { return relugrad_dtype_name(static_cast<relugrad_dtype>(d)); }
size_t DtypeSize(BenchDtype d) { return relugrad_dtype_size(static_cast<relugrad_dtype>(d)); }

bool ParseSize(const std::string& t, int64_t* out) {
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (end == t.c_str() || v <= 0) return false;
  double mult = 1;
  const std::string suffix(end);
  if (suffix == "K" || suffix == "k")
    mult = 1024;
  else if (suffix == "M" || suffix == "m")
    mult = 1024.0 * 1024;
  else if (suffix == "G" || suffix == "g")
    mult = 1024.0 * 1024 * 1024;
  else if (!suffix.empty())
    return false;
  *out = static_cast<int64_t>(v * mult);
  return true;
}

std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    const size_t comma = s.find(',', start);
    const std::string item =
        s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!item.empty()) out.push_back(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

[[noreturn]] void Usage(const char* why) {
  std::fprintf(
      stderr,
      "error: %s\nusage: relugrad_gpu_bench [--sizes 64K,1M,1G] [--dtypes f32,f16,bf16] [--csv "
      "FILE]\n"
      "                          [--min-ms MS] [--batches N] [--no-graphs] [--probe-cudnn]\n"
      "                          [--impls copy,relugrad_torch,relugrad_tensorflow,cudnn,\n"
      "                                   relugrad_mask_grad,relugrad_mask_forward] [--tag "
      "SUFFIX]\n",
      why);
  std::exit(2);
}

Args ParseArgs(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) Usage(("missing value for " + arg).c_str());
      return argv[++i];
    };
    if (arg == "--sizes") {
      a.sizes.clear();
      for (const auto& t : Split(value())) {
        int64_t n;
        if (!ParseSize(t, &n)) Usage(("bad size " + t).c_str());
        a.sizes.push_back(n);
      }
    } else if (arg == "--dtypes") {
      a.dtypes.clear();
      for (const auto& t : Split(value())) {
        relugrad_dtype d;
        if (relugrad_dtype_from_name(t.c_str(), &d) != RELUGRAD_OK)
          Usage(("bad dtype " + t).c_str());
        a.dtypes.push_back(static_cast<BenchDtype>(d));
      }
    } else if (arg == "--csv") {
      a.csv = value();
    } else if (arg == "--min-ms") {
      a.min_ms = std::atof(value().c_str());
    } else if (arg == "--batches") {
      a.batches = std::max(1, std::atoi(value().c_str()));
    } else if (arg == "--no-graphs") {
      a.graphs = false;
    } else if (arg == "--probe-cudnn") {
      a.probe_cudnn = true;
    } else if (arg == "--tag") {
      a.tag = value();
    } else if (arg == "--impls") {
      a.impls = Split(value());
    } else {
      Usage(("unknown argument " + arg).c_str());
    }
  }
  return a;
}

std::string CudaErr(const char* what, cudaError_t e) {
  return std::string(what) + ": " + cudaGetErrorString(e);
}

#define CHECK_CUDA(expr)                                                      \
  do {                                                                        \
    const cudaError_t e_ = (expr);                                            \
    if (e_ != cudaSuccess) {                                                  \
      std::fprintf(stderr, "fatal: %s: %s\n", #expr, cudaGetErrorString(e_)); \
      std::exit(1);                                                           \
    }                                                                         \
  } while (0)

// One call of an implementation; returns "" or an error.
using Call = std::function<std::string()>;

struct Timing {
  double seconds = 0;  // median per call
  std::string error;
};

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

class Timer {
 public:
  explicit Timer(cudaStream_t stream) : stream_(stream) {
    CHECK_CUDA(cudaEventCreate(&start_));
    CHECK_CUDA(cudaEventCreate(&stop_));
  }
  ~Timer() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }

  // Per-call seconds of K eager calls (K chosen so a batch takes min_ms).
  Timing Eager(const Call& call, double min_ms, int batches, int* k_out) {
    Timing t;
    for (int i = 0; i < 3; ++i) {  // warm up (first-call lazy loading, caches)
      t.error = call();
      if (!t.error.empty()) return t;
    }
    if (!Sync(&t)) return t;
    int k = 1;
    double ms = 0;
    while (true) {
      if (!Batch(call, k, &ms, &t)) return t;
      if (ms >= min_ms || k >= (1 << 14)) break;
      k *= 2;
    }
    std::vector<double> per_call;
    for (int b = 0; b < batches; ++b) {
      if (!Batch(call, k, &ms, &t)) return t;
      per_call.push_back(ms * 1e-3 / k);
    }
    t.seconds = Median(per_call);
    *k_out = k;
    return t;
  }

  // The same K calls captured into one graph and replayed.
  Timing Graph(const Call& call, int k, int batches) {
    Timing t;
    k = std::min(k, 512);  // graph instantiation grows with nodes; 512 amortises launch
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    cudaError_t e = cudaStreamBeginCapture(stream_, cudaStreamCaptureModeRelaxed);
    if (e != cudaSuccess) {
      t.error = CudaErr("cudaStreamBeginCapture", e);
      return t;
    }
    std::string call_error;
    for (int i = 0; i < k && call_error.empty(); ++i) call_error = call();
    e = cudaStreamEndCapture(stream_, &graph);
    if (!call_error.empty() || e != cudaSuccess) {
      t.error = !call_error.empty() ? "during capture: " + call_error
                                    : CudaErr("cudaStreamEndCapture", e);
      if (graph != nullptr) cudaGraphDestroy(graph);
      cudaGetLastError();
      return t;
    }
    e = cudaGraphInstantiate(&exec, graph, 0);
    if (e != cudaSuccess) {
      t.error = CudaErr("cudaGraphInstantiate", e);
      cudaGraphDestroy(graph);
      cudaGetLastError();
      return t;
    }
    std::vector<double> per_call;
    for (int b = 0; b <= batches && t.error.empty(); ++b) {  // b == 0: warm-up replay
      float ms = 0;
      cudaEventRecord(start_, stream_);
      e = cudaGraphLaunch(exec, stream_);
      cudaEventRecord(stop_, stream_);
      if (e == cudaSuccess) e = cudaEventSynchronize(stop_);
      if (e == cudaSuccess) e = cudaEventElapsedTime(&ms, start_, stop_);
      if (e != cudaSuccess)
        t.error = CudaErr("graph replay", e);
      else if (b > 0)
        per_call.push_back(ms * 1e-3 / k);
    }
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    if (t.error.empty()) t.seconds = Median(per_call);
    return t;
  }

 private:
  bool Sync(Timing* t) {
    const cudaError_t e = cudaStreamSynchronize(stream_);
    if (e != cudaSuccess) t->error = CudaErr("cudaStreamSynchronize", e);
    return e == cudaSuccess;
  }

  bool Batch(const Call& call, int k, double* ms_out, Timing* t) {
    cudaEventRecord(start_, stream_);
    for (int i = 0; i < k; ++i) {
      t->error = call();
      if (!t->error.empty()) return false;
    }
    cudaEventRecord(stop_, stream_);
    cudaError_t e = cudaEventSynchronize(stop_);
    float ms = 0;
    if (e == cudaSuccess) e = cudaEventElapsedTime(&ms, start_, stop_);
    if (e != cudaSuccess) {
      t->error = CudaErr("timing", e);
      return false;
    }
    *ms_out = ms;
    return true;
  }

  cudaStream_t stream_;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

struct Row {
  std::string impl, dtype, mode, status;
  int64_t n = 0;
  double bytes = 0, seconds = 0;
};

void Emit(FILE* csv, const Row& r) {
  const double gbps = r.seconds > 0 ? r.bytes / r.seconds * 1e-9 : 0;
  std::printf("%-22s %-5s n=%-11" PRId64 " %-6s %10.2f us %9.1f GB/s %s\n", r.impl.c_str(),
              r.dtype.c_str(), r.n, r.mode.c_str(), r.seconds * 1e6, gbps,
              r.status.empty() ? "" : ("[" + r.status + "]").c_str());
  if (csv != nullptr) {
    std::string status = r.status;
    std::replace(status.begin(), status.end(), ',', ';');
    std::fprintf(csv, "%s,%s,%" PRId64 ",%s,%.0f,%.4f,%.2f,%s\n", r.impl.c_str(), r.dtype.c_str(),
                 r.n, r.mode.c_str(), r.bytes, r.seconds * 1e6, gbps,
                 status.empty() ? "ok" : status.c_str());
    std::fflush(csv);
  }
}

std::string RelugradCall(BenchDtype d, int64_t n, const void* dy, const void* s, void* dx,
                         const relugrad_options& o) {
  const relugrad_status st = relugrad_relu_grad(static_cast<relugrad_dtype>(d), n, dy, s, dx, &o);
  if (st != RELUGRAD_OK)
    return std::string(relugrad_status_name(st)) + ": " + relugrad_last_error();
  return "";
}

// ---- cuDNN semantics probe ----

std::vector<uint64_t> Specials(BenchDtype d) {
  struct L {
    uint64_t sign, inf, quiet, min_normal, one;
  };
  L l{};
  switch (d) {
    case BenchDtype::kF16:
      l = {0x8000, 0x7c00, 0x200, 0x400, 0x3c00};
      break;
    case BenchDtype::kBF16:
      l = {0x8000, 0x7f80, 0x40, 0x80, 0x3f80};
      break;
    case BenchDtype::kF32:
      l = {0x80000000u, 0x7f800000u, 0x400000u, 0x800000u, 0x3f800000u};
      break;
    case BenchDtype::kF64:
      l = {0x8000000000000000ull, 0x7ff0000000000000ull, 0x8000000000000ull, 0x10000000000000ull,
           0x3ff0000000000000ull};
      break;
  }
  std::vector<uint64_t> v = {0,
                             l.sign,
                             l.inf,
                             l.sign | l.inf,
                             l.inf | l.quiet,
                             l.sign | l.inf | l.quiet,
                             l.inf | l.quiet | 5,
                             l.inf | 1,
                             l.sign | l.inf | 2,
                             l.inf - 1,
                             l.sign | (l.inf - 1),
                             l.min_normal,
                             l.sign | l.min_normal,
                             1,
                             l.sign | 1,
                             l.min_normal - 1,
                             l.one,
                             l.sign | l.one,
                             l.one + 3,
                             l.sign | (l.one + 3)};
  return v;
}

void ProbeCudnn(CudnnRelu& cudnn, cudaStream_t stream, FILE* log) {
  auto say = [&](const std::string& line) {
    std::printf("%s\n", line.c_str());
    if (log != nullptr) std::fprintf(log, "# %s\n", line.c_str());
  };
  for (BenchDtype d : {BenchDtype::kF32, BenchDtype::kF16, BenchDtype::kBF16, BenchDtype::kF64}) {
    const size_t es = DtypeSize(d);
    const auto sp = Specials(d);
    const size_t n = sp.size() * sp.size();
    std::vector<unsigned char> dy(n * es), s(n * es), got(n * es), want(n * es);
    for (size_t i = 0; i < sp.size(); ++i) {
      for (size_t j = 0; j < sp.size(); ++j) {
        std::memcpy(&dy[(i * sp.size() + j) * es], &sp[j], es);  // little-endian
        std::memcpy(&s[(i * sp.size() + j) * es], &sp[i], es);
      }
    }
    void *ddy = nullptr, *ds = nullptr, *ddx = nullptr;
    CHECK_CUDA(cudaMalloc(&ddy, n * es));
    CHECK_CUDA(cudaMalloc(&ds, n * es));
    CHECK_CUDA(cudaMalloc(&ddx, n * es));
    CHECK_CUDA(cudaMemcpy(ddy, dy.data(), n * es, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(ds, s.data(), n * es, cudaMemcpyHostToDevice));
    const std::string err = cudnn.Backward(d, static_cast<int64_t>(n), ddy, ds, ddx, stream);
    if (!err.empty()) {
      say(std::string("cudnn semantics ") + DtypeName(d) + ": not measured (" + err + ")");
    } else {
      CHECK_CUDA(cudaStreamSynchronize(stream));
      CHECK_CUDA(cudaMemcpy(got.data(), ddx, n * es, cudaMemcpyDeviceToHost));
      std::string line = std::string("cudnn semantics ") + DtypeName(d) + " (" + std::to_string(n) +
                         " special-value pairs, y = x = s):";
      for (relugrad_preset p : {RELUGRAD_PRESET_TORCH, RELUGRAD_PRESET_TENSORFLOW,
                                RELUGRAD_PRESET_JAX, RELUGRAD_PRESET_ONEDNN}) {
        relugrad_options o;
        relugrad_options_init(&o, p);
        relugrad_relu_grad_reference(static_cast<relugrad_dtype>(d), static_cast<int64_t>(n),
                                     dy.data(), s.data(), want.data(), &o);
        size_t mismatches = 0, first = n;
        for (size_t i = 0; i < n; ++i) {
          if (std::memcmp(&got[i * es], &want[i * es], es) != 0) {
            if (first == n) first = i;
            ++mismatches;
          }
        }
        line += std::string(" ") + relugrad_preset_name(p) + "=" +
                (mismatches == 0 ? "bit-exact" : std::to_string(mismatches) + " differ");
        if (mismatches != 0) {
          uint64_t a = 0, b = 0, x = 0, y = 0;
          std::memcpy(&a, &got[first * es], es);
          std::memcpy(&b, &want[first * es], es);
          std::memcpy(&x, &dy[first * es], es);
          std::memcpy(&y, &s[first * es], es);
          char buf[160];
          std::snprintf(buf, sizeof(buf), " (first: dy=0x%llx s=0x%llx cudnn=0x%llx preset=0x%llx)",
                        static_cast<unsigned long long>(x), static_cast<unsigned long long>(y),
                        static_cast<unsigned long long>(a), static_cast<unsigned long long>(b));
          line += buf;
        }
      }
      say(line);
    }
    cudaFree(ddy);
    cudaFree(ds);
    cudaFree(ddx);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = ParseArgs(argc, argv);
  int device = 0;
  CHECK_CUDA(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  CHECK_CUDA(cudaGetDeviceProperties(&prop, device));
  int runtime = 0, driver = 0;
  cudaRuntimeGetVersion(&runtime);
  cudaDriverGetVersion(&driver);
  CudnnRelu cudnn;
  std::printf(
      "device %d: %s (sm_%d%d, %d SMs, %.1f GiB), CUDA runtime %d, driver %d, cuDNN %s, relugrad "
      "%s\n",
      device, prop.name, prop.major, prop.minor, prop.multiProcessorCount,
      static_cast<double>(prop.totalGlobalMem) / (1ull << 30), runtime, driver,
      cudnn.error().empty() ? cudnn.version().c_str() : ("unavailable: " + cudnn.error()).c_str(),
      relugrad_version());

  FILE* csv = nullptr;
  if (!args.csv.empty()) {
    csv = std::fopen(args.csv.c_str(), "a");
    if (csv == nullptr) Usage(("cannot open " + args.csv).c_str());
    std::fprintf(csv, "# device: %s (sm_%d%d, %d SMs); cuda runtime %d driver %d; cudnn %s\n",
                 prop.name, prop.major, prop.minor, prop.multiProcessorCount, runtime, driver,
                 cudnn.version().c_str());
  }

  cudaStream_t stream = nullptr;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  if (args.probe_cudnn) ProbeCudnn(cudnn, stream, csv);

  Timer timer(stream);
  for (BenchDtype d : args.dtypes) {
    const size_t es = DtypeSize(d);
    int64_t max_n = *std::max_element(args.sizes.begin(), args.sizes.end());
    size_t free_b = 0, total_b = 0;
    CHECK_CUDA(cudaMemGetInfo(&free_b, &total_b));
    const size_t budget =
        free_b > (size_t{2} << 30) ? free_b - (size_t{2} << 30) : 0;  // leave 2 GiB
    while (max_n > 0 && static_cast<size_t>(max_n) * es * 3 > budget) max_n /= 2;
    void *dy = nullptr, *s = nullptr, *dx = nullptr;
    void* mask_v = nullptr;
    CHECK_CUDA(cudaMalloc(&mask_v, static_cast<size_t>(max_n + 7) / 8));
    uint8_t* mask = static_cast<uint8_t*>(mask_v);
    CHECK_CUDA(cudaMalloc(&dy, static_cast<size_t>(max_n) * es));
    CHECK_CUDA(cudaMalloc(&s, static_cast<size_t>(max_n) * es));
    CHECK_CUDA(cudaMalloc(&dx, static_cast<size_t>(max_n) * es));
    CHECK_CUDA(FillUniform(d, dy, max_n, 1, stream));
    CHECK_CUDA(FillUniform(d, s, max_n, 2, stream));
    CHECK_CUDA(cudaMemsetAsync(dx, 0, static_cast<size_t>(max_n) * es, stream));
    CHECK_CUDA(cudaStreamSynchronize(stream));

    relugrad_options torch_o, tf_o;
    relugrad_options_init(&torch_o, RELUGRAD_PRESET_TORCH);
    relugrad_options_init(&tf_o, RELUGRAD_PRESET_TENSORFLOW);
    for (relugrad_options* o : {&torch_o, &tf_o}) {
      o->backend = RELUGRAD_BACKEND_CUDA;
      o->stream = stream;
    }
    // The mask path's rows read a mask of s's gates (written once here, y into dx).
    const relugrad_status mask_st =
        relugrad_relu_forward(static_cast<relugrad_dtype>(d), max_n, s, dx, mask, &torch_o);
    if (mask_st != RELUGRAD_OK) {
      std::fprintf(stderr, "mask setup: %s: %s\n", relugrad_status_name(mask_st),
                   relugrad_last_error());
    }
    CHECK_CUDA(cudaStreamSynchronize(stream));

    for (int64_t n : args.sizes) {
      if (n > max_n) {
        Emit(csv, {"relugrad_torch", DtypeName(d), "eager", "skipped: not enough device memory", n,
                   0, 0});
        continue;
      }
      const double bytes3 = 3.0 * static_cast<double>(n) * es,
                   bytes2 = 2.0 * static_cast<double>(n) * es;
      struct Impl {
        const char* name;
        double bytes;
        Call call;
      };
      const std::vector<Impl> impls = {
          {"copy", bytes2,
           [&] {
             const cudaError_t e = cudaMemcpyAsync(dx, dy, static_cast<size_t>(n) * es,
                                                   cudaMemcpyDeviceToDevice, stream);
             return e == cudaSuccess ? std::string() : CudaErr("cudaMemcpyAsync", e);
           }},
          {"relugrad_torch", bytes3, [&] { return RelugradCall(d, n, dy, s, dx, torch_o); }},
          {"relugrad_tensorflow", bytes3, [&] { return RelugradCall(d, n, dy, s, dx, tf_o); }},
          {"cudnn", bytes3, [&] { return cudnn.Backward(d, n, dy, s, dx, stream); }},
          // The 1-bit mask path, torch preset: backward reads dy and the mask and writes dx;
          // forward reads x and writes y and the mask (here s -> dx, the mask).
          {"relugrad_mask_grad", bytes2 + static_cast<double>((n + 7) / 8),
           [&] {
             const relugrad_status st =
                 relugrad_relu_grad_mask(static_cast<relugrad_dtype>(d), n, dy, mask, dx, &torch_o);
             return st == RELUGRAD_OK
                        ? std::string()
                        : std::string(relugrad_status_name(st)) + ": " + relugrad_last_error();
           }},
          {"relugrad_mask_forward", bytes2 + static_cast<double>((n + 7) / 8),
           [&] {
             const relugrad_status st =
                 relugrad_relu_forward(static_cast<relugrad_dtype>(d), n, s, dx, mask, &torch_o);
             return st == RELUGRAD_OK
                        ? std::string()
                        : std::string(relugrad_status_name(st)) + ": " + relugrad_last_error();
           }},
      };
      for (const Impl& impl : impls) {
        if (!args.impls.empty() && std::find(args.impls.begin(), args.impls.end(),
                                             std::string(impl.name)) == args.impls.end()) {
          continue;
        }
        // Tag relugrad rows of an A/B run (e.g. RELUGRAD_CUDA_GEOMETRY=gridstride -> "_gs").
        const std::string name = std::string(impl.name) +
                                 (std::string(impl.name).rfind("relugrad", 0) == 0 ? args.tag : "");
        int k = 1;
        const Timing eager = timer.Eager(impl.call, args.min_ms, args.batches, &k);
        Emit(csv, {name, DtypeName(d), "eager", eager.error, n, impl.bytes, eager.seconds});
        if (!eager.error.empty()) {
          cudaGetLastError();
          continue;
        }
        if (args.graphs) {
          const Timing graph = timer.Graph(impl.call, k, args.batches);
          Emit(csv, {name, DtypeName(d), "graph", graph.error, n, impl.bytes, graph.seconds});
        }
      }
    }
    cudaFree(dy);
    cudaFree(s);
    cudaFree(dx);
    cudaFree(mask);
  }
  cudaStreamDestroy(stream);
  if (csv != nullptr) std::fclose(csv);
  return 0;
}
