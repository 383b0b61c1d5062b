// The framework presets (their names are in names.cc).
// Which framework/device each preset reproduces is in docs/semantics.md,
// "Presets"; how each was confirmed, in "What the frameworks compute".
#include <cstring>
#include <limits>

#include "core/error.h"
#include "relugrad/relugrad.h"

extern "C" {

relugrad_status relugrad_options_init(relugrad_options* options, relugrad_preset preset) {
  using relugrad::Fail;
  if (options == nullptr) return Fail(RELUGRAD_INVALID_ARGUMENT, "options is NULL");
  relugrad_options o;
  std::memset(&o, 0, sizeof(o));
  o.struct_size = sizeof(o);
  o.threshold = 0.0;
  o.alpha = 0.0;
  o.threads = 0;
  o.backend = RELUGRAD_BACKEND_CPU;
  o.stores = RELUGRAD_STORES_AUTO;
  o.gate_max = std::numeric_limits<double>::infinity();  // no upper bound
  o.denormals = RELUGRAD_DENORMALS_IEEE;
  o.threshold_rounding = RELUGRAD_THRESHOLD_COMPUTE;
  switch (preset) {
    case RELUGRAD_PRESET_TORCH:  // aten::threshold_backward: self <= t ? 0 : grad
      o.gate = RELUGRAD_GATE_ZERO_IF_LE;
      o.combine = RELUGRAD_COMBINE_SELECT;
      break;
    case RELUGRAD_PRESET_TENSORFLOW:  // Eigen: gradients * (features > 0), FTZ/DAZ threads
      o.gate = RELUGRAD_GATE_PASS_IF_GT;
      o.combine = RELUGRAD_COMBINE_MULTIPLY;
      o.denormals = RELUGRAD_DENORMALS_FTZ_DAZ;
      break;
    case RELUGRAD_PRESET_JAX:  // select(x > 0, g, 0) from the VJP of jax.nn.relu
      o.gate = RELUGRAD_GATE_PASS_IF_GT;
      o.combine = RELUGRAD_COMBINE_SELECT;
      // Measured (jax 0.10.2 CPU, eager and jit, f32/f64/bf16): XLA CPU compares
      // a subnormal x as 0 (DAZ); the selected dy bits are not flushed.
      // Evidence: docs/semantics.md, "What the frameworks compute";
      // python/compat/probe.py.
      o.denormals = RELUGRAD_DENORMALS_FTZ_DAZ;
      break;
    case RELUGRAD_PRESET_ONEDNN:  // eltwise_relu bwd: s > 0 ? dd : dd * alpha (JIT multiplies)
      // Measured (Debian oneDNN 2.6.3, jit:avx512_core/avx2/sse41, f32 and bf16,
      // src and use_dst_for_bwd): the JIT opens the gate for a NaN s, i.e.
      // closed iff s <= 0. Evidence: tests/onednn/onednn_test.cc, docs/semantics.md,
      // "What the frameworks compute".
      o.gate = RELUGRAD_GATE_ZERO_IF_LE;
      o.combine = RELUGRAD_COMBINE_MULTIPLY;
      break;
    case RELUGRAD_PRESET_MINDSPORE:
      // Measured (MindSpore 2.10 CPU ReluGrad, f32/f16/f64): select(y > 0, dy, 0)
      // with IEEE subnormals. Evidence: docs/semantics.md, "What the frameworks
      // compute"; tests/golden (mindspore rows).
      o.gate = RELUGRAD_GATE_PASS_IF_GT;
      o.combine = RELUGRAD_COMBINE_SELECT;
      break;
    // CANN (Ascend ops-nn, read at hicann/ops-nn e5c3fa93; docs/ascend.md).
    // Each preset follows the kernel's computation graph, which is what the
    // NPU runs; where the operator's own golden script says otherwise it is
    // documented and tested (python/tests/test_cann_presets.py).
    case RELUGRAD_PRESET_CANN_RELUGRAD:
      // activation/relu_grad/op_kernel/arch35/relu_grad_dag.h: Compare(s, 0, LE)
      // selects a factor 0 or 1, then Mul(dy, factor): a NaN s compares false
      // and gets factor 1 (open), unlike TensorFlow's features > 0 that the
      // comment and golden.py follow.
      o.gate = RELUGRAD_GATE_ZERO_IF_LE;
      o.combine = RELUGRAD_COMBINE_MULTIPLY;
      break;
    case RELUGRAD_PRESET_CANN_RELUGRAD_V2:
      // relu_v2_dag.h: mask = Compare(x, 0, GT) (NaN -> 0); relu_grad_v2_dag.h:
      // Select(mask, dy, 0).
      o.gate = RELUGRAD_GATE_PASS_IF_GT;
      o.combine = RELUGRAD_COMBINE_SELECT;
      break;
    case RELUGRAD_PRESET_CANN_THRESHOLD_GRAD:
      // threshold_grad_v2_d_dag.h: cast to f32, Compare(s, t, LE) against the
      // f32 threshold attribute, Select(cmp, 0, dy), cast back.
      o.gate = RELUGRAD_GATE_ZERO_IF_LE;
      o.combine = RELUGRAD_COMBINE_SELECT;
      break;
    case RELUGRAD_PRESET_CANN_RELUGRAD_V2_HP:
      // TBE ReluGradV2 (impl/dynamic/relu_grad_v2.py), f32 in high-performance
      // mode on SoCs without vcopy: factor = vsel(mask, 1, 0), vmul(factor, dy).
      o.gate = RELUGRAD_GATE_PASS_IF_GT;
      o.combine = RELUGRAD_COMBINE_MULTIPLY;
      break;
    default:
      return Fail(RELUGRAD_INVALID_ARGUMENT, "preset %d is not a relugrad_preset",
                  static_cast<int>(preset));
  }
  *options = o;
  return RELUGRAD_OK;
}

size_t relugrad_dtype_size(relugrad_dtype dtype) {
  switch (dtype) {
    case RELUGRAD_F16:
    case RELUGRAD_BF16:
      return 2;
    case RELUGRAD_F32:
      return 4;
    case RELUGRAD_F64:
      return 8;
  }
  return 0;
}

}  // extern "C"
