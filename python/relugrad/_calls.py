"""The calls: relu_grad, relu_grad_reference, relu_forward, relu_grad_mask
and mask_bytes, from checked arguments to a plan run and back to a result
of the caller's array kind.

Each call's keyword arguments name a configuration (_options._config: one
relugrad.Options value and its plans, built once); the call runs the plan of
its op for the arrays' dtype and device. Arrays are handed to the C library
without a copy (NumPy directly, PyTorch and JAX through DLPack, contiguous
CPU tensors by address). CPU arrays run on the CPU backend; CUDA tensors and
CUDA DLPack arrays run on the CUDA backend, on torch's current stream for
torch tensors and on the default stream otherwise: the stream is part of the
plan's options, as in relugrad_options.
"""
from __future__ import annotations

import numbers
import sys
from typing import Any, Optional, Tuple

import numpy as np

from . import _relugrad as _C
from ._arrays import (ArrayLike, _as_kind_of, _binding_view, _check_mask_dtype, _DeviceScope, _mask_view, _new_like,
                      _new_numpy, _on_cuda, _same_dtype, _torch_host_code, _writable_out, wrote)
from ._options import _CACHE, _call_key, _config, _Config, _framework_threads

_GRAD = _C.OP_RELU_GRAD  # a module global: the hot paths below read it without an attribute lookup
_NDARRAY = np.ndarray


def _torch_host_call(dy: Any, s: Any, out: Any, config: _Config) -> Any:
    """relu_grad on contiguous CPU tensors of one supported dtype and shape,
    by address (cheaper than importing three tensors by DLPack: docs/python.md); None when
    anything differs, for the checked path to report it."""
    torch = sys.modules["torch"]
    code = _torch_host_code(dy, s)
    if code is None:
        return None
    if out is None:
        result = torch.empty(dy.shape, dtype=dy.dtype)
    elif (type(out) is torch.Tensor and out.device.type == "cpu" and out.dtype == dy.dtype
          and out.shape == dy.shape and out.is_contiguous() and not out.requires_grad and not out.is_neg()):
        result = out
    else:
        return None
    plan = config.plan(_GRAD, code)
    plan.run_host(dy.data_ptr(), s.data_ptr(), result.data_ptr(), dy.numel())
    if out is not None:
        wrote(out)
    return result


def _run(dy: ArrayLike, s: ArrayLike, semantics: str, threshold: float, alpha: float,
         clip: Optional[Tuple[float, float]], out: Optional[ArrayLike], threads: Optional[int],
         gate: Optional[str], combine: Optional[str], denormals: Optional[str],
         threshold_rounding: Optional[str], reference: bool, stores: str = "auto",
         gate_max: Optional[float] = None) -> ArrayLike:
    config = _config(semantics, threshold, alpha, clip, threads, gate, combine, denormals, threshold_rounding, stores,
                     gate_max)
    if type(dy) is not np.ndarray and not reference:
        torch = sys.modules.get("torch")
        if torch is not None and type(dy) is torch.Tensor and type(s) is torch.Tensor:
            result = _torch_host_call(dy, s, out, config)
            if result is not None:
                return result
    dy_v, code = _binding_view("dy", dy)
    s_v, s_code = _binding_view("s", s)
    if reference and (_on_cuda(dy) or _on_cuda(s)):
        raise ValueError("relu_grad_reference: the scalar reference reads CPU memory only; pass CPU arrays")
    result = _new_like(dy) if out is None else _writable_out("out", out)
    out_v, out_code = _binding_view("out", result)
    _same_dtype("s", s_code, "dy", code)
    _same_dtype("out", out_code, "dy", code)
    # The plan checks the rest (contiguity, shapes, devices, overlap) and names the argument.
    if type(dy) is np.ndarray:  # host memory: no device scope, NumPy out
        plan = config.plan(_GRAD, code)
        (plan.reference if reference else plan)(dy_v, s_v, out_v)
        return result
    with _DeviceScope(dy) as scope:
        plan = config.plan(_GRAD, code, scope.stream)
        (plan.reference if reference else plan)(dy_v, s_v, out_v)
    if out is None:
        return _as_kind_of(dy, result)
    wrote(out)
    return result


def relu_grad(dy: ArrayLike, s: ArrayLike, *, semantics: str = "torch", threshold: float = 0.0,
              alpha: float = 0.0, clip: Optional[Tuple[float, float]] = None,
              out: Optional[ArrayLike] = None, threads: Optional[int] = None,
              gate: Optional[str] = None, combine: Optional[str] = None,
              denormals: Optional[str] = None,
              threshold_rounding: Optional[str] = None, stores: str = "auto",
              gate_max: Optional[float] = None) -> ArrayLike:
    """ReLU backward: ``dx[i] = gate_open(s[i]) ? pass(dy[i]) : closed(dy[i])``.

    Args:
      dy: upstream gradient. A NumPy array (float16, float32, float64 or
        ml_dtypes.bfloat16), a CPU or CUDA torch.Tensor, a CPU jax.Array, or
        any CPU or CUDA array that speaks DLPack. Read in place, never copied;
        must be C-contiguous. CUDA arrays run on relugrad's CUDA backend
        (torch: on the tensor's device and torch's current stream,
        asynchronously like a torch op; other DLPack producers: the current
        device, the default stream, and out= is required).
      s: the gate: the forward input x or the forward output relu(x) (same
        result); same dtype and shape as dy.
      semantics: framework preset: "torch" (zero_if_le + select, as
        aten::threshold_backward), "tensorflow", "jax", "onednn" or
        "mindspore" (pass_if_gt + select, IEEE: MindSpore CPU ReluGrad), or
        one of Huawei CANN's operators (docs/ascend.md): "cann_relugrad",
        "cann_relugrad_v2", "cann_threshold_grad", "cann_relugrad_v2_hp".
      threshold: t; the gate compares s with t.
      gate_max: optional upper bound h: the gate is open only when also
        s < h (hardtanh_backward: ReLU6 is threshold=0, gate_max=6); None
        (or +inf) is none. Rounded as t is; CPU only (docs/semantics.md).
      alpha: closed-gate factor (dx = dy * alpha), as oneDNN's relu backward.
      clip: optional (lo, hi): passed gradients are clamped; NaN stays NaN.
      out: optional result array of dy's kind, dtype and shape; it may be dy
        or s itself (in place).
      threads: worker threads; None or 0: the host framework's (torch's
        intra-op thread count for torch tensors, all cores otherwise); small
        inputs run on the calling thread.
      gate, combine, denormals, threshold_rounding: override one setting of
        the preset: gate "zero_if_le"|"pass_if_gt", combine "select"|"multiply",
        denormals "ieee"|"ftz_daz", threshold_rounding "compute"|"dtype".
      stores: CPU store hint, never changes a bit: "auto" (streaming,
        non-temporal stores from 1 MiB of output on one thread, 8 MiB when
        split over threads), "cached" (never stream:
        the next op reads dx from cache) or "streaming" (always stream: dx
        goes cold; faster for outputs nothing reads soon: docs/python.md).

    Returns:
      dx, of dy's kind: NumPy in -> NumPy out, torch in -> torch out, JAX in ->
      a new jax.Array; other DLPack inputs get a NumPy array. When out is
      given, out itself.

    Raises:
      TypeError: unsupported array kind or dtype, mismatched dtypes (the
        message names the argument).
      ValueError: unsupported device or arrays on different devices,
        non-contiguous array, mismatched shapes, partial overlap of out with
        an input, bad option values.
      RuntimeError: a CUDA array without an available CUDA backend.

    The GIL is released while the C library runs.
    """
    if type(dy) is _NDARRAY and clip is None:
        # The NumPy call: one lookup (the configuration an earlier call with these keyword
        # arguments entered) and one C call that checks the arrays and runs its plan. Whatever that
        # call does not serve (NotImplemented: other kinds, dtypes, layouts, a read-only out) takes
        # the checked path below, which names the argument at fault.
        try:
            config = _CACHE.get(_call_key(semantics, threshold, alpha, None, threads, gate, combine, denormals,
                                          threshold_rounding, stores, gate_max, False))
        except TypeError:  # an unhashable argument: the checked path says which
            config = None
        if config is not None:
            result = _new_numpy(dy) if out is None else out
            if _C.relu_grad_numpy(config, dy, s, result) is None:
                return result
    return _run(dy, s, semantics, threshold, alpha, clip, out, _framework_threads(threads, dy), gate, combine,
                denormals, threshold_rounding, reference=False, stores=stores, gate_max=gate_max)


def relu_grad_reference(dy: ArrayLike, s: ArrayLike, *, semantics: str = "torch",
                        threshold: float = 0.0, alpha: float = 0.0,
                        clip: Optional[Tuple[float, float]] = None,
                        out: Optional[ArrayLike] = None, gate: Optional[str] = None,
                        combine: Optional[str] = None, denormals: Optional[str] = None,
                        threshold_rounding: Optional[str] = None,
                        gate_max: Optional[float] = None) -> ArrayLike:
    """Same contract as relu_grad, computed by the library's scalar reference
    (relugrad_relu_grad_reference: the oracle of the C++ tests), one thread."""
    return _run(dy, s, semantics, threshold, alpha, clip, out, 1, gate, combine, denormals,
                threshold_rounding, reference=True, gate_max=gate_max)


def mask_bytes(n: int) -> int:
    """Bytes of a packed mask for n elements: ceil(n/8)."""
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 0:
        raise ValueError(f"n: expected an int >= 0, got {n!r}")
    return int(_C.mask_bytes(int(n)))


def relu_forward(x: ArrayLike, *, semantics: str = "torch", threshold: float = 0.0, alpha: float = 0.0,
                 out: Optional[ArrayLike] = None, mask_out: Optional[ArrayLike] = None,
                 threads: Optional[int] = None, gate: Optional[str] = None, combine: Optional[str] = None,
                 denormals: Optional[str] = None,
                 threshold_rounding: Optional[str] = None, stores: str = "auto",
                 keep_negative_zero: bool = False) -> Tuple[ArrayLike, ArrayLike]:
    """ReLU forward with the 1-bit mask: ``(y, mask)`` (docs/mask.md).

    y = relu(x) under the preset (closed elements are +0, or x*alpha; a NaN x
    passes its bits); mask is a flat uint8 array of ceil(n/8) bytes, bit i
    (LSB first) = the gate of the preset is open for x[i], padding bits 0.
    relu_grad_mask(dy, mask) then equals relu_grad(dy, x) bit for bit.

    Same array kinds, devices, errors and GIL release as relu_grad. out may
    be x itself (in place); mask_out, if given, must be a writable uint8
    array of ceil(n/8) elements of x's kind and device. A closed x = -0 gives
    +0 (torch.threshold, tf.nn.relu, jax.nn.relu); keep_negative_zero=True
    keeps it -0, as torch.relu does (with the torch preset and threshold 0,
    y is then torch.relu(x) bit for bit). stores: as relu_grad's (applies to y).
    """
    config = _config(semantics, threshold, alpha, None, _framework_threads(threads, x), gate, combine, denormals,
                     threshold_rounding, stores, keep_negative_zero=keep_negative_zero)
    x_v, code = _binding_view("x", x)
    y = _new_like(x) if out is None else _writable_out("out", out)
    y_v, y_code = _binding_view("out", y)
    n_bytes = int(_C.mask_bytes(int(np.prod(tuple(x.shape), dtype=np.int64))))
    mask = _new_like(x, (n_bytes,), "uint8") if mask_out is None else _writable_out("mask_out", mask_out)
    _check_mask_dtype("mask_out", mask)
    m_v = _mask_view("mask_out", mask)
    _same_dtype("y", y_code, "x", code)
    with _DeviceScope(x) as scope:
        config.plan(_C.OP_RELU_FORWARD_MASK, code, scope.stream)(x_v, y_v, m_v)
    y = _as_kind_of(x, y) if out is None else y
    mask = _as_kind_of(x, mask) if mask_out is None else mask
    for given in (out, mask_out):
        if given is not None:
            wrote(given)
    return y, mask


def relu_grad_mask(dy: ArrayLike, mask: ArrayLike, *, semantics: str = "torch", threshold: float = 0.0,
                   alpha: float = 0.0, clip: Optional[Tuple[float, float]] = None,
                   out: Optional[ArrayLike] = None, threads: Optional[int] = None,
                   gate: Optional[str] = None, combine: Optional[str] = None,
                   denormals: Optional[str] = None,
                   threshold_rounding: Optional[str] = None, stores: str = "auto") -> ArrayLike:
    """ReLU backward from the packed mask of relu_forward:
    ``dx[i] = bit(mask, i) ? pass(dy[i]) : closed(dy[i])``.

    mask: uint8, ceil(n/8) bytes, same kind/device as dy. The options must be
    the forward's for the pass/closed rules (alpha, clip, combine, denormals);
    the gate itself is the mask. out may be dy (in place). Same array kinds,
    devices, errors, stores hint and GIL release as relu_grad.
    """
    config = _config(semantics, threshold, alpha, clip, _framework_threads(threads, dy), gate, combine, denormals,
                     threshold_rounding, stores)
    dy_v, code = _binding_view("dy", dy)
    _check_mask_dtype("mask", mask)
    m_v = _mask_view("mask", mask)
    result = _new_like(dy) if out is None else _writable_out("out", out)
    out_v, out_code = _binding_view("out", result)
    _same_dtype("out", out_code, "dy", code)
    with _DeviceScope(dy) as scope:
        config.plan(_C.OP_RELU_GRAD_MASK, code, scope.stream)(dy_v, m_v, out_v)
    if out is None:
        return _as_kind_of(dy, result)
    wrote(out)
    return result
