"""Helpers shared by the torch test modules: bit views, special-value inputs and the
fixture that runs a test through each eager path of relugrad.torch.ReLU."""
import contextlib

import pytest
import torch

import relugrad.torch as rt


def bits(t):
    """t's bits as integers of its element size (a contiguous copy), for exact comparison."""
    t = t.detach().contiguous()
    return t.view({2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()])


def values(shape, dtype=torch.float32, seed=0):
    """Random values with +0, -0 and NaN at fixed strides, converted from f64 to dtype."""
    g = torch.Generator().manual_seed(seed)
    t = torch.randn(shape, generator=g, dtype=torch.float64)
    t.view(-1)[::5] = 0.0
    t.view(-1)[1::7] = -0.0
    t.view(-1)[2::9] = float("nan")
    return t.to(dtype)


@pytest.fixture(params=["native", "ops"])
def eager_path(request):
    """Runs a test through each eager path of ReLU: the C++ entry and autograd nodes of
    _relugrad_torch.so, and the custom ops that serve when it is absent
    (relugrad.torch.use_native(False) for ReLU's entry)."""
    if request.param == "native":
        if not rt.NATIVE:
            pytest.skip(f"the torch-native ReLU is not loaded: {rt.NATIVE_STATUS}")
        yield request.param
    else:
        with rt.use_native(False, entries=("relu",)):
            yield request.param


@pytest.fixture
def native_off():
    """native_off(*entries): turns the named torch-native entries off until the test ends."""
    with contextlib.ExitStack() as stack:
        yield lambda *entries: stack.enter_context(rt.use_native(False, entries=entries))
