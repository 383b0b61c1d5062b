#!/usr/bin/env bash
# One `make bench` run: relugrad (with the in-process triads, the allocating
# path, the mask path and the streaming A/B), oneDNN, and every Python peer
# installed in .venv, then the Markdown report and the plots.
#
#   bench/run_all.sh OUT_PREFIX BUILD_DIR [PYTHON]
#
# Writes OUT_PREFIX.jsonl (cold caches: rotating operand sets), OUT_PREFIX-warm.jsonl
# (per-call latency, one set), OUT_PREFIX-key.jsonl (n >= 16M with 1 s per
# candidate: the triad target needs more samples than the sweep), OUT_PREFIX-peers.jsonl
# (relugrad, oneDNN, PyTorch interleaved point by point in rounds; -peers-warm.jsonl the same with
# warm operands), OUT_PREFIX.md, OUT_PREFIX-<dtype>.png and
# OUT_PREFIX.log (stderr of every step). Knobs (environment):
#   BENCH_SIZES (default 4K..64M x4), BENCH_SIZES_F64 (4K..64M: f64 at 256M
#   needs 12 GiB), BENCH_PY_MAX_N (64M), BENCH_MIN_TIME (0.1 s), BENCH_THREADS (1,2),
#   BENCH_PEER_SIZES (interleaved peers: 4K,64K,1M,16M,64M).
set -euo pipefail
out=${1:?usage: run_all.sh OUT_PREFIX BUILD_DIR [PYTHON]}
build=${2:?usage: run_all.sh OUT_PREFIX BUILD_DIR [PYTHON]}
py=${3:-python3}
here=$(cd "$(dirname "$0")" && pwd)
# The sweep stops at 64M (256M f32 takes minutes per point with the
# allocating path); the key points below add 256M for the triad target.
sizes=${BENCH_SIZES:-4K,16K,64K,256K,1M,4M,16M,64M}
sizes_f64=${BENCH_SIZES_F64:-4K,16K,64K,256K,1M,4M,16M,64M}
py_max_n=${BENCH_PY_MAX_N:-64M}
min_time=${BENCH_MIN_TIME:-0.1}
threads=${BENCH_THREADS:-1,2}
cli="$build/relugrad"
onednn="$build/bench/peers/onednn_relu_bwd"
jsonl="$out.jsonl"; warm="$out-warm.jsonl"; key="$out-key.jsonl"; peers="$out-peers.jsonl"; peers_warm="$out-peers-warm.jsonl"; log="$out.log"
mkdir -p "$(dirname "$out")"
: > "$jsonl"; : > "$warm"; : > "$key"; : > "$log"
start=$SECONDS
step() { echo "make bench: $* ($((SECONDS - start)) s)" | tee -a "$log" >&2; }

mask_flag=""
if "$cli" bench --help | grep -q -- "--mask"; then
  if "$cli" bench --sizes 64 --threads 1 --min-time 0 --mask --json >/dev/null 2>>"$log"; then mask_flag="--mask"; fi
fi
[ -n "$mask_flag" ] || step "relugrad: no mask path in this build: relugrad_mask not measured"

step "relugrad f32/f16/bf16, sizes $sizes, threads $threads"
"$cli" bench --json --dtype f32,f16,bf16 --sizes "$sizes" --threads "$threads" --min-time "$min_time" \
  --alloc --stream-ab $mask_flag >> "$jsonl" 2>>"$log"
step "relugrad f64, sizes $sizes_f64"
"$cli" bench --json --dtype f64 --sizes "$sizes_f64" --threads "$threads" --min-time "$min_time" \
  --alloc $mask_flag >> "$jsonl" 2>>"$log"
step "relugrad key points: n = 16M, 64M, 256M (f64: 64M), 1 s per candidate (the >= 0.95x triad target)"
"$cli" bench --json --dtype f32,f16,bf16 --sizes 16M,64M,256M --threads "$threads" --min-time 1 >> "$key" 2>>"$log"
"$cli" bench --json --dtype f64 --sizes 16M,64M --threads "$threads" --min-time 1 >> "$key" 2>>"$log"
step "relugrad latency (warm caches, 3 rounds)"
for round in 1 2 3; do
  "$cli" bench --json --warm --dtype f32,f16,bf16,f64 --sizes 16,256,1024,4K --threads 1 --min-time "$min_time" \
    >> "$warm" 2>>"$log"
done

if [ -x "$onednn" ]; then
  step "oneDNN eltwise backward relu"
  "$onednn" --dtype f32,bf16,f16 --sizes "$sizes" --threads "$threads" --min-time "$min_time" >> "$jsonl" 2>>"$log" || step "oneDNN driver failed (see $log)"
  "$onednn" --warm --dtype f32,bf16 --sizes 16,256,1024,4K --threads 1 --min-time "$min_time" >> "$warm" 2>>"$log" || true
else
  step "oneDNN driver not built ($onednn): skipped"
fi
torch_cpp="$build/bench/peers/torch_relu_bwd"
if [ -x "$torch_cpp" ]; then
  step "PyTorch ATen threshold_backward from C++"
  "$torch_cpp" --dtype f32,bf16,f16 --sizes "$sizes" --threads "$threads" --min-time "$min_time" >> "$jsonl" 2>>"$log" || step "libtorch driver failed (see $log)"
else
  step "libtorch driver not built ($torch_cpp: no torch wheel at configure time): skipped"
fi

step "PyTorch, NumPy, TensorFlow, JAX (to $py_max_n) with $py"
"$py" "$here/peers/py_peers.py" --frameworks torch --dtype f32,f16,bf16 --sizes "$sizes" --threads "$threads" \
  --min-time "$min_time" >> "$jsonl" 2>>"$log" || step "torch driver failed (see $log)"
"$py" "$here/peers/py_peers.py" --frameworks numpy,tensorflow,jax --dtype f32,f16,bf16 --sizes "$sizes" \
  --threads "$threads" --max-n "$py_max_n" --min-time "$min_time" >> "$jsonl" 2>>"$log" || step "a Python peer failed (see $log)"
"$py" "$here/peers/py_peers.py" --frameworks torch --warm --dtype f32,bf16 --sizes 16,256,1024,4K --threads 1 \
  --min-time "$min_time" >> "$warm" 2>>"$log" || true
grep -h "skipped\|not installed" "$log" | sort -u | sed 's/^/make bench: note: /' >&2 || true

step "relugrad vs oneDNN vs PyTorch interleaved point by point, cold operands (${BENCH_PEER_ROUNDS:-3} rounds)"
"$here/interleave_peers.sh" "$peers" "$build" "$py" 2>>"$log" || step "interleaved peer run failed (see $log)"
step "the same with warm operands (one set, in cache where it fits)"
BENCH_PEER_WARM=1 "$here/interleave_peers.sh" "$peers_warm" "$build" "$py" 2>>"$log" || step "interleaved warm peer run failed (see $log)"

step "report and plots"
machine_line="Machine: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB; \
$(uname -r); SIMD target $("$cli" info 2>/dev/null | sed -n "s/^simd_selected: *//p" | head -1). \
Command: \`make bench\` (bench/run_all.sh; min-time $min_time s per point; cold caches: rotating operand sets of >= 64 MiB). \
Date: $(date -u +%Y-%m-%dT%H:%MZ). Shared machine: only ratios within this run are meaningful."
"$py" "$here/report.py" "$jsonl" --warm "$warm" --key "$key" --peers "$peers" "$peers_warm" --title "relugrad benchmark: $(basename "$out")" --notes "$machine_line" > "$out.md"
"$py" "$here/plot.py" "$jsonl" --out-prefix "$out" --title "$(basename "$out")" >> "$log" 2>&1 || step "plots failed (matplotlib missing?)"
step "done: $out.md"
