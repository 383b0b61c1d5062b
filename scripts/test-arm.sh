#!/usr/bin/env bash
# The Arm tier (make test-arm, docs/arm.md): cross-builds relugrad for aarch64 (preset arm64,
# cmake/aarch64-linux-gnu.cmake) and runs it under qemu-user on one CPU model per Arm target
# Highway dispatches to, checking that the model selects that target and that its kernels match
# the scalar reference bit for bit:
#   relu_grad_kernel_test and mask_kernel_test on the target: the special-value cross product, every length
#   to 1100 and every misalignment (the large-array and in-place cases are left to the x86 tiers:
#   they add minutes under emulation and no target-specific code),
#   `relugrad verify --isa <target>` (every preset x dtype, the mask pair, 1 and 2 threads),
# then once, on the NEON-only model, the suites of the x86-only code's Arm counterparts
# (float_environment_test: FPCR; launch_test: the cache and sysfs probes).
# Where the packages of group "arm" (scripts/packages.txt) cannot be installed or the tools are
# missing, it prints "make test-arm: SKIPPED: <reason>" and exits 0; any failure exits 1.
# Environment: JOBS (build parallelism), RELUGRAD_ARM_NO_INSTALL=1 (do not install packages),
# RELUGRAD_ARM_CROSS (compiler prefix, default aarch64-linux-gnu-), RELUGRAD_ARM_QEMU (emulator).
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
jobs="${JOBS:-2}"
cross="${RELUGRAD_ARM_CROSS:-aarch64-linux-gnu-}"
qemu="${RELUGRAD_ARM_QEMU:-qemu-aarch64-static}"
build=build/arm64
log="$(mktemp)"
trap 'rm -f "$log"' EXIT

skip() { echo "make test-arm: SKIPPED: $*"; exit 0; }
fail() { echo "make test-arm: FAILED: $*"; exit 1; }

if [ "${RELUGRAD_ARM_NO_INSTALL:-0}" != 1 ]; then
  scripts/install-deps.sh arm >"$log" 2>&1 ||
    skip "the arm package group could not be installed (scripts/install-deps.sh arm: $(tail -n 1 "$log"))"
fi
command -v "${cross}g++" >/dev/null || skip "no ${cross}g++ (package g++-aarch64-linux-gnu)"
command -v "$qemu" >/dev/null || skip "no $qemu (package qemu-user-static)"
[ -f /usr/lib/aarch64-linux-gnu/pkgconfig/libhwy.pc ] || skip "no arm64 Highway (package libhwy-dev:arm64)"
[ -f /usr/lib/aarch64-linux-gnu/cmake/GTest/GTestConfig.cmake ] ||
  skip "no arm64 GoogleTest (package libgtest-dev:arm64)"

start=$(date +%s)
cmake --preset arm64 >"$log" 2>&1 || { cat "$log"; fail "cmake --preset arm64"; }
cmake --build --preset arm64 -j "$jobs" >"$log" 2>&1 || { tail -n 40 "$log"; fail "the aarch64 build"; }
echo "make test-arm: aarch64 build in $(( $(date +%s) - start )) s"

failures=0
# run <qemu cpu> <what> <line the output must have> <command...>: one check, its verdict on one
# line. The line (an extended regex) proves that something ran: a filter that matched no test
# exits 0 too.
run() {
  local cpu="$1" what="$2" proof="$3"; shift 3
  local t0=$(date +%s)
  if QEMU_CPU="$cpu" "$qemu" "$@" >"$log" 2>&1 && grep -qE "$proof" "$log"; then
    echo "make test-arm: [$cpu] $what: ok ($(grep -E "$proof" "$log" | tail -n 1 | tr -s ' '), $(( $(date +%s) - t0 )) s)"
  else
    tail -n 30 "$log"
    echo "make test-arm: [$cpu] $what: FAILED"
    failures=$((failures + 1))
  fi
}

gtest_ran='^\[  PASSED  \] [1-9][0-9]* tests?\.$'
# <qemu -cpu> <the target Highway must select there>
models=(
  "max,sve128=on sve2_128"
  "max,sve256=on sve_256"
  "max,sve512=on sve2"
  "max,sve512=on sve"
  "cortex-a72 neon"
)
for row in "${models[@]}"; do
  read -r cpu target <<<"$row"
  # The model's best target is the row's own, except the sve row, which caps sve2 to sve.
  selected=$(QEMU_CPU="$cpu" "$qemu" "$build/relugrad" info 2>&1 | awk '/^simd_selected:/ { print $2 }')
  want="$target"; [ "$target" = sve ] && want=sve2
  if [ "$selected" != "$want" ]; then
    echo "make test-arm: [$cpu] relugrad info selects '$selected', expected $want: FAILED"
    failures=$((failures + 1))
    continue
  fi
  run "$cpu" "relu_grad_kernel_test on $target" "$gtest_ran" "$build/tests/relu_grad_kernel_test" \
    --gtest_filter="*/$target:-*LargeRandomArrays*:*InPlace*"
  run "$cpu" "mask_kernel_test on $target" "$gtest_ran" "$build/tests/mask/mask_kernel_test" \
    --gtest_filter="*/$target:-*LargeArrays*:*InPlace*"
  run "$cpu" "relugrad verify --isa $target" '^[1-9][0-9]* passed, 0 failed$' \
    "$build/relugrad" verify --isa "$target" \
    --threads 1,2 --size 20011
done
run cortex-a72 "float_environment_test (FPCR)" "$gtest_ran" "$build/tests/float_environment_test"
run cortex-a72 "launch_test (caches, sysfs)" "$gtest_ran" "$build/tests/launch_test"
QEMU_CPU=max "$qemu" "$build/relugrad" info | grep -E '^simd_(compiled|attainable|selected):'

[ "$failures" -eq 0 ] || fail "$failures check(s) failed"
echo "make test-arm: every Arm target bit for bit in $(( $(date +%s) - start )) s"
