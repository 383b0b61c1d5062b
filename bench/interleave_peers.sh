#!/usr/bin/env bash
# Peer comparison interleaved point by point: for each (dtype, n, threads),
# relugrad (with its triads), oneDNN and PyTorch's ATen from C++ run back to
# back, in BENCH_PEER_ROUNDS rounds (default 3), so that a neighbour's load
# (this VM's bandwidth swings by 1.5-2x within minutes) hits all of them
# alike. Every line gets a "round" field; bench/report.py compares the
# implementations within a round and reports the median over rounds.
#
#   bench/interleave_peers.sh OUT.jsonl BUILD_DIR PYTHON
#
# BENCH_PEER_WARM=1 keeps one operand set (in-cache; the regime of the performance targets'
# peer table at 4K-1M) instead of rotating cold sets. Without the C++ torch
# driver (no torch wheel at build time), PyTorch runs from Python instead.
# Then PYTHON's PyTorch allocating threshold_backward and relugrad's
# allocating Python call (BENCH_ALLOC_SIZES, default 16M,64M) run
# interleaved the same way (the allocating-path target).
set -euo pipefail
out=${1:?usage: interleave_peers.sh OUT.jsonl BUILD_DIR PYTHON}
build=${2:?}
py=${3:-python3}
here=$(cd "$(dirname "$0")" && pwd)
sizes=${BENCH_PEER_SIZES:-4K,64K,1M,16M,64M}
alloc_sizes=${BENCH_ALLOC_SIZES:-16M,64M}
threads=${BENCH_THREADS:-1,2}
min_time=${BENCH_PEER_MIN_TIME:-0.2}
rounds=${BENCH_PEER_ROUNDS:-3}
warm=""; [ "${BENCH_PEER_WARM:-0}" = 1 ] && warm="--warm"
cli="$build/relugrad"; onednn="$build/bench/peers/onednn_relu_bwd"; torch_cpp="$build/bench/peers/torch_relu_bwd"
tag() { sed "s/^{/{\"round\":$1,/"; }
: > "$out"
for round in $(seq 1 "$rounds"); do
  for d in f32 bf16 f16; do
    for n in ${sizes//,/ }; do
      for t in ${threads//,/ }; do
        "$cli" bench --json $warm --dtype "$d" --sizes "$n" --threads "$t" --min-time "$min_time" 2>/dev/null | tag "$round" >> "$out"
        if [ -x "$onednn" ] && [ "$d" != f16 ]; then
          "$onednn" $warm --dtype "$d" --sizes "$n" --threads "$t" --min-time "$min_time" 2>/dev/null | tag "$round" >> "$out" || true
        fi
        if [ -x "$torch_cpp" ]; then
          "$torch_cpp" $warm --dtype "$d" --sizes "$n" --threads "$t" --min-time "$min_time" 2>/dev/null | tag "$round" >> "$out" || true
        else
          "$py" "$here/peers/py_peers.py" $warm --frameworks torch --dtype "$d" --sizes "$n" --threads "$t" \
            --min-time "$min_time" 2>/dev/null | tag "$round" >> "$out" || true
        fi
      done
    done
  done
  # Allocating entry points from Python: a fresh result per call.
  for fw in torch relugrad; do
    "$py" "$here/peers/py_peers.py" --frameworks "$fw" --dtype f32,bf16,f16 --sizes "$alloc_sizes" --threads "$threads" \
      --min-time "$min_time" 2>/dev/null | grep '_alloc"' | tag "$round" >> "$out" || true
  done
done
