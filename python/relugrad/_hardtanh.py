"""relugrad.torch.Hardtanh and ReLU6, and hardtanh_grad: relugrad's kernel for hardtanh's backward.

The modules run torch's hardtanh, forward and backward (nn.Hardtanh's forward, inherited). Their
backward ran relugrad's kernel through a Python autograd.Function, and that measured 1.2-1.4x
stock's time per call up to 64K elements and no faster at 1M (2-core Zen 5 VM, torch 2.15): the
Function's Python forward and backward cost more than the kernel saves. Until the kernel has a
C++ node as ReLU's does (torch_native.cc), the modules are stock's op, with stock's bits and
time; replace_relu still puts them in place of nn.ReLU6 / nn.Hardtanh (the threads option is
kept for that node), and hardtanh_grad gives the kernel to direct callers.

hardtanh_grad is aten::hardtanh_backward(dy, s, min_val, max_val): dx = dy where
min_val < s < max_val, +0 elsewhere; relugrad computes it as the torch preset
with threshold = min_val and gate_max = max_val (docs/semantics.md). A NaN s
passes dy, as PyTorch's scalar loop and its CUDA kernel do; PyTorch's
vectorised CPU loop closes it, so a NaN gate in the body of a contiguous CPU
tensor is the one place the bits can differ.

The result has hardtanh_backward's layout (a TensorIterator op over dy, then
s), with relu_grad's layout machinery from relugrad.torch. What the kernels
cannot read (CUDA in a CPU-only build, meta, subclasses, other devices) gets
torch's own hardtanh_backward.
"""
from __future__ import annotations

import math
from typing import Optional

import torch
from torch import Tensor, nn

from . import _api
from . import _relugrad as _C
from . import torch as _rt

__all__ = ["Hardtanh", "ReLU6", "hardtanh_grad"]


def _output(dy: Tensor, s: Tensor):
    """(hardtanh_backward(dy, s)'s output, uninitialised; whether dy and s share its order)."""
    out = _rt._fast_output(dy, s)
    if out is not None:
        return out, True
    return _rt._empty(dy, _rt._ti_strides(dy.shape, dy.stride(), s.stride())), False


def hardtanh_grad(dy: Tensor, s: Tensor, min_val: float, max_val: float, threads: Optional[int] = 0) -> Tensor:
    """aten::hardtanh_backward(dy, s, min_val, max_val) by relugrad's kernels; s
    is the forward input or output (same result)."""
    n_threads = _api._thread_count(threads)
    # Plain tensors only (no subclass, no torch.func or is_grads_batched wrapper); a max_val of
    # +inf is torch's own op: there stock's gate s < max_val closes s = +inf, while relugrad's
    # gate_max = +inf means no bound (docs/semantics.md).
    serve = (_rt._plain_tensor(dy) and _rt._plain_tensor(s) and _rt._kernels_serve(dy) and _rt._kernels_serve(s)
             and dy.is_cpu and s.is_cpu and dy.dtype == s.dtype and dy.shape == s.shape
             and _api._torch_host_dtype(dy.dtype) is not None and max_val != math.inf)
    if not serve:  # the bound has no CUDA kernel (RELUGRAD_UNSUPPORTED): torch's own op
        return torch.ops.aten.hardtanh_backward(dy, s, min_val, max_val)
    # The kernels read raw memory: lazily negated tensors (torch._neg_view) are negated first.
    dy, s = dy.resolve_neg(), s.resolve_neg()
    out, same = _output(dy, s)
    if not same:
        dy, s = _rt._in_order(dy, out.stride()), _rt._in_order(s, out.stride())
    config = _api._config("torch", float(min_val), 0.0, None, _rt._threads(n_threads), None, None, None, None,
                          "auto", float(max_val))
    config.plan(_C.OP_RELU_GRAD, _api._torch_host_dtype(dy.dtype)).run_host(dy.data_ptr(), s.data_ptr(),
                                                                           out.data_ptr(), out.numel())
    return out


class Hardtanh(nn.Hardtanh):
    """nn.Hardtanh(min_val, max_val, inplace): torch's hardtanh forward and backward (module
    docstring). threads: kept for relugrad's backward node (None/0 = torch's). An nn.Hardtanh
    subclass (ReLU6 an nn.ReLU6 too), as relugrad's ReLU is an nn.ReLU."""

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False,
                 threads: Optional[int] = 0) -> None:
        nn.Module.__init__(self)  # nn.Hardtanh's asserts: the check below raises ValueError
        min_val, max_val = float(min_val), float(max_val)
        if math.isnan(min_val) or math.isnan(max_val) or not max_val > min_val:
            raise ValueError(f"Hardtanh: max_val ({max_val}) must be greater than min_val ({min_val})")
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace
        self.threads = _api._thread_count(threads)

    def extra_repr(self) -> str:
        inplace = ", inplace=True" if self.inplace else ""
        return f"min_val={self.min_val}, max_val={self.max_val}{inplace}"


class ReLU6(Hardtanh, nn.ReLU6):
    """nn.ReLU6(inplace): Hardtanh(0, 6)."""

    def __init__(self, inplace: bool = False, threads: Optional[int] = 0) -> None:
        super().__init__(0.0, 6.0, inplace, threads)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""
