// One micro-benchmark per row of the CPU variant tables (cpu/variants.inc,
// cpu/mask_variants.inc, cpu/mask_forward_variants.inc) and SIMD target:
// the row's own kernel, run directly on operands in cache, for the first
// configuration and dtype that selects the row (GradConfigs() for relu_grad,
// AllConfigs() for the mask rows; so the row's predicate holds). Names
// carry the row's name: rg_<dtype>_variant_<row>__<target>/<n>, the same
// name as its test (variants_test) and `relugrad info --variants`.
// Registered at static initialisation; micro_main.cc runs them with the rest.
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

// The first (dtype, configuration) of `configs` that `select` maps to each of
// the `count` rows, per dtype; dtype f32 first.
template <class Id>
std::vector<std::vector<Case>> CasesPerRow(int count,
                                           Id (*select)(relugrad::Dtype,
                                                        const relugrad::KernelParams&),
                                           const std::vector<relugrad::check::Config>& configs) {
  std::vector<std::vector<Case>> rows(count);
  for (relugrad_dtype d : relugrad::check::kAllDtypes) {
    for (const auto& c : configs) {
      relugrad::Rules sem;
      if (relugrad::ResolveOptions(&c.options, &sem) != RELUGRAD_OK) continue;
      const relugrad::KernelParams p = relugrad::MakeKernelParams(relugrad::ToDtype(d), sem);
      auto& cases = rows[static_cast<int>(select(relugrad::ToDtype(d), p))];
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

// x -> (y, mask): x and y in full, the mask an eighth of an element each.
void MaskForwardRow(benchmark::State& state, relugrad::MaskForwardVariantId id, Case c,
                    std::string isa) {
  if (relugrad_set_max_isa(isa.c_str()) != RELUGRAD_OK) {
    state.SkipWithError("target not attainable");
    return;
  }
  const size_t n = static_cast<size_t>(state.range(0));
  const auto x = Pack(c.dtype, RandomBits(c.dtype, n, 1));
  std::vector<unsigned char> y(x.size()), mask((n + 7) / 8);
  const relugrad::ForwardKernel kernel =
      relugrad::MaskForwardVariantKernel(id, relugrad::ToDtype(c.dtype));
  {
    relugrad::ScopedIeeeFloat ieee(relugrad::KernelMxcsr(c.params));
    for (auto _ : state) {
      kernel(c.params, x.data(), y.data(), mask.data(), 0, static_cast<int64_t>(n), false);
      benchmark::DoNotOptimize(y.data());
      benchmark::DoNotOptimize(mask.data());
      benchmark::ClobberMemory();
    }
  }
  relugrad_set_max_isa("best");
  state.SetLabel(c.config);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(2 * x.size() + mask.size()));
}

// (dy, mask) -> dx: dy and dx in full, the mask an eighth of an element each.
void MaskGradRow(benchmark::State& state, relugrad::MaskGradVariantId id, Case c, std::string isa) {
  if (relugrad_set_max_isa(isa.c_str()) != RELUGRAD_OK) {
    state.SkipWithError("target not attainable");
    return;
  }
  const size_t n = static_cast<size_t>(state.range(0));
  const auto dy = Pack(c.dtype, RandomBits(c.dtype, n, 1));
  std::vector<unsigned char> dx(dy.size()), mask((n + 7) / 8);
  for (size_t i = 0; i < mask.size(); ++i) mask[i] = static_cast<unsigned char>(i * 151 + 29);
  const relugrad::GradMaskKernel kernel =
      relugrad::MaskGradVariantKernel(id, relugrad::ToDtype(c.dtype));
  {
    relugrad::ScopedIeeeFloat ieee(relugrad::KernelMxcsr(c.params));
    for (auto _ : state) {
      kernel(c.params, dy.data(), mask.data(), dx.data(), 0, static_cast<int64_t>(n), false);
      benchmark::DoNotOptimize(dx.data());
      benchmark::ClobberMemory();
    }
  }
  relugrad_set_max_isa("best");
  state.SetLabel(c.config);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(2 * dy.size() + mask.size()));
}

// rg_<dtype>_variant_<row>__<target>/<n> for each row of `table` and its
// cases, running `fn`.
template <class Id, class Fn>
void RegisterTable(const relugrad::VariantRow<Id>* table, int count,
                   const std::vector<std::vector<Case>>& cases, const std::string& isa, Fn fn) {
  for (int r = 0; r < count; ++r) {
    for (const Case& c : cases[r]) {
      const std::string name = std::string("rg_") + relugrad_dtype_name(c.dtype) + "_variant_" +
                               table[r].name + "__" + isa;
      benchmark::RegisterBenchmark(name.c_str(), fn, table[r].id, c, isa)
          ->Arg(16)
          ->Arg(1024)
          ->Arg(65536);
    }
  }
}

bool RegisterRows() {
  const auto rows = CasesPerRow(relugrad::kCpuVariantCount, &relugrad::SelectCpuVariant,
                                relugrad::check::GradConfigs());
  // AllConfigs: the mask ops refuse gate_max.
  const auto forward_rows =
      CasesPerRow(relugrad::kMaskForwardVariantCount, &relugrad::SelectMaskForwardVariant,
                  relugrad::check::AllConfigs());
  const auto grad_rows =
      CasesPerRow(relugrad::kMaskGradVariantCount, &relugrad::SelectMaskGradVariant,
                  relugrad::check::AllConfigs());
  for (int i = 0; i < relugrad_isa_count(); ++i) {
    const std::string isa = relugrad_isa_name(i);
    RegisterTable(relugrad::CpuVariants(), relugrad::kCpuVariantCount, rows, isa, Row);
    RegisterTable(relugrad::MaskForwardVariants(), relugrad::kMaskForwardVariantCount, forward_rows,
                  isa, MaskForwardRow);
    RegisterTable(relugrad::MaskGradVariants(), relugrad::kMaskGradVariantCount, grad_rows, isa,
                  MaskGradRow);
  }
  return true;
}

const bool registered = RegisterRows();

}  // namespace
