// relugrad's onednn preset against oneDNN itself: eltwise_relu backward
// (gate = src) and eltwise_relu_use_dst_for_bwd (gate = dst), alpha 0 and
// nonzero, f32 and bf16 (and f16 where this oneDNN implements it), on every
// special value pair (subnormals, NaN payloads, signed zeros, inf), both as a
// short array and tiled large enough to take oneDNN's JIT vector body and
// its threads. Bits must match exactly.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "relugrad/relugrad.h"
#include "test_support.h"

#ifdef RELUGRAD_HAVE_ONEDNN
#include "oneapi/dnnl/dnnl.hpp"
#endif

namespace {

using relugrad::testing::CompareBits;
using relugrad::testing::Pack;
using relugrad::testing::SpecialValues;

#ifdef RELUGRAD_HAVE_ONEDNN

struct Grid {
  std::vector<unsigned char> dy, s;
  size_t n = 0;
};

// Every special dy against every special gate, repeated to at least min_n.
Grid MakeGrid(relugrad_dtype dtype, size_t min_n) {
  const auto v = SpecialValues(dtype);
  std::vector<uint64_t> dy, s;
  while (dy.size() < min_n || dy.empty()) {
    for (uint64_t g : v) {
      for (uint64_t d : v) {
        s.push_back(g);
        dy.push_back(d);
      }
    }
  }
  Grid grid;
  grid.n = dy.size();
  grid.dy = Pack(dtype, dy);
  grid.s = Pack(dtype, s);
  return grid;
}

dnnl::memory::data_type DnnlType(relugrad_dtype dtype) {
  switch (dtype) {
    case RELUGRAD_F32:
      return dnnl::memory::data_type::f32;
    case RELUGRAD_BF16:
      return dnnl::memory::data_type::bf16;
    case RELUGRAD_F16:
      return dnnl::memory::data_type::f16;
    default:
      return dnnl::memory::data_type::undef;
  }
}

// oneDNN's answer, or false when this oneDNN/CPU has no implementation.
bool OnednnReluBackward(relugrad_dtype dtype, const Grid& g, float alpha, bool use_dst,
                        std::vector<unsigned char>* dx, std::string* why) {
  using namespace dnnl;
  try {
    engine eng(engine::kind::cpu, 0);
    stream strm(eng);
    memory::desc md({static_cast<memory::dim>(g.n)}, DnnlType(dtype), memory::format_tag::a);
    const algorithm alg =
        use_dst ? algorithm::eltwise_relu_use_dst_for_bwd : algorithm::eltwise_relu;
    eltwise_forward::primitive_desc fwd(
        eltwise_forward::desc(prop_kind::forward_training, alg, md, alpha, 0.f), eng);
    eltwise_backward::primitive_desc bwd(eltwise_backward::desc(alg, md, md, alpha, 0.f), eng, fwd);
    memory gate(md, eng, const_cast<unsigned char*>(g.s.data()));
    memory diff_dst(md, eng, const_cast<unsigned char*>(g.dy.data()));
    dx->assign(g.dy.size(), 0x5a);
    memory diff_src(md, eng, dx->data());
    eltwise_backward(bwd).execute(strm, {{use_dst ? DNNL_ARG_DST : DNNL_ARG_SRC, gate},
                                         {DNNL_ARG_DIFF_DST, diff_dst},
                                         {DNNL_ARG_DIFF_SRC, diff_src}});
    strm.wait();
    *why = bwd.impl_info_str();
    return true;
  } catch (const dnnl::error& e) {
    *why = e.what();
    return false;
  }
}

// Diagnostic for a failure: which combination of the library's settings
// (gate x combine x denormals) reproduces oneDNN's output, if any.
std::string MatchingSettings(relugrad_dtype dtype, float alpha, const Grid& g,
                             const std::vector<unsigned char>& want) {
  std::string out;
  std::vector<unsigned char> got(g.dy.size());
  for (int gate = 0; gate < 2; ++gate) {
    for (int combine = 0; combine < 2; ++combine) {
      for (int den = 0; den < 2; ++den) {
        relugrad_options o;
        relugrad_options_init(&o, RELUGRAD_PRESET_ONEDNN);
        o.gate = static_cast<relugrad_gate>(gate);
        o.combine = static_cast<relugrad_combine>(combine);
        o.denormals = static_cast<relugrad_denormals>(den);
        o.alpha = alpha;
        if (relugrad_relu_grad(dtype, static_cast<int64_t>(g.n), g.dy.data(), g.s.data(),
                               got.data(), &o) != RELUGRAD_OK) {
          continue;
        }
        if (CompareBits(dtype, want.data(), got.data(), g.n).empty()) {
          out += std::string(gate ? "pass_if_gt" : "zero_if_le") + "+" +
                 (combine ? "multiply" : "select") + "+" + (den ? "ftz_daz" : "ieee") + " ";
        }
      }
    }
  }
  return out.empty() ? "none" : out;
}

struct Case {
  relugrad_dtype dtype;
  float alpha;
  bool use_dst;
  size_t min_n;
};

std::string Name(const Case& c) {
  return std::string(relugrad_dtype_name(c.dtype)) + (c.use_dst ? " use_dst" : " src") +
         " alpha=" + std::to_string(c.alpha) + " n>=" + std::to_string(c.min_n);
}

class Onednn : public ::testing::TestWithParam<Case> {};

TEST_P(Onednn, ReluBackwardMatchesPreset) {
  const Case c = GetParam();
  const Grid g = MakeGrid(c.dtype, c.min_n);
  std::vector<unsigned char> want;
  std::string impl;
  if (!OnednnReluBackward(c.dtype, g, c.alpha, c.use_dst, &want, &impl)) {
    GTEST_SKIP() << "oneDNN " << dnnl_version()->major << "." << dnnl_version()->minor << "."
                 << dnnl_version()->patch << " has no " << Name(c)
                 << " implementation here: " << impl;
  }
  relugrad_options o;
  ASSERT_EQ(relugrad_options_init(&o, RELUGRAD_PRESET_ONEDNN), RELUGRAD_OK);
  o.alpha = c.alpha;
  std::vector<unsigned char> got(g.dy.size());
  ASSERT_EQ(relugrad_relu_grad(c.dtype, static_cast<int64_t>(g.n), g.dy.data(), g.s.data(),
                               got.data(), &o),
            RELUGRAD_OK)
      << relugrad_last_error();
  if (c.dtype == RELUGRAD_BF16 && impl.find("bf16") != std::string::npos) {
    // Native bf16 JITs convert results with VCVTNEPS2BF16, which always
    // flushes subnormal results to signed zero (whatever MXCSR says), while
    // the gate is compared in IEEE f32. relugrad's denormal modes flush the
    // gate too (FTZ_DAZ) or nothing (IEEE), so this one difference is
    // tolerated, counted and reported: it needs an "FTZ results only" mode.
    size_t flushed = 0, other = 0;
    for (size_t i = 0; i < g.n; ++i) {
      uint16_t w, r;
      std::memcpy(&w, want.data() + 2 * i, 2);
      std::memcpy(&r, got.data() + 2 * i, 2);
      if (w == r) continue;
      const bool r_subnormal = (r & 0x7f80) == 0 && (r & 0x007f) != 0;
      if (r_subnormal && w == (r & 0x8000)) {
        ++flushed;
      } else if (++other <= 5) {
        ADD_FAILURE() << Name(c) << " element " << i << ": oneDNN 0x" << std::hex << w
                      << " relugrad 0x" << r;
      }
    }
    std::printf("%s (%s): %zu subnormal results flushed by oneDNN, %zu other differences\n",
                Name(c).c_str(), impl.c_str(), flushed, other);
    EXPECT_EQ(other, 0u);
    return;
  }
  const std::string diff =
      CompareBits(c.dtype, want.data(), got.data(), g.n, g.dy.data(), g.s.data());
  EXPECT_TRUE(diff.empty()) << Name(c) << " (oneDNN impl " << impl << "; expected = oneDNN):\n"
                            << diff << "settings that would match: "
                            << MatchingSettings(c.dtype, c.alpha, g, want);
}

std::vector<Case> Cases() {
  std::vector<Case> out;
  for (relugrad_dtype d : {RELUGRAD_F32, RELUGRAD_BF16, RELUGRAD_F16}) {
    for (size_t n : {size_t{0}, size_t{1} << 16}) {
      for (float alpha : {0.0f, 0.5f, -0.1f}) out.push_back({d, alpha, false, n});
      out.push_back({d, 0.0f, true, n});  // use_dst_for_bwd requires alpha >= 0
    }
  }
  return out;
}

std::string CaseName(const ::testing::TestParamInfo<Case>& info) {
  std::string s = Name(info.param);
  for (char& ch : s) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return s;
}

INSTANTIATE_TEST_SUITE_P(Live, Onednn, ::testing::ValuesIn(Cases()), CaseName);

TEST(OnednnVersion, Reported) {
  const dnnl_version_t* v = dnnl_version();
  std::printf("oneDNN %d.%d.%d (%s), cpu runtime %u, isa %d\n", v->major, v->minor, v->patch,
              v->hash, v->cpu_runtime, static_cast<int>(dnnl::get_effective_cpu_isa()));
}

#else  // !RELUGRAD_HAVE_ONEDNN

TEST(Onednn, ReluBackwardMatchesPreset) {
  GTEST_SKIP()
      << "oneDNN missing or unusable at configure time (the configure printed why): "
         "install it with `scripts/install-deps.sh onednn` (make deps does) and reconfigure";
}

#endif

}  // namespace
