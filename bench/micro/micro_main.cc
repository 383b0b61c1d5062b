// Google Benchmark micro-benchmarks for kernel development: the
// library's kernels per dtype, preset and SIMD target (capped with
// relugrad_set_max_isa, as the tests do), the streaming variant, and the
// measured-only variants of variants.cc (unroll, prefetch, f16/bf16 via f32).
// Operands stay in cache (one set): these measure compute throughput and
// per-call cost, not the memory system (that is `relugrad bench`).
// Names follow the XNNPACK habit: dtype, op, variant, target, n.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "check/check_data.h"
#include "cpu/relu_grad_backend.h"
#include "relugrad/relugrad.h"
#include "variants.h"

namespace {

using relugrad::check::Pack;
using relugrad::check::RandomBits;

struct Operands {
  std::vector<unsigned char> dy, s, dx;
  Operands(relugrad_dtype d, size_t n)
      : dy(Pack(d, RandomBits(d, n, 1))), s(Pack(d, RandomBits(d, n, 2))), dx(dy.size()) {}
};

// Caps dispatch for one benchmark run, lifts the cap after.
class IsaScope {
 public:
  explicit IsaScope(const std::string& isa) {
    ok_ = relugrad_set_max_isa(isa.c_str()) == RELUGRAD_OK;
  }
  ~IsaScope() { relugrad_set_max_isa("best"); }
  bool ok() const { return ok_; }

 private:
  bool ok_;
};

void Library(benchmark::State& state, relugrad_dtype d, relugrad_preset preset, std::string isa,
             bool stream) {
  IsaScope scope(isa);
  if (!scope.ok()) {
    state.SkipWithError("target not attainable");
    return;
  }
  const size_t n = static_cast<size_t>(state.range(0));
  Operands op(d, n);
  relugrad_options o;
  relugrad_options_init(&o, preset);
  o.threads = 1;
  if (stream) o.stores = RELUGRAD_STORES_STREAMING;
  for (auto _ : state) {
    relugrad_relu_grad(d, static_cast<int64_t>(n), op.dy.data(), op.s.data(), op.dx.data(), &o);
    benchmark::DoNotOptimize(op.dx.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * 3 *
                          static_cast<int64_t>(op.dy.size()));
}

// The variants must compute what the library computes (torch, t = 0):
// checked once per run before timing.
bool SameAsLibrary(relugrad_dtype d, const Operands& op, const std::vector<unsigned char>& got) {
  std::vector<unsigned char> want(op.dy.size());
  relugrad_relu_grad(d, static_cast<int64_t>(op.dy.size() / relugrad_dtype_size(d)), op.dy.data(),
                     op.s.data(), want.data(), nullptr);
  return std::memcmp(want.data(), got.data(), want.size()) == 0;
}

template <class Fn>
void Variant(benchmark::State& state, relugrad_dtype d, std::string isa, Fn fn) {
  IsaScope scope(isa);
  if (!scope.ok()) {
    state.SkipWithError("target not attainable");
    return;
  }
  const size_t n = static_cast<size_t>(state.range(0));
  Operands op(d, n);
  fn(op, n);
  if (!SameAsLibrary(d, op, op.dx)) {
    state.SkipWithError("variant differs from the library: not measured");
    return;
  }
  for (auto _ : state) {
    fn(op, n);
    benchmark::DoNotOptimize(op.dx.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * 3 *
                          static_cast<int64_t>(op.dy.size()));
}

void RegisterAll() {
  std::vector<std::string> isas;
  for (int i = 0; i < relugrad_isa_count(); ++i) isas.emplace_back(relugrad_isa_name(i));
  const std::vector<int64_t> sizes = {256, 1024, 4096, 65536, 1 << 20};
  const struct {
    relugrad_dtype d;
    const char* name;
  } dtypes[] = {
      {RELUGRAD_F32, "f32"}, {RELUGRAD_F16, "f16"}, {RELUGRAD_BF16, "bf16"}, {RELUGRAD_F64, "f64"}};
  const struct {
    relugrad_preset p;
    const char* name;
  } presets[] = {{RELUGRAD_PRESET_TORCH, "torch"}, {RELUGRAD_PRESET_TENSORFLOW, "tensorflow"}};
  for (const auto& isa : isas) {
    for (const auto& dt : dtypes) {
      for (const auto& pr : presets) {
        const std::string name = std::string("rg_") + dt.name + "_relugrad_" + pr.name + "__" + isa;
        auto* b = benchmark::RegisterBenchmark(name.c_str(), Library, dt.d, pr.p, isa, false);
        for (int64_t n : sizes) b->Arg(n);
      }
      const std::string sname = std::string("rg_") + dt.name + "_relugrad_torch_stream__" + isa;
      benchmark::RegisterBenchmark(sname.c_str(), Library, dt.d, RELUGRAD_PRESET_TORCH, isa, true)
          ->Arg(1 << 20);
    }
    for (int unroll : {1, 2, 4}) {
      const std::string name = "var_f32_select_u" + std::to_string(unroll) + "__" + isa;
      auto* b = benchmark::RegisterBenchmark(name.c_str(), [unroll, isa](benchmark::State& st) {
        Variant(st, RELUGRAD_F32, isa, [unroll](Operands& op, size_t n) {
          relugrad_micro::SelectF32Unroll(unroll, reinterpret_cast<const uint32_t*>(op.dy.data()),
                                          reinterpret_cast<const uint32_t*>(op.s.data()),
                                          reinterpret_cast<uint32_t*>(op.dx.data()), n);
        });
      });
      for (int64_t n : sizes) b->Arg(n);
    }
    for (int distance : {512, 2048}) {
      const std::string name = "var_f32_select_u2_prefetch" + std::to_string(distance) + "__" + isa;
      auto* b = benchmark::RegisterBenchmark(name.c_str(), [distance, isa](benchmark::State& st) {
        Variant(st, RELUGRAD_F32, isa, [distance](Operands& op, size_t n) {
          relugrad_micro::SelectF32Prefetch(distance,
                                            reinterpret_cast<const uint32_t*>(op.dy.data()),
                                            reinterpret_cast<const uint32_t*>(op.s.data()),
                                            reinterpret_cast<uint32_t*>(op.dx.data()), n);
        });
      });
      for (int64_t n : sizes) b->Arg(n);
    }
    for (bool bf16 : {false, true}) {
      const std::string name =
          std::string("var_") + (bf16 ? "bf16" : "f16") + "_select_via_f32__" + isa;
      auto* b = benchmark::RegisterBenchmark(name.c_str(), [bf16, isa](benchmark::State& st) {
        Variant(st, bf16 ? RELUGRAD_BF16 : RELUGRAD_F16, isa, [bf16](Operands& op, size_t n) {
          relugrad_micro::Select16ViaF32(bf16, reinterpret_cast<const uint16_t*>(op.dy.data()),
                                         reinterpret_cast<const uint16_t*>(op.s.data()),
                                         reinterpret_cast<uint16_t*>(op.dx.data()), n);
        });
      });
      for (int64_t n : sizes) b->Arg(n);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  RegisterAll();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
