// What the C++ peer drivers (oneDNN, libtorch) share so that they time and
// report exactly like `relugrad bench`: flags, operand sets (rotated in cold
// mode so no call finds its predecessor's data in cache), the timing loop of
// relugrad/timer.hpp, and one JSON line per point in bench's schema.
#ifndef RELUGRAD_BENCH_PEERS_PEER_DRIVER_H_
#define RELUGRAD_BENCH_PEERS_PEER_DRIVER_H_

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "bench_support/timer.h"

namespace peer {

inline std::vector<std::string> Split(const std::string& s) {
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

inline long long ParseSize(const std::string& s) {
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (*end == 'K') v <<= 10;
  if (*end == 'M') v <<= 20;
  if (*end == 'G') v <<= 30;
  return v;
}

struct Args {
  std::string dtypes = "f32", sizes = "4K,16K,64K,256K,1M,4M,16M,64M,256M", threads = "1,2";
  double min_time = 0.2, rotate_mib = 64;
  bool warm = false;
};

// Exits with a usage line on a bad flag.
inline Args ParseArgs(int argc, char** argv, const char* program) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s: %s needs a value\n", program, flag.c_str());
        std::exit(1);
      }
      return argv[++i];
    };
    if (flag == "--dtype")
      a.dtypes = value();
    else if (flag == "--sizes")
      a.sizes = value();
    else if (flag == "--threads")
      a.threads = value();
    else if (flag == "--min-time")
      a.min_time = std::atof(value().c_str());
    else if (flag == "--rotate-mib")
      a.rotate_mib = std::atof(value().c_str());
    else if (flag == "--warm")
      a.warm = true;
    else {
      std::fprintf(stderr,
                   "usage: %s [--dtype f32,bf16] [--sizes 4K,1M] [--threads 1,2] "
                   "[--min-time S] [--rotate-mib M] [--warm]\n",
                   program);
      std::exit(flag == "--help" ? 0 : 1);
    }
  }
  return a;
}

inline size_t ElementSize(const std::string& dtype) {
  return dtype == "f32" ? 4 : dtype == "f64" ? 8 : 2;
}

// Operand sets whose footprint is at least rotate_mib (1 set when warm; at
// least 2 below 256 MiB, as relugrad bench).
inline int SetsFor(size_t stride, const Args& a) {
  if (a.warm) return 1;
  const long long footprint = 3LL * static_cast<long long>(stride);
  const int sets = static_cast<int>(std::clamp<long long>(
      (static_cast<long long>(a.rotate_mib * (1 << 20)) + footprint - 1) / footprint, 1, 1 << 16));
  return sets == 1 && footprint < (256LL << 20) ? 2
                                                : sets;  // as relugrad bench (bench_operands.cc)
}

inline uint16_t ToBits16(float f, bool bf16) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  if (bf16) return static_cast<uint16_t>((b + 0x7fff + ((b >> 16) & 1)) >> 16);
  // f16, round to nearest even, for values in [-2, 2] (normal or zero).
  const uint32_t sign = (b >> 16) & 0x8000;
  const int exp = static_cast<int>((b >> 23) & 0xff) - 127 + 15;
  if (exp <= 0) return static_cast<uint16_t>(sign);  // |v| < 2^-14: flush (a handful of values)
  uint32_t mant = b & 0x7fffff;
  uint32_t half = (static_cast<uint32_t>(exp) << 10) | (mant >> 13);
  const uint32_t rest = mant & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1))) ++half;
  return static_cast<uint16_t>(sign | half);
}

// Random values in [-2, 2] (half the gates closed), tiled from a 64K block.
inline void Fill(unsigned char* p, size_t n, const std::string& dtype, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  const size_t period = std::min<size_t>(n, 1 << 16);
  const size_t es = ElementSize(dtype);
  for (size_t i = 0; i < period; ++i) {
    const float v = dist(rng);
    if (es == 4) {
      std::memcpy(p + i * es, &v, 4);
    } else if (es == 8) {
      const double d = v;
      std::memcpy(p + i * es, &d, 8);
    } else {
      const uint16_t h = ToBits16(v, dtype == "bf16");
      std::memcpy(p + i * es, &h, 2);
    }
  }
  for (size_t off = period; off < n; off += period)
    std::memcpy(p + off * es, p, std::min(period, n - off) * es);
}

// 2 MiB-aligned memory from glibc (4 KiB pages: THP is madvise-only here,
// as for relugrad bench's operands).
struct Buffer {
  unsigned char* p = nullptr;
  explicit Buffer(size_t bytes) {
    if (posix_memalign(reinterpret_cast<void**>(&p), 2 << 20, std::max<size_t>(bytes, 64)) != 0)
      p = nullptr;
  }
  ~Buffer() { std::free(p); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
};

// One point's operands: dy, s and dx in `sets` copies `stride` bytes apart,
// dy and s random in [-2, 2], dx zeroed (faulted in before timing).
struct Operands {
  size_t stride;
  int sets;
  Buffer dy, s, dx;
  Operands(long long n, const std::string& dtype, const Args& a)
      : stride((static_cast<size_t>(n) * ElementSize(dtype) + 63) / 64 * 64),
        sets(SetsFor(stride, a)),
        dy(stride * sets),
        s(stride * sets),
        dx(stride * sets) {
    if (!ok()) return;
    Fill(dy.p, stride * sets / ElementSize(dtype), dtype, 8);
    Fill(s.p, stride * sets / ElementSize(dtype), dtype, 7);
    std::memset(dx.p, 0, stride * sets);
  }
  bool ok() const { return dy.p != nullptr && s.p != nullptr && dx.p != nullptr; }
  unsigned char* dy_at(int k) { return dy.p + static_cast<size_t>(k) * stride; }
  unsigned char* s_at(int k) { return s.p + static_cast<size_t>(k) * stride; }
  unsigned char* dx_at(int k) { return dx.p + static_cast<size_t>(k) * stride; }
};

// Times call() like relugrad bench (warm-up over every set, batches of at
// least 50 us, samples until min_time and at least 5) and prints one JSON
// line; `call` rotates through the sets itself.
template <class Call>
void TimeAndPrint(const char* impl, const char* semantics, const char* version,
                  const std::string& dtype, long long n, int threads, int sets, const Args& a,
                  const char* repro_program, Call&& call) {
  relugrad::timing::Options opt;
  opt.min_time = a.min_time;
  opt.min_batch_seconds = 50e-6;
  for (int w = 0; w < sets; ++w) call();
  const int batch = std::max(relugrad::timing::calibrate_batch(call, opt), std::min(sets, 1 << 16));
  std::vector<double> samples;
  relugrad::Timer total;
  while (samples.size() < 5 || total.seconds() < a.min_time)
    samples.push_back(relugrad::timing::sample(call, batch));
  const double med = relugrad::timing::median(samples);
  const double best = *std::min_element(samples.begin(), samples.end());
  const double moved = 3.0 * static_cast<double>(n) * static_cast<double>(ElementSize(dtype));
  std::printf(
      "{\"impl\":\"%s\",\"dtype\":\"%s\",\"semantics\":\"%s\",\"n\":%lld,\"threads\":%d,"
      "\"median_s\":%.9g,\"gbps\":%.5g,\"ns_per_element\":%.5g,\"elements_per_s\":%.5g,"
      "\"roofline_gbps\":0,\"ratio\":0,\"best_s\":%.9g,\"best_gbps\":%.5g,\"isa\":\"%s\","
      "\"inplace\":false,"
      "\"cache\":\"%s\",\"sets\":%d,\"samples\":%zu,\"bytes_moved\":%.0f,"
      "\"repro\":\"%s --dtype %s --sizes %lld --threads %d --min-time %g%s\"}\n",
      impl, dtype.c_str(), semantics, n, threads, med, moved / med / 1e9,
      med * 1e9 / static_cast<double>(n), static_cast<double>(n) / med, best, moved / best / 1e9,
      version, a.warm ? "warm" : "cold", sets, samples.size(), moved, repro_program, dtype.c_str(),
      n, threads, a.min_time, a.warm ? " --warm" : "");
  std::fflush(stdout);
}

}  // namespace peer

#endif  // RELUGRAD_BENCH_PEERS_PEER_DRIVER_H_
