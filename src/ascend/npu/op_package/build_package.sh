#!/bin/bash
# Builds and installs the ReluGradCustom operator package (UNTESTED: needs a
# CANN toolkit; run after `source $ASCEND_HOME_PATH/set_env.sh`).
#   src/ascend/npu/op_package/build_package.sh [Ascend910B3] [outdir]
set -euo pipefail
soc="${1:-Ascend910B3}"
out="${2:-build/ascend_op_package}"
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../../.." && pwd)"
soc_lower="$(echo "$soc" | tr 'A-Z' 'a-z')"
rm -rf "$out"
msopgen gen -i "$here/ReluGradCustom.json" -c "ai_core-${soc}" -lan cpp -out "$out"
cp "$here/op_host/relu_grad_custom.cpp" "$out/op_host/"
cp "$here/op_kernel/relu_grad_custom.cpp" "$out/op_kernel/"
# The kernel body and the tiling struct travel with the kernel sources.
cp "$root/src/ascend/kernel/relu_grad_kernel.h" "$root/src/ascend/kernel/relu_grad_tiling.h" "$out/op_kernel/"
# The host tiling needs relugrad's semantics, reference and work plan.
cat >> "$out/op_host/CMakeLists.txt" <<CMAKE
target_sources(cust_optiling PRIVATE
  $root/src/ascend/host/relu_grad_tiling_host.cc $root/src/api/presets.cc $root/src/api/names.cc
  $root/src/core/error.cc $root/src/core/float_convert.cc $root/src/core/gate_keys.cc
  $root/src/core/reference.cc $root/src/core/rules.cc $root/src/core/semantics.cc
  $root/src/core/work_plan.cc)
target_include_directories(cust_optiling PRIVATE $root/src $root/include $root/src/ascend/kernel)
CMAKE
(cd "$out" && ./build.sh)
echo "install with: $out/build_out/custom_opp_*.run"
