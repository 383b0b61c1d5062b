"""relugrad.relu_grad and relugrad.info: the Python face of the C ABI.

Arrays are handed to the C library without a copy (NumPy directly, PyTorch
and JAX through DLPack). This module decides what kind of array a call gets
back and checks arguments so that every error names the argument at fault.
"""
from __future__ import annotations

import numbers
import sys
from typing import Any, Dict, Optional, Tuple

import numpy as np

from . import _relugrad as _C

try:  # ml_dtypes is a dependency, but keep a clear message if it is missing
    import ml_dtypes as _ml_dtypes

    _BF16 = np.dtype(_ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover
    _BF16 = None

PRESETS = ("torch", "tensorflow", "jax", "onednn")
GATES = {"zero_if_le": 0, "pass_if_gt": 1}
COMBINES = {"select": 0, "multiply": 1}
DENORMALS = {"ieee": 0, "ftz_daz": 1}
THRESHOLD_ROUNDINGS = {"compute": 0, "dtype": 1}

_NUMPY_DTYPES = {np.dtype(np.float16): 0, np.dtype(np.float32): 0, np.dtype(np.float64): 0}

ArrayLike = Any  # numpy.ndarray, torch.Tensor, jax.Array or any CPU DLPack array


def _kind(x: Any) -> str:
    """'numpy', 'torch', 'jax', 'dlpack' or '' (unsupported)."""
    if isinstance(x, np.ndarray):
        return "numpy"
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(x, torch.Tensor):
        return "torch"
    jax = sys.modules.get("jax")
    if jax is not None and isinstance(x, jax.Array):
        return "jax"
    if hasattr(x, "__dlpack__") and hasattr(x, "__dlpack_device__"):
        return "dlpack"
    return ""


def _binding_view(name: str, x: Any) -> Tuple[Any, int]:
    """(object the bindings can import without a copy, declared dtype or 0)."""
    kind = _kind(x)
    if kind == "numpy":
        if _BF16 is not None and x.dtype == _BF16:
            # NumPy cannot export ml_dtypes.bfloat16 through DLPack or the
            # buffer protocol: pass the same memory as uint16 and say it is bf16.
            return x.view(np.uint16), _C.BF16
        if x.dtype not in _NUMPY_DTYPES:
            raise TypeError(f"{name}: dtype {x.dtype} is not supported "
                            "(float16, bfloat16, float32, float64)")
        return x, 0
    if kind == "torch":
        if x.device.type != "cpu":
            raise ValueError(f"{name}: tensor is on {x.device}; relugrad.relu_grad takes CPU tensors")
        # DLPack refuses tensors that require grad; detach() shares the memory.
        return x.detach(), 0
    if kind == "jax":
        platforms = {d.platform for d in x.devices()}
        if platforms != {"cpu"}:
            raise ValueError(f"{name}: JAX array lives on {sorted(platforms)}; relugrad.relu_grad takes CPU arrays")
        return x, 0
    if kind == "dlpack":
        device_type, _ = x.__dlpack_device__()
        if int(device_type) != 1:  # kDLCPU
            raise ValueError(f"{name}: DLPack device type {int(device_type)} is not the CPU (1)")
        return x, 0
    raise TypeError(f"{name}: expected a NumPy array, a torch.Tensor, a jax.Array or a CPU DLPack "
                    f"array, got {type(x).__module__}.{type(x).__qualname__}")


def _new_like(dy: Any) -> Any:
    """An uninitialised C-ordered result of dy's kind, shape and dtype."""
    kind = _kind(dy)
    if kind == "numpy":
        return np.empty(dy.shape, dtype=dy.dtype)
    if kind == "torch":
        import torch
        return torch.empty(dy.shape, dtype=dy.dtype, device="cpu")
    # JAX arrays are immutable, and other DLPack producers have no common
    # allocator: compute into NumPy memory (converted back for JAX below).
    return np.empty(tuple(dy.shape), dtype=np.dtype(dy.dtype))


def _enum(name: str, value: Optional[str], table: Dict[str, int]) -> int:
    if value is None:
        return -1
    if not isinstance(value, str) or value not in table:
        raise ValueError(f"{name}: {value!r} is not one of {', '.join(table)}")
    return table[value]


def _real(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name}: expected a real number, got {type(value).__name__}")
    return float(value)


def _run(dy: ArrayLike, s: ArrayLike, semantics: str, threshold: float, alpha: float,
         clip: Optional[Tuple[float, float]], out: Optional[ArrayLike], threads: Optional[int],
         gate: Optional[str], combine: Optional[str], denormals: Optional[str],
         threshold_rounding: Optional[str], reference: bool) -> ArrayLike:
    if not isinstance(semantics, str) or semantics not in PRESETS:
        raise ValueError(f"semantics: {semantics!r} is not one of {', '.join(PRESETS)}")
    preset = _C.preset_from_name(semantics)
    t = _real("threshold", threshold)
    a = _real("alpha", alpha)
    if clip is None:
        use_clip, lo, hi = False, 0.0, 0.0
    else:
        try:
            lo_v, hi_v = clip
        except (TypeError, ValueError):
            raise TypeError("clip: expected None or a (lo, hi) pair") from None
        use_clip, lo, hi = True, _real("clip[0]", lo_v), _real("clip[1]", hi_v)
    if threads is None:
        n_threads = 0
    elif isinstance(threads, bool) or not isinstance(threads, numbers.Integral):
        raise TypeError(f"threads: expected an int or None, got {type(threads).__name__}")
    elif threads < 1:
        raise ValueError(f"threads: must be >= 1 (None = all cores), got {threads}")
    else:
        n_threads = int(threads)
    g = _enum("gate", gate, GATES)
    c = _enum("combine", combine, COMBINES)
    d = _enum("denormals", denormals, DENORMALS)
    r = _enum("threshold_rounding", threshold_rounding, THRESHOLD_ROUNDINGS)

    dy_v, dy_decl = _binding_view("dy", dy)
    s_v, s_decl = _binding_view("s", s)
    kind = _kind(dy)
    if out is None:
        result = _new_like(dy)
    else:
        if _kind(out) == "jax":
            raise TypeError("out: JAX arrays are immutable; leave out=None")
        if _kind(out) == "numpy" and not out.flags.writeable:
            raise ValueError("out: array is read-only")
        result = out
    out_v, out_decl = _binding_view("out", result)
    # The bindings resolve each array's dtype and reject mismatches by name.
    _C.relu_grad_into(dy_v, s_v, out_v, dy_decl, s_decl, out_decl, preset, g, c, d, r, t, a, use_clip, lo, hi,
                      n_threads, reference)
    if out is None and kind == "jax":
        import jax.numpy as jnp
        return jnp.asarray(result)
    return result


def relu_grad(dy: ArrayLike, s: ArrayLike, *, semantics: str = "torch", threshold: float = 0.0,
              alpha: float = 0.0, clip: Optional[Tuple[float, float]] = None,
              out: Optional[ArrayLike] = None, threads: Optional[int] = None,
              gate: Optional[str] = None, combine: Optional[str] = None,
              denormals: Optional[str] = None,
              threshold_rounding: Optional[str] = None) -> ArrayLike:
    """ReLU backward: ``dx[i] = gate_open(s[i]) ? pass(dy[i]) : closed(dy[i])``.

    Args:
      dy: upstream gradient. A NumPy array (float16, float32, float64 or
        ml_dtypes.bfloat16), a CPU torch.Tensor, a CPU jax.Array, or any CPU
        array that speaks DLPack. Read in place, never copied; must be
        C-contiguous.
      s: the gate: the forward input x or the forward output relu(x) (same
        result); same dtype and shape as dy.
      semantics: framework preset: "torch" (zero_if_le + select, as
        aten::threshold_backward), "tensorflow", "jax" or "onednn".
      threshold: t; the gate compares s with t.
      alpha: closed-gate factor (dx = dy * alpha), as oneDNN's relu backward.
      clip: optional (lo, hi): passed gradients are clamped; NaN stays NaN.
      out: optional result array of dy's kind, dtype and shape; it may be dy
        or s itself (in place).
      threads: worker threads; None uses all cores (small inputs run on the
        calling thread).
      gate, combine, denormals, threshold_rounding: override one setting of
        the preset: gate "zero_if_le"|"pass_if_gt", combine "select"|"multiply",
        denormals "ieee"|"ftz_daz", threshold_rounding "compute"|"dtype".

    Returns:
      dx, of dy's kind: NumPy in -> NumPy out, torch in -> torch out, JAX in ->
      a new jax.Array; other DLPack inputs get a NumPy array. When out is
      given, out itself.

    Raises:
      TypeError: unsupported array kind or dtype, mismatched dtypes (the
        message names the argument).
      ValueError: non-CPU device, non-contiguous array, mismatched shapes,
        partial overlap of out with an input, bad option values.

    The GIL is released while the C library runs.
    """
    return _run(dy, s, semantics, threshold, alpha, clip, out, threads, gate, combine, denormals,
                threshold_rounding, reference=False)


def relu_grad_reference(dy: ArrayLike, s: ArrayLike, *, semantics: str = "torch",
                        threshold: float = 0.0, alpha: float = 0.0,
                        clip: Optional[Tuple[float, float]] = None,
                        out: Optional[ArrayLike] = None, gate: Optional[str] = None,
                        combine: Optional[str] = None, denormals: Optional[str] = None,
                        threshold_rounding: Optional[str] = None) -> ArrayLike:
    """Same contract as relu_grad, computed by the library's scalar reference
    (relugrad_relu_grad_reference: the oracle of the C++ tests), one thread."""
    return _run(dy, s, semantics, threshold, alpha, clip, out, 1, gate, combine, denormals,
                threshold_rounding, reference=True)


def preset_settings(semantics: str) -> Dict[str, str]:
    """The settings a preset stands for, by name, e.g.
    {'gate': 'zero_if_le', 'combine': 'select', 'denormals': 'ieee', 'threshold_rounding': 'compute'}."""
    if not isinstance(semantics, str) or semantics not in PRESETS:
        raise ValueError(f"semantics: {semantics!r} is not one of {', '.join(PRESETS)}")
    raw = _C.preset_options(_C.preset_from_name(semantics))
    tables = {"gate": GATES, "combine": COMBINES, "denormals": DENORMALS,
              "threshold_rounding": THRESHOLD_ROUNDINGS}
    return {key: next(k for k, v in tables[key].items() if v == raw[key]) for key in tables}


def set_max_isa(name: Optional[str]) -> None:
    """Caps SIMD dispatch at the named Highway target ("avx2", "sse4", "scalar"...);
    None or "best" lifts the cap. Process-wide: call before concurrent work."""
    _C.set_max_isa(name)


def info() -> Dict[str, Any]:
    """What ``relugrad info`` prints, as a dict: version, build facts (compiler,
    highway, simd_compiled, backends, grain), the SIMD targets attainable here
    (best first) and the one selected, the default thread count."""
    facts: Dict[str, Any] = {}
    for line in _C.build_info().splitlines():
        key, sep, value = line.partition(": ")
        if sep:
            facts[key.strip()] = value.strip()
    facts["simd_attainable"] = list(_C.isa_names())
    facts["simd_selected"] = _C.isa_selected()
    facts["threads_default"] = _C.default_threads()
    facts["backends"] = {name: bool(_C.backend_available(code)) for name, code in
                         (("cpu", _C.BACKEND_CPU), ("cuda", _C.BACKEND_CUDA),
                          ("ascend_twin", _C.BACKEND_ASCEND_TWIN))}
    return facts


def format_info(facts: Optional[Dict[str, Any]] = None) -> str:
    """info() as the ``key: value`` lines of ``relugrad info``."""
    facts = info() if facts is None else facts
    lines = []
    for key, value in facts.items():
        if isinstance(value, list):
            value = " ".join(value)
        elif isinstance(value, dict):
            value = " ".join(f"{k}={'yes' if v else 'no'}" for k, v in value.items())
        lines.append(f"{key}: {value}")
    return "\n".join(lines)
