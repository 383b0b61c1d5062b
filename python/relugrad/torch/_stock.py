"""Each preset's rules written with torch's own ops (layer 0): the stock path.

The stock path serves what relugrad's kernels cannot read (tensor subclasses, DTensor, nested
tensors, other dtypes and devices, CUDA without the CUDA backend). Its forward is torch.relu; its
backward is threshold_backward in the torch preset (torch's own autograd of relu), and the preset's
rule below otherwise, built from the settings the C++ library reports for it
(relugrad.preset_settings), so the rule each preset stands for has one copy, in C++; python/tests
compare these formulas with the kernels bit for bit.
"""
from __future__ import annotations

import torch
from torch import Tensor

from .. import _compat
from .._options import preset_settings


def gate_open(s: Tensor, semantics: str, threshold: float) -> Tensor:
    """The preset's gate at threshold: True where dy passes."""
    st = preset_settings(semantics)
    g = s.float() if s.dtype in (torch.float16, torch.bfloat16) else s  # the compute type
    t = threshold
    if st["threshold_rounding"] == "dtype":
        t = float(torch.tensor(threshold, dtype=s.dtype))
    if st["denormals"] == "ftz_daz" and s.dtype is not torch.float16:  # f16 has no subnormals in f32
        g = torch.where(g.abs() < torch.finfo(s.dtype).tiny, torch.zeros_like(g), g)
    return g > t if st["gate"] == "pass_if_gt" else ~(g <= t)


def relu_grad_torch(dy: Tensor, s: Tensor, semantics: str, threshold: float, alpha: float) -> Tensor:
    """The preset's ReluGrad of dy gated by s, from torch ops (threshold_backward for torch's)."""
    st = preset_settings(semantics)
    if semantics == "torch" and alpha == 0.0:
        return torch.ops.aten.threshold_backward(dy, s, threshold)
    if dy.is_nested and dy.layout is torch.strided:  # few ops take strided nested tensors: per component
        return torch.nested.as_nested_tensor([relu_grad_torch(a, b, semantics, threshold, alpha)
                                              for a, b in zip(dy.unbind(), s.unbind())])
    open_ = gate_open(s, semantics, threshold)
    if st["combine"] == "select":
        closed = dy * alpha if alpha != 0.0 else torch.zeros_like(dy)
        return torch.where(open_, dy, closed)
    dx = dy * torch.where(open_, torch.ones_like(dy), torch.full_like(dy, alpha))
    if st["denormals"] == "ftz_daz" and dy.dtype is not torch.float16:
        dx = torch.where(dx.abs() < torch.finfo(dy.dtype).tiny, dx * 0, dx)
    return dx


def relu_y(x: Tensor, semantics: str, inplace: bool) -> Tensor:
    """relu_mask's y without the mask (ReLU(mask=True) with nothing to save), for forwards autograd does not record:
    x where the gate is open or x is NaN (its bits), +0 elsewhere; for the
    torch preset x < 0 ? +0 : x (torch.relu's y, -0 kept, as the mask
    forward's; NaN bits kept where torch's 16-bit relu may change them)."""
    if semantics == "torch":
        if x.dtype in (torch.float32, torch.float64):  # torch.relu's own bits there
            return torch.relu_(x) if inplace else torch.relu(x)
        # torch.where selects bits: a NaN x keeps its payload, a -0 x its sign.
        y = torch.where(x < 0, torch.zeros_like(x), x)
        return x.copy_(y) if inplace else y
    y = torch.where(gate_open(x, semantics, 0.0) | torch.isnan(x), x, torch.zeros_like(x))
    return x.copy_(y) if inplace else y


def refuse_in_place_on_a_leaf(x: Tensor) -> None:
    """Stock's refusal of an in-place op on a leaf that requires grad, or a view of one (autograd's
    check_inplace), asked before the write: an autograd.Function that writes x in place is told
    only after its forward has written x."""
    if x.is_leaf:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    base = _compat.view_base(x)
    if base is not None and base.is_leaf and base.requires_grad:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")


class _ReluTorchOps(torch.autograd.Function):
    """ReLU of a preset other than torch's, from torch ops alone: torch.relu forward, relu_grad_torch
    backward and jvp. A Function and not the custom op: a tensor subclass's __torch_dispatch__ (a
    jagged nested tensor's among them) knows aten's ops, not relugrad's, and the ops have kernels for
    the CPU and CUDA only."""
    generate_vmap_rule = True

    @staticmethod
    def forward(x, semantics):
        return torch.relu(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)
        ctx.save_for_forward(output)
        ctx.semantics = inputs[1]

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return relu_grad_torch(grad, y, ctx.semantics, 0.0, 0.0), None

    @staticmethod
    def jvp(ctx, t, _):
        (y,) = ctx.saved_tensors
        return relu_grad_torch(t, y, ctx.semantics, 0.0, 0.0)


def relu(x: Tensor, semantics: str, inplace: bool) -> Tensor:
    """The stock path's ReLU: nn.ReLU's forward, the preset's gradient from torch ops."""
    if semantics == "torch":
        return torch.relu_(x) if inplace else torch.relu(x)
    if x.is_nested and x.layout is torch.strided:  # autograd.Function cannot take these: per component
        y = torch.nested.as_nested_tensor([_ReluTorchOps.apply(c, semantics) for c in x.unbind()])
    else:
        y = _ReluTorchOps.apply(x, semantics)
    return x.copy_(y) if inplace else y
