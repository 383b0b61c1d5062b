#!/usr/bin/env bash
# Installs the Debian packages relugrad needs that are missing, and nothing
# else. Usage: scripts/install-deps.sh [package ...] (defaults: the build and
# test set). Uses sudo only when not root. Safe to run repeatedly.
set -euo pipefail

default_packages=(
  cmake g++ make pkg-config
  libhwy-dev        # Google Highway: SIMD with runtime dispatch
  libgtest-dev      # GoogleTest
  libbenchmark-dev  # Google Benchmark
  python3 python3-venv python3-dev
)
packages=("$@")
[ ${#packages[@]} -gt 0 ] || packages=("${default_packages[@]}")

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "relugrad: installing missing Debian packages: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q >&2 || true
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
