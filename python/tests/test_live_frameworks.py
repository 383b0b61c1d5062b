"""Live checks: run each installed framework now and compare with relugrad
bit for bit (NaN by class only where frameworks.NAN_BY_CLASS says why).
Frameworks that are not installed are reported as skipped; `make compat`
installs them."""
import os

import numpy as np
import pytest

import relugrad
import frameworks
from cases import DTYPES, THRESHOLDS, random_case, special_case, tiled
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
    # The question of issue 2: PyTorch 1.13 rounded t = 0.1 to bf16
    # (0.10009765625) and gave 0 for that gate; current PyTorch compares in
    # f32 and passes dy. relugrad's default (threshold_rounding="compute") agrees.
    s = np.array([0.10009765625, 0.099609375], dtype=DTYPES["bf16"])
    dy = np.array([1.0, 1.0], dtype=DTYPES["bf16"])
    want = AVAILABLE["torch.threshold_backward"].fn(dy, s, 0.1)
    assert want.astype(np.float32).tolist() == [1.0, 0.0]
    assert relugrad.relu_grad(dy, s, threshold=0.1).astype(np.float32).tolist() == [1.0, 0.0]


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
