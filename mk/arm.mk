# The Arm tier (docs/arm.md): make test-arm cross-builds for aarch64 (preset arm64) and runs the
# kernels of every Arm target Highway dispatches to under qemu-user, bit for bit against the
# reference (scripts/test-arm.sh). It installs package group "arm" (scripts/packages.txt) and
# prints SKIPPED with the reason where that cannot be done.
.PHONY: test-arm
test-arm:
	@JOBS=$(JOBS) scripts/test-arm.sh
