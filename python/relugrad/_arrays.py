"""Array kinds and memory: what kind of array a call got (NumPy, torch, JAX,
DLPack), the view of it a plan imports without a copy and its relugrad
dtype, the result allocated like it, and the CUDA device and stream a call
runs on.
"""
from __future__ import annotations

import math
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

# NumPy dtype -> relugrad dtype (also JAX's dtypes, which are NumPy's).
_NUMPY_CODES = {np.dtype(np.float16): _C.F16, np.dtype(np.float32): _C.F32, np.dtype(np.float64): _C.F64}
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


_SUPPORTED = "(float16, bfloat16, float32, float64)"
# relugrad dtype -> its name in the library's table ("f32", ...), for messages.
_DTYPE_NAMES = {value: name for name, value in _C.enum_table(_C.ENUM_DTYPE)}


def _unsupported(name: str, dtype: Any) -> TypeError:
    return TypeError(f"{name}: dtype {dtype} is not supported {_SUPPORTED}")


def _device_view(name: str, x: Any) -> Tuple[Any, str]:
    """(object the bindings can import without a copy, its kind), after the
    device checks: CUDA arrays only when the CUDA backend is available."""
    kind = _kind(x)
    if kind == "numpy":
        return x, kind
    if kind == "torch":
        if x.device.type == "cuda":
            _require_cuda(name, f"a tensor on {x.device}")
        elif x.device.type != "cpu":
            raise ValueError(f"{name}: tensor is on {x.device}; relugrad takes CPU or CUDA tensors")
        if _not_memory(x):
            raise TypeError(f"{name}: a {type(x).__name__} wrapper (a __torch_dispatch__ subclass or a "
                            "torch.func tensor) has no memory of its own to read; pass a plain tensor")
        if x.is_neg():  # the lazy negation bit (a negative view): the memory holds -x
            if name in _OUTPUTS:
                raise ValueError(f"{name}: a lazily negated tensor (Tensor.is_neg()) cannot be written in "
                                 "place; pass a plain tensor")
            x = x.resolve_neg()
        # DLPack refuses tensors that require grad; detach() shares the memory.
        return x.detach(), kind
    if kind == "jax":
        platforms = {d.platform for d in x.devices()}
        if platforms != {"cpu"}:
            raise ValueError(f"{name}: JAX array lives on {sorted(platforms)}; relugrad takes CPU JAX arrays "
                             "(JAX arrays are immutable and relugrad has no JAX GPU allocator)")
        return x, kind
    if kind == "dlpack":
        device_type, device_id = x.__dlpack_device__()
        device_type = int(device_type)
        if device_type in (_KDL_CUDA, _KDL_CUDA_MANAGED):
            _require_cuda(name, f"a DLPack array on CUDA device {int(device_id)} (device type {device_type})")
        elif device_type not in (_KDL_CPU, _KDL_CUDA_HOST):
            raise ValueError(f"{name}: DLPack device type {device_type} is neither the CPU (1) nor CUDA (2, 13)")
        return x, kind
    raise TypeError(f"{name}: expected a NumPy array, a torch.Tensor, a jax.Array or a CPU/CUDA DLPack "
                    f"array, got {type(x).__module__}.{type(x).__qualname__}")


# The arguments the functions write.
_OUTPUTS = ("out", "mask_out")


_torch_compat = None  # relugrad._compat, bound by the first torch tensor (it imports torch)


def _not_memory(x: Any) -> bool:
    """A torch tensor whose memory is not its values: a __torch_dispatch__ wrapper subclass, or a
    torch.func / is_grads_batched wrapper."""
    global _torch_compat
    if _torch_compat is None:  # once: an import statement per call costs as much as the check
        from . import _compat
        _torch_compat = _compat
    torch = sys.modules["torch"]
    return (type(x).__torch_dispatch__ is not torch.Tensor.__torch_dispatch__
            or _torch_compat.is_functorch_wrapped(x) or _torch_compat.is_legacy_batched(x))


def wrote(out: Any) -> None:
    """After a function wrote a caller's torch tensor: its version counter moves on, as after
    a torch op's out= (autograd then refuses a backward that saved its old values)."""
    if _kind(out) == "torch":
        sys.modules["torch"].autograd.graph.increment_version(out)


def _binding_view(name: str, x: Any) -> Tuple[Any, int]:
    """(object a plan can import without a copy, its relugrad dtype) of a data
    array; TypeError naming the argument for any dtype but the four floats.
    NumPy bfloat16 arrays are passed as the same memory viewed as uint16
    (NumPy cannot export ml_dtypes.bfloat16 through DLPack or the buffer
    protocol), which a 16-bit plan reads as its own dtype: callers compare
    the dtypes of a call's arrays (_same_dtype) before running it."""
    view, kind = _device_view(name, x)
    if kind == "torch":
        code = _torch_host_dtype(x.dtype)
        if code is None:
            raise _unsupported(name, str(x.dtype).replace("torch.", ""))
        return view, code
    if kind == "dlpack":  # no dtype Python can read: the library's DLPack import says
        return view, _C.dtype_of(name, view)
    dtype = np.dtype(x.dtype)
    code = _NUMPY_CODES.get(dtype)
    if code is not None:
        return view, code
    if _BF16 is not None and dtype == _BF16:
        return (x.view(np.uint16) if kind == "numpy" else view), _C.BF16
    raise _unsupported(name, dtype)


def _mask_view(name: str, mask: Any) -> Any:
    """The importable view of a packed mask (uint8, checked by _check_mask_dtype)."""
    return _device_view(name, mask)[0]


def _same_dtype(name: str, code: int, first: str, first_code: int) -> None:
    if code != first_code:
        raise TypeError(f"{name}: dtype {_DTYPE_NAMES[code]} does not match {first}'s {_DTYPE_NAMES[first_code]}")


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
    the current device and the default stream (0); for CPU arrays nothing,
    stream None. stream is what _Config.plan takes to pick the backend."""

    def __init__(self, x: Any) -> None:
        self.stream: Optional[int] = None
        self._ctx = None
        kind = _kind(x)
        if kind == "torch":
            if x.device.type == "cuda":
                import torch
                self._ctx = torch.cuda.device(x.device)
                self.stream = int(torch.cuda.current_stream(x.device).cuda_stream)
        elif kind == "dlpack" and int(x.__dlpack_device__()[0]) in (_KDL_CUDA, _KDL_CUDA_MANAGED):
            self.stream = 0

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
    # (docs/design.md, "Output buffer cache").
    return _C.cached_bytes(nbytes).view(np_dtype).reshape(shape)


def _new_numpy(dy: Any) -> Any:
    """_new_like(dy) for a NumPy dy, without asking its kind."""
    if dy.nbytes < _CACHED_MIN_BYTES:
        return np.empty(dy.shape, dy.dtype)
    return _new_like(dy)


def _writable_out(name: str, out: Any) -> Any:
    if _kind(out) == "jax":
        raise TypeError(f"{name}: JAX arrays are immutable; leave {name}=None")
    if _kind(out) == "torch" and out.requires_grad and sys.modules["torch"].is_grad_enabled():
        raise RuntimeError(f"{name}: the tensor requires grad, and relugrad's functions record no autograd "
                           "history (as torch's out= ops refuse it); pass a tensor that does not, or run under "
                           "torch.no_grad()")
    if _kind(out) == "numpy" and not out.flags.writeable:
        raise ValueError(f"{name}: array is read-only")
    return out


def _check_mask_dtype(name: str, mask: Any) -> None:
    dtype = getattr(mask, "dtype", None)
    if str(dtype) not in ("uint8", "torch.uint8"):
        raise TypeError(f"{name}: a packed mask must have dtype uint8, got {dtype}")


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
    one supported dtype and shape whose memory holds their values (no lazy
    negation bit: the by-address path), else None."""
    code = _torch_host_dtype(dy.dtype)
    if (code is None or not dy.is_cpu or not s.is_cpu or s.dtype != dy.dtype or s.shape != dy.shape
            or not dy.is_contiguous() or not s.is_contiguous() or dy.is_neg() or s.is_neg()):
        return None
    return code
