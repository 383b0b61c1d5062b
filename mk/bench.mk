# Performance (issue 3).
#   make bench        relugrad + triads + oneDNN + every Python peer in .venv, one run;
#                     writes bench/results/<machine>-<date>.{jsonl,md,log} and -<dtype>.png
#                     plus -warm/-key/-peers.jsonl (about 15 min here; BENCH_SIZES=4K,1M,16M
#                     BENCH_PEER_SIZES=4K,1M for a quick look). See docs/performance.md.
#   make bench-micro  Google Benchmark per kernel and SIMD target (bench/micro)
# Builds in build/bench (RELUGRAD_BUILD_BENCH=ON, tests off).
.PHONY: bench bench-build bench-micro bench-deps
BENCH_BUILD := build/bench
BENCH_MACHINE ?= $(shell lscpu | sed -n 's/^Model name: *//p' | head -1 | tr 'A-Z' 'a-z' | sed 's/[^a-z0-9]\+/-/g; s/^-//; s/-$$//')-$(shell nproc)c
BENCH_DATE ?= $(shell date -u +%Y-%m-%d)
BENCH_OUT ?= bench/results/$(BENCH_MACHINE)-$(BENCH_DATE)
BENCH_PY ?= $(if $(wildcard .venv/bin/python),.venv/bin/python,python3)

bench-deps: deps
	@scripts/install-deps.sh libdnnl-dev libbenchmark-dev
	@$(BENCH_PY) -c "import matplotlib" 2>/dev/null || \
	  { test -x .venv/bin/pip || python3 -m venv .venv; .venv/bin/pip install -q matplotlib; }

bench-build: bench-deps
	cmake -S . -B $(BENCH_BUILD) -DCMAKE_BUILD_TYPE=Release -DRELUGRAD_BUILD_BENCH=ON \
	  -DRELUGRAD_BUILD_TESTS=OFF -DRELUGRAD_CUDA=OFF -DRELUGRAD_BENCH_PYTHON=$(if $(wildcard .venv/bin/python),$(CURDIR)/.venv/bin/python,python3) >/dev/null
	cmake --build $(BENCH_BUILD) -j $(JOBS) --target relugrad_cli bench_peers relugrad_micro

bench: bench-build
	bench/run_all.sh $(BENCH_OUT) $(BENCH_BUILD) $(if $(wildcard .venv/bin/python),.venv/bin/python,python3)
	@echo "make bench: $(BENCH_OUT).md, $(BENCH_OUT)-*.png"

bench-micro: bench-build
	$(BENCH_BUILD)/bench/micro/relugrad_micro --benchmark_min_time=0.05 $(BENCH_MICRO_ARGS)
