#include "ascend_test_util.h"

#include <cstring>
#include <random>

#include "check/check_data.h"
#include "core/float_convert.h"
#include "gtest/gtest.h"

namespace rg_ascend_test {

std::vector<Config> Configs() {
  std::vector<Config> out;
  const relugrad_preset presets[] = {RELUGRAD_PRESET_TORCH, RELUGRAD_PRESET_TENSORFLOW,
                                     RELUGRAD_PRESET_JAX, RELUGRAD_PRESET_ONEDNN};
  for (relugrad_preset p : presets) {
    const std::string name = relugrad_preset_name(p);
    Config c;
    relugrad_options_init(&c.options, p);
    c.name = name;
    out.push_back(c);
    Config t = c;
    t.name = name + "+threshold0.5";
    t.options.threshold = 0.5;
    out.push_back(t);
    Config neg = c;
    neg.name = name + "+threshold-1.25";
    neg.options.threshold = -1.25;
    out.push_back(neg);
    Config a = c;
    a.name = name + "+alpha0.1";
    a.options.alpha = 0.1;
    out.push_back(a);
    Config cl = c;
    cl.name = name + "+clip[-0.5,2]";
    cl.options.clip = 1;
    cl.options.clip_lo = -0.5;
    cl.options.clip_hi = 2.0;
    out.push_back(cl);
    Config z = c;
    z.name = name + "+clip[-0,+0]";
    z.options.clip = 1;
    z.options.clip_lo = -0.0;
    z.options.clip_hi = 0.0;
    out.push_back(z);
  }
  Config ftz;
  relugrad_options_init(&ftz.options, RELUGRAD_PRESET_TENSORFLOW);
  ftz.name = "tensorflow+alpha1e-30(ftz)";
  ftz.options.alpha = 1e-30;  // products land in the subnormal range
  out.push_back(ftz);
  Config ftz2 = ftz;
  ftz2.name = "tensorflow+alpha-3+clip+threshold1e-40";
  ftz2.options.alpha = -3.0;
  ftz2.options.threshold = 1e-40;  // a subnormal threshold under DAZ
  ftz2.options.clip = 1;
  ftz2.options.clip_lo = -1e-39;
  ftz2.options.clip_hi = 1e30;
  out.push_back(ftz2);
  Config dt;
  relugrad_options_init(&dt.options, RELUGRAD_PRESET_TORCH);
  dt.name = "torch+threshold0.1(dtype rounding)";
  dt.options.threshold = 0.1;
  dt.options.threshold_rounding = RELUGRAD_THRESHOLD_DTYPE;
  out.push_back(dt);
  Config big;
  relugrad_options_init(&big.options, RELUGRAD_PRESET_ONEDNN);
  big.name = "onednn+alpha1e5(overflow)";
  big.options.alpha = 1e5;  // 16-bit products overflow to inf
  out.push_back(big);
  Config inf;
  relugrad_options_init(&inf.options, RELUGRAD_PRESET_JAX);
  inf.name = "jax+threshold+inf";
  inf.options.threshold = INFINITY;
  out.push_back(inf);
  Config ninf;
  relugrad_options_init(&ninf.options, RELUGRAD_PRESET_TORCH);
  ninf.name = "torch+threshold-inf";
  ninf.options.threshold = -INFINITY;
  out.push_back(ninf);
  // Upper gate bounds (ReLU6, hardtanh): a bounded range and open NaNs make
  // the gate's largest bit-pattern set (four intervals).
  for (const relugrad::check::Config& b : relugrad::check::BoundedGateConfigs()) {
    out.push_back({"bounded:" + b.name, b.options});
  }
  return out;
}

namespace {

template <relugrad::Dtype D>
std::vector<uint8_t> Fill(int64_t n, uint32_t seed) {
  using T = relugrad::DtypeTraits<D>;
  using U = typename T::Bits;
  std::vector<U> specials = {0,
                             T::kSign,
                             T::kInf,
                             static_cast<U>(T::kSign | T::kInf),
                             static_cast<U>(T::kInf | T::kQuiet),
                             static_cast<U>(T::kSign | T::kInf | T::kQuiet),
                             static_cast<U>(T::kInf | 1),  // signalling NaN
                             static_cast<U>(T::kSign | T::kInf | 5),
                             static_cast<U>(T::kInf | T::kQuiet | 3),
                             1,
                             static_cast<U>(T::kSign | 1),
                             static_cast<U>(T::kMinNormal - 1),
                             static_cast<U>(T::kSign | (T::kMinNormal - 1)),
                             T::kMinNormal,
                             static_cast<U>(T::kSign | T::kMinNormal),
                             static_cast<U>(T::kInf - 1),
                             static_cast<U>(T::kSign | (T::kInf - 1))};
  const double near[] = {0.5, -0.5, 1.25,  -1.25,  2.0,   -2.0,  0.1,
                         1.0, -1.0, 1e-40, -1e-40, 1e-39, -1e-39};
  for (double v : near) {
    const U b = static_cast<U>(relugrad::DoubleToBitsRne(D, v));
    specials.push_back(b);
    specials.push_back(static_cast<U>(b + 1));
    specials.push_back(static_cast<U>(b - 1));
  }
  std::mt19937 rng(seed);
  std::vector<U> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t r = rng();
    if (r % 3 == 0) {
      v[static_cast<size_t>(i)] = specials[rng() % specials.size()];
    } else if (r % 3 == 1) {
      v[static_cast<size_t>(i)] = static_cast<U>(rng());  // any pattern
    } else {
      // Moderate values of both signs.
      const double x = (static_cast<double>(rng() % 20001) - 10000.0) / 2000.0;
      v[static_cast<size_t>(i)] = static_cast<U>(relugrad::DoubleToBitsRne(D, x));
    }
  }
  std::vector<uint8_t> out(static_cast<size_t>(n) * sizeof(U));
  if (n > 0) std::memcpy(out.data(), v.data(), out.size());
  return out;
}

}  // namespace

std::vector<uint8_t> MakeBits(relugrad::Dtype dtype, int64_t n, uint32_t seed) {
  switch (dtype) {
    case relugrad::Dtype::kF16:
      return Fill<relugrad::Dtype::kF16>(n, seed);
    case relugrad::Dtype::kBF16:
      return Fill<relugrad::Dtype::kBF16>(n, seed);
    case relugrad::Dtype::kF64:
      return Fill<relugrad::Dtype::kF64>(n, seed);
    default:
      return Fill<relugrad::Dtype::kF32>(n, seed);
  }
}

relugrad::KernelParams ParamsFor(relugrad::Dtype dtype, const relugrad_options& options,
                                 relugrad::Rules* semantics) {
  EXPECT_EQ(relugrad::ResolveOptions(&options, semantics), RELUGRAD_OK) << relugrad_last_error();
  return relugrad::MakeKernelParams(dtype, *semantics);
}

int64_t FirstDiff(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b, int elem) {
  const size_t n = std::min(a.size(), b.size()) / static_cast<size_t>(elem);
  for (size_t i = 0; i < n; ++i) {
    if (std::memcmp(&a[i * elem], &b[i * elem], static_cast<size_t>(elem)) != 0)
      return static_cast<int64_t>(i);
  }
  return a.size() == b.size() ? -1 : static_cast<int64_t>(n);
}

}  // namespace rg_ascend_test
