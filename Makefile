# relugrad's make layer: short aliases over the CMake presets (CMakePresets.json)
# and the Python venv (.venv). The README's two commands:
#   make run    installs what is missing, builds, runs the main job
#   make test   installs what is missing, builds, runs every test tier (CI calls it)
# Only deps (every group), run, test (the groups they need) and the venv install packages
# (scripts/packages.txt, python/requirements-test.txt); the build and tier targets expect them.
# Test tiers, each runnable alone (README "Development" has the table; make test prints each one's time):
#   make check          quick: the C++ quick tier (every kernel on every SIMD target; the style
#                       checks: format, generated tables, no include loop between src/ folders by
#                       scripts/check_includes.py), the Python lint (ruff, relugrad.torch's import
#                       layers: make python-lint) and the docs check (cited docs and sections
#                       exist, line and size limits: make docs-check)
#   make test-sweep     sweep: exhaustive patterns, large arrays, packaging, a broken optional dependency
#   make python-test    python: the pytest suite (not the live checks)
#   make test-live      live: relugrad against the installed torch, bit for bit
#   make test-cuda      cuda: the CUDA wheel and the GPU benchmark driver build (where nvcc is)
#   make test-sanitize  sanitize: the C++ suites under ASan+UBSan and TSan
#   make fuzz-ci        fuzz: each libFuzzer target for 20 s
#   make soak-ci        soak: a minute of random checked calls
SHELL := /bin/bash
JOBS ?= $(shell nproc)
CLI := build/release/relugrad

# The Debian package groups (scripts/packages.txt) that each of the two commands needs.
RUN_PACKAGES := build test onednn
TEST_PACKAGES := build test onednn python fuzz

.PHONY: all deps build check docs-check test-cpp test-sweep test run clean
all: build

deps:
	@scripts/install-deps.sh

build:
	cmake --preset release $(CMAKE_ARGS) >/dev/null
	cmake --build --preset release -j $(JOBS)

check: build python-lint docs-check
	ctest --preset quick -j $(JOBS)

# Every docs file and quoted section the code and docs cite exists, docs lines and the docs' total
# stay within their limits (scripts/check_docs.py); --self-test first shows that it fails on each
# kind of defect. python3 only: no build, no venv.
docs-check:
	python3 scripts/check_docs.py --self-test
	python3 scripts/check_docs.py

test-sweep: build
	ctest --preset sweep -j $(JOBS)

test-cpp: build
	ctest --preset release -j $(JOBS)

include mk/python.mk mk/reliability.mk mk/bench.mk mk/devices.mk mk/arm.mk

TEST_TIERS := test-cpp python-test test-live test-cuda test-arm test-sanitize fuzz-ci soak-ci

# Each tier in turn; its time is printed so every CI log says what each tier costs. A tier that
# printed a "<target>: ... SKIPPED" line (a tool this machine lacks) is reported as skipped, never
# as passed; the last line names every skipped tier.
test:
	@scripts/install-deps.sh $(TEST_PACKAGES)
	@set -o pipefail; total=$$(date +%s); skipped=; out=$$(mktemp); \
	for tier in $(TEST_TIERS); do start=$$(date +%s); \
	  $(MAKE) --no-print-directory $$tier 2>&1 | tee $$out || { echo "make test: tier $$tier FAILED"; rm -f $$out; exit 1; }; \
	  if grep -Eq '^(make )?[a-z0-9-]+: .*SKIPPED' $$out; then skipped="$$skipped $$tier"; \
	    echo "make test: tier $$tier ran with parts SKIPPED (the lines above say why) in $$(( $$(date +%s) - start )) s"; \
	  else echo "make test: tier $$tier passed in $$(( $$(date +%s) - start )) s"; fi; done; rm -f $$out; \
	echo "make test: every test tier ran in $$(( $$(date +%s) - total )) s, none failed$${skipped:+; parts SKIPPED in:$$skipped}"

# The main job: what the build is (info), that every bit is right (verify), and how fast against this
# machine's memory (bench: each relugrad row against the triad that stores as relugrad chose, cached
# below the caches' size and streaming above; the table ends with one line saying where relugrad ran).
run:
	@scripts/install-deps.sh $(RUN_PACKAGES)
	@$(MAKE) --no-print-directory build
	$(CLI) info
	$(CLI) verify
	$(CLI) bench --dtype f32,bf16 --sizes 4K,64K,1M,16M --threads 1,2 --min-time 0.1

clean:
	rm -rf build
