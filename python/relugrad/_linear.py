"""LinearReLU: nn.Linear followed by nn.ReLU, whose backward fuses the bias gradient into ReluGrad.

Stock's backward of relu(linear(x)) makes dx = threshold_backward(dy, y, 0), then the bias
gradient dx.sum(0) in a second pass over dx. LinearReLU's backward makes both in one pass, then
the weight and input gradients with the matmuls stock's addmm backward picks from the operands'
layouts (dx.t() @ x and dx @ W for a row-major weight; stock's bits and strides), computing only the
gradients the backward asks for and keeping what stock keeps (x only where the weight needs a
gradient, the weight only where x does). Forward and backward are C++ (relugrad._relugrad_torch.linear_relu and its autograd
node, python/src/torch_bias.cc): the forward runs relu in place over linear's own output (one
allocation fewer than stock's relu into a new tensor, the same bits), and the backward writes dx
over an incoming gradient that nothing else holds.

What is guaranteed, against stock nn.Linear + nn.ReLU with the same parameters and inputs:
  - the output, the input gradient and the weight gradient: the same bits;
  - the bias gradient: a fixed-order sum of dx's columns (blocks of 128 rows each summed row by
    row, then the block sums in block order, in the dtype: float32 or float64), the same bits for
    any thread count, NOT stock's bits (torch's sum(0) adds in its own cascade order); the
    difference is rounding only (docs/python.md, "Bias-gradient fusion", has the measured size).
Served by the fused pass: training with autograd recording, float32/float64 plain dense CPU
tensors, a bias, the torch preset, eager mode (not torch.compile, torch.func, forward AD, CPU
autocast or anomaly mode).
Everything else runs F.linear then relugrad's ReLU: stock's bits everywhere. A backward under
create_graph (or with a gradient the pass cannot read) runs stock's differentiable ops in the
node: stock's bits, the bias gradient included.

LinearReLU is an nn.Linear (same parameters, same state_dict keys). replace_relu(fuse_linear=True)
does not use it: it leaves each nn.Linear where it is and has the parent run it with the ReLU
after it by fused_linear_relu (_fusion.py).
"""
from __future__ import annotations

from typing import Optional

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from . import torch as _rt

__all__ = ["LinearReLU", "fused_linear_relu"]


def _load_native_entry():
    """relugrad._relugrad_torch.linear_relu where the torch-native library loaded, else None."""
    if not _rt.NATIVE:
        return None
    from . import _relugrad_torch
    return _relugrad_torch.linear_relu


# The fused C++ forward (and backward node); None: every call runs unfused (stock's bits).
_native_entry = _load_native_entry()


def _fused_serves(m: "LinearReLU", x: Tensor) -> bool:
    # Not under autocast (linear runs in another dtype than the node's saved tensors) nor anomaly
    # mode (stock's two nodes each check their outputs for NaN; the fused node is one).
    return (m.training and m.bias is not None and torch.is_grad_enabled() and _rt.NATIVE
            and not torch.is_autocast_enabled("cpu") and not torch.is_anomaly_enabled()
            and not torch.jit.is_tracing()
            and (x.requires_grad or m.weight.requires_grad or m.bias.requires_grad)
            and x.dtype in (torch.float32, torch.float64) and m.weight.dtype == x.dtype
            and _rt._plain_cpu(x) and x.is_contiguous() and x.dim() >= 1
            and type(m.weight) is nn.Parameter and type(m.bias) is nn.Parameter)


class LinearReLU(nn.Linear):
    """nn.Linear(in_features, out_features, bias) followed by ReLU, the bias gradient fused into
    the ReLU backward (see the module docstring for what is served and guaranteed).
    relu_inplace: the replaced nn.ReLU's flag (restore_relu gives it back); threads as ReLU's."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None, dtype=None, *,
                 relu_inplace: bool = False, threads: Optional[int] = 0) -> None:
        super().__init__(in_features, out_features, bias, device, dtype)
        self.relu_inplace = bool(relu_inplace)
        self.relu_threads = _rt._check_threads(threads)
        # Not a submodule: state_dict and restore_relu see one Linear.
        object.__setattr__(self, "_relu", _rt.ReLU("torch", inplace=self.relu_inplace, threads=self.relu_threads))

    def forward(self, x: Tensor) -> Tensor:
        if torch.jit.is_scripting():
            # TorchScript: linear, then the relugrad::relu op (relugrad's backward keeps y), as
            # every captured graph records a relugrad ReLU.
            return torch.ops.relugrad.relu(F.linear(x, self.weight, self.bias), "torch", self.relu_threads)
        return self._eager_forward(x)

    @torch.jit.unused
    def _eager_forward(self, x: Tensor) -> Tensor:
        if not isinstance(x, Tensor):  # an FX proxy: the ops, since _relu is not a submodule
            return torch.ops.relugrad.relu(F.linear(x, self.weight, self.bias), "torch", self.relu_threads)
        y = fused_linear_relu(self, x)
        return self._relu(F.linear(x, self.weight, self.bias)) if y is None else y

    def extra_repr(self) -> str:
        return super().extra_repr() + ", relu" + (" (inplace)" if self.relu_inplace else "")


def fused_linear_relu(linear: nn.Linear, x: Tensor) -> Optional[Tensor]:
    """relu(linear(x)) by the fused forward and node, or None where they do not serve the call
    (the caller then runs the two modules)."""
    if _native_entry is None or not _fused_serves(linear, x):
        return None
    y = _native_entry(x, linear.weight, linear.bias)  # NotImplemented unless plain CPU tensors
    return None if y is NotImplemented else y
