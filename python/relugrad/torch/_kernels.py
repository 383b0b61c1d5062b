"""Calls into relugrad's kernels on torch tensors: argument checks, which tensors the kernels
read, and the one cache of configurations and plans (layer 0).

The cache: a call's keyword arguments (semantics, threshold, alpha, threads) -> its
configuration, relugrad.Options checked once (relugrad._options._torch_config) -> a plan per
(op, dtype) on the CPU, or per (op, dtype, stream) on CUDA, made on first use and kept by the
configuration (_options._Config). Every relugrad.torch kernel call looks its plan up there, by
_Config.plan, the lookup relugrad's own calls use; there is no second memo in relugrad.torch.
"""
from __future__ import annotations

import numbers
import warnings
from typing import Any, Optional

import torch
from torch import Tensor

from .. import _relugrad as _C
from .._arrays import _DeviceScope, _require_cuda, _torch_host_code, _torch_host_dtype, _unsupported
from .._options import PRESETS, _real, _thread_count, _torch_config
from .. import _compat
from . import _layout

# The dtypes relugrad's kernels read.
DTYPES = frozenset((torch.float32, torch.float16, torch.bfloat16, torch.float64))

__all__ = ["DTYPES", "DeviceScope", "check_flag", "check_real", "check_semantics", "check_tensor", "check_threads",
           "config", "device_plan", "host_code", "host_dtype", "is_compiling", "kernels_serve",
           "plain_tensor", "run_relu_grad", "threads_of"]

DeviceScope = _DeviceScope
host_code = _torch_host_code
host_dtype = _torch_host_dtype


def check_semantics(semantics: str) -> None:
    if semantics not in PRESETS:
        raise ValueError(f"semantics: {semantics!r} is not one of {', '.join(PRESETS)}")


def check_threads(threads: Optional[int]) -> int:
    """The checked threads argument, as in every Python entry point: None or 0 -> 0 (torch's
    intra-op threads), N -> N."""
    return _thread_count(threads)


# The argument checks of relugrad.torch's public entries, in the NumPy API's words (relugrad._options):
# a wrong kind of argument is a TypeError, a wrong value a ValueError, and the message starts with
# the argument's name. Symbolic numbers (torch.compile's SymInt and SymFloat) pass as numbers.
_SYMBOLIC = (torch.SymInt, torch.SymFloat)


def check_flag(name: str, value: Any) -> bool:
    """A flag argument as a bool: True or False (1 and 0 too, as nn.ReLU(1) is written)."""
    if type(value) is bool:
        return value
    if isinstance(value, numbers.Integral) and value in (0, 1):
        return bool(value)
    raise TypeError(f"{name}: expected a bool, got {type(value).__name__}")


def check_real(name: str, value: Any) -> Any:
    """A real-number argument: a float (an int as a float), or a symbolic number as it is."""
    return value if isinstance(value, _SYMBOLIC) else _real(name, value)


def check_tensor(name: str, x: Any) -> None:
    """A tensor argument: a torch.Tensor, or a tensor-like that torch's dispatch hands on through
    __torch_function__ (an FX proxy while tracing)."""
    if not isinstance(x, Tensor) and not hasattr(type(x), "__torch_function__"):
        raise TypeError(f"{name}: expected a torch.Tensor, got {type(x).__name__}")


def threads_of(threads: int) -> int:
    """relugrad's thread count for a call on torch tensors: 0 means torch's own intra-op thread
    count (torch.get_num_threads()), as on the native path, where such calls run on torch's
    threads themselves."""
    return threads if threads else torch.get_num_threads()


_warned_cuda = False


def kernels_serve(t: Tensor) -> bool:
    """relugrad's kernels can read t's memory: a strided, non-nested tensor on the CPU, or on
    CUDA when this build has the CUDA backend. Everything else (meta, other devices, CUDA in a
    CPU-only build, with one warning) gets torch's own ops."""
    if t.layout is not torch.strided or t.is_nested:
        return False
    if t.is_cpu:
        return True
    if t.device.type == "cuda":
        if _C.backend_available(_C.BACKEND_CUDA):
            return True
        global _warned_cuda
        if not _warned_cuda:
            _warned_cuda = True
            warnings.warn("relugrad: this build has no CUDA backend (rebuild with: pip install . -C "
                          "cmake.define.RELUGRAD_CUDA=ON); CUDA tensors get torch's own ReLU and "
                          "threshold_backward instead (same bits in the torch preset)", RuntimeWarning, stacklevel=3)
    return False


def config(semantics: str, threshold: float, alpha: float, threads: int):
    """The configuration (relugrad.Options and its plans) of a kernel call; threads: the checked
    argument (0 = torch's intra-op threads)."""
    return _torch_config(semantics, float(threshold), float(alpha), threads_of(int(threads)))


def device_plan(cfg, op: int, name: str, t: Tensor, scope):
    """cfg's plan of op for t's dtype on t's device (the scope's: _Config.plan, the one lookup);
    TypeError naming the argument for other dtypes."""
    code = _torch_host_dtype(t.dtype)
    if code is None:
        raise _unsupported(name, str(t.dtype).replace("torch.", ""))
    if scope.stream is not None:
        _require_cuda(name, f"a tensor on {t.device}")
    return cfg.plan(op, code, scope.stream)


def run_relu_grad(dy: Tensor, s: Tensor, out: Tensor, cfg) -> None:
    """relugrad_relu_grad over the storage of dense dy, s, out of one storage order."""
    if out.is_cpu:
        code = _torch_host_dtype(dy.dtype)
        if code is not None and s.dtype == dy.dtype and s.is_cpu and dy.is_cpu:
            cfg.plan(_C.OP_RELU_GRAD, code).run_host(dy.data_ptr(), s.data_ptr(), out.data_ptr(), out.numel())
            return
    with _DeviceScope(dy) as scope:
        device_plan(cfg, _C.OP_RELU_GRAD, "dy", dy, scope)(_layout.flat(dy), _layout.flat(s), _layout.flat(out))


# ---- Which tensors are plain -----------------------------------------------------------------
is_compiling = torch.compiler.is_compiling


def plain_tensor(t: Tensor) -> bool:
    """t is a torch.Tensor itself, not a subclass or torch.func's wrapper (nor the BatchedTensor
    of autograd.grad(..., is_grads_batched=True)): Python code reads its memory directly only
    then; anything else takes the custom ops, which the dispatcher routes."""
    return type(t) is Tensor and not _compat.is_functorch_wrapped(t) and not _compat.is_legacy_batched(t)
