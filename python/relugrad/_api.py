"""relugrad.relu_grad and relugrad.info: the Python face of the C ABI.

Arrays are handed to the C library without a copy (NumPy directly, PyTorch
and JAX through DLPack). CPU arrays run on the CPU backend; CUDA tensors and
CUDA DLPack arrays run on the CUDA backend, on torch's current stream for
torch tensors and on the default stream otherwise. This module decides what kind of array a call gets
back and checks arguments so that every error names the argument at fault.
"""
from __future__ import annotations

import math
import numbers
import os
import sys
from typing import Any, Dict, Optional, Tuple

import numpy as np

from . import _relugrad as _C

try:  # ml_dtypes is a dependency, but keep a clear message if it is missing
    import ml_dtypes as _ml_dtypes

    _BF16 = np.dtype(_ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover
    _BF16 = None

# Results of at least this many bytes come from relugrad's buffer cache
# (BufferCache::kMinCachedBytes; NumPy's own allocator recycles smaller ones).
_CACHED_MIN_BYTES = 256 * 1024

PRESETS = ("torch", "tensorflow", "jax", "onednn", "mindspore",
           "cann_relugrad", "cann_relugrad_v2", "cann_threshold_grad", "cann_relugrad_v2_hp")
GATES = {"zero_if_le": 0, "pass_if_gt": 1}
COMBINES = {"select": 0, "multiply": 1}
DENORMALS = {"ieee": 0, "ftz_daz": 1}
THRESHOLD_ROUNDINGS = {"compute": 0, "dtype": 1}
STORES = {"auto": 0, "cached": 1, "streaming": 2}

_NUMPY_DTYPES = {np.dtype(np.float16): 0, np.dtype(np.float32): 0, np.dtype(np.float64): 0}
_PRESET_IDS = {name: _C.preset_from_name(name) for name in PRESETS}
# torch dtype -> relugrad dtype, filled on the first torch call (torch is
# never imported by relugrad itself).
_TORCH_HOST_DTYPES: Dict[Any, int] = {}

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


# DLPack device types (dlpack.h) relugrad has a backend for.
_KDL_CPU, _KDL_CUDA, _KDL_CUDA_HOST, _KDL_CUDA_MANAGED = 1, 2, 3, 13


def _require_cuda(name: str, where: str) -> None:
    """A clear error before any device pointer reaches the library."""
    # backend_available says "compiled in"; with CUDA compiled in but no
    # device, the library itself answers RELUGRAD_UNSUPPORTED ("no CUDA device").
    if not _C.backend_available(_C.BACKEND_CUDA):
        raise RuntimeError(f"{name}: {where} needs relugrad's CUDA backend, which this build lacks "
                           "(rebuild with: pip install . -C cmake.define.RELUGRAD_CUDA=ON); pass CPU arrays")


def _binding_view(name: str, x: Any) -> Tuple[Any, int]:
    """(object the bindings can import without a copy, declared dtype or 0).
    CUDA arrays are accepted only when the CUDA backend is available."""
    kind = _kind(x)
    if kind == "numpy":
        dtype = x.dtype
        if dtype in _NUMPY_DTYPES:
            return x, 0
        if _BF16 is not None and dtype == _BF16:
            # NumPy cannot export ml_dtypes.bfloat16 through DLPack or the
            # buffer protocol: pass the same memory as uint16 and say it is bf16.
            return x.view(np.uint16), _C.BF16
        if dtype != np.uint8:  # uint8: masks (checked by the caller)
            raise TypeError(f"{name}: dtype {x.dtype} is not supported "
                            "(float16, bfloat16, float32, float64)")
        return x, 0
    if kind == "torch":
        if x.device.type == "cuda":
            _require_cuda(name, f"a tensor on {x.device}")
        elif x.device.type != "cpu":
            raise ValueError(f"{name}: tensor is on {x.device}; relugrad takes CPU or CUDA tensors")
        # DLPack refuses tensors that require grad; detach() shares the memory.
        return x.detach(), 0
    if kind == "jax":
        platforms = {d.platform for d in x.devices()}
        if platforms != {"cpu"}:
            raise ValueError(f"{name}: JAX array lives on {sorted(platforms)}; relugrad takes CPU JAX arrays "
                             "(JAX arrays are immutable and relugrad has no JAX GPU allocator)")
        return x, 0
    if kind == "dlpack":
        device_type, device_id = x.__dlpack_device__()
        device_type = int(device_type)
        if device_type in (_KDL_CUDA, _KDL_CUDA_MANAGED):
            _require_cuda(name, f"a DLPack array on CUDA device {int(device_id)} (device type {device_type})")
        elif device_type not in (_KDL_CPU, _KDL_CUDA_HOST):
            raise ValueError(f"{name}: DLPack device type {device_type} is neither the CPU (1) nor CUDA (2, 13)")
        return x, 0
    raise TypeError(f"{name}: expected a NumPy array, a torch.Tensor, a jax.Array or a CPU/CUDA DLPack "
                    f"array, got {type(x).__module__}.{type(x).__qualname__}")


def _on_cuda(x: Any) -> bool:
    kind = _kind(x)
    if kind == "torch":
        return x.device.type == "cuda"
    if kind == "dlpack":
        return int(x.__dlpack_device__()[0]) in (_KDL_CUDA, _KDL_CUDA_MANAGED)
    return False


class _DeviceScope:
    """The CUDA device and stream a call runs on: for a torch tensor on
    cuda:k, device k made current (relugrad launches on the current device)
    and torch's current stream of that device; for other CUDA DLPack arrays
    the current device and the default stream (0); for CPU arrays nothing."""

    def __init__(self, x: Any) -> None:
        self.stream = 0
        self._ctx = None
        if _kind(x) == "torch" and x.device.type == "cuda":
            import torch
            self._ctx = torch.cuda.device(x.device)
            self.stream = int(torch.cuda.current_stream(x.device).cuda_stream)

    def __enter__(self) -> "_DeviceScope":
        if self._ctx is not None:
            self._ctx.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._ctx is not None:
            self._ctx.__exit__(*exc)


def _new_like(dy: Any, shape: Optional[Tuple[int, ...]] = None, dtype: Any = None) -> Any:
    """An uninitialised C-ordered result of dy's kind and device (dy's shape
    and dtype unless given; dtype "uint8" asks for a mask)."""
    kind = _kind(dy)
    shape = tuple(dy.shape) if shape is None else shape
    if kind == "torch":
        import torch
        return torch.empty(shape, dtype=dy.dtype if dtype is None else torch.uint8, device=dy.device)
    if _on_cuda(dy):
        # A generic CUDA DLPack producer has no allocator relugrad can call.
        raise ValueError("out: relugrad cannot allocate memory on this CUDA array's device "
                         f"({type(dy).__module__}.{type(dy).__qualname__}); pass out= (and mask_out=)")
    # JAX arrays are immutable, and other DLPack producers have no common
    # allocator: compute into NumPy memory (converted back for JAX below).
    np_dtype = np.dtype(dy.dtype) if dtype is None else np.dtype(np.uint8)
    nbytes = math.prod(shape) * np_dtype.itemsize
    if nbytes < _CACHED_MIN_BYTES:
        return np.empty(shape, dtype=np_dtype)
    # Large results come from relugrad's buffer cache: memory whose pages
    # are still mapped from an earlier result of this size, so a training
    # loop's allocating calls do not page-fault on every 4 KiB
    # (docs/performance.md: 5-9 GB/s into fresh memory at n >= 16M).
    return _C.cached_bytes(nbytes).view(np_dtype).reshape(shape)


def _writable_out(name: str, out: Any) -> Any:
    if _kind(out) == "jax":
        raise TypeError(f"{name}: JAX arrays are immutable; leave {name}=None")
    if _kind(out) == "numpy" and not out.flags.writeable:
        raise ValueError(f"{name}: array is read-only")
    return out


def _check_mask_dtype(name: str, mask: Any) -> None:
    dtype = getattr(mask, "dtype", None)
    if str(dtype) not in ("uint8", "torch.uint8"):
        raise TypeError(f"{name}: a packed mask must have dtype uint8, got {dtype}")


def _enum(name: str, value: Optional[str], table: Dict[str, int]) -> int:
    if value is None:
        return -1
    if not isinstance(value, str) or value not in table:
        raise ValueError(f"{name}: {value!r} is not one of {', '.join(table)}")
    return table[value]


def _real(name: str, value: Any) -> float:
    # Exact types first: isinstance against the numbers ABCs costs about
    # 0.2 us, and a small call's whole Python path was 4 us (docs/python.md).
    if type(value) is float:
        return value
    if type(value) is int:
        return float(value)
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name}: expected a real number, got {type(value).__name__}")
    return float(value)


def _options(semantics: str, threshold: float, alpha: float, clip: Optional[Tuple[float, float]],
             threads: Optional[int], gate: Optional[str], combine: Optional[str], denormals: Optional[str],
             threshold_rounding: Optional[str], stores: str = "auto") -> Tuple:
    """The checked option arguments of the bindings, in their order:
    (preset, gate, combine, denormals, threshold_rounding, threshold, alpha,
    clip, clip_lo, clip_hi, threads, stores)."""
    preset = _PRESET_IDS.get(semantics) if isinstance(semantics, str) else None
    if preset is None:
        raise ValueError(f"semantics: {semantics!r} is not one of {', '.join(PRESETS)}")
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
    if threads is None or (type(threads) is int and threads == 0):
        n_threads = 0
    elif type(threads) is int and threads >= 1:
        n_threads = threads
    elif isinstance(threads, bool) or not isinstance(threads, numbers.Integral):
        raise TypeError(f"threads: expected an int or None, got {type(threads).__name__}")
    elif threads < 0:
        raise ValueError(f"threads: must be >= 0 (None or 0 = the host framework's threads), got {threads}")
    else:
        n_threads = int(threads)
    g = _enum("gate", gate, GATES)
    c = _enum("combine", combine, COMBINES)
    d = _enum("denormals", denormals, DENORMALS)
    r = _enum("threshold_rounding", threshold_rounding, THRESHOLD_ROUNDINGS)
    store_id = STORES.get(stores) if isinstance(stores, str) else None
    if store_id is None:
        raise ValueError(f"stores: {stores!r} is not one of {', '.join(STORES)}")
    return (preset, g, c, d, r, t, a, use_clip, lo, hi, n_threads, store_id)


def _as_kind_of(x: Any, result: Any) -> Any:
    """JAX in, JAX out (computed into NumPy memory); everything else as is."""
    if _kind(x) == "jax":
        import jax.numpy as jnp
        return jnp.asarray(result)
    return result


def _torch_host_dtype(dtype: Any) -> Optional[int]:
    """The relugrad dtype of a torch dtype, or None."""
    if not _TORCH_HOST_DTYPES:
        torch = sys.modules["torch"]
        _TORCH_HOST_DTYPES.update({torch.float32: _C.F32, torch.float16: _C.F16, torch.bfloat16: _C.BF16,
                                   torch.float64: _C.F64})
    return _TORCH_HOST_DTYPES.get(dtype)


def _torch_host_code(dy: Any, s: Any) -> Optional[int]:
    """The relugrad dtype of dy when dy and s are contiguous CPU tensors of
    one supported dtype and shape (the by-address path), else None."""
    code = _torch_host_dtype(dy.dtype)
    if (code is None or not dy.is_cpu or not s.is_cpu or s.dtype != dy.dtype or s.shape != dy.shape
            or not dy.is_contiguous() or not s.is_contiguous()):
        return None
    return code


def _torch_host_call(dy: Any, s: Any, out: Any, opts: Tuple) -> Any:
    """relu_grad on contiguous CPU tensors of one supported dtype and shape,
    by address (DLPack import of three tensors was 7 us per call); None when
    anything differs, for the checked path to report it."""
    torch = sys.modules["torch"]
    code = _torch_host_code(dy, s)
    if code is None:
        return None
    if out is None:
        result = torch.empty(dy.shape, dtype=dy.dtype)
    elif (type(out) is torch.Tensor and out.device.type == "cpu" and out.dtype == dy.dtype
          and out.shape == dy.shape and out.is_contiguous() and not out.requires_grad):
        result = out
    else:
        return None
    _C.relu_grad_host_ptr(dy.data_ptr(), s.data_ptr(), result.data_ptr(), dy.numel(), code, *opts)
    return result


def _framework_threads(threads: Optional[int], x: Any) -> Optional[int]:
    """threads None or 0 means the host framework's threads: torch's intra-op
    thread count (torch.get_num_threads()) for torch tensors, relugrad's
    default (all cores) for NumPy, JAX and other arrays; N means N."""
    if threads is None or (type(threads) is int and threads == 0):
        torch = sys.modules.get("torch")
        if torch is not None and isinstance(x, torch.Tensor):
            return torch.get_num_threads()
    return threads


def _run(dy: ArrayLike, s: ArrayLike, semantics: str, threshold: float, alpha: float,
         clip: Optional[Tuple[float, float]], out: Optional[ArrayLike], threads: Optional[int],
         gate: Optional[str], combine: Optional[str], denormals: Optional[str],
         threshold_rounding: Optional[str], reference: bool, stores: str = "auto") -> ArrayLike:
    opts = _options(semantics, threshold, alpha, clip, threads, gate, combine, denormals, threshold_rounding, stores)
    torch = sys.modules.get("torch")
    if torch is not None and not reference and type(dy) is torch.Tensor and type(s) is torch.Tensor:
        result = _torch_host_call(dy, s, out, opts)
        if result is not None:
            return result
    dy_v, dy_decl = _binding_view("dy", dy)
    s_v, s_decl = _binding_view("s", s)
    if reference and (_on_cuda(dy) or _on_cuda(s)):
        raise ValueError("relu_grad_reference: the scalar reference reads CPU memory only; pass CPU arrays")
    result = _new_like(dy) if out is None else _writable_out("out", out)
    out_v, out_decl = _binding_view("out", result)
    # The bindings resolve each array's dtype and device and reject
    # mismatches by name.
    if type(dy) is np.ndarray:  # host memory: no device scope, NumPy out
        _C.relu_grad_into(dy_v, s_v, out_v, dy_decl, s_decl, out_decl, *opts, reference, 0)
        return result
    with _DeviceScope(dy) as scope:
        _C.relu_grad_into(dy_v, s_v, out_v, dy_decl, s_decl, out_decl, *opts, reference, scope.stream)
    return _as_kind_of(dy, result) if out is None else result


def relu_grad(dy: ArrayLike, s: ArrayLike, *, semantics: str = "torch", threshold: float = 0.0,
              alpha: float = 0.0, clip: Optional[Tuple[float, float]] = None,
              out: Optional[ArrayLike] = None, threads: Optional[int] = None,
              gate: Optional[str] = None, combine: Optional[str] = None,
              denormals: Optional[str] = None,
              threshold_rounding: Optional[str] = None, stores: str = "auto") -> ArrayLike:
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
        goes cold; up to 1.4x faster for cold 4K-4M outputs).

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
    return _run(dy, s, semantics, threshold, alpha, clip, out, _framework_threads(threads, dy), gate, combine,
                denormals, threshold_rounding, reference=False, stores=stores)


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


def mask_bytes(n: int) -> int:
    """Bytes of a packed mask for n elements: ceil(n/8)."""
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 0:
        raise ValueError(f"n: expected an int >= 0, got {n!r}")
    return int(_C.mask_bytes(int(n)))


def relu_forward(x: ArrayLike, *, semantics: str = "torch", threshold: float = 0.0, alpha: float = 0.0,
                 out: Optional[ArrayLike] = None, mask_out: Optional[ArrayLike] = None,
                 threads: Optional[int] = None, gate: Optional[str] = None, combine: Optional[str] = None,
                 denormals: Optional[str] = None,
                 threshold_rounding: Optional[str] = None, stores: str = "auto") -> Tuple[ArrayLike, ArrayLike]:
    """ReLU forward with the 1-bit mask: ``(y, mask)`` (docs/mask.md).

    y = relu(x) under the preset (closed elements are +0, or x*alpha; a NaN x
    passes its bits); mask is a flat uint8 array of ceil(n/8) bytes, bit i
    (LSB first) = the gate of the preset is open for x[i], padding bits 0.
    relu_grad_mask(dy, mask) then equals relu_grad(dy, x) bit for bit.

    Same array kinds, devices, errors and GIL release as relu_grad. out may
    be x itself (in place); mask_out, if given, must be a writable uint8
    array of ceil(n/8) elements of x's kind and device. Note: torch.relu(-0.)
    is -0; relugrad (like torch.threshold) writes +0. stores: as relu_grad's
    (applies to y).
    """
    opts = _options(semantics, threshold, alpha, None, _framework_threads(threads, x), gate, combine, denormals,
                    threshold_rounding, stores)
    x_v, x_decl = _binding_view("x", x)
    y = _new_like(x) if out is None else _writable_out("out", out)
    y_v, y_decl = _binding_view("out", y)
    n_bytes = int(_C.mask_bytes(int(np.prod(tuple(x.shape), dtype=np.int64))))
    mask = _new_like(x, (n_bytes,), "uint8") if mask_out is None else _writable_out("mask_out", mask_out)
    _check_mask_dtype("mask_out", mask)
    m_v, _ = _binding_view("mask_out", mask)
    with _DeviceScope(x) as scope:
        _C.relu_forward_into(x_v, y_v, m_v, x_decl, y_decl, *opts, scope.stream)
    y = _as_kind_of(x, y) if out is None else y
    mask = _as_kind_of(x, mask) if mask_out is None else mask
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
    opts = _options(semantics, threshold, alpha, clip, _framework_threads(threads, dy), gate, combine, denormals,
                    threshold_rounding, stores)
    dy_v, dy_decl = _binding_view("dy", dy)
    _check_mask_dtype("mask", mask)
    m_v, _ = _binding_view("mask", mask)
    result = _new_like(dy) if out is None else _writable_out("out", out)
    out_v, out_decl = _binding_view("out", result)
    with _DeviceScope(dy) as scope:
        _C.relu_grad_mask_into(dy_v, m_v, out_v, dy_decl, out_decl, *opts, scope.stream)
    return _as_kind_of(dy, result) if out is None else result


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
    built_for = _torch_native_stamp()
    facts["torch_native"] = (f"built for torch {built_for}" if built_for is not None
                             else "not built (no torch when the package was built)")
    return facts


_TORCH_NATIVE_LIB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_relugrad_torch.so")


def _torch_native_stamp() -> Optional[str]:
    """The torch version relugrad/_relugrad_torch.so was built against (the
    stamp file beside it), or None when it was not built; read without
    importing torch. relugrad.torch loads the library only under that version."""
    if not os.path.exists(_TORCH_NATIVE_LIB):
        return None
    try:
        with open(os.path.splitext(_TORCH_NATIVE_LIB)[0] + ".torch_version", encoding="utf-8") as f:
            return f.read().strip()
    except OSError:
        return None


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


def buffer_cache_stats() -> Dict[str, int]:
    """relugrad's output buffer cache: ``cached_bytes`` (freed results kept
    with their pages for reuse), ``live_bytes`` (results alive now),
    ``hits`` and ``misses`` (allocating calls served from the cache or not).
    The cap is ``RELUGRAD_BUFFER_CACHE_MIB`` (default 1024, 0 = off)."""
    return dict(_C.buffer_cache_stats())


def buffer_cache_trim() -> int:
    """Frees every cached block (results still alive are untouched); returns
    the bytes given back."""
    return int(_C.buffer_cache_trim())
