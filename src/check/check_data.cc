#include "check/check_data.h"

#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "core/float_convert.h"

namespace relugrad {
namespace check {
namespace {

Dtype D(relugrad_dtype d) { return ToDtype(d); }

uint64_t Sign(relugrad_dtype d) { return uint64_t{1} << (relugrad_dtype_size(d) * 8 - 1); }

struct Layout {
  uint64_t inf, quiet, min_normal, mantissa_mask;
};

Layout LayoutOf(relugrad_dtype d) {
  switch (d) {
    case RELUGRAD_F16:
      return {0x7c00, 0x0200, 0x0400, 0x03ff};
    case RELUGRAD_BF16:
      return {0x7f80, 0x0040, 0x0080, 0x007f};
    case RELUGRAD_F32:
      return {0x7f800000, 0x00400000, 0x00800000, 0x007fffff};
    default:
      return {0x7ff0000000000000ull, 0x0008000000000000ull, 0x0010000000000000ull,
              0x000fffffffffffffull};
  }
}

relugrad_options Preset(relugrad_preset p) {
  relugrad_options o;
  relugrad_options_init(&o, p);
  return o;
}

}  // namespace

std::string Hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

std::vector<uint64_t> SpecialValues(relugrad_dtype d) {
  const Layout L = LayoutOf(d);
  const uint64_t sign = Sign(d);
  std::vector<uint64_t> v = {
      0,
      sign,  // +-0
      L.inf,
      sign | L.inf,  // +-inf
      L.inf | L.quiet,
      sign | L.inf | L.quiet,  // default quiet NaNs
      L.inf | L.quiet | 0x5,
      sign | L.inf | L.quiet | 0x3,  // quiet NaN payloads
      L.inf | 0x1,
      sign | L.inf | 0x2,              // signalling NaNs
      L.inf | (L.mantissa_mask >> 1),  // signalling NaN, big payload
      L.inf - 1,
      sign | (L.inf - 1),  // +-max
      L.min_normal,
      sign | L.min_normal,  // +-min normal
      1,
      sign | 1,  // +-min subnormal
      L.min_normal - 1,
      sign | (L.min_normal - 1),  // +-max subnormal
      0x2,                        // another subnormal
  };
  // Values around the thresholds and upper bounds the configurations use
  // (0, 0.75, -1.5, 0.1, 6; BoundedGateConfigs),
  // and ordinary values of both signs.
  for (double t : {1.0, -1.0, 0.75, -1.5, 0.1, 2.5, -0.5, 1e-3, 65504.0, -3.0, 6.0}) {
    const uint64_t b = DoubleToBitsRne(D(d), t);
    v.push_back(b);
    v.push_back(b + 1);
    if ((b & ~sign) != 0) v.push_back(b - 1);
  }
  return v;
}

std::vector<Config> AllConfigs() {
  std::vector<Config> c;
  c.push_back({"torch", Preset(RELUGRAD_PRESET_TORCH)});
  c.push_back({"tensorflow", Preset(RELUGRAD_PRESET_TENSORFLOW)});
  c.push_back({"jax", Preset(RELUGRAD_PRESET_JAX)});
  c.push_back({"onednn", Preset(RELUGRAD_PRESET_ONEDNN)});
  c.push_back({"mindspore", Preset(RELUGRAD_PRESET_MINDSPORE)});
  {
    auto o = Preset(RELUGRAD_PRESET_TORCH);
    o.threshold = 0.75;
    c.push_back({"torch_t0.75", o});
    o.threshold = -1.5;
    c.push_back({"torch_t-1.5", o});
    o.threshold = 0.1;
    c.push_back({"torch_t0.1", o});
    o.threshold_rounding = RELUGRAD_THRESHOLD_DTYPE;
    c.push_back({"torch_t0.1_dtype_rounding", o});
  }
  {
    auto o = Preset(RELUGRAD_PRESET_ONEDNN);
    o.alpha = 0.25;
    c.push_back({"onednn_alpha0.25", o});
    o.alpha = -3.1;
    o.threshold = 0.5;
    c.push_back({"onednn_alpha-3.1_t0.5", o});
  }
  {
    auto o = Preset(RELUGRAD_PRESET_TORCH);
    o.clip = 1;
    o.clip_lo = -1.5;
    o.clip_hi = 0.1;
    c.push_back({"torch_clip", o});
    o.clip_lo = 0.0;
    o.clip_hi = 0.0;
    c.push_back({"torch_clip_zero", o});
    auto t = Preset(RELUGRAD_PRESET_TENSORFLOW);
    t.clip = 1;
    t.clip_lo = -0.0;
    t.clip_hi = 2.5;
    c.push_back({"tensorflow_clip", t});
  }
  {
    auto o = Preset(RELUGRAD_PRESET_TORCH);
    o.denormals = RELUGRAD_DENORMALS_FTZ_DAZ;
    c.push_back({"torch_ftz", o});
    auto j = Preset(RELUGRAD_PRESET_JAX);
    j.denormals = RELUGRAD_DENORMALS_FTZ_DAZ;
    j.threshold = -1e-40;  // a subnormal threshold in f32
    c.push_back({"jax_ftz_tsub", j});
    auto t = Preset(RELUGRAD_PRESET_TENSORFLOW);
    t.denormals = RELUGRAD_DENORMALS_IEEE;
    c.push_back({"tensorflow_ieee", t});
    auto a = Preset(RELUGRAD_PRESET_ONEDNN);
    a.denormals = RELUGRAD_DENORMALS_FTZ_DAZ;
    a.alpha = 1e-30;  // products land in subnormals
    c.push_back({"onednn_ftz_alpha_tiny", a});
    auto s = Preset(RELUGRAD_PRESET_JAX);
    s.alpha = -0.5;  // select with a closed-gate factor
    c.push_back({"jax_alpha-0.5", s});
    auto h = Preset(RELUGRAD_PRESET_ONEDNN);
    h.alpha = 1e39;  // finite in double, +inf in f32: 0 * alpha is the default NaN
    c.push_back({"onednn_alpha_beyond_f32", h});
    auto f = Preset(RELUGRAD_PRESET_ONEDNN);
    f.denormals = RELUGRAD_DENORMALS_FTZ_DAZ;  // zero_if_le + multiply + DAZ: its own kernel
    c.push_back({"onednn_ftz", f});
  }
  {
    // keep_negative_zero (the mask forward's y for x = -0; every other op
    // ignores it): torch.relu's own row, the general row under a threshold
    // and under DAZ (a negative subnormal still gives +0), and leaky.
    auto o = Preset(RELUGRAD_PRESET_TORCH);
    o.keep_negative_zero = 1;
    c.push_back({"torch_relu_keep_negative_zero", o});
    o.threshold = 0.75;
    c.push_back({"torch_t0.75_keep_negative_zero", o});
    auto t = Preset(RELUGRAD_PRESET_TENSORFLOW);
    t.keep_negative_zero = 1;
    c.push_back({"tensorflow_keep_negative_zero", t});
    auto a = Preset(RELUGRAD_PRESET_ONEDNN);
    a.alpha = 0.25;
    a.keep_negative_zero = 1;
    c.push_back({"onednn_alpha0.25_keep_negative_zero", a});
  }
  return c;
}

std::vector<Config> BoundedGateConfigs() {
  std::vector<Config> c;
  auto bounded = [](relugrad_preset p, double t, double h) {
    auto o = Preset(p);
    o.threshold = t;
    o.gate_max = h;
    return o;
  };
  c.push_back({"torch_relu6", bounded(RELUGRAD_PRESET_TORCH, 0.0, 6.0)});
  c.push_back({"torch_hardtanh", bounded(RELUGRAD_PRESET_TORCH, -1.0, 1.0)});
  c.push_back({"jax_hardtanh", bounded(RELUGRAD_PRESET_JAX, -1.5, 0.75)});  // NaN closed, DAZ
  c.push_back({"mindspore_relu6", bounded(RELUGRAD_PRESET_MINDSPORE, 0.0, 6.0)});
  c.push_back({"torch_h0", bounded(RELUGRAD_PRESET_TORCH, -1.0, 0.0)});  // -0 and +0 closed
  c.push_back({"torch_hm0", bounded(RELUGRAD_PRESET_TORCH, -1.0, -0.0)});
  {
    auto o = bounded(RELUGRAD_PRESET_TORCH, -0.5, 0.1);
    o.threshold_rounding = RELUGRAD_THRESHOLD_DTYPE;
    c.push_back({"torch_hardtanh_dtype_rounding", o});
    o = bounded(RELUGRAD_PRESET_TORCH, -1.0, 1e-40);  // a subnormal bound in f32
    c.push_back({"torch_hsub", o});
    o.denormals = RELUGRAD_DENORMALS_FTZ_DAZ;  // ... that flushes to 0
    c.push_back({"torch_hsub_ftz", o});
    o = bounded(RELUGRAD_PRESET_TORCH, -1.0, 1e39);  // +inf in f32: s = +inf closed
    c.push_back({"torch_h_beyond_f32", o});
  }
  c.push_back({"tensorflow_relu6", bounded(RELUGRAD_PRESET_TENSORFLOW, 0.0, 6.0)});
  c.push_back({"onednn_relu6", bounded(RELUGRAD_PRESET_ONEDNN, 0.0, 6.0)});
  {
    auto o = bounded(RELUGRAD_PRESET_ONEDNN, -1.0, 2.5);
    o.alpha = 0.25;  // 16-bit data: the scalar closed-lane path
    c.push_back({"onednn_alpha0.25_hardtanh", o});
    o = bounded(RELUGRAD_PRESET_TORCH, 0.0, 6.0);
    o.clip = 1;
    o.clip_lo = -1.5;
    o.clip_hi = 0.1;
    c.push_back({"torch_relu6_clip", o});
  }
  return c;
}

std::vector<Config> GradConfigs() {
  std::vector<Config> c = AllConfigs();
  for (Config& b : BoundedGateConfigs()) c.push_back(std::move(b));
  return c;
}

std::vector<uint64_t> RandomBits(relugrad_dtype d, size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const std::vector<uint64_t> special = SpecialValues(d);
  std::uniform_real_distribution<double> uni(-4.0, 4.0);
  std::vector<uint64_t> out(n);
  for (size_t i = 0; i < n; ++i) {
    const uint64_t r = rng();
    if (r % 8 == 0) {
      out[i] = special[(r >> 8) % special.size()];
    } else if (r % 8 == 1) {
      const int bits = static_cast<int>(relugrad_dtype_size(d) * 8);
      out[i] = bits == 64 ? rng() : (rng() & ((uint64_t{1} << bits) - 1));  // any pattern
    } else {
      out[i] = DoubleToBitsRne(D(d), uni(rng));
    }
  }
  return out;
}

std::vector<unsigned char> Pack(relugrad_dtype d, const std::vector<uint64_t>& bits) {
  const size_t es = relugrad_dtype_size(d);
  std::vector<unsigned char> out(bits.size() * es);
  for (size_t i = 0; i < bits.size(); ++i)
    std::memcpy(out.data() + i * es, &bits[i], es);  // little-endian
  return out;
}

uint64_t BitsAt(relugrad_dtype d, const void* base, size_t i) {
  const size_t es = relugrad_dtype_size(d);
  uint64_t v = 0;
  std::memcpy(&v, static_cast<const unsigned char*>(base) + i * es, es);
  return v;
}

std::string CompareBits(relugrad_dtype d, const void* expected, const void* actual, size_t n,
                        const void* dy, const void* s) {
  const size_t es = relugrad_dtype_size(d);
  // reliability: n == 0 may come with NULL buffers (empty vectors); memcmp(NULL, ...) is UB.
  if (n == 0 || std::memcmp(expected, actual, n * es) == 0) return "";
  for (size_t i = 0; i < n; ++i) {
    const uint64_t e = BitsAt(d, expected, i), a = BitsAt(d, actual, i);
    if (e != a) {
      std::string msg = std::string(relugrad_dtype_name(d)) + " element " + std::to_string(i) +
                        " of " + std::to_string(n) + ": expected " + Hex(e) + ", got " + Hex(a);
      if (dy != nullptr && s != nullptr) {
        msg += " (dy " + Hex(BitsAt(d, dy, i)) + ", s " + Hex(BitsAt(d, s, i)) + ")";
      }
      return msg;
    }
  }
  return "";
}

std::vector<unsigned char> Reference(relugrad_dtype d, const std::vector<unsigned char>& dy,
                                     const std::vector<unsigned char>& s,
                                     const relugrad_options& o) {
  std::vector<unsigned char> dx(dy.size());
  const int64_t n = static_cast<int64_t>(dy.size() / relugrad_dtype_size(d));
  if (relugrad_relu_grad_reference(d, n, dy.data(), s.data(), dx.data(), &o) != RELUGRAD_OK) {
    throw std::runtime_error(std::string("reference failed: ") + relugrad_last_error());
  }
  return dx;
}

}  // namespace check
}  // namespace relugrad
