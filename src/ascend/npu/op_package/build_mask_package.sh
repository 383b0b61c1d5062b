#!/bin/bash
# Builds the ReluV2Custom / ReluGradV2Custom (flat mask) and
# ReluV2BlockedCustom / ReluGradV2BlockedCustom (910B blocked mask) operator
# package (UNTESTED: needs a CANN toolkit; run after
# `source $ASCEND_HOME_PATH/set_env.sh`).
#   src/ascend/npu/op_package/build_mask_package.sh [Ascend910B3] [outdir]
set -euo pipefail
soc="${1:-Ascend910B3}"
out="${2:-build/ascend_mask_op_package}"
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../../.." && pwd)"
rm -rf "$out"
# msopgen takes one definition file: the flat and the blocked ops' arrays, joined.
ops_json="$(mktemp --suffix=.json)"
trap 'rm -f "$ops_json"' EXIT
python3 - "$here/ReluMaskCustom.json" "$here/ReluMaskBlockedCustom.json" > "$ops_json" <<'PY'
import json, sys
print(json.dumps([op for path in sys.argv[1:] for op in json.load(open(path))], indent=2))
PY
msopgen gen -i "$ops_json" -c "ai_core-${soc}" -lan cpp -out "$out"
cp "$here/op_host/relu_mask_custom.cpp" "$here/op_host/relu_mask_blocked_custom.cpp" "$out/op_host/"
cp "$here/op_kernel/relu_mask_custom.cpp" "$here/op_kernel/relu_mask_blocked_custom.cpp" \
   "$out/op_kernel/"
# The kernel bodies and tiling structs travel with the kernel sources.
cp "$root/src/ascend/kernel/relu_grad_kernel.h" "$root/src/ascend/kernel/relu_grad_tiling.h" \
   "$root/src/ascend/kernel/relu_v2_kernel.h" "$root/src/ascend/kernel/relu_v2_tiling.h" \
   "$root/src/ascend/kernel/relu_v2_tile.h" "$root/src/ascend/kernel/relu_v2_flat.h" \
   "$root/src/ascend/kernel/relu_v2_blocked_nchw.h" "$root/src/ascend/kernel/relu_v2_blocked_nhwc.h" \
   "$out/op_kernel/"
# The host tiling needs relugrad's preset names, option rules, semantics and
# the ReluGrad gate derivation (the set the tiling calls link against).
cat >> "$out/op_host/CMakeLists.txt" <<CMAKE
target_sources(cust_optiling PRIVATE
  $root/src/ascend/host/relu_v2_tiling_host.cc $root/src/ascend/host/relu_grad_tiling_host.cc
  $root/src/api/presets.cc $root/src/api/names.cc $root/src/core/error.cc
  $root/src/core/float_convert.cc $root/src/core/gate_keys.cc $root/src/core/reference.cc
  $root/src/core/rules.cc $root/src/core/semantics.cc $root/src/core/work_plan.cc)
target_include_directories(cust_optiling PRIVATE $root/src $root/include $root/src/ascend/kernel)
CMAKE
(cd "$out" && ./build.sh)
echo "install with: $out/build_out/custom_opp_*.run"
