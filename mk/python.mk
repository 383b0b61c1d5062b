# Python package and framework integration (issue 4). See docs/python.md.
#
#   make python-test   .venv (machine's python3), `pip install .`, pytest: NumPy formulas,
#                      API, goldens, torch custom op/autograd, live PyTorch checks   [in make test]
#   make compat        + TensorFlow (CPU), JAX (CPU), MindSpore (own venv), oneDNN (Debian):
#                      regenerates tests/golden, runs every live check, one framework per process
#   make demo-train    the digits CNN demo: torch ReLU vs relugrad ReLU (CPU)
#   make python-test-cuda  a second wheel with the CUDA backend (build/wheel-cuda, when nvcc
#                      exists), its CUDA tests: device paths skip without a GPU, the no-device
#                      errors are checked                                          [in make test]
#   make mask-memory   saved-for-backward bytes: nn.ReLU vs relugrad ReLU(mask=True)
#
# Framework versions are not pinned: the goldens' manifest records what made them.
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip --disable-pip-version-check
# Everything `make test` needs. PyPI's torch wheel for Linux pulls CUDA
# libraries (~3 GB); measured here: venv + torch + test deps in 67 s, so the
# torch tests run in every `make test` rather than being skipped.
PY_TEST_REQUIREMENTS := python/requirements-test.txt
PY_COMPAT_DEPS := tensorflow-cpu "jax[cpu]"
PYTEST := $(PY) -m pytest -p no:cacheprovider

.PHONY: python-venv python-install python-test python-test-cuda mask-memory compat compat-deps compat-mindspore compat-run demo-train onednn-deps

# oneDNN (Debian libdnnl-dev) must be present when the C++ build is configured
# for tests/onednn to compare against it (without it the test reports SKIPPED).
onednn-deps:
	@scripts/install-deps.sh libdnnl-dev
deps: onednn-deps

$(PY):
	@scripts/install-deps.sh python3 python3-venv python3-dev
	python3 -m venv $(VENV)

python-venv: $(PY)
	@$(PIP) install -q -r $(PY_TEST_REQUIREMENTS)

# The same CMake project as the C++ library; scikit-build-core builds in build/wheel.
python-install: python-venv
	$(PIP) install -q --no-build-isolation .

# Live checks import one framework per process: TensorFlow and PyTorch's
# triton abort when both are loaded into one interpreter.
python-test: python-install
	$(PYTEST) -q python/tests --ignore=python/tests/test_live_frameworks.py
	RELUGRAD_LIVE=torch $(PYTEST) -q python/tests/test_live_frameworks.py

TEST_STEPS += python-test

# The CUDA-enabled package, built beside (not into) .venv: the default wheel
# stays CPU-only so it needs no CUDA runtime. Installed with --target into
# build/wheel-cuda/site and tested through PYTHONPATH with .venv's torch.
NVCC := $(firstword $(shell command -v nvcc 2>/dev/null) $(wildcard /usr/local/cuda/bin/nvcc))
PY_CUDA_SITE := build/wheel-cuda/site
python-test-cuda: python-venv
	@if [ -z "$(NVCC)" ]; then echo "python-test-cuda: no nvcc here: CUDA wheel not built (SKIPPED)"; exit 0; fi; \
	set -e; rm -rf build/wheel-cuda/dist $(PY_CUDA_SITE); \
	PATH="$$(dirname $(NVCC)):$$PATH" $(PIP) wheel -q --no-build-isolation --no-deps -C build-dir=build/wheel-cuda \
	  -C cmake.define.RELUGRAD_CUDA=ON -w build/wheel-cuda/dist . ; \
	$(PIP) install -q --no-deps --target $(PY_CUDA_SITE) build/wheel-cuda/dist/*.whl; \
	PYTHONPATH=$(PY_CUDA_SITE) $(PYTEST) -q python/tests/test_cuda.py python/tests/test_mask.py python/tests/test_api.py

ifneq ($(NVCC),)
TEST_STEPS += python-test-cuda
endif

mask-memory: python-install
	$(PY) python/examples/mask_memory.py

compat-deps: python-install onednn-deps
	$(PIP) install -q $(PY_COMPAT_DEPS)

# MindSpore gets its own venv: it is large (~800 MB) and must not share a
# process (or pinned dependencies) with TensorFlow and PyTorch.
MS_VENV := build/venv-mindspore
MS_PY := $(MS_VENV)/bin/python
compat-mindspore:
	@test -x $(MS_PY) || python3 -m venv $(MS_VENV)
	@if $(MS_PY) -m pip install -q --disable-pip-version-check mindspore ml_dtypes pytest scikit-build-core nanobind && \
	    $(MS_PY) -m pip install -q --disable-pip-version-check --no-build-isolation -C build-dir=build/wheel-mindspore . ; then \
	  $(MS_PY) python/compat/gen_goldens.py --frameworks mindspore && \
	  RELUGRAD_LIVE=mindspore $(MS_PY) -m pytest -p no:cacheprovider -q python/tests/test_live_frameworks.py; \
	else echo "compat: mindspore not installable here: its live checks are SKIPPED"; fi

compat: compat-deps build
	@$(MAKE) --no-print-directory compat-run

# The checks themselves, against the C++ build in $(BUILD).
compat-run:
	$(PY) python/compat/gen_goldens.py --frameworks torch,tensorflow,jax
	@set -e; for fw in torch tensorflow jax; do \
	  echo "== live checks: $$fw"; \
	  RELUGRAD_LIVE=$$fw $(PYTEST) -q python/tests/test_live_frameworks.py; \
	done
	@$(MAKE) --no-print-directory compat-mindspore
	$(PYTEST) -q python/tests/test_goldens.py
	cmake --build $(BUILD) -j $(JOBS) --target onednn_test golden_test
	$(BUILD)/tests/onednn/onednn_test
	$(BUILD)/tests/golden/golden_test --gtest_brief=1
	@echo "make compat: all live checks passed"

demo-train: python-install
	@$(PIP) install -q scikit-learn
	$(PY) python/examples/train_digits.py
