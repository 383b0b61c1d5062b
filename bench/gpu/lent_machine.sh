#!/usr/bin/env bash
# Every GPU check of the CUDA backend in one run, for a GPU machine lent for minutes whose image has
# nvcc, PyTorch (CUDA), CMake and ninja but not relugrad's Debian build dependencies
# (bench/gpu/check.sh is the script for a machine that has them). Prepare first, here, after
# `make build`: bench/gpu/prepare_lent.sh writes build/gpu-lent/ (the device test programs, the
# benchmark driver and librelugrad.so built here for sm_90, and Highway for the wheel), which
# travels as a carried path (the device tool's carry: ["build/gpu-lent"]). Then, from the repository root on the GPU machine:
#   QUICK=1 bench/gpu/lent_machine.sh     # smoke run: small sizes, no A/B beyond 2 sizes, < 3 min
#   bench/gpu/lent_machine.sh             # the full run, < 8 min
#   PARTS=tests,bench bench/gpu/lent_machine.sh
# Parts, in this order (PARTS selects; default all but cpu). Each is fail-soft: a part that fails
# or times out is logged as FAILED and the next one still runs and writes its results.
#   wheel   the Python package built there for its Python and torch, with the CUDA backend
#           (started first, in the background, while the C++ parts run)
#   tests   the CUDA device test programs (every device case must run, not skip), in the default
#           geometry, and in the full run also under RELUGRAD_CUDA_GEOMETRY=gridstride and pipelined
#   bench   the kernel table: relugrad (torch and tensorflow presets, mask backward and forward)
#           vs cuDNN's activation backward vs a device-to-device copy (bench/gpu/gpu_bench.cc)
#   ab      the launch-geometry A/B: the relugrad rows again with RELUGRAD_CUDA_GEOMETRY=gridstride
#           (tag _gs; RELUGRAD_CUDA_UNROLL=1: _gsu1) and =pipelined (_pipe)
#   torch   bench/gpu/torch_bench.py: the torch preset against threshold_backward bit for bit
#           (exactness.log), and threshold_backward's rows for the kernel table
#   python  the CUDA tests of the Python package (test_cuda.py, torch_modules/test_native_cuda.py, ...)
#   use     the point-of-use table: bench/gpu/torch_point_of_use.py (relugrad.torch on CUDA tensors
#           against nn.ReLU: bits, models, module and whole-step time, peak memory)
#   compiled  python -m bench.torch compile-memory --device cuda: compiled training with
#           replace_relu(mask=True) (saved booleans as bits, Triton code) against compiled stock:
#           saved bytes, CUDA peak, step and compile time, the same bits (compile_memory.json)
#   cpu     python -m bench.torch report on the machine's own CPU (not in the default PARTS)
# Time: BUDGET seconds in all (QUICK 200, full 520): each part's timeout is cut to what is left,
# and a part with under 10 s left is skipped and logged as FAILED.
# Results: one folder, <gpu>/ (h100, h200, ...; h100-quick for QUICK=1; RESULTS_NAME overrides):
# $OUT/<gpu>/ when OUT is set (the device tool's output folder: copy it to docs/results/<gpu>/
# here), else docs/results/<gpu>/. It holds env.txt, summary.log, table.md (report.py: the kernel
# table, the mask table, the A/B and the targets), results.csv, exactness.log, point_of_use.json
# and logs.tgz (every log), rewritten after each part. Exit status 1 if a part failed.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT" || exit 1
G="${PREBUILT:-$ROOT/build/gpu-lent}"
QUICK="${QUICK:-0}"
PARTS=",${PARTS:-wheel,tests,bench,ab,torch,python,use,compiled},"
if [[ "$QUICK" == 1 ]]; then
  SIZES="${SIZES:-64K,1M,16M}"
  AB_SIZES="${AB_SIZES:-1M,16M}"
  AB_DTYPES="${AB_DTYPES:-f32,bf16}"
  USE_ARGS="${USE_ARGS:---quick --parts bits,kernels,module --rounds 3}"
  PY_TESTS="${PY_TESTS:-python/tests/test_cuda.py python/tests/torch_modules/test_native_cuda.py}"
  BUDGET="${BUDGET:-200}"
  COMPILED_ARGS="${COMPILED_ARGS:---models mlp_dropout-b2048 --rounds 3 --steps 2 --compile-rounds 1}"
  T_TESTS=60 T_BENCH=40 T_AB=20 T_TORCH=40 T_PY=60 T_USE=60 T_COMPILED=60
else
  SIZES="${SIZES:-64K,256K,1M,4M,16M,64M,256M,1G}"
  AB_SIZES="${AB_SIZES:-1M,16M,64M,256M}"
  AB_DTYPES="${AB_DTYPES:-f32,bf16}"
  USE_ARGS="${USE_ARGS:-}"
  PY_TESTS="${PY_TESTS:-python/tests/test_cuda.py python/tests/test_api.py python/tests/test_mask.py python/tests/torch_modules/test_native_cuda.py python/tests/torch_modules/test_stock_path_and_fallbacks.py}"
  BUDGET="${BUDGET:-520}"
  COMPILED_ARGS="${COMPILED_ARGS:---models transformer,mlp_dropout-b2048 --rounds 7 --steps 3 --compile-rounds 2}"
  T_TESTS=100 T_BENCH=120 T_AB=40 T_TORCH=90 T_PY=120 T_USE=150 T_COMPILED=120
fi
DTYPES="${DTYPES:-f32,f16,bf16}"
export PATH="/usr/local/cuda/bin:$PATH" PYTHONUNBUFFERED=1
export LD_LIBRARY_PATH="$G/deps/usr/lib/x86_64-linux-gnu:$G/bin:${LD_LIBRARY_PATH:-}"
unset RELUGRAD_CUDA_GEOMETRY RELUGRAD_CUDA_UNROLL  # the default geometry unless a part sets one

GPU="$(nvidia-smi --query-gpu=name --format=csv,noheader 2> /dev/null | head -1)"
case "$GPU" in
  *H100*) SLUG=h100 ;;
  *H200*) SLUG=h200 ;;
  "") SLUG=nogpu ;;
  *) SLUG="$(echo "$GPU" | tr '[:upper:]' '[:lower:]' | tr -c 'a-z0-9\n' '-' | sed 's/^nvidia-//; s/-*$//')" ;;
esac
[[ "$QUICK" == 1 ]] && SLUG="$SLUG-quick"
NAME="${RESULTS_NAME:-$SLUG}"
DEST="${OUT:+$OUT/$NAME}"
DEST="${DEST:-$ROOT/docs/results/$NAME}"
RES="$(mktemp -d /tmp/lent.XXXXXX)"
mkdir -p "$DEST"
SUMMARY="$DEST/summary.log"
: > "$SUMMARY"
STATUS=0

log() { echo "[lent +${SECONDS}s] $*" | tee -a "$SUMMARY"; }
fail() { log "FAILED: $*"; STATUS=1; }
want() { [[ "$PARTS" == *",$1,"* ]]; }
# The time a part may take: its own limit, cut to what is left of BUDGET (seconds since the start;
# the run must end inside the device tool's command limit). 0 when under 10 s are left.
limit() {
  local left=$((BUDGET - SECONDS))
  ((left < 10)) && { echo 0; return; }
  echo $(($1 < left ? $1 : left))
}
# budget_ok NAME LIMIT: false (and the part logged as FAILED) when the budget is spent.
budget_ok() {
  if (($2 == 0)); then
    fail "$1: skipped, the time budget ($BUDGET s) is spent"
    return 1
  fi
}
# The results folder after each part: the few files that come back whole, and every log packed.
publish() {
  for f in results.csv exactness.log table.md point_of_use.json compile_memory.json; do
    [[ -f "$RES/$f" ]] && cp "$RES/$f" "$DEST/"
  done
  tar -C "$RES" -czf "$DEST/logs.tgz" . 2> /dev/null
}
table() {
  [[ -f "$RES/results.csv" ]] || return 0
  python3 bench/gpu/report.py "$RES/results.csv" > "$RES/table.md" 2>&1 || fail "report.py"
}

{
  echo "date: $(date -u +%FT%TZ)"
  echo "commit: $(git rev-parse HEAD 2> /dev/null) ($(git status --porcelain 2> /dev/null | wc -l) paths differ)"
  echo "mode: $([[ "$QUICK" == 1 ]] && echo QUICK || echo full), parts ${PARTS//,/ }"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.memory,clocks.max.sm --format=csv 2>&1
  echo "nvcc: $(nvcc --version 2>&1 | tail -1)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2) x $(nproc)"
} 2>&1 | tee "$RES/env.txt" "$DEST/env.txt" >> "$SUMMARY"

PY=""
for cand in "${PYTHON:-}" python3; do
  [[ -n "$cand" ]] && "$cand" -c 'import torch' 2> /dev/null && { PY="$cand"; break; }
done
if [[ -n "$PY" ]]; then
  log "python: $PY, torch $("$PY" -c 'import torch; print(torch.__version__, "cuda", torch.version.cuda, "available", torch.cuda.is_available())')"
else
  log "no python with torch: the Python parts are skipped"
fi
[[ -x "$G/bin/relugrad_gpu_bench" ]] || log "no $G/bin (run bench/gpu/prepare_lent.sh here and carry build/gpu-lent): tests, bench and ab cannot run"

SITE=/tmp/lent-site
WHEEL_PID=""
if want wheel && [[ -n "$PY" ]]; then
  # Highway's pkg-config file names /usr; here it lives under build/gpu-lent/deps.
  sed -i "s|^prefix=.*|prefix=$G/deps/usr|" "$G"/deps/usr/lib/x86_64-linux-gnu/pkgconfig/*.pc 2> /dev/null
  log "wheel: building in the background (CUDA backend and the torch-native library, both required)"
  (
    export PKG_CONFIG="$G/deps/usr/bin/pkgconf" PKG_CONFIG_PATH="$G/deps/usr/lib/x86_64-linux-gnu/pkgconfig"
    CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)"
    export CMAKE_BUILD_PARALLEL_LEVEL
    rm -rf /tmp/lent-dist "$SITE"
    # timeout stops the whole build (its process group) 60 s before the budget's end.
    timeout "$((BUDGET - 60 > 30 ? BUDGET - 60 : 30))" \
      "$PY" -m pip wheel -v --no-build-isolation --no-deps -C build-dir=/tmp/lent-wheel \
      -C cmake.define.RELUGRAD_CUDA=ON -C cmake.define.RELUGRAD_TORCH_NATIVE=ON -w /tmp/lent-dist . &&
      "$PY" -m pip install -q --no-deps --no-compile --target "$SITE" /tmp/lent-dist/*.whl
  ) > "$RES/wheel.log" 2>&1 &
  WHEEL_PID=$!
fi

if want tests; then
  # The default geometry with every case; in the full run also the loop geometries (the
  # environment picks one per process), without the 4 GiB-per-array case.
  GEOMETRIES="oneshot"
  [[ "$QUICK" == 1 ]] || GEOMETRIES="oneshot gridstride pipelined"
  for geometry in $GEOMETRIES; do
    log "tests: CUDA device test programs, RELUGRAD_CUDA_GEOMETRY=$geometry"
    filter="*"
    [[ "$geometry" == oneshot ]] || filter="-*MoreThan2To31Elements*"
    for t in cuda_backend_test cuda_mask_device_test; do
      lim=$(limit "$T_TESTS")
      budget_ok "$t, $geometry" "$lim" || continue
      RELUGRAD_CUDA_GEOMETRY=$geometry timeout "$lim" "$G/bin/$t" --gtest_filter="$filter" \
        > "$RES/${t}_$geometry.log" 2>&1 || fail "$t, $geometry (rc $?)"
      # The counts, then each failed test and each skipped device test (only the no-device case may skip).
      grep -E "^\[==========\] .* ran|^\[  (PASSED  |FAILED  |SKIPPED )\] [0-9]+ tests?" "$RES/${t}_$geometry.log" | tee -a "$SUMMARY"
      skipped="$(grep -E "^\[  SKIPPED \] [A-Za-z0-9_/]+\.[A-Za-z0-9_/]+ \(" "$RES/${t}_$geometry.log" |
        grep -v -E "NoDeviceIsUnsupported|MoreThan2To31Elements")"
      grep -E "^\[  FAILED  \] [A-Za-z0-9_/]+\.[A-Za-z0-9_/]+ \(" "$RES/${t}_$geometry.log" | tee -a "$SUMMARY"
      if [[ -n "$skipped" ]]; then
        echo "$skipped" >> "$SUMMARY"
        fail "$t, $geometry: device cases skipped (no usable device? see the log's skip reasons)"
      fi
    done
    publish
  done
fi

CUDNN_LIB=""
[[ -n "$PY" ]] && CUDNN_LIB="$("$PY" -c 'import nvidia.cudnn as c, os; print(os.path.join(list(c.__path__)[0], "lib"))' 2> /dev/null)"
bench() {  # bench LOG TIMEOUT ARGS...: the driver, appending to results.csv
  local name="$1" lim
  lim=$(limit "$2")
  shift 2
  budget_ok "$name" "$lim" || return 1
  LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$CUDNN_LIB" timeout "$lim" "$G/bin/relugrad_gpu_bench" \
    --csv "$RES/results.csv" "$@" > "$RES/$name.log" 2>&1
}
if want bench; then
  log "bench: relugrad (default geometry) / cuDNN / copy, sizes $SIZES, dtypes $DTYPES"
  bench bench "$T_BENCH" --sizes "$SIZES" --dtypes "$DTYPES" --probe-cudnn || fail "relugrad_gpu_bench (rc $?)"
  grep -E "^device|cudnn semantics" "$RES/bench.log" | tee -a "$SUMMARY"
  table
  publish
fi

if want ab; then
  log "ab: launch geometries (relugrad rows only), sizes $AB_SIZES, dtypes $AB_DTYPES"
  AB_IMPLS=relugrad_torch,relugrad_tensorflow,relugrad_mask_grad,relugrad_mask_forward
  RELUGRAD_CUDA_GEOMETRY=gridstride bench ab_gs "$T_AB" --sizes "$AB_SIZES" --dtypes "$AB_DTYPES" \
    --impls "$AB_IMPLS" --tag _gs || fail "A/B gridstride (rc $?)"
  RELUGRAD_CUDA_GEOMETRY=gridstride RELUGRAD_CUDA_UNROLL=1 bench ab_gsu1 "$T_AB" --sizes "$AB_SIZES" \
    --dtypes "$AB_DTYPES" --impls relugrad_torch --tag _gsu1 || fail "A/B gridstride unroll 1 (rc $?)"
  RELUGRAD_CUDA_GEOMETRY=pipelined bench ab_pipe "$T_AB" --sizes "$AB_SIZES" --dtypes "$AB_DTYPES" \
    --impls "$AB_IMPLS" --tag _pipe || fail "A/B pipelined (rc $?)"
  table
  publish
fi

if want torch && [[ -n "$PY" ]]; then
  log "torch: the torch preset against threshold_backward bit for bit, and threshold_backward's rows"
  lim=$(limit "$T_TORCH")
  if budget_ok torch "$lim"; then
    timeout "$lim" "$PY" bench/gpu/torch_bench.py --lib "$G/bin/librelugrad.so.0" --csv "$RES/results.csv" \
      --log "$RES/exactness.log" --sizes "$SIZES" --dtypes "$DTYPES" > "$RES/torch.log" 2>&1 || fail "torch_bench.py (rc $?)"
  fi
  grep -E "^(torch |exact|info|exactness)" "$RES/torch.log" | tee -a "$SUMMARY"
  table
  publish
fi

if [[ -n "$WHEEL_PID" ]]; then
  if wait "$WHEEL_PID"; then log "wheel: built and installed in $SITE"; else fail "wheel (see wheel.log)"; fi
  grep -E "torch-native|CUDA backend|error:|Error " "$RES/wheel.log" | head -8 | tee -a "$SUMMARY"
  publish
fi

if want python && [[ -d "$SITE/relugrad" ]]; then
  log "python: the package's CUDA tests"
  lim=$(limit "$T_PY")
  # shellcheck disable=SC2086 # PY_TESTS is a list of files
  budget_ok python "$lim" &&
  { PYTHONPATH="$SITE" timeout "$lim" "$PY" -m pytest -p no:cacheprovider -q -rs $PY_TESTS > "$RES/pytest.log" 2>&1 ||
    fail "pytest (see pytest.log)"; }
  tail -4 "$RES/pytest.log" | tee -a "$SUMMARY"
  grep -E "^(FAILED|ERROR)" "$RES/pytest.log" | head -20 | tee -a "$SUMMARY"
  # On a GPU the native CUDA path's tests must run: a skip there is a failure of this part.
  if grep -E "^SKIPPED.*test_native_cuda" "$RES/pytest.log" | tee -a "$SUMMARY" | grep -q .; then
    fail "python: test_native_cuda.py skipped on the GPU (see pytest.log)"
  fi
  publish
elif want python; then
  fail "python: no wheel installed in $SITE"
fi

if want use && [[ -d "$SITE/relugrad" ]]; then
  log "use: relugrad.torch on CUDA tensors against nn.ReLU ($USE_ARGS)"
  lim=$(limit "$T_USE")
  if budget_ok use "$lim"; then
    # shellcheck disable=SC2086 # USE_ARGS is a list of arguments
    PYTHONPATH="$SITE" timeout "$lim" "$PY" bench/gpu/torch_point_of_use.py --out "$RES" $USE_ARGS 2>&1 |
      grep -v -E "Warning|warn" > "$RES/use.log"
    [[ "${PIPESTATUS[0]}" == 0 ]] || fail "torch_point_of_use.py (see use.log)"
    tail -40 "$RES/use.log" >> "$SUMMARY"
  fi
  publish
elif want use; then
  fail "use: no wheel installed in $SITE"
fi

if want compiled && [[ -d "$SITE/relugrad" ]]; then
  log "compiled: compiled training with saved_bits against compiled stock, Triton (bench.torch compile-memory --device cuda $COMPILED_ARGS)"
  lim=$(limit "$T_COMPILED")
  if budget_ok compiled "$lim"; then
    # shellcheck disable=SC2086 # COMPILED_ARGS is a list of arguments
    PYTHONPATH="$SITE" timeout "$lim" "$PY" -m bench.torch compile-memory --device cuda --json "$RES/compile_memory.json" \
      $COMPILED_ARGS 2>&1 | grep -v -E "Warning|warn" > "$RES/compiled.log"
    [[ "${PIPESTATUS[0]}" == 0 ]] || fail "compile-memory (see compiled.log)"
    tail -12 "$RES/compiled.log" >> "$SUMMARY"
  fi
  publish
elif want compiled; then
  fail "compiled: no wheel installed in $SITE"
fi

if want cpu && [[ -d "$SITE/relugrad" ]]; then
  log "cpu: relugrad.torch against stock PyTorch on this machine's CPU (python -m bench.torch report ${CPU_ARGS:---quick})"
  PYTHONPATH="$SITE" "$PY" -c 'import relugrad, relugrad.torch as rt; print(relugrad.format_info()); print("native:", rt.NATIVE_STATUS)' \
    2>&1 | grep -E "simd|isa|native|cpu" | tee -a "$SUMMARY"
  # shellcheck disable=SC2086 # CPU_ARGS is a list of arguments
  PYTHONPATH="$SITE" timeout "${CPU_TIMEOUT:-300}" "$PY" -m bench.torch report ${CPU_ARGS:---quick} \
    --parts "${CPU_PARTS:-module,steps,memory}" --out "$RES/cpu_report" > "$RES/cpu.log" 2>&1 || fail "bench.torch report (rc $?)"
  [[ -f "$RES/cpu_report.md" ]] && cat "$RES/cpu_report.md" >> "$SUMMARY"
  publish
fi

[[ -f "$RES/table.md" ]] && cat "$RES/table.md" >> "$SUMMARY"
log "done, status $STATUS, results in $DEST"
publish
exit "$STATUS"
