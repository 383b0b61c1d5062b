// One micro-benchmark per row of the CPU variant table (cpu/variants.inc)
// and SIMD target: the row's own block kernel, run directly on operands in
// cache, for the first configuration of GradConfigs() and dtype that selects
// the row (so the row's predicate holds). Names carry the row's name:
// rg_<dtype>_variant_<row>__<target>/<n>, the same name as its test
// (variants_test) and `relugrad info --variants`. Registered at static
// initialisation; micro_main.cc runs them with the rest.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "check/check_data.h"
#include "core/semantics.h"
#include "cpu/scoped_ieee_float.h"
#include "cpu/variants.h"
#include "relugrad/relugrad.h"

namespace {

using relugrad::check::Pack;
using relugrad::check::RandomBits;

struct Case {
  relugrad_dtype dtype;
  relugrad::KernelParams params;
  std::string config;
};

// The first (dtype, configuration) that selects each row; dtype f32 first.
std::vector<std::vector<Case>> CasesPerRow() {
  std::vector<std::vector<Case>> rows(relugrad::kCpuVariantCount);
  for (relugrad_dtype d : relugrad::check::kAllDtypes) {
    for (const auto& c : relugrad::check::GradConfigs()) {
      relugrad::Rules sem;
      if (relugrad::ResolveOptions(&c.options, &sem) != RELUGRAD_OK) continue;
      const relugrad::KernelParams p = relugrad::MakeKernelParams(relugrad::ToDtype(d), sem);
      auto& cases = rows[static_cast<int>(relugrad::SelectCpuVariant(relugrad::ToDtype(d), p))];
      bool have_dtype = false;
      for (const Case& k : cases) have_dtype |= k.dtype == d;
      if (!have_dtype) cases.push_back({d, p, c.name});
    }
  }
  return rows;
}

void Row(benchmark::State& state, relugrad::CpuVariantId id, Case c, std::string isa) {
  if (relugrad_set_max_isa(isa.c_str()) != RELUGRAD_OK) {
    state.SkipWithError("target not attainable");
    return;
  }
  const size_t n = static_cast<size_t>(state.range(0));
  const auto dy = Pack(c.dtype, RandomBits(c.dtype, n, 1));
  const auto s = Pack(c.dtype, RandomBits(c.dtype, n, 2));
  std::vector<unsigned char> dx(dy.size());
  const relugrad::BlockKernel kernel =
      relugrad::CpuVariantKernel(id, relugrad::ToDtype(c.dtype), false);
  {
    relugrad::ScopedIeeeFloat ieee(relugrad::KernelMxcsr(c.params));
    for (auto _ : state) {
      kernel(c.params, dy.data(), s.data(), dx.data(), 0, static_cast<int64_t>(n));
      benchmark::DoNotOptimize(dx.data());
      benchmark::ClobberMemory();
    }
  }
  relugrad_set_max_isa("best");
  state.SetLabel(c.config);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * 3 *
                          static_cast<int64_t>(dy.size()));
}

bool RegisterRows() {
  const auto rows = CasesPerRow();
  for (int i = 0; i < relugrad_isa_count(); ++i) {
    const std::string isa = relugrad_isa_name(i);
    for (int r = 0; r < relugrad::kCpuVariantCount; ++r) {
      const relugrad::CpuVariant& row = relugrad::CpuVariants()[r];
      for (const Case& c : rows[r]) {
        const std::string name =
            std::string("rg_") + relugrad_dtype_name(c.dtype) + "_variant_" + row.name + "__" + isa;
        benchmark::RegisterBenchmark(name.c_str(), Row, row.id, c, isa)
            ->Arg(16)
            ->Arg(1024)
            ->Arg(65536);
      }
    }
  }
  return true;
}

const bool registered = RegisterRows();

}  // namespace
