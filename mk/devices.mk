# Accelerator backends that this machine can build but not run.
#   make test-cuda           the cuda tier: the built kernels' SASS keeps its 128-bit global
#                            loads/stores and uses no local memory (tests/cuda/sass_check.py), the GPU
#                            benchmark driver builds against the installed library, and the CUDA
#                            wheel's tests pass (device cases skip without a GPU); where there is no
#                            nvcc it says so and passes
#   make cuda-sass-check     the SASS check alone (cuobjdump from the toolkit or .venv's triton)
#   make gpu-check           bench/gpu/check.sh: build, device tests, benchmarks (on a GPU machine)
#   make ascend-test         the AscendC kernel through its CPU twin (the Ascend* suites)
#   make ascend-cost         the Ascend pipe cost model (ReluGrad, and the mask pair's traffic)
# The CUDA C++ tests are part of ctest whenever the backend is built (RELUGRAD_CUDA=AUTO finds nvcc).
.PHONY: test-cuda cuda-sass-check cuda-bench-compile gpu-check ascend-test ascend-cost
NVCC := $(firstword $(shell command -v nvcc 2>/dev/null) $(wildcard /usr/local/cuda/bin/nvcc))
CUDA_BENCH_DIR := build/cuda-bench

test-cuda: cuda-sass-check cuda-bench-compile python-test-cuda

# Where nvcc builds the kernels, a missing cuobjdump is a failure here (RELUGRAD_SASS_REQUIRE=1),
# not a skip: python-venv installs PyPI's CUDA torch, whose triton brings one. The ctest test
# names the objects of this build (no stale ones).
cuda-sass-check: build python-venv
	@if [ -z "$(NVCC)" ]; then echo "cuda-sass-check: no nvcc here: SKIPPED"; exit 0; fi; \
	RELUGRAD_SASS_REQUIRE=1 ctest --test-dir build/release -R '^cuda_sass_check$$' -V \
	  > build/sass_check.log 2>&1; rc=$$?; \
	grep -E "sass_check: (FAILED|SKIPPED|[0-9]+ hot)|tests passed|No tests were found" build/sass_check.log; \
	if [ $$rc -ne 0 ] || ! grep -q "100% tests passed, 0 tests failed out of 1" build/sass_check.log; then \
	  echo "cuda-sass-check: FAILED (build/sass_check.log)"; exit 1; fi

cuda-bench-compile: build
	@if [ -z "$(NVCC)" ]; then echo "cuda-bench-compile: no nvcc here: SKIPPED"; exit 0; fi; \
	set -e; cmake --install build/release --prefix $(CURDIR)/$(CUDA_BENCH_DIR)/relugrad >/dev/null; \
	PATH=$(dir $(NVCC)):$$PATH cmake -S bench/gpu -B $(CUDA_BENCH_DIR)/driver \
	  -DCMAKE_PREFIX_PATH=$(CURDIR)/$(CUDA_BENCH_DIR)/relugrad >/dev/null; \
	cmake --build $(CUDA_BENCH_DIR)/driver -j $(JOBS) >/dev/null; \
	echo "cuda-bench-compile: bench/gpu driver builds ($(CUDA_BENCH_DIR)/driver/relugrad_gpu_bench)"

gpu-check:
	bench/gpu/check.sh

ascend-test: build
	ctest --preset release -R "^(Dtypes[0-9]*/)?Ascend" -j $(JOBS)

ascend-cost: build
	build/release/tests/ascend/ascend_tiling_test --gtest_filter='*CostModel*'
	build/release/tests/ascend/ascend_mask_kernel_test --gtest_filter='*CostModel*'
