"""Live checks: run each installed framework now and compare with relugrad
bit for bit (NaN by class only where frameworks.NAN_BY_CLASS says why).
Frameworks that are not installed are reported as skipped; `make compat`
installs them."""
import os

import numpy as np
import pytest

import relugrad
import frameworks
from cases import DTYPES, random_case, special_case, tiled
from compare import mismatches
from nan_compare import same_bits

pytestmark = pytest.mark.live

# RELUGRAD_LIVE=tensorflow (say) limits a run to one framework: TensorFlow
# and PyTorch cannot share a process (mk/python.mk runs one per process).
ONLY = os.environ.get("RELUGRAD_LIVE", "")
AVAILABLE = frameworks.available(ONLY)
PARAMS = []
for adapter in frameworks.ADAPTERS:
    for dtype in adapter.dtypes:
        for t in adapter.thresholds:
            PARAMS.append(pytest.param(adapter, dtype, t, id=f"{adapter.name}-{dtype}-t{t:g}"))


def need(adapter_name: str) -> None:
    if adapter_name not in AVAILABLE:
        framework = adapter_name.split(".")[0]
        installed = frameworks.framework_version(framework) is not None
        why = "not selected by RELUGRAD_LIVE" if installed else "not installed (make compat installs it)"
        pytest.skip(f"{framework} {why}")


@pytest.mark.parametrize("adapter, dtype, threshold", PARAMS)
@pytest.mark.parametrize("case", ["special", "special_large", "random"])
def test_framework(adapter, dtype, threshold, case):
    need(adapter.name)
    if case == "special":
        dy, s = special_case(dtype)
    elif case == "special_large":
        dy, s = (tiled(a, 1 << 16) for a in special_case(dtype))
    else:
        dy, s = random_case(dtype, n=50_000, seed=99)
    want = adapter.fn(dy, s, threshold)
    got = relugrad.relu_grad(dy, s, semantics=adapter.preset, threshold=threshold, **adapter.options())
    policy = frameworks.nan_policy(adapter.framework, dtype)
    assert same_bits(want, got, policy), "\n".join(mismatches(dy, s, want, got))


def test_torch_bf16_threshold_is_compared_in_f32():
    need("torch.threshold_backward")
    # PyTorch 1.13 rounded t = 0.1 to bf16
    # (0.10009765625) and gave 0 for that gate; current PyTorch compares in
    # f32 and passes dy. relugrad's default (threshold_rounding="compute") agrees.
    s = np.array([0.10009765625, 0.099609375], dtype=DTYPES["bf16"])
    dy = np.array([1.0, 1.0], dtype=DTYPES["bf16"])
    want = AVAILABLE["torch.threshold_backward"].fn(dy, s, 0.1)
    assert want.astype(np.float32).tolist() == [1.0, 0.0]
    assert relugrad.relu_grad(dy, s, threshold=0.1).astype(np.float32).tolist() == [1.0, 0.0]


def test_torch_f16_signalling_nan_dy_is_quieted_by_the_vector_body():
    # The exception to "relugrad run == aten::threshold_backward bit for bit
    # for f16": aten's CPU vector body (blocks of 32 elements) widens f16 to
    # f32 and back, quieting a signalling NaN dy on an open gate; its scalar
    # tail and relugrad copy the bits. Quiet NaNs agree at every n.
    need("torch.threshold_backward")
    fn = AVAILABLE["torch.threshold_backward"].fn
    for n, aten_bits in ((31, 0x7C01), (32, 0x7E01)):
        dy = np.full(n, 0x7C01, np.uint16).view(np.float16)
        s = np.ones(n, np.float16)
        assert set(fn(dy, s, 0.0).view(np.uint16).tolist()) == {aten_bits}, n
        assert set(relugrad.relu_grad(dy, s).view(np.uint16).tolist()) == {0x7C01}, n
        q = np.full(n, 0x7E05, np.uint16).view(np.float16)
        assert np.array_equal(fn(q, s, 0.0).view(np.uint16), relugrad.relu_grad(q, s).view(np.uint16)), n


@pytest.mark.parametrize("name", ["jax.vjp_relu", "tensorflow.ReluGrad"])
def test_subnormal_gate_is_zero(name):
    # The measurement behind the tensorflow and jax presets' FTZ/DAZ.
    need(name)
    s = np.array([1e-45, 1e-39, 1.0], dtype=np.float32)  # two f32 subnormals
    dy = np.array([1.0, 1.0, 1.0], dtype=np.float32)
    assert AVAILABLE[name].fn(dy, s, 0.0).tolist() == [0.0, 0.0, 1.0]


def test_jax_arrays_in_jax_arrays_out():
    need("jax.vjp_relu")
    import jax
    import jax.numpy as jnp
    dy = jnp.asarray(np.array([1.0, -2.0, 3.0], np.float32))
    x = jnp.asarray(np.array([1.0, 1.0, -1.0], np.float32))
    dx = relugrad.relu_grad(dy, x, semantics="jax")
    assert isinstance(dx, jax.Array)
    assert np.asarray(dx).tolist() == [1.0, -2.0, 0.0]
    xb = jnp.asarray(np.array([1.0, -1.0], np.float32)).astype(jnp.bfloat16)
    assert relugrad.relu_grad(xb, xb, semantics="jax").dtype == jnp.bfloat16


# ------------------------------------------- thresholds on rounding boundaries
import functools  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

import rounding_cases  # noqa: E402

ROUNDING = [pytest.param(dtype, i, id=f"{dtype}-{i}-t{t!r}")
            for dtype, ts in rounding_cases.BOUNDARY_THRESHOLDS.items() for i, t in enumerate(ts)]


@functools.lru_cache(maxsize=None)
def _torch_rounding_runs():
    return rounding_cases.torch_runs()


def _check_rounding_run(r):
    dy, s, want = (r[k].view(DTYPES[r["dtype"]]) for k in ("dy", "s", "dx"))
    overrides = dict(kv.split("=") for kv in r["overrides"].split(",") if "=" in kv)
    got = relugrad.relu_grad(dy, s, threshold=r["threshold"], **overrides)
    assert same_bits(want, got, "exact"), (f"torch {r['version']} {r['op']} {r['dtype']} t={r['threshold']!r}\n" +
                                           "\n".join(mismatches(dy, s, want, got)))


@pytest.mark.parametrize("dtype, index", ROUNDING)
def test_torch_threshold_on_rounding_boundaries(dtype, index):
    # threshold_backward with t as a Python float (2.x: compared in f32), and
    # with t first converted by torch.full (PyTorch's double -> f32 -> 16-bit,
    # which threshold_rounding="dtype" must reproduce).
    need("torch.threshold_backward")
    runs = [r for r in _torch_rounding_runs() if r["dtype"] == dtype and r["index"] == index]
    assert runs and all("dx" in r for r in runs), runs
    for r in runs:
        _check_rounding_run(r)


@pytest.mark.parametrize("dtype", ["bf16", "f16"])
def test_torch_clamp_bounds_round_like_relugrad_clip(dtype):
    # relugrad's clip bounds reach a 16-bit type as torch.clamp's do.
    need("torch.threshold_backward")
    import torch
    for t in rounding_cases.BOUNDARY_THRESHOLDS[dtype]:
        dy_bits, _ = rounding_cases.boundary_case(dtype, t)
        dy = dy_bits.view(DTYPES[dtype])
        s = np.ones_like(dy)
        big = 6e4  # inside both types: torch refuses a bound the type cannot hold
        for lo, hi in ((t, big), (-big, t)):
            want_t = torch.clamp(frameworks._torch_in(dy), min=lo, max=hi)
            want = frameworks._torch_out(want_t, dy.dtype)
            got = relugrad.relu_grad(dy, s, clip=(lo, hi))
            assert same_bits(want, got, "exact"), (dtype, lo, hi, "\n".join(mismatches(dy, s, want, got)))


def test_torch_bf16_dtype_rounding_reproducer():
    # bf16, t = 1 + 2^-8 + 2^-40: torch converts t to 1.0 (two roundings), so
    # s = 1.0078125 is above it and dy passes; one rounding would give
    # t = 1.0078125 and a closed gate.
    need("torch.threshold_backward")
    import torch
    t = 1 + 2 ** -8 + 2 ** -40
    assert int(torch.full((), t, dtype=torch.bfloat16).view(torch.int16)) == 0x3F80
    dy = np.array([0x3F80], np.uint16).view(DTYPES["bf16"])
    s = np.array([0x3F81], np.uint16).view(DTYPES["bf16"])
    got = relugrad.relu_grad(dy, s, threshold=t, threshold_rounding="dtype")
    assert got.view(np.uint16).tolist() == [0x3F80]


def _check_dtype_rounding_is(dtype, t, converted):
    # relugrad's threshold_rounding="dtype" turns t into `converted` (the value
    # torch.full((), t, dtype=...) gave): s = converted is closed, the next
    # value up is open.
    b = int(np.array([converted], DTYPES[dtype]).view(np.uint16)[0])
    up = b - 1 if b & 0x8000 and b != 0x8000 else (1 if b == 0x8000 else b + 1)
    s = np.array([b, up], np.uint16).view(DTYPES[dtype])
    dy = np.ones(2, DTYPES[dtype])
    got = relugrad.relu_grad(dy, s, threshold=t, threshold_rounding="dtype")
    assert got.astype(np.float32).tolist() == [0.0, 1.0], (dtype, t, converted)


# PyTorch 1.x lives in its own venv (it needs numpy < 2), e.g.
#   python3 -m venv /tmp/venv-t113 && /tmp/venv-t113/bin/pip install torch==1.13.1 "numpy<2"
# RELUGRAD_TORCH_OLD_PYTHON names its interpreter; torch runs there, relugrad here.
OLD_PYTHON = os.environ.get("RELUGRAD_TORCH_OLD_PYTHON", "")


@functools.lru_cache(maxsize=None)
def _old_torch_runs():
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(rounding_cases.__file__)
        subprocess.run([OLD_PYTHON, str(script), "--out", tmp], check=True)
        return rounding_cases.load_runs(Path(tmp))


def test_old_torch_threshold_rounds_to_the_data_type():
    if not OLD_PYTHON:
        pytest.skip("RELUGRAD_TORCH_OLD_PYTHON is not set (an interpreter with torch 1.x)")
    runs = _old_torch_runs()
    assert runs[0]["version"].startswith("1."), runs[0]["version"]
    for r in runs:
        if r["dtype"] == "f16":
            # 1.13.1 has no f16 threshold kernel on the CPU.
            assert "not implemented for 'Half'" in r.get("error", ""), r
            if r["op"] == "threshold_backward.t_full":
                _check_dtype_rounding_is(r["dtype"], r["threshold"], r["t_arg"])
            continue
        _check_rounding_run(r)
    repro = [r for r in runs if r["dtype"] == "bf16" and r["op"] == "threshold_backward"
             and r["threshold"] == 1 + 2 ** -8 + 2 ** -40]
    assert len(repro) == 1
    # The reproducer's element: dy = 1.0 on the gate s = 1.0078125 passes.
    i = [k for k, (d, g) in enumerate(zip(repro[0]["dy"], repro[0]["s"])) if d == 0x3F80 and g == 0x3F81]
    assert [int(repro[0]["dx"][k]) for k in i] == [0x3F80]


@pytest.mark.parametrize("dtype", ["bf16", "f16"])
def test_torch_leaky_relu_slope_is_a_float_factor(dtype):
    # alpha is never rounded to the data type: PyTorch's leaky_relu_backward
    # multiplies a 16-bit dy by the slope as a float (opmath) and rounds the
    # product once, as relugrad does; rounding the slope to the data type
    # first (torch.full) changes many results.
    need("torch.threshold_backward")
    import torch
    rng = np.random.default_rng(3)
    dy = rng.standard_normal(4096).astype(DTYPES[dtype])
    x = (-np.abs(rng.standard_normal(4096)) - 0.5).astype(DTYPES[dtype])  # closed gates
    tdt = {"bf16": torch.bfloat16, "f16": torch.float16}[dtype]
    for slope in (0.1, 0.3333333333, 1 + 2 ** -8 + 2 ** -20, 1 + 2 ** -11 + 2 ** -21):
        want = frameworks._torch_out(torch.ops.aten.leaky_relu_backward(
            frameworks._torch_in(dy), frameworks._torch_in(x), slope, False), dy.dtype)
        got = relugrad.relu_grad(dy, x, semantics="onednn", alpha=slope, combine="select")
        assert same_bits(want, got, "exact"), (dtype, slope, "\n".join(mismatches(dy, x, want, got)))
    # The other decision would be visible: slope 0.1 rounded to the data type first.
    rounded = float(torch.full((), 0.1, dtype=tdt))
    want = frameworks._torch_out(torch.ops.aten.leaky_relu_backward(
        frameworks._torch_in(dy), frameworks._torch_in(x), 0.1, False), dy.dtype)
    assert not same_bits(want, relugrad.relu_grad(dy, x, semantics="onednn", alpha=rounded, combine="select"), "exact")
