#!/usr/bin/env bash
# Every GPU check in one run, for a GPU machine lent for minutes whose image has nvcc, PyTorch
# (CUDA), CMake and ninja but not relugrad's Debian build dependencies (bench/gpu/check.sh is the
# script for a machine that has them). Prepare first, here: bench/gpu/prepare_lent.sh writes .gpu/,
# which travels with the working tree. From the repository root on the GPU machine:
#   bench/gpu/lent_machine.sh                 # everything, ~6 minutes on an H200
#   PARTS=tests,python bench/gpu/lent_machine.sh
# Parts, in this order (PARTS selects; default all):
#   tests   the CUDA device test programs (built here; every device case must run, not skip)
#   wheel   the Python package built there for its Python and torch, with the CUDA backend
#           (started first, in the background, while the device tests run)
#   bench   relugrad vs cuDNN's activation backward vs a device-to-device copy, 64K..1G elements,
#           and the unroll A/B (bench/gpu/gpu_bench.cc)
#   python  the CUDA tests of the Python package (python/tests/test_cuda.py and the API files)
#   torch   bench/gpu/torch_bench.py: the torch preset against threshold_backward bit for bit, and
#           threshold_backward's throughput
#   use     bench/gpu/torch_point_of_use.py: relugrad.torch on CUDA tensors against nn.ReLU (bits in
#           four layouts, the mask forward's y, models, module and whole-step time, peak memory)
#   cpu     python -m bench.torch report on the machine's own CPU: CPU_ARGS (default --quick), parts
#           CPU_PARTS (default module,steps,memory), stopped after CPU_TIMEOUT seconds (default 300)
# Results: $OUT/summary.log as it goes and $OUT/logs.tgz (every log, the CSV, the JSON, the table)
# after each part; without OUT, bench/results/lent-<UTC time>/. Exit status 1 if a part failed.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
G="${PREBUILT:-$ROOT/.gpu}"
PARTS=",${PARTS:-tests,wheel,bench,python,torch,use,cpu},"
SIZES="${SIZES:-64K,256K,1M,4M,16M,64M,256M,1G}"
DTYPES="${DTYPES:-f32,f16,bf16}"
RES="$(mktemp -d /tmp/lent.XXXXXX)"
DEST="${OUT:-$ROOT/bench/results/lent-$(date -u +%Y%m%d-%H%M%SZ)}"
mkdir -p "$DEST"
SUMMARY="$DEST/summary.log"
STATUS=0
export PATH="/usr/local/cuda/bin:$PATH" PYTHONUNBUFFERED=1
export LD_LIBRARY_PATH="$G/deps/usr/lib/x86_64-linux-gnu:$G/bin:${LD_LIBRARY_PATH:-}"

log() { echo "[lent +${SECONDS}s] $*" | tee -a "$SUMMARY"; }
fail() { log "FAILED: $*"; STATUS=1; }
pack() { tar -C "$RES" -czf "$DEST/logs.tgz" . 2> /dev/null; }
want() { [[ "$PARTS" == *",$1,"* ]]; }

{
  echo "date: $(date -u +%FT%TZ)"
  echo "commit: $(git rev-parse HEAD 2> /dev/null) ($(git status --porcelain 2> /dev/null | wc -l) paths differ)"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.memory,clocks.max.sm --format=csv 2>&1
  echo "nvcc: $(nvcc --version 2>&1 | tail -1)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2) x $(nproc)"
  echo "cpu flags: $(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^avx512(f|_fp16|bw)$|^amx' | tr '\n' ' ')"
} 2>&1 | tee "$RES/env.txt" | tee -a "$SUMMARY"

PY=""
for cand in "${PYTHON:-}" python3; do
  [[ -n "$cand" ]] && "$cand" -c 'import torch' 2> /dev/null && { PY="$cand"; break; }
done
[[ -n "$PY" ]] && log "python: $PY, torch $("$PY" -c 'import torch; print(torch.__version__, torch.cuda.is_available())')" ||
  log "no python with torch: the Python parts are skipped"

SITE=/tmp/lent-site
WHEEL_PID=""
if want wheel && [[ -n "$PY" ]]; then
  # Highway's pkg-config file names /usr; here it lives under .gpu/deps.
  sed -i "s|^prefix=.*|prefix=$G/deps/usr|" "$G"/deps/usr/lib/x86_64-linux-gnu/pkgconfig/*.pc
  log "wheel: building in the background (CUDA backend, torch-native as the build decides)"
  (
    export PKG_CONFIG="$G/deps/usr/bin/pkgconf" PKG_CONFIG_PATH="$G/deps/usr/lib/x86_64-linux-gnu/pkgconfig"
    export CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)"
    rm -rf /tmp/lent-dist "$SITE"
    "$PY" -m pip wheel -v --no-build-isolation --no-deps -C build-dir=/tmp/lent-wheel \
      -C cmake.define.RELUGRAD_CUDA=ON -w /tmp/lent-dist . &&
      "$PY" -m pip install -q --no-deps --no-compile --target "$SITE" /tmp/lent-dist/*.whl
  ) > "$RES/wheel.log" 2>&1 &
  WHEEL_PID=$!
fi

if want tests; then
  log "tests: CUDA device test programs"
  for t in cuda_backend_test cuda_mask_device_test; do
    timeout 200 "$G/bin/$t" > "$RES/$t.log" 2>&1 || fail "$t (rc $?)"
    # The counts, then each failed test and each skipped device test (only the no-device case may skip).
    grep -E "^\[==========\] .* ran|^\[  (PASSED  |FAILED  |SKIPPED )\] [0-9]+ tests?" "$RES/$t.log" | tee -a "$SUMMARY"
    grep -E "^\[  (FAILED  |SKIPPED )\] [A-Za-z0-9_/]+\.[A-Za-z0-9_/]+ \(" "$RES/$t.log" |
      grep -v NoDeviceIsUnsupported | tee -a "$SUMMARY"
  done
  pack
fi

if [[ -n "$WHEEL_PID" ]]; then
  wait "$WHEEL_PID" && log "wheel: built and installed in $SITE" || fail "wheel (see wheel.log)"
  grep -E "torch-native|CUDA backend|error:|Error " "$RES/wheel.log" | head -8 | tee -a "$SUMMARY"
  pack
fi

CUDNN_LIB=""
[[ -n "$PY" ]] && CUDNN_LIB="$("$PY" -c 'import nvidia.cudnn as c, os; print(os.path.join(list(c.__path__)[0], "lib"))' 2> /dev/null)"
if want bench; then
  log "bench: relugrad / cuDNN / copy, sizes $SIZES, dtypes $DTYPES"
  LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$CUDNN_LIB" timeout 150 "$G/bin/relugrad_gpu_bench" --sizes "$SIZES" \
    --dtypes "$DTYPES" --csv "$RES/results.csv" --probe-cudnn > "$RES/bench.log" 2>&1 || fail "relugrad_gpu_bench (rc $?)"
  grep -E "^device|cudnn semantics" "$RES/bench.log" | tee -a "$SUMMARY"
  RELUGRAD_CUDA_UNROLL=1 LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$CUDNN_LIB" timeout 90 "$G/bin/relugrad_gpu_bench" \
    --sizes 1M,64M,256M,1G --dtypes "$DTYPES" --csv "$RES/results.csv" --impls relugrad_torch,relugrad_tensorflow \
    --tag _u1 > "$RES/bench_unroll1.log" 2>&1 || fail "relugrad_gpu_bench unroll 1 (rc $?)"
  pack
fi

if want python && [[ -d "$SITE/relugrad" ]]; then
  log "python: the package's CUDA tests"
  PYTHONPATH="$SITE" timeout 180 "$PY" -m pytest -p no:cacheprovider -q -rs python/tests/test_cuda.py \
    python/tests/test_api.py python/tests/test_mask.py python/tests/test_torch_fallback.py > "$RES/pytest.log" 2>&1 ||
    fail "pytest (see pytest.log)"
  tail -4 "$RES/pytest.log" | tee -a "$SUMMARY"
  grep -E "^(FAILED|ERROR)" "$RES/pytest.log" | head -20 | tee -a "$SUMMARY"
  pack
fi

if want torch && [[ -n "$PY" ]]; then
  log "torch: the torch preset against threshold_backward, and threshold_backward's throughput"
  timeout 150 "$PY" bench/gpu/torch_bench.py --lib "$G/bin/librelugrad.so.0" --csv "$RES/results.csv" \
    --log "$RES/exactness.log" --sizes "$SIZES" --dtypes "$DTYPES" > "$RES/torch.log" 2>&1 || fail "torch_bench.py (rc $?)"
  grep -E "^(torch |exact|info|exactness)" "$RES/torch.log" | tee -a "$SUMMARY"
  pack
fi

if [[ -f "$RES/results.csv" ]]; then
  python3 bench/gpu/report.py "$RES/results.csv" > "$RES/table.md" 2>&1 || fail "report.py"
  cat "$RES/table.md" >> "$SUMMARY"
  pack
fi

if want use && [[ -d "$SITE/relugrad" ]]; then
  log "use: relugrad.torch on CUDA tensors against nn.ReLU"
  PYTHONPATH="$SITE" timeout "${USE_TIMEOUT:-240}" "$PY" bench/gpu/torch_point_of_use.py --out "$RES" \
    ${USE_ARGS:-} 2>&1 | grep -v -E "Warning|warn" | tee "$RES/use.log" | tee -a "$SUMMARY"
  [[ "${PIPESTATUS[0]}" == 0 ]] || fail "torch_point_of_use.py (see use.log)"
  pack
fi

if want cpu && [[ -d "$SITE/relugrad" ]]; then
  log "cpu: relugrad.torch against stock PyTorch on this machine's CPU (python -m bench.torch report ${CPU_ARGS:---quick})"
  PYTHONPATH="$SITE" "$PY" -c 'import relugrad, relugrad.torch as rt; print(relugrad.format_info()); print("native:", rt.NATIVE_STATUS)' \
    2>&1 | grep -E "simd|isa|native|cpu" | tee -a "$SUMMARY"
  PYTHONPATH="$SITE" timeout "${CPU_TIMEOUT:-300}" "$PY" -m bench.torch report ${CPU_ARGS:---quick} \
    --parts "${CPU_PARTS:-module,steps,memory}" --out "$RES/cpu_report" > "$RES/cpu.log" 2>&1 || fail "bench.torch report (rc $?)"
  [[ -f "$RES/cpu_report.md" ]] && cat "$RES/cpu_report.md" >> "$SUMMARY"
  pack
fi

log "done, status $STATUS"
pack
exit "$STATUS"
