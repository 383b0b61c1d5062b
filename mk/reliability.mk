# Reliability tiers (docs/reliability.md): sanitizers, fuzzing, soak, valgrind.
#   make test-sanitize   sanitize tier: ASan+UBSan and TSan (presets asan, tsan)
#   make fuzz-ci         fuzz tier: each libFuzzer target for FUZZ_CI_SECONDS (20)
#   make fuzz            each target for FUZZ_SECONDS (60)
#   make soak-ci         soak tier: `relugrad soak` for SOAK_CI_DURATION (60s)
#   make valgrind        memcheck over a representative subset (slow; not in make test)
# Which tests each sanitizer skips is said by ctest labels (tests/CMakeLists.txt) and
# the test presets, not here. Sanitizer and fuzz builds compile with at most
# REL_JOBS jobs: with their instrumentation two jobs already fill a 2-core machine.
REL_JOBS ?= 2
FUZZ_SECONDS ?= 60
FUZZ_CI_SECONDS ?= 20
SOAK_CI_DURATION ?= 60s
SOAK_CI_MAX_BYTES ?= 128M
FUZZ_BUILD := build/fuzz
# -malloc_limit_mb: no single allocation may exceed it (the npy reader
# allocates at most the header, <= 1 MiB, and the payload that is really in
# the file; api_fuzz's arenas are < 1 MiB); -rss_limit_mb bounds the total.
FUZZ_FLAGS := -rss_limit_mb=1024 -malloc_limit_mb=64 -timeout=20 -max_len=65536 -print_final_stats=1

.PHONY: test-sanitize test-asan test-tsan fuzz fuzz-ci fuzz-build soak-ci valgrind

test-asan:
	cmake --preset asan >/dev/null
	cmake --build --preset asan -j $(REL_JOBS)
	ctest --preset asan -j $(REL_JOBS)

test-tsan:
	cmake --preset tsan >/dev/null
	cmake --build --preset tsan -j $(REL_JOBS)
	ctest --preset tsan -j $(REL_JOBS)

test-sanitize: test-asan test-tsan
	@echo "test-sanitize: ASan+UBSan and TSan suites passed"

fuzz-build:
	cmake --preset fuzz >/dev/null
	cmake --build --preset fuzz -j $(REL_JOBS)

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
VALGRIND_BUILD := build/valgrind
VALGRIND_TESTS := errors_test npy_test relu_grad_cpp_api_test work_plan_test reliability/hostile_api_test reliability/concurrency_test
MEMCHECK := valgrind --tool=memcheck --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect -q
valgrind:
	cmake --preset valgrind >/dev/null
	cmake --build --preset valgrind -j $(REL_JOBS)
	set -e; for t in $(VALGRIND_TESTS); do \
	  echo "valgrind: $$t"; $(MEMCHECK) --track-origins=yes $(VALGRIND_BUILD)/tests/$$t --gtest_brief=1; \
	done
	$(MEMCHECK) $(VALGRIND_BUILD)/relugrad verify --size 2000 --threads 1,3
	$(MEMCHECK) $(VALGRIND_BUILD)/relugrad soak --duration 20s --max-bytes 4M --progress none
