# The Python package and the framework checks (docs/python.md).
#   make python-lint       ruff and the import-linter contracts (pyproject.toml) over python/: in make check
#   make python-test       python tier: .venv (this machine's python3), `pip install .`, pytest
#                          (NumPy formulas, API, goldens, torch custom ops and autograd ReLU)
#   make test-live         live tier: relugrad against the installed torch, bit for bit
#   make python-test-cuda  a second wheel with the CUDA backend, its tests (device cases skip
#                          without a GPU; the no-device errors are checked); in make test via test-cuda
#   make compat            + TensorFlow, JAX (CPU), MindSpore and torch 1.13.1 (own venvs), oneDNN: regenerates
#                          tests/golden and runs every live check, one framework per process
#   make compat-cli        the CLI against aten::threshold_backward (needs .venv's torch)
#   make mask-live         `relugrad forward` against torch, tf.nn.relu, jax.nn.relu
#   make mask-memory       saved-for-backward bytes: nn.ReLU vs relugrad ReLU(mask=True)
#   make demo-train        the digits CNN demo: torch ReLU vs relugrad ReLU (CPU)
# Framework versions are not pinned: the goldens' manifest records what made them.
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip --disable-pip-version-check
PY_TEST_REQUIREMENTS := python/requirements-test.txt
PY_COMPAT_DEPS := tensorflow-cpu "jax[cpu]"
PYTEST := $(PY) -m pytest -p no:cacheprovider

.PHONY: python-venv python-lint python-install python-test test-live python-test-cuda mask-memory compat \
        compat-deps compat-torch-old compat-mindspore compat-run compat-cli mask-live demo-train

$(PY):
	python3 -m venv $(VENV)

# pip does nothing when every requirement is already there.
python-venv: $(PY)
	@$(PIP) install -q -r $(PY_TEST_REQUIREMENTS)

# Lint the source tree, not the installed package: import-linter reads python/relugrad through
# PYTHONPATH (it parses the files; nothing is imported or built).
python-lint: python-venv
	$(VENV)/bin/ruff check python
	PYTHONPATH=python $(VENV)/bin/lint-imports pyproject.toml

# The same CMake project as the C++ library; scikit-build-core builds in build/wheel.
# --no-build-isolation: the build sees .venv's torch and builds the torch-native library;
# RELUGRAD_TORCH_NATIVE=ON makes a torch it cannot be built for an error here (users' AUTO builds
# the package without it), so the tests never run without it unnoticed. --config-settings, not
# its short -C: Debian 12's pip (23.0) has only the long form.
python-install: python-venv
	$(PIP) install -q --no-build-isolation --config-settings=cmake.define.RELUGRAD_TORCH_NATIVE=ON .

# The README's Python and shell blocks (pytest-codeblocks), with the CLI and the venv first on
# PATH as the README's reader has them; `console` blocks (make run, make test, pip install: minutes
# each) are shown, not run.
python-test: python-install build
	$(PYTEST) -q -m "not live" python/tests
	PATH="$(CURDIR)/build/release:$(CURDIR)/$(VENV)/bin:$$PATH" $(PYTEST) -q --codeblocks README.md

# Live checks import one framework per process: TensorFlow and PyTorch's
# triton abort when both are loaded into one interpreter.
test-live: python-install
	RELUGRAD_LIVE=torch $(PYTEST) -q -m live python/tests

# The CUDA-enabled package, built beside (not into) .venv: the default wheel
# stays CPU-only so it needs no CUDA runtime. Installed with --target into
# build/wheel-cuda/site and tested through PYTHONPATH with .venv's torch (PyPI's
# CUDA build); RELUGRAD_TORCH_NATIVE=ON: the torch extension must compile
# against it too, never silently left out.
PY_CUDA_SITE := build/wheel-cuda/site
python-test-cuda: python-venv
	@if [ -z "$(NVCC)" ]; then echo "python-test-cuda: no nvcc here: CUDA wheel not built (SKIPPED)"; exit 0; fi; \
	set -e; rm -rf build/wheel-cuda/dist $(PY_CUDA_SITE); \
	PATH="$$(dirname $(NVCC)):$$PATH" $(PIP) wheel -q --no-build-isolation --no-deps --config-settings=build-dir=build/wheel-cuda \
	  --config-settings=cmake.define.RELUGRAD_CUDA=ON --config-settings=cmake.define.RELUGRAD_TORCH_NATIVE=ON \
	  -w build/wheel-cuda/dist . ; \
	$(PIP) install -q --no-deps --target $(PY_CUDA_SITE) build/wheel-cuda/dist/*.whl; \
	PYTHONPATH=$(PY_CUDA_SITE) $(PYTEST) -q python/tests/test_cuda.py python/tests/test_mask.py python/tests/test_api.py \
	  python/tests/torch_modules/test_native_cuda.py

mask-memory: python-install
	$(PY) python/examples/mask_memory.py

compat-deps: python-install
	$(PIP) install -q $(PY_COMPAT_DEPS)

# MindSpore gets its own venv: it is large (~800 MB) and must not share a
# process (or pinned dependencies) with TensorFlow and PyTorch.
MS_VENV := build/venv-mindspore
MS_PY := $(MS_VENV)/bin/python
compat-mindspore:
	@test -x $(MS_PY) || python3 -m venv $(MS_VENV)
	@if $(MS_PY) -m pip install -q --disable-pip-version-check mindspore ml_dtypes pytest scikit-build-core nanobind && \
	    $(MS_PY) -m pip install -q --disable-pip-version-check --no-build-isolation --config-settings=build-dir=build/wheel-mindspore . ; then \
	  $(MS_PY) python/compat/gen_goldens.py --frameworks mindspore && \
	  RELUGRAD_LIVE=mindspore $(MS_PY) -m pytest -p no:cacheprovider -q -m live python/tests/test_live_frameworks.py; \
	else echo "compat: mindspore not installable here: its live checks are SKIPPED"; fi

# torch 1.13.1 (threshold rounding as the 1.x releases did it) in a venv of its own; the
# goldens and the live checks run it in a subprocess named by RELUGRAD_TORCH_OLD_PYTHON.
TORCH_OLD_VENV := build/venv-torch113
TORCH_OLD_PY := $(CURDIR)/$(TORCH_OLD_VENV)/bin/python
compat-torch-old:
	@test -x $(TORCH_OLD_PY) || python3 -m venv $(TORCH_OLD_VENV)
	@$(TORCH_OLD_PY) -m pip install -q --disable-pip-version-check "torch==1.13.1" "numpy<2" || \
	  echo "compat: torch 1.13.1 not installable here: its checks report SKIPPED"

compat: compat-deps compat-torch-old build
	@$(MAKE) --no-print-directory compat-run

# The checks themselves, against the C++ build in build/release.
compat-run: export RELUGRAD_TORCH_OLD_PYTHON := $(if $(wildcard $(TORCH_OLD_PY)),$(TORCH_OLD_PY))
compat-run:
	$(PY) python/compat/gen_goldens.py --frameworks torch,tensorflow,jax
	@set -e; for fw in torch tensorflow jax; do \
	  echo "== live checks: $$fw"; \
	  RELUGRAD_LIVE=$$fw $(PYTEST) -q -m live python/tests/test_live_frameworks.py; \
	done
	@$(MAKE) --no-print-directory compat-mindspore
	$(PYTEST) -q python/tests/test_goldens.py
	cmake --build --preset release -j $(JOBS) --target onednn_test golden_test
	build/release/tests/onednn/onednn_test
	build/release/tests/golden/golden_test --gtest_brief=1
	@echo "make compat: all live checks passed"

compat-cli: build python-venv
	$(PY) tests/cli/cli_vs_torch.py $(CLI)

mask-live: build python-venv
	$(PY) tests/mask/live_forward_check.py $(CLI)

demo-train: python-install
	@$(PIP) install -q scikit-learn
	$(PY) python/examples/train_digits.py
