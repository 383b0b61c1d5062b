# Reliability (issue 6): sanitizers, fuzzing, soak, valgrind. See docs/reliability.md.
#
#   make test-sanitize   ASan+UBSan and TSan builds (presets asan/tsan), C++ suite + CLI bad-input tests
#   make fuzz            each libFuzzer target for FUZZ_SECONDS (default 60)
#   make fuzz-ci         each target for FUZZ_CI_SECONDS (default 20)        [in make test]
#   make soak-ci         `relugrad soak` for SOAK_CI_DURATION (default 60s)   [in make test]
#   make valgrind        memcheck over a representative subset (not in CI: slow)
#
# Sanitizer/fuzz builds use their own dirs (build/asan, build/tsan, build/fuzz,
# build/reliability) and at most REL_JOBS compile jobs (the CI box has 2 cores).
REL_JOBS ?= 2
FUZZ_SECONDS ?= 60
FUZZ_CI_SECONDS ?= 20
SOAK_CI_DURATION ?= 60s
SOAK_CI_MAX_BYTES ?= 128M
FUZZ_BUILD := build/fuzz
FUZZ_TARGETS := npy_fuzz api_fuzz
# -malloc_limit_mb: no single allocation may exceed it (the npy reader
# allocates at most the header, <= 1 MiB, and the payload that is really in
# the file; api_fuzz's arenas are < 1 MiB); -rss_limit_mb bounds the total.
FUZZ_FLAGS := -rss_limit_mb=1024 -malloc_limit_mb=64 -timeout=20 -max_len=65536 -print_final_stats=1
# package.find_package builds an uninstrumented consumer against the
# instrumented library, which ASan refuses by design; it runs in test-cpp.
SANITIZE_EXCLUDE := ^package\.
# Under TSan (5-15x slower; the whole suite took 15 min here) the long
# sweeps that start no threads (exhaustive 16-bit, framework goldens,
# reference sweeps, live oneDNN, CUDA host emulation, the Ascend cost model)
# add nothing a race detector needs: they run in test-cpp and under ASan.
# Of the big threaded sweeps, one representative per kind stays (large
# arrays with two threads on avx3); the pool, concurrency, CLI, soak, mask
# and Ascend-twin tests all run.
TSAN_SLOW := Exhaustive16|^Frameworks/Golden\.|^Reference(F32|F16|BF16|F64)?\.|^Live/Onednn\.|^AscendCostModel\.
TSAN_SLOW := $(TSAN_SLOW)|^CudaElementTest\.|^CudaKernelHostTest\.|^CudaMaskHostTest\.|^Threads\.EveryThreadCountGivesTheSameBits
TSAN_SLOW := $(TSAN_SLOW)|^Targets/KernelTest\.LargeRandomArrays|^Targets/StreamingTest\.TwoThreadsLargeArrays/(avx2|sse4|ssse3|scalar)
TSAN_EXCLUDE := $(SANITIZE_EXCLUDE)|$(TSAN_SLOW)
# ASAN_OPTIONS/UBSAN_OPTIONS/TSAN_OPTIONS come from the test presets.

.PHONY: test-sanitize test-asan test-tsan fuzz fuzz-ci fuzz-build soak-ci valgrind rel-deps

rel-deps:
	@scripts/install-deps.sh cmake g++ make pkg-config libhwy-dev libgtest-dev clang-14 libclang-rt-14-dev valgrind

test-asan: rel-deps
	cmake --preset asan >/dev/null
	cmake --build --preset asan -j $(REL_JOBS)
	ctest --preset asan -j $(REL_JOBS) -E '$(SANITIZE_EXCLUDE)'

test-tsan: rel-deps
	cmake --preset tsan >/dev/null
	cmake --build --preset tsan -j $(REL_JOBS)
	ctest --preset tsan -j $(REL_JOBS) -E '$(TSAN_EXCLUDE)'

test-sanitize: test-asan test-tsan
	@echo "test-sanitize: ASan+UBSan and TSan suites passed"

fuzz-build: rel-deps
	cmake -S . -B $(FUZZ_BUILD) -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
	  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRELUGRAD_BUILD_FUZZ=ON -DRELUGRAD_BUILD_TESTS=OFF \
	  -DRELUGRAD_BUILD_TOOLS=OFF -DRELUGRAD_INSTALL=OFF -DBUILD_SHARED_LIBS=OFF -DRELUGRAD_CUDA=OFF >/dev/null
	cmake --build $(FUZZ_BUILD) -j $(REL_JOBS) --target $(FUZZ_TARGETS)

# New inputs go to build/fuzz/corpus/<target> (the first corpus dir); the
# committed seeds in fuzz/corpus/<target> are read only. Copy interesting
# new inputs into fuzz/corpus/ to keep them.
# A crash writes build/fuzz/artifacts/<target>/crash-* and fails the step.
define run_fuzzer
	mkdir -p $(FUZZ_BUILD)/corpus/$(1) $(FUZZ_BUILD)/artifacts/$(1)
	$(FUZZ_BUILD)/fuzz/$(1) $(FUZZ_FLAGS) -max_total_time=$(2) \
	  -artifact_prefix=$(FUZZ_BUILD)/artifacts/$(1)/ $(FUZZ_BUILD)/corpus/$(1) fuzz/corpus/$(1) 2>&1 | \
	  tee $(FUZZ_BUILD)/$(1).log | grep -E '^(#[0-9]+ +DONE|stat::|==[0-9]+==ERROR|SUMMARY|INFO: Seed|.*property violated)' ; \
	  test $${PIPESTATUS[0]} -eq 0
endef

fuzz: fuzz-build
	$(call run_fuzzer,npy_fuzz,$(FUZZ_SECONDS))
	$(call run_fuzzer,api_fuzz,$(FUZZ_SECONDS))

fuzz-ci: fuzz-build
	$(call run_fuzzer,npy_fuzz,$(FUZZ_CI_SECONDS))
	$(call run_fuzzer,api_fuzz,$(FUZZ_CI_SECONDS))

# The release CLI (built by `make build`), about a minute of random checked calls.
soak-ci: build
	$(CLI) soak --duration $(SOAK_CI_DURATION) --max-bytes $(SOAK_CI_MAX_BYTES) --progress lines

# Valgrind memcheck, once, over a plain -O2 -g build (Valgrind cannot run
# AVX-512, so Highway dispatches to AVX2 there; it does not mix with ASan).
VALGRIND_TESTS := errors_test npy_test cpp_api_test work_plan_test reliability/hostile_api_test reliability/concurrency_test
valgrind: rel-deps
	cmake -S . -B build/reliability -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRELUGRAD_CUDA=OFF >/dev/null
	cmake --build build/reliability -j $(REL_JOBS)
	set -e; for t in $(VALGRIND_TESTS); do \
	  echo "valgrind: $$t"; \
	  valgrind --tool=memcheck --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
	    --track-origins=yes -q build/reliability/tests/$$t --gtest_brief=1; \
	done
	valgrind --tool=memcheck --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect -q \
	  build/reliability/relugrad verify --size 2000 --threads 1,3
	valgrind --tool=memcheck --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect -q \
	  build/reliability/relugrad soak --duration 20s --max-bytes 4M --progress none

TEST_STEPS += test-sanitize fuzz-ci soak-ci
