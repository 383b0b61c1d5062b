// Peer driver: oneDNN's eltwise backward relu (Debian libdnnl 2.6), timed
// the way `relugrad bench` times (relugrad/timer.hpp: warm-up, batches,
// median; rotating operand sets in cold mode) and printed in its JSON
// schema, so bench/report.py can put it next to relugrad and the triads.
//
//   onednn_relu_bwd --dtype f32,bf16 --sizes 4096,65536 --threads 1,2 [--min-time 0.2] [--warm]
//
// One primitive is created per point (creation is not timed); each call is
// execute() + stream.wait(), what a framework integration pays per call.
// Threads: libdnnl here uses OpenMP, set with omp_set_num_threads().
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "dnnl.hpp"
#include "relugrad/timer.hpp"

namespace {

std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    const size_t comma = s.find(',', start);
    const size_t end = comma == std::string::npos ? s.size() : comma;
    if (end > start) out.push_back(s.substr(start, end - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

long long ParseSize(const std::string& s) {
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (*end == 'K') v <<= 10;
  if (*end == 'M') v <<= 20;
  if (*end == 'G') v <<= 30;
  return v;
}

uint16_t ToBf16(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return static_cast<uint16_t>((b + 0x7fff + ((b >> 16) & 1)) >> 16);
}

// Random values of both signs (half the gates closed), tiled from a block.
void Fill(unsigned char* p, size_t n, bool bf16, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  const size_t period = std::min<size_t>(n, 1 << 16);
  const size_t es = bf16 ? 2 : 4;
  for (size_t i = 0; i < period; ++i) {
    const float v = dist(rng);
    if (bf16) {
      const uint16_t b = ToBf16(v);
      std::memcpy(p + i * es, &b, 2);
    } else {
      std::memcpy(p + i * es, &v, 4);
    }
  }
  for (size_t off = period; off < n; off += period) std::memcpy(p + off * es, p, std::min(period, n - off) * es);
}

struct Buffer {
  unsigned char* p = nullptr;
  explicit Buffer(size_t bytes) {
    if (posix_memalign(reinterpret_cast<void**>(&p), 2 << 20, std::max<size_t>(bytes, 64)) != 0) p = nullptr;
  }
  ~Buffer() { std::free(p); }
};

}  // namespace

int main(int argc, char** argv) {
  std::string dtypes = "f32", sizes = "4K,16K,64K,256K,1M,4M,16M,64M,256M", threads = "1,2";
  double min_time = 0.2, rotate_mib = 64;
  bool warm = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "onednn_relu_bwd: %s needs a value\n", a.c_str());
        std::exit(1);
      }
      return argv[++i];
    };
    if (a == "--dtype") dtypes = value();
    else if (a == "--sizes") sizes = value();
    else if (a == "--threads") threads = value();
    else if (a == "--min-time") min_time = std::atof(value().c_str());
    else if (a == "--rotate-mib") rotate_mib = std::atof(value().c_str());
    else if (a == "--warm") warm = true;
    else {
      std::fprintf(stderr, "usage: onednn_relu_bwd [--dtype f32,bf16] [--sizes 4K,1M] [--threads 1,2] "
                           "[--min-time S] [--rotate-mib M] [--warm]\n");
      return a == "--help" ? 0 : 1;
    }
  }
  using namespace dnnl;
  engine eng(engine::kind::cpu, 0);
  stream strm(eng);
  const dnnl_version_t* v = dnnl_version();
  char version[64];
  std::snprintf(version, sizeof(version), "onednn-%d.%d.%d", v->major, v->minor, v->patch);
  for (const std::string& dt : Split(dtypes)) {
    memory::data_type type;
    if (dt == "f32") type = memory::data_type::f32;
    else if (dt == "bf16") type = memory::data_type::bf16;
    else if (dt == "f16") type = memory::data_type::f16;
    else {
      std::fprintf(stderr, "onednn_relu_bwd: unknown dtype %s\n", dt.c_str());
      return 1;
    }
    const size_t es = dt == "f32" ? 4 : 2;
    for (const std::string& size : Split(sizes)) {
      const long long n = ParseSize(size);
      const size_t bytes = static_cast<size_t>(n) * es, stride = (bytes + 63) / 64 * 64;
      const long long footprint = 3LL * static_cast<long long>(stride);
      const int sets = warm ? 1 : static_cast<int>(std::clamp<long long>(
                                      (static_cast<long long>(rotate_mib * (1 << 20)) + footprint - 1) / footprint, 1, 1 << 16));
      Buffer src(stride * sets), ddst(stride * sets), dsrc(stride * sets);
      if (!src.p || !ddst.p || !dsrc.p) {
        std::fprintf(stderr, "onednn_relu_bwd: out of memory at n=%lld\n", n);
        return 1;
      }
      Fill(src.p, stride * sets / es, dt != "f32", 7);
      Fill(ddst.p, stride * sets / es, dt != "f32", 8);
      std::memset(dsrc.p, 0, stride * sets);
      const memory::desc md({n}, type, memory::format_tag::a);
      eltwise_backward prim;
      try {
        auto fwd_pd = eltwise_forward::primitive_desc(
            eltwise_forward::desc(prop_kind::forward_training, algorithm::eltwise_relu, md, 0.f, 0.f), eng);
        auto bwd_pd = eltwise_backward::primitive_desc(eltwise_backward::desc(algorithm::eltwise_relu, md, md, 0.f, 0.f),
                                                       eng, fwd_pd);
        prim = eltwise_backward(bwd_pd);
      } catch (const dnnl::error& e) {
        std::fprintf(stderr, "onednn_relu_bwd: %s n=%lld unsupported here: %s\n", dt.c_str(), n, e.what());
        break;
      }
      std::vector<memory> m_src, m_ddst, m_dsrc;
      for (int k = 0; k < sets; ++k) {
        m_src.emplace_back(md, eng, src.p + k * stride);
        m_ddst.emplace_back(md, eng, ddst.p + k * stride);
        m_dsrc.emplace_back(md, eng, dsrc.p + k * stride);
      }
      for (const std::string& ts : Split(threads)) {
        const int t = std::atoi(ts.c_str());
        omp_set_num_threads(t);
        int k = 0;
        auto call = [&] {
          prim.execute(strm, {{DNNL_ARG_SRC, m_src[k]}, {DNNL_ARG_DIFF_DST, m_ddst[k]}, {DNNL_ARG_DIFF_SRC, m_dsrc[k]}});
          strm.wait();
          k = k + 1 == sets ? 0 : k + 1;
        };
        relugrad::timing::Options opt;
        opt.min_time = min_time;
        opt.min_batch_seconds = 50e-6;
        for (int w = 0; w < sets; ++w) call();
        const int batch = std::max(relugrad::timing::calibrate_batch(call, opt), std::min(sets, 1 << 16));
        std::vector<double> samples;
        relugrad::Timer total;
        while (samples.size() < 5 || total.seconds() < min_time) samples.push_back(relugrad::timing::sample(call, batch));
        const double med = relugrad::timing::median(samples);
        const double best = *std::min_element(samples.begin(), samples.end());
        const double moved = 3.0 * static_cast<double>(bytes);
        std::printf("{\"impl\":\"onednn\",\"dtype\":\"%s\",\"semantics\":\"onednn\",\"n\":%lld,\"threads\":%d,"
                    "\"median_s\":%.9g,\"gbps\":%.5g,\"ns_per_element\":%.5g,\"elements_per_s\":%.5g,"
                    "\"roofline_gbps\":0,\"ratio\":0,\"best_s\":%.9g,\"best_gbps\":%.5g,\"isa\":\"%s\",\"inplace\":false,\"cache\":\"%s\","
                    "\"sets\":%d,\"samples\":%zu,\"bytes_moved\":%.0f,"
                    "\"repro\":\"onednn_relu_bwd --dtype %s --sizes %lld --threads %d --min-time %g%s\"}\n",
                    dt.c_str(), n, t, med, moved / med / 1e9, med * 1e9 / n, n / med, best, moved / best / 1e9, version, warm ? "warm" : "cold",
                    sets, samples.size(), moved, dt.c_str(), n, t, min_time, warm ? " --warm" : "");
        std::fflush(stdout);
      }
    }
  }
  return 0;
}
