import sys
import warnings
from pathlib import Path

import pytest

# The shared test inputs and framework adapters live in python/compat; the torch tests' helpers
# (torch_helpers.py) here, beside the folders of relugrad.torch's layers (torch_ops, torch_modules,
# torch_fusion, torch_surgery) whose tests import them.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "compat"))
sys.path.insert(0, str(Path(__file__).resolve().parent))


@pytest.fixture
def no_vmap_fallback_warning():
    """functorch's warning that an op has no batching rule (it then loops
    over the batch) is an error: every relugrad op has a real rule."""
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*performance drop.*")
        warnings.filterwarnings("error", message=".*batching rule.*")
        yield


@pytest.fixture(autouse=True)
def saved_bits_off():
    """replace_relu(mask=True) turns relugrad.torch.saved_bits on for the process: each test
    starts with it off (and inductor's partitioner config as torch ships it)."""
    yield
    if "relugrad.torch" in sys.modules:
        sys.modules["relugrad.torch"].saved_bits(False)
