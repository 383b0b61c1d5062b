# Ascend kernel + CPU twin (issue 8): `make ascend-test` builds build/ascend
# and runs the twin suites; `make ascend-cost` prints the pipe cost model.
# (`make test` already runs these suites through the release build.)
.PHONY: ascend-build ascend-test ascend-cost
ASCEND_BUILD := build/ascend

ascend-build: deps
	cmake -S . -B $(ASCEND_BUILD) -DCMAKE_BUILD_TYPE=Release -DRELUGRAD_CUDA=OFF >/dev/null
	cmake --build $(ASCEND_BUILD) -j $(JOBS) --target ascend_kernel_test ascend_violation_test ascend_tiling_test

ascend-test: ascend-build
	ctest --test-dir $(ASCEND_BUILD) -L ascend -j $(JOBS) --output-on-failure

ascend-cost: ascend-build
	$(ASCEND_BUILD)/tests/ascend/ascend_tiling_test --gtest_filter='*CostModel*'
