"""Adapters that run ReluGrad in real frameworks on NumPy inputs and hand back
NumPy outputs of the same dtype (bits untouched on the way in and out).

Each adapter: fn(dy, s, threshold) -> dx. `available()` lists those whose
framework imports here. Every adapter pins the CPU device."""
from __future__ import annotations

import os
from typing import Callable, Dict, NamedTuple, Optional, Tuple

import ml_dtypes
import numpy as np

BF16 = np.dtype(ml_dtypes.bfloat16)


class Adapter(NamedTuple):
    name: str        # golden/test id, e.g. "torch.threshold_backward"
    framework: str   # PyPI name whose version is recorded
    preset: str      # relugrad preset that must reproduce it
    thresholds: Tuple[float, ...]  # thresholds the framework op takes (others: 0 only)
    gate: str        # "x" or "y": what the framework gates on
    fn: Callable[[np.ndarray, np.ndarray, float], np.ndarray]
    dtypes: Tuple[str, ...] = ("f32", "f64", "f16", "bf16")
    # Settings on top of the preset where no preset matches the framework.
    overrides: Tuple[Tuple[str, str], ...] = ()

    def options(self) -> Dict[str, object]:
        return option_values(self.overrides)


# Overrides whose value is a number, not a setting's name.
NUMERIC_OVERRIDES = ("gate_max",)


def option_values(pairs) -> Dict[str, object]:
    """relugrad.relu_grad keywords from (key, text) override pairs."""
    return {k: float(v) if k in NUMERIC_OVERRIDES else v for k, v in pairs}


# ---------------------------------------------------------------- PyTorch
def _torch_in(a: np.ndarray):
    import torch
    if a.dtype == BF16:
        return torch.from_numpy(a.view(np.int16).copy()).view(torch.bfloat16)
    return torch.from_numpy(a.copy())


def _torch_out(t, dtype: np.dtype) -> np.ndarray:
    import torch
    t = t.detach().contiguous()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().copy().view(BF16)
    return t.numpy().copy().astype(dtype, copy=False)


def torch_threshold_backward(dy, s, threshold):
    import torch
    out = torch.ops.aten.threshold_backward(_torch_in(dy), _torch_in(s), threshold)
    return _torch_out(out, dy.dtype)


def _torch_strided(a: np.ndarray):
    """a as a torch view with stride 2: TensorIterator runs its scalar loop
    on every element of a non-contiguous operand."""
    import torch
    t = _torch_in(a)
    wide = torch.zeros(2 * t.numel(), dtype=t.dtype)
    wide[::2] = t
    return wide[::2]


def torch_hardtanh_backward(gate_max: float):
    """aten::hardtanh_backward(dy, s, min_val=threshold, max_val=gate_max) on
    strided inputs: PyTorch's scalar form, s <= lo || s >= hi ? 0 : dy, on
    every element. On contiguous inputs its vector loop closes NaN gates
    instead, except in the tail: no elementwise rule matches that, so the
    goldens record the scalar form (the torch preset) and the live tests
    check the vector form with gate=pass_if_gt (docs/semantics.md)."""
    def fn(dy, s, threshold):
        import torch
        out = torch.ops.aten.hardtanh_backward(_torch_strided(dy), _torch_strided(s), threshold, gate_max)
        return _torch_out(out, dy.dtype)
    return fn


def torch_autograd_relu(dy, x, threshold):
    assert threshold == 0.0
    xt = _torch_in(x).requires_grad_(True)
    y = xt.relu()
    y.backward(_torch_in(dy))
    return _torch_out(xt.grad, dy.dtype)


# ------------------------------------------------------------- TensorFlow
def _tf():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf
    return tf


def tf_relu_grad(dy, s, threshold):
    assert threshold == 0.0
    tf = _tf()
    with tf.device("/CPU:0"):
        out = tf.raw_ops.ReluGrad(gradients=tf.constant(dy), features=tf.constant(s))
    return np.asarray(out.numpy()).astype(dy.dtype, copy=False)


# -------------------------------------------------------------------- JAX
def _jax():
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax
    jax.config.update("jax_enable_x64", True)  # f64 stays f64
    return jax


def jax_vjp_relu(dy, x, threshold):
    assert threshold == 0.0
    jax = _jax()
    import jax.numpy as jnp
    cpu = jax.devices("cpu")[0]
    xj = jax.device_put(jnp.asarray(x), cpu)
    gj = jax.device_put(jnp.asarray(dy), cpu)
    _, vjp = jax.vjp(jax.nn.relu, xj)
    return np.asarray(vjp(gj)[0]).astype(dy.dtype, copy=False)


def jax_vjp_relu_jit(dy, x, threshold):
    assert threshold == 0.0
    jax = _jax()
    import jax.numpy as jnp

    @jax.jit
    def grad(x_, g_):
        return jax.vjp(jax.nn.relu, x_)[1](g_)[0]

    return np.asarray(grad(jnp.asarray(x), jnp.asarray(dy))).astype(dy.dtype, copy=False)


# -------------------------------------------------------------- MindSpore
def mindspore_relu_grad(dy, y, threshold):
    assert threshold == 0.0
    import mindspore as ms
    from mindspore.ops.operations import _grad_ops as G
    ms.set_context(device_target="CPU")
    out = G.ReluGrad()(ms.Tensor(dy), ms.Tensor(y))
    return np.asarray(out.asnumpy()).astype(dy.dtype, copy=False)


ADAPTERS = (
    Adapter("torch.threshold_backward", "torch", "torch", (0.0, 0.1, 0.75, -1.5), "x", torch_threshold_backward),
    Adapter("torch.autograd_relu", "torch", "torch", (0.0,), "x", torch_autograd_relu),
    # ReLU6 (min 0, max 6) and Hardtanh's default (min -1, max 1).
    Adapter("torch.hardtanh_backward_h6", "torch", "torch", (0.0,), "x", torch_hardtanh_backward(6.0),
            overrides=(("gate_max", "6.0"),)),
    Adapter("torch.hardtanh_backward_h1", "torch", "torch", (-1.0,), "x", torch_hardtanh_backward(1.0),
            overrides=(("gate_max", "1.0"),)),
    Adapter("tensorflow.ReluGrad", "tensorflow", "tensorflow", (0.0,), "y", tf_relu_grad),
    Adapter("jax.vjp_relu", "jax", "jax", (0.0,), "x", jax_vjp_relu),
    Adapter("jax.vjp_relu_jit", "jax", "jax", (0.0,), "x", jax_vjp_relu_jit),
    # Measured with MindSpore 2.10.0 CPU: pass_if_gt + select with IEEE
    # denormals (jax's rules without XLA's DAZ), now the "mindspore" preset;
    # its CPU ReluGrad has no bf16.
    Adapter("mindspore.ReluGrad", "mindspore", "mindspore", (0.0,), "y", mindspore_relu_grad,
            ("f32", "f64", "f16")),
)

# Installed distributions, looked up without importing: TensorFlow and
# PyTorch's triton abort when loaded into one process, so callers import one
# framework per process (see mk/python.mk) and availability must not import.
_DISTRIBUTIONS = {"torch": ("torch",), "tensorflow": ("tensorflow-cpu", "tensorflow"),
                  "jax": ("jaxlib",), "mindspore": ("mindspore",)}


def framework_version(framework: str) -> Optional[str]:
    from importlib import metadata
    if framework == "jax":
        try:
            return metadata.version("jax")
        except metadata.PackageNotFoundError:
            return None
    for dist in _DISTRIBUTIONS[framework]:
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return None


def available(only: str = "") -> Dict[str, Adapter]:
    """Adapters whose framework is installed (jax needs jaxlib too); `only`
    restricts to a comma-separated list of frameworks."""
    wanted = set(filter(None, only.split(",")))
    out = {}
    for a in ADAPTERS:
        if wanted and a.framework not in wanted:
            continue
        if framework_version(a.framework) is not None and (a.framework != "jax" or _dist_ok("jaxlib")):
            out[a.name] = a
    return out


def _dist_ok(dist: str) -> bool:
    from importlib import metadata
    try:
        metadata.version(dist)
        return True
    except metadata.PackageNotFoundError:
        return False


# Where a framework's NaN *bits* depend on the element's position or size of
# the call (measured: docs/semantics.md, "What the frameworks compute"), relugrad can match
# only the NaN class there. Everything else is compared bit for bit.
NAN_BY_CLASS = {
    # vector body (blocks of 32) writes 0xffff for every NaN; the scalar tail copies bits
    ("torch", "bf16"): "vector body writes NaN as 0xffff, scalar tail copies dy bits",
    # vector body quiets signalling NaNs (f16->f32->f16), scalar tail copies bits
    ("torch", "f16"): "vector body quiets signalling NaNs, scalar tail copies dy bits",
    # Eigen's bf16 path drops payloads and the NaN sign depends on the position
    ("tensorflow", "bf16"): "NaN payload dropped; NaN sign depends on position and size",
    # XLA CPU bf16 drops NaN payloads (sign kept): 0x7fc5 -> 0x7fc0, 0xff85 -> 0xffc0
    ("jax", "bf16"): "NaN payload dropped to the canonical quiet NaN, sign kept",
}


def nan_policy(framework: str, dtype: str) -> str:
    return "class" if (framework, dtype) in NAN_BY_CLASS else "exact"
