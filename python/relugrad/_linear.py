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

LinearReLU is an nn.Linear (same parameters, same state_dict keys); replace_relu(fuse_linear=True)
makes one of each nn.Linear directly followed by an nn.ReLU in an nn.Sequential, and puts a
FusedReLU (an identity) where the ReLU was; restore_relu gives back both modules.
"""
from __future__ import annotations

from typing import Optional

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from . import _dropout
from . import torch as _rt

__all__ = ["LinearReLU", "FusedReLU"]


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

    @classmethod
    def from_modules(cls, linear: nn.Linear, relu: nn.Module) -> "LinearReLU":
        """A LinearReLU sharing linear's parameters (the same Parameter objects)."""
        new = cls.__new__(cls)
        nn.Module.__init__(new)
        new.in_features, new.out_features = linear.in_features, linear.out_features
        new.weight, new.bias = linear.weight, linear.bias
        new.relu_inplace = bool(getattr(relu, "inplace", False))
        new.relu_threads = int(getattr(relu, "threads", 0))
        object.__setattr__(new, "_relu", _rt.ReLU("torch", inplace=new.relu_inplace, threads=new.relu_threads))
        new.training = linear.training
        return new

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
        if _native_entry is not None and _fused_serves(self, x):
            y = _native_entry(x, self.weight, self.bias)  # NotImplemented unless plain CPU tensors
            if y is not NotImplemented:
                return y
        return self._relu(F.linear(x, self.weight, self.bias))

    def extra_repr(self) -> str:
        return super().extra_repr() + ", relu" + (" (inplace)" if self.relu_inplace else "")


class FusedReLU(nn.Identity):
    """Stands where an nn.ReLU was fused into the LinearReLU before it (restore_relu gives it back)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def extra_repr(self) -> str:
        return "fused into the LinearReLU before it"


def _hooked(m: nn.Module) -> bool:
    return any(m.__dict__.get(a) for a in ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks",
                                           "_backward_pre_hooks"))


def fuse_pairs(model: nn.Module, ours: set, report) -> set:
    """Fuses each nn.Linear directly followed, in an nn.Sequential, by a ReLU replace_relu just
    made (ids in ours), both used once and without hooks; returns the fused ReLUs' ids."""
    counts: dict = {}
    for _, m in model.named_modules(remove_duplicate=False):
        counts[id(m)] = counts.get(id(m), 0) + 1
    names = {id(m): n for n, m in model.named_modules()}
    fused = set()
    for m in list(model.modules()):
        if not _dropout.runs_children_in_order(m):
            continue
        keys = list(m._modules)
        for a, b in zip(keys, keys[1:]):
            lin, relu = m._modules.get(a), m._modules.get(b)
            if not (type(lin) is nn.Linear and isinstance(relu, _rt.ReLU) and id(relu) in ours
                    and relu.semantics == "torch" and not relu.mask and id(relu) not in fused
                    and counts.get(id(lin)) == 1 and counts.get(id(relu)) == 1
                    and not _hooked(lin) and not _hooked(relu)):
                continue
            fused.add(id(relu))
            m._modules[a] = LinearReLU.from_modules(lin, relu)
            away = FusedReLU(relu.inplace)
            away.training = relu.training
            m._modules[b] = away
            rname = names.get(id(relu), b)
            for i, e in enumerate(report.replaced):
                if e.name == rname:
                    report.replaced[i] = type(e)(e.name, e.kind, f"fused into relugrad LinearReLU at "
                                                 f"{names.get(id(lin), a)} (bias gradient in the ReLU pass)")
    return fused


def unfuse(parent: nn.Module, attr: str, m: nn.Module) -> str:
    """Puts back what a LinearReLU or FusedReLU stands for at parent.attr; says what it became."""
    if isinstance(m, FusedReLU):
        new = nn.ReLU(inplace=m.inplace)
    else:
        new = nn.Linear.__new__(nn.Linear)
        nn.Module.__init__(new)
        new.in_features, new.out_features = m.in_features, m.out_features
        new.weight, new.bias = m.weight, m.bias
    new.training = m.training
    setattr(parent, attr, new)
    return type(new).__name__
