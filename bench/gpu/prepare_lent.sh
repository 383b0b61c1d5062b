#!/usr/bin/env bash
# Prepares, on this (GPU-less) machine, what bench/gpu/lent_machine.sh needs on a GPU machine lent
# for minutes whose image has CUDA, PyTorch and CMake but not relugrad's Debian build
# dependencies: the folder build/gpu-lent/ (PREBUILT overrides; under build/, so ignored by git:
# name it in the device tool's carry) with
#   bin/   the CUDA device test programs, the GPU benchmark driver and librelugrad.so, built here
#          (nvcc 13 here, sm_90 code) from build/release
#   deps/  Highway (headers, libhwy.so, its pkg-config file) and pkgconf, unpacked from Debian
#          packages: the GPU machine builds the Python wheel for its own Python and torch with them
# Usage: bench/gpu/prepare_lent.sh   (after make build; nothing here needs a GPU)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
G="${PREBUILT:-$ROOT/build/gpu-lent}"
rm -rf "$G" && mkdir -p "$G/bin" "$G/deps" "$G/debs"

[[ -x build/release/tests/cuda/cuda_backend_test ]] || { echo "build/release has no CUDA device tests: make build with nvcc installed" >&2; exit 1; }
cp build/release/tests/cuda/cuda_backend_test build/release/tests/cuda/cuda_mask_device_test "$G/bin/"

prefix="$(mktemp -d)"
cmake --install build/release --prefix "$prefix" > /dev/null
cmake -S bench/gpu -B build/gpu-bench -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" > /dev/null
cmake --build build/gpu-bench -j "$(nproc)" > /dev/null
cp build/gpu-bench/relugrad_gpu_bench "$G/bin/"
cp -P "$prefix"/lib/librelugrad.so* "$G/bin/"
rm -rf "$prefix"

(cd "$G/debs" && apt-get download libhwy-dev libhwy1 pkgconf pkgconf-bin libpkgconf3 2> /dev/null)
for deb in "$G"/debs/*.deb; do dpkg -x "$deb" "$G/deps"; done
rm -rf "$G/debs"
du -sh "$G"
