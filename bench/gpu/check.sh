#!/usr/bin/env bash
# One script for a GPU machine. From the repository root:
#   bench/gpu/check.sh            # everything (a few minutes on one GPU)
#   QUICK=1 bench/gpu/check.sh    # sizes up to 16M only (a smoke run)
# Steps:
#   1. build relugrad with the CUDA backend (build/gpu) and install it (build/gpu/install)
#   2. run the whole C++ test suite (ctest): the CUDA device tests must run, not skip
#   3. build the benchmark driver against the installed relugrad (+ cuDNN)
#   4. cuDNN semantics probe + relugrad vs cuDNN activation backward vs D2D copy
#   5. PyTorch: bit-exactness of the torch preset vs threshold_backward / relu
#      autograd, and threshold_backward timings
#   6. the table (GB/s, fraction of the copy roofline, ratios) and the targets
# Results: RESULTS_DIR (default bench/results/gpu-<UTC time>), copied to $OUT
# when that is set (the device tool's output folder). Needs: nvcc (CUDA 13),
# an NVIDIA GPU + driver, cmake >= 3.25, libhwy-dev, GTest, python3 with
# PyTorch (CUDA build). No network access is needed.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT" || exit 1
STAMP="$(date -u +%Y%m%d-%H%M%SZ)"
RES="$(realpath -m "${RESULTS_DIR:-$ROOT/bench/results/gpu-$STAMP}")"
mkdir -p "$RES"
BUILD="$(realpath -m "${BUILD_DIR:-$ROOT/build/gpu}")"
PREFIX="$BUILD/install"
BENCH_BUILD="$(realpath -m "${BENCH_BUILD_DIR:-$ROOT/build/gpu-bench}")"
JOBS="${JOBS:-$(nproc)}"
SIZES="${SIZES:-64K,256K,1M,4M,16M,64M,256M,1G}"
[[ "${QUICK:-0}" == 1 ]] && SIZES="64K,1M,16M"
DTYPES="${DTYPES:-f32,f16,bf16}"
export PATH="/usr/local/cuda/bin:$PATH"
STATUS=0
T0=$SECONDS

log() { echo "[check.sh +$((SECONDS - T0))s] $*" | tee -a "$RES/check.log"; }
fail() { log "FAILED: $*"; STATUS=1; }
finish() {
  log "results in $RES"
  if [[ -n "${OUT:-}" && -d "${OUT:-}" ]]; then cp -r "$RES" "$OUT/" && log "copied to $OUT/$(basename "$RES")"; fi
  exit "$STATUS"
}

# ---- 0. environment ----
{
  echo "date: $(date -u +%FT%TZ)"
  echo "host: $(hostname)"
  echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown) $(git status --porcelain 2>/dev/null | wc -l) uncommitted paths"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.memory,clocks.max.sm --format=csv 2>&1 || echo "nvidia-smi: unavailable"
  echo "nvcc: $(nvcc --version 2>&1 | tail -1)"
  echo "cmake: $(cmake --version | head -1)"
  echo "cpus: $(nproc)"
} > "$RES/env.txt" 2>&1
cat "$RES/env.txt"

PY=""
for cand in "${PYTHON:-}" python3 "$ROOT/.venv/bin/python"; do
  [[ -z "$cand" ]] && continue
  if "$cand" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then PY="$cand"; break; fi
done
[[ -n "$PY" ]] && log "python with CUDA PyTorch: $PY" || log "no python with CUDA PyTorch: the PyTorch steps will be skipped"

CUDNN_ROOT_ARG=()
if [[ ! -e /usr/local/cuda/include/cudnn.h && ! -e /usr/include/cudnn.h && ! -e /usr/local/include/cudnn.h && -n "$PY" ]]; then
  # cuDNN from the PyTorch wheel's nvidia-cudnn package (headers + lib).
  CUDNN_DIR="$("$PY" -c 'import nvidia.cudnn as c; print(list(c.__path__)[0])' 2>/dev/null || true)"
  [[ -n "$CUDNN_DIR" ]] && CUDNN_ROOT_ARG=(-DCUDNN_ROOT="$CUDNN_DIR") && log "cuDNN from $CUDNN_DIR"
fi

# ---- 1. build ----
log "configure + build relugrad with CUDA ($BUILD, -j$JOBS)"
if ! cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DRELUGRAD_CUDA=ON > "$RES/build.log" 2>&1; then
  tail -40 "$RES/build.log"
  fail "configure (see build.log)"
  finish
fi
# Keep going past a broken unrelated target: the library and the tests that
# do build still give the device results.
if ! cmake --build "$BUILD" -j "$JOBS" -- -k >> "$RES/build.log" 2>&1; then
  grep -E "error|Error" "$RES/build.log" | head -20 | tee -a "$RES/check.log"
  fail "build: some targets failed (see build.log); continuing with what was built"
fi
if [[ ! -f "$BUILD/src/librelugrad.so" ]]; then
  fail "librelugrad.so was not built"
  finish
fi
if cmake --install "$BUILD" --prefix "$PREFIX" >> "$RES/build.log" 2>&1; then
  RG_CMAKE=(-DCMAKE_PREFIX_PATH="$PREFIX")
  RG_LIB="$PREFIX/lib/librelugrad.so"
else
  log "install failed; the benchmark uses the build tree's library"
  RG_CMAKE=(-DRELUGRAD_LIBRARY="$BUILD/src/librelugrad.so" -DRELUGRAD_INCLUDE_DIR="$ROOT/include")
  RG_LIB="$BUILD/src/librelugrad.so"
fi

# ---- 2. the whole test suite, on the device ----
log "ctest (all suites; CUDA device tests included)"
ctest --test-dir "$BUILD" -j "$JOBS" --output-on-failure --timeout 240 > "$RES/ctest.log" 2>&1 || fail "ctest (see ctest.log)"
grep -E "tests passed|tests failed" "$RES/ctest.log" | tee -a "$RES/check.log"
SKIPPED_DEVICE="$(grep -E "Cuda(Backend|MaskDevice)Test\.[A-Za-z0-9_]+ .*\(Skipped\)" "$RES/ctest.log" | grep -v -E "NoDeviceIsUnsupported|MoreThan2To31Elements" || true)"
if [[ -n "$SKIPPED_DEVICE" ]]; then
  echo "$SKIPPED_DEVICE" | tee -a "$RES/check.log"
  fail "CUDA device tests were skipped on a GPU machine: no usable device (the CUDA 13 runtime needs driver >= 580; see env.txt and the skip messages)"
fi
# The device suites once more, verbosely, so their logs show what ran.
for t in cuda_backend_test cuda_mask_device_test; do
  "$BUILD/tests/cuda/$t" > "$RES/$t.log" 2>&1 || fail "$t (see $t.log)"
  grep -E "^\[  (PASSED|FAILED|SKIPPED) \]|tests? from .* ran" "$RES/$t.log" | tee -a "$RES/check.log"
done

# ---- 3. benchmark driver ----
log "build the benchmark driver ($BENCH_BUILD)"
if ! cmake -S bench/gpu -B "$BENCH_BUILD" "${RG_CMAKE[@]}" "${CUDNN_ROOT_ARG[@]}" > "$RES/bench_build.log" 2>&1 ||
   ! cmake --build "$BENCH_BUILD" -j "$JOBS" >> "$RES/bench_build.log" 2>&1; then
  tail -30 "$RES/bench_build.log"
  fail "benchmark build (see bench_build.log)"
  finish
fi
grep -E "cuDNN" "$RES/bench_build.log" | tee -a "$RES/check.log"

# ---- 4. relugrad vs cuDNN vs copy ----
CSV="$RES/results.csv"
log "relugrad / cuDNN / copy: sizes $SIZES, dtypes $DTYPES"
LD_LIBRARY_PATH="$(dirname "$RG_LIB"):${LD_LIBRARY_PATH:-}" timeout 150 "$BENCH_BUILD/relugrad_gpu_bench" \
  --sizes "$SIZES" --dtypes "$DTYPES" --csv "$CSV" --probe-cudnn > "$RES/bench.log" 2>&1 || fail "relugrad_gpu_bench (see bench.log)"
grep -E "^device|cudnn semantics" "$RES/bench.log" | tee -a "$RES/check.log"

# A/B of the launch geometry (one-shot is the default; src/cuda/launch_plan.h): the
# relugrad rows again under RELUGRAD_CUDA_GEOMETRY=gridstride (tag _gs; with
# RELUGRAD_CUDA_UNROLL=1, _gsu1) and =pipelined (_pipe).
AB_SIZES="${AB_SIZES:-1M,64M,256M,1G}"
[[ "${QUICK:-0}" == 1 ]] && AB_SIZES="1M,16M"
AB_IMPLS=relugrad_torch,relugrad_tensorflow,relugrad_mask_grad,relugrad_mask_forward
for ab in "gridstride 2 _gs" "gridstride 1 _gsu1" "pipelined 2 _pipe"; do
  read -r geometry unroll tag <<< "$ab"
  log "A/B: RELUGRAD_CUDA_GEOMETRY=$geometry RELUGRAD_CUDA_UNROLL=$unroll (sizes $AB_SIZES, tag $tag)"
  RELUGRAD_CUDA_GEOMETRY=$geometry RELUGRAD_CUDA_UNROLL=$unroll \
    LD_LIBRARY_PATH="$(dirname "$RG_LIB"):${LD_LIBRARY_PATH:-}" timeout 90 \
    "$BENCH_BUILD/relugrad_gpu_bench" --sizes "$AB_SIZES" --dtypes "$DTYPES" --csv "$CSV" \
    --impls "$AB_IMPLS" --tag "$tag" > "$RES/bench_ab$tag.log" 2>&1 ||
    fail "relugrad_gpu_bench A/B $tag (see bench_ab$tag.log)"
done

# ---- 5. PyTorch: exactness + threshold_backward ----
if [[ -n "$PY" ]]; then
  log "PyTorch: bit-exactness (torch preset) and threshold_backward timings"
  timeout 150 "$PY" bench/gpu/torch_bench.py --lib "$RG_LIB" --csv "$CSV" \
    --log "$RES/exactness.log" --sizes "$SIZES" --dtypes "$DTYPES" > "$RES/torch.log" 2>&1 ||
    fail "torch_bench.py (bit differences or an error; see torch.log)"
  grep -E "^(torch |exact|info|exactness)" "$RES/torch.log" | tee -a "$RES/check.log"
else
  fail "PyTorch steps skipped (no python with a CUDA build of torch)"
fi

# ---- 6. table ----
python3 bench/gpu/report.py "$CSV" > "$RES/table.md" 2>&1 || fail "report.py"
cat "$RES/table.md"
log "total $((SECONDS - T0)) s"
finish
