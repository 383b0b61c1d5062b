"""Each preset's rules written with torch's own ops (layer 0): the stock path.

The stock path serves what relugrad's kernels cannot read (tensor subclasses, DTensor, nested
tensors, meta tensors, other devices, CUDA without the CUDA backend). The torch preset is
threshold_backward itself; the other presets are built from the settings the C++ library
reports for them (relugrad.preset_settings), so the rule each preset stands for has one copy,
in C++; python/tests compare these formulas with the kernels bit for bit.
"""
from __future__ import annotations

import torch
from torch import Tensor

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

