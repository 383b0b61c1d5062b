# Benchmarks (docs/performance.md); all build with the "bench" preset in build/bench.
#   make bench        relugrad + triads + oneDNN + every Python peer in .venv, in one run;
#                     writes bench/results/<machine>-<date>.{jsonl,md,log} and -<dtype>.png
#                     (an ignored folder: the report that docs cite is copied into docs/results/).
#                     About 15 min; BENCH_SIZES=4K,1M,16M BENCH_PEER_SIZES=4K,1M for a quick look.
#   make bench-micro  Google Benchmark per kernel and SIMD target (bench/micro)
#   make mask-bench   backward from the 1-bit mask against backward from x, 16M and 64M f32
#   make torch-report relugrad.torch against stock PyTorch, every point-of-use target with its verdict
#                     (python -m bench.torch report; bench/README.md): TORCH_REPORT_ARGS=--quick for a
#                     look; writes $(TORCH_REPORT_OUT).md and its -module/-steps/-memory/-compile JSON
.PHONY: bench bench-build bench-micro bench-venv mask-bench torch-report
BENCH_BUILD := build/bench
BENCH_MACHINE ?= $(shell lscpu | sed -n 's/^Model name: *//p' | head -1 | tr 'A-Z' 'a-z' | sed 's/[^a-z0-9]\+/-/g; s/^-//; s/-$$//')-$(shell nproc)c
BENCH_DATE ?= $(shell date -u +%Y-%m-%d)
BENCH_OUT ?= bench/results/$(BENCH_MACHINE)-$(BENCH_DATE)

# The plots need matplotlib; the Python peers use whatever frameworks .venv has.
bench-venv: $(PY)
	@$(PY) -c "import matplotlib" 2>/dev/null || $(PIP) install -q matplotlib

bench-build: bench-venv
	cmake --preset bench >/dev/null
	cmake --build --preset bench -j $(JOBS)

bench: bench-build
	bench/run_all.sh $(BENCH_OUT) $(BENCH_BUILD) $(PY)
	@echo "make bench: $(BENCH_OUT).md, $(BENCH_OUT)-*.png"

bench-micro: bench-build
	$(BENCH_BUILD)/bench/micro/relugrad_micro --benchmark_min_time=0.05 $(BENCH_MICRO_ARGS)

mask-bench: bench-build
	$(BENCH_BUILD)/bench/mask/mask_bench --sizes 16M,64M --threads 1,2 --reps 9

TORCH_REPORT_OUT ?= bench/results/$(BENCH_MACHINE)/torch_report
torch-report: python-install
	$(PY) -m bench.torch report --out $(TORCH_REPORT_OUT) $(TORCH_REPORT_ARGS)
