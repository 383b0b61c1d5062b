// Peer driver: oneDNN's eltwise backward relu (Debian libdnnl 2.6), timed
// the way `relugrad bench` times (relugrad/timer.hpp: warm-up, batches,
// median; rotating operand sets in cold mode) and printed in its JSON
// schema, so bench/report.py can put it next to relugrad and the triads.
//
//   onednn_relu_bwd --dtype f32,bf16 --sizes 4096,65536 --threads 1,2 [--min-time 0.2] [--warm]
//
// One primitive is created per point (creation is not timed); each call is
// execute() + stream.wait(), what a framework integration pays per call.
// `relugrad_onednnbuf` is relugrad (onednn preset) on the same buffers, timed
// right after, as a control for this process's page placement.
// Threads: libdnnl here uses OpenMP, set with omp_set_num_threads().
#include <omp.h>

#include <cstdio>
#include <string>
#include <vector>

#include "dnnl.hpp"
#include "peer_driver.h"
#include "relugrad/relugrad.h"

int main(int argc, char** argv) {
  const peer::Args args = peer::ParseArgs(argc, argv, "onednn_relu_bwd");
  using namespace dnnl;
  engine eng(engine::kind::cpu, 0);
  stream strm(eng);
  const dnnl_version_t* v = dnnl_version();
  char version[64];
  std::snprintf(version, sizeof(version), "onednn-%d.%d.%d", v->major, v->minor, v->patch);
  for (const std::string& dt : peer::Split(args.dtypes)) {
    memory::data_type type;
    if (dt == "f32")
      type = memory::data_type::f32;
    else if (dt == "bf16")
      type = memory::data_type::bf16;
    else if (dt == "f16")
      type = memory::data_type::f16;
    else {
      std::fprintf(stderr, "onednn_relu_bwd: unknown dtype %s\n", dt.c_str());
      return 1;
    }
    for (const std::string& size : peer::Split(args.sizes)) {
      const long long n = peer::ParseSize(size);
      peer::Operands ops(n, dt, args);  // src = s, diff_dst = dy, diff_src = dx
      if (!ops.ok()) {
        std::fprintf(stderr, "onednn_relu_bwd: out of memory at n=%lld\n", n);
        return 1;
      }
      const int sets = ops.sets;
      const memory::desc md({n}, type, memory::format_tag::a);
      eltwise_backward prim;
      try {
        auto fwd_pd = eltwise_forward::primitive_desc(
            eltwise_forward::desc(prop_kind::forward_training, algorithm::eltwise_relu, md, 0.f,
                                  0.f),
            eng);
        auto bwd_pd = eltwise_backward::primitive_desc(
            eltwise_backward::desc(algorithm::eltwise_relu, md, md, 0.f, 0.f), eng, fwd_pd);
        prim = eltwise_backward(bwd_pd);
      } catch (const dnnl::error& e) {
        std::fprintf(stderr, "onednn_relu_bwd: %s n=%lld unsupported here: %s\n", dt.c_str(), n,
                     e.what());
        break;
      }
      std::vector<memory> m_src, m_ddst, m_dsrc;
      for (int k = 0; k < sets; ++k) {
        m_src.emplace_back(md, eng, ops.s_at(k));
        m_ddst.emplace_back(md, eng, ops.dy_at(k));
        m_dsrc.emplace_back(md, eng, ops.dx_at(k));
      }
      for (const std::string& ts : peer::Split(args.threads)) {
        const int t = std::atoi(ts.c_str());
        omp_set_num_threads(t);
        int k = 0;
        peer::TimeAndPrint("onednn", "onednn", version, dt, n, t, sets, args, "onednn_relu_bwd",
                           [&] {
                             prim.execute(strm, {{DNNL_ARG_SRC, m_src[k]},
                                                 {DNNL_ARG_DIFF_DST, m_ddst[k]},
                                                 {DNNL_ARG_DIFF_SRC, m_dsrc[k]}});
                             strm.wait();
                             k = k + 1 == sets ? 0 : k + 1;
                           });
        // Control: relugrad on the very same buffers, right after (pages
        // land differently per process; docs/design.md, "Measurement flaws").
        relugrad_options o;
        relugrad_options_init(&o, RELUGRAD_PRESET_ONEDNN);
        o.threads = t;
        const relugrad_dtype rd = dt == "f32"    ? RELUGRAD_F32
                                  : dt == "bf16" ? RELUGRAD_BF16
                                                 : RELUGRAD_F16;
        char rg_version[64];
        std::snprintf(rg_version, sizeof(rg_version), "relugrad-%s", relugrad_version());
        k = 0;
        peer::TimeAndPrint("relugrad_onednnbuf", "onednn", rg_version, dt, n, t, sets, args,
                           "onednn_relu_bwd", [&] {
                             relugrad_relu_grad(rd, n, ops.dy_at(k), ops.s_at(k), ops.dx_at(k), &o);
                             k = k + 1 == sets ? 0 : k + 1;
                           });
      }
    }
  }
  return 0;
}
