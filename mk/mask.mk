# The 1-bit mask path (issue 5). Its C++ suites (tests/mask) run in `make test`
# through ctest. Extra targets:
#   make mask-bench   builds bench/mask in build/mask-bench and times backward from the
#                     mask vs from x (16M, 64M f32; 1 and 2 threads, interleaved) + memory
#   make mask-live    `relugrad forward` vs torch.threshold/relu, tf.nn.relu, jax.nn.relu
#                     (needs .venv with the frameworks: `make compat`)
.PHONY: mask-bench mask-live
MASK_BENCH_BUILD := build/mask-bench

mask-bench: deps
	cmake -S . -B $(MASK_BENCH_BUILD) -DCMAKE_BUILD_TYPE=Release -DRELUGRAD_BUILD_BENCH=ON \
	  -DRELUGRAD_BUILD_TESTS=OFF -DRELUGRAD_CUDA=OFF >/dev/null
	cmake --build $(MASK_BENCH_BUILD) -j $(JOBS) --target mask_bench
	$(MASK_BENCH_BUILD)/bench/mask/mask_bench --sizes 16M,64M --threads 1,2 --reps 9

mask-live: build
	@test -x .venv/bin/python && .venv/bin/python -c "import torch" 2>/dev/null || \
	  { echo "mask-live: needs .venv with torch (run make compat first)"; exit 1; }
	.venv/bin/python tests/mask/live_forward_check.py $(CLI)
