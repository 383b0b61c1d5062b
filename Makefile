# relugrad: the two commands of the README.
#   make run   builds, then runs the main job: `relugrad verify` and a short benchmark table
#   make test  builds and runs every test (C++ via ctest, Python via pytest)
# Both install missing Debian/PyPI packages themselves. Feature areas add
# their targets in mk/*.mk (appending to TEST_STEPS / RUN_STEPS).
SHELL := /bin/bash
JOBS ?= $(shell nproc)
BUILD := build/release
CLI := $(BUILD)/relugrad
TEST_STEPS :=
RUN_STEPS :=

.PHONY: all deps build run test test-cpp clean
all: build

deps:
	@scripts/install-deps.sh

build: deps
	cmake --preset release $(CMAKE_ARGS) >/dev/null
	cmake --build --preset release -j $(JOBS)

test-cpp: build
	ctest --preset release -j $(JOBS)

-include mk/*.mk

test: test-cpp $(TEST_STEPS)
	@echo "make test: all test steps passed"

run: build
	$(CLI) info
	$(CLI) verify
	$(CLI) bench --dtype f32,bf16 --sizes 4K,64K,1M,16M --threads 1,2 --min-time 0.1
	@for step in $(RUN_STEPS); do $(MAKE) --no-print-directory $$step || exit 1; done

clean:
	rm -rf build
