"""A replaced model as an object, against the stock one: saved whole with torch.save and loaded in a
fresh process (which imports relugrad's files in the unpickler's order), each of the package's
files imported first, and what happens to each module's own state when replace_relu fuses it."""
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

import relugrad.torch as rt  # noqa: E402

# Every module of the package, each imported first (as an unpickler may: a pickled model names
# relugrad.torch.fusion's classes, for one).
PACKAGE_FILES = ["_layout", "_kernels", "_stock", "_native", "_stale", "_script", "_model_hooks", "ops",
                 "modules", "fusion", "mask_probe", "surgery"]


def _run(code):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)


def _model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Dropout(0.25), nn.Linear(16, 16), nn.ReLU6(),
                         nn.Linear(16, 4))


REPLACES = {
    "plain": dict(),
    "fuse_linear": dict(fuse_linear=True),
    "functional": dict(functional=True),
    "mask": dict(mask=True),
}


def test_saved_whole_models_load_in_a_fresh_process(tmp_path):
    """Every kind of replaced model, after a training step (the mask probe has decided), saved with
    torch.save and loaded by torch.load in a process that never imported relugrad: the same outputs.
    (Which of relugrad's files the unpickler imports first is the next test's matter.)"""
    x = torch.randn(5, 8)
    saved = {}
    for how, kwargs in REPLACES.items():
        model = rt.replace_relu(_model(), **kwargs)
        model(x).sum().backward()
        model.eval()
        with torch.no_grad():
            saved[how] = (model, model(x))
    torch.save({"models": saved, "x": x}, tmp_path / "m.pt")
    done = _run(f"""
import torch
saved = torch.load({str(tmp_path / 'm.pt')!r}, weights_only=False)
for how, (model, expected) in saved["models"].items():
    with torch.no_grad():
        y = model(saved["x"])
    assert torch.equal(y.view(torch.int32), expected.view(torch.int32)), how
    print(how, type(model[0]).__name__)
""")
    assert done.returncode == 0, done.stderr[-2000:]
    assert sorted(line.split()[0] for line in done.stdout.splitlines()) == sorted(REPLACES)


@pytest.mark.parametrize("name", PACKAGE_FILES)
def test_each_file_imports_first_in_a_fresh_process(name):
    done = _run(f"import relugrad.torch.{name}\nimport relugrad.torch as rt\n"
                "print(rt.LinearReLU.__name__, rt.replace_relu.__name__, rt.ReLUDropout.__name__)")
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["LinearReLU", "replace_relu", "ReLUDropout"]


def test_the_public_names_are_served_and_listed():
    for name in ("LinearReLU", "replace_relu", "restore_relu", "ReplaceReport", "ReplaceEntry", "ReplaceError",
                 "fuse_custom_config", "ReLUDropout", "hardtanh_grad", "NATIVE", "NATIVE_STATUS", "use_native"):
        assert name in rt.__all__ and name in dir(rt) and getattr(rt, name) is not None
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        rt.nothing_here  # noqa: B018
    assert not hasattr(rt, "nothing_here")


@pytest.mark.parametrize("how", sorted(REPLACES))
def test_a_deleted_replaced_model_is_freed_at_once_like_stock(how):
    """No reference cycle holds a replaced model: `del model` frees its parameters at once, with
    the cyclic collector off (a common training-loop setting), after a training step and a
    deepcopy, as a stock model's."""
    import copy
    import gc
    import weakref

    gc.collect()
    gc.disable()
    try:
        model = rt.replace_relu(_model(), **REPLACES[how])
        model(torch.randn(3, 8)).sum().backward()
        copy.deepcopy(model)
        weight = weakref.ref(model[0].weight)
        del model
        assert weight() is None
    finally:
        gc.enable()


@pytest.mark.parametrize("how", sorted(REPLACES))
def test_torch_jit_script_compiles_every_replaced_module(how):
    """ReLU and the fused modules all script (stock's ops where relugrad's eager
    paths do not compile); the scripted model computes the stock model's outputs."""
    import warnings

    stock = _model().eval()
    model = rt.replace_relu(_model(), **REPLACES[how]).eval()
    x = torch.randn(5, 8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # torch.jit.script's deprecation notice
        scripted = torch.jit.script(model)
    with torch.no_grad():
        assert torch.equal(scripted(x).view(torch.int32), stock(x).view(torch.int32))


@pytest.mark.parametrize("make", [lambda: rt.ReLUDropout(0.25), lambda: rt.LinearReLU(8, 8)],
                         ids=["ReLUDropout", "LinearReLU"])
@pytest.mark.parametrize("how", sorted(REPLACES))
def test_torch_jit_script_of_a_replaced_fused_module_itself(make, how):
    """A fused module given to replace_relu as the whole model: its TorchScript twin is made from
    the copy without replace_relu's model hooks, and scripts."""
    import warnings

    model = rt.replace_relu(make(), **REPLACES[how]).eval()
    x = torch.randn(5, 8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # torch.jit.script's deprecation notice
        scripted = torch.jit.script(model)
    with torch.no_grad():
        assert torch.equal(scripted(x), model(x))
