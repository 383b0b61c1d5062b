#!/usr/bin/env bash
# Peer comparison interleaved point by point: for each (dtype, n, threads),
# relugrad, oneDNN and PyTorch run back to back, twice, so that a
# neighbour's load (this VM's bandwidth swings 2-4x within minutes) hits all
# three alike; the report keeps each one's best sample. The sweep measures
# the peers minutes apart from relugrad, which this step corrects.
#
#   bench/interleave_peers.sh OUT.jsonl BUILD_DIR PYTHON
set -euo pipefail
out=${1:?usage: interleave_peers.sh OUT.jsonl BUILD_DIR PYTHON}
build=${2:?}
py=${3:-python3}
here=$(cd "$(dirname "$0")" && pwd)
sizes=${BENCH_PEER_SIZES:-4K,64K,1M,16M,64M}
threads=${BENCH_THREADS:-1,2}
min_time=${BENCH_PEER_MIN_TIME:-0.2}
cli="$build/relugrad"; onednn="$build/bench/peers/onednn_relu_bwd"
: > "$out"
for round in 1 2; do
  for d in f32 bf16 f16; do
    for n in ${sizes//,/ }; do
      for t in ${threads//,/ }; do
        "$cli" bench --json --dtype "$d" --sizes "$n" --threads "$t" --min-time "$min_time" >> "$out" 2>/dev/null
        if [ -x "$onednn" ] && [ "$d" != f16 ]; then
          "$onednn" --dtype "$d" --sizes "$n" --threads "$t" --min-time "$min_time" >> "$out" 2>/dev/null || true
        fi
        "$py" "$here/peers/py_peers.py" --frameworks torch --dtype "$d" --sizes "$n" --threads "$t" \
          --min-time "$min_time" >> "$out" 2>/dev/null || true
      done
    done
  done
done
