# CUDA backend (issue 7).
#   make cuda-bench-compile   builds the GPU benchmark driver (bench/gpu) against
#                             the installed relugrad, proving it compiles and links
#                             (cuDNN included when its headers are present); no GPU needed
#   make gpu-check            bench/gpu/check.sh: build, device tests, benchmarks (GPU machine)
# The CUDA tests themselves are part of ctest (tests/cuda) whenever the
# backend is built (RELUGRAD_CUDA=AUTO turns it on when nvcc is found).
.PHONY: cuda-bench-compile gpu-check
CUDA_BENCH_DIR := build/cuda-bench-make
CUDA_NVCC := $(shell command -v nvcc 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null)

cuda-bench-compile: build
	@if [ -z "$(CUDA_NVCC)" ]; then echo "cuda-bench-compile: no nvcc here, skipped"; exit 0; fi; \
	cmake --install $(BUILD) --prefix $(CURDIR)/$(CUDA_BENCH_DIR)/relugrad >/dev/null && \
	PATH=$(dir $(CUDA_NVCC)):$$PATH cmake -S bench/gpu -B $(CUDA_BENCH_DIR)/driver \
	  -DCMAKE_PREFIX_PATH=$(CURDIR)/$(CUDA_BENCH_DIR)/relugrad >/dev/null && \
	cmake --build $(CUDA_BENCH_DIR)/driver -j $(JOBS) >/dev/null && \
	echo "cuda-bench-compile: bench/gpu driver builds ($(CUDA_BENCH_DIR)/driver/relugrad_gpu_bench)"

gpu-check:
	bench/gpu/check.sh

TEST_STEPS += cuda-bench-compile
