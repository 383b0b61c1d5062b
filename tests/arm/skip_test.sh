#!/usr/bin/env bash
# scripts/test-arm.sh on a machine without the cross compiler, and without qemu: one line
# "make test-arm: SKIPPED: <the missing tool and its package>", exit status 0, no check
# reported as ok or passed, and no build started. Usage: skip_test.sh <source dir>
set -uo pipefail
src="$1"
status=0
check() {  # check <name> <expected reason> <env assignments...>
  local name="$1" reason="$2"; shift 2
  local out rc
  out=$(cd "$src" && env RELUGRAD_ARM_NO_INSTALL=1 "$@" scripts/test-arm.sh 2>&1); rc=$?
  local want="make test-arm: SKIPPED: $reason"
  if [ "$rc" -ne 0 ] || [ "$out" != "$want" ]; then
    echo "FAIL $name: exit $rc, output:"; echo "$out"; echo "expected exactly: $want"; status=1
  else
    echo "ok $name: $out"
  fi
}
check no_cross_compiler "no /nonexistent/aarch64-linux-gnu-g++ (package g++-aarch64-linux-gnu)" \
  RELUGRAD_ARM_CROSS=/nonexistent/aarch64-linux-gnu-
check no_qemu "no /nonexistent/qemu-aarch64-static (package qemu-user-static)" \
  RELUGRAD_ARM_CROSS=/usr/bin/ \
  RELUGRAD_ARM_QEMU=/nonexistent/qemu-aarch64-static
exit $status
