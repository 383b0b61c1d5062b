"""PyTorch integration: torch.library custom ops and a drop-in ReLU module.

Ops (registered the torch.library way: schema, CPU kernel, fake kernel for
torch.compile, autograd formula):

    torch.ops.relugrad.relu_grad(dy, s, semantics="torch", threshold=0.0, alpha=0.0, threads=0) -> Tensor
    torch.ops.relugrad.relu(x, semantics="torch", threads=0) -> Tensor   # forward = torch.relu,
                                                              # backward = relugrad.relu_grad

Modules:

    relugrad.torch.ReLU(semantics="torch")      # an nn.ReLU whose backward runs relugrad
    relugrad.torch.replace_relu(model)          # swaps every nn.ReLU (in-place ones too)

In the torch preset the gradients equal PyTorch's own bit for bit: autograd of
torch.relu calls threshold_backward(grad, result, 0), which is the gate
zero_if_le on y with select, exactly what the preset computes.
"""
from __future__ import annotations

from typing import Tuple

import torch
from torch import Tensor, nn

from . import _api
from . import _relugrad as _C

_PRESET_CODES = {name: _C.preset_from_name(name) for name in _api.PRESETS}

__all__ = ["relu_grad", "relu", "ReLU", "replace_relu"]


def _check_semantics(semantics: str) -> None:
    if semantics not in _api.PRESETS:
        raise ValueError(f"semantics: {semantics!r} is not one of {', '.join(_api.PRESETS)}")


@torch.library.custom_op("relugrad::relu_grad", mutates_args=(), device_types="cpu")
def relu_grad(dy: Tensor, s: Tensor, semantics: str = "torch", threshold: float = 0.0,
              alpha: float = 0.0, threads: int = 0) -> Tensor:
    """ReluGrad of CPU tensors (a fresh contiguous result); threads 0 = all cores."""
    _check_semantics(semantics)
    # relugrad reads C-ordered memory; contiguous() is a no-op when it already is.
    dy = dy.contiguous()
    s = s.contiguous()
    if dy.device.type != "cpu" or s.device.type != "cpu":
        raise ValueError(f"relugrad::relu_grad: tensors must be on the CPU (dy on {dy.device}, s on {s.device})")
    out = torch.empty(dy.shape, dtype=dy.dtype)
    # Straight to the bindings (they check dtypes and shapes by argument
    # name): this op runs once per ReLU per backward, so skip relu_grad()'s
    # generic array-kind dispatch.
    if threads < 0:
        raise ValueError(f"threads: must be >= 0 (0 = all cores), got {threads}")
    _C.relu_grad_into(dy.detach(), s.detach(), out, 0, 0, 0, _PRESET_CODES[semantics], -1, -1, -1, -1,
                      float(threshold), float(alpha), False, 0.0, 0.0, int(threads), False)
    return out


@relu_grad.register_fake
def _relu_grad_fake(dy: Tensor, s: Tensor, semantics: str = "torch", threshold: float = 0.0,
                    alpha: float = 0.0, threads: int = 0) -> Tensor:
    torch._check(dy.shape == s.shape, lambda: f"s: shape {tuple(s.shape)} does not match dy's {tuple(dy.shape)}")
    torch._check(dy.dtype == s.dtype, lambda: f"s: dtype {s.dtype} does not match dy's {dy.dtype}")
    return dy.new_empty(dy.shape)


def _relu_grad_setup(ctx, inputs: Tuple, output: Tensor) -> None:
    _, s, semantics, threshold, alpha, threads = inputs
    ctx.save_for_backward(s)
    ctx.options = (semantics, threshold, alpha, threads)


def _relu_grad_backward(ctx, grad: Tensor):
    # dx is linear in dy (dy, dy*0 or dy*alpha per element, fixed by s), so
    # its gradient w.r.t. dy is ReluGrad of the incoming gradient with the same
    # gate; w.r.t. s it is zero almost everywhere (returned as None).
    (s,) = ctx.saved_tensors
    semantics, threshold, alpha, threads = ctx.options
    return (torch.ops.relugrad.relu_grad(grad, s, semantics, threshold, alpha, threads),
            None, None, None, None, None)


relu_grad.register_autograd(_relu_grad_backward, setup_context=_relu_grad_setup)


@torch.library.custom_op("relugrad::relu", mutates_args=())
def relu(x: Tensor, semantics: str = "torch", threads: int = 0) -> Tensor:
    """torch.relu forward; backward through relugrad::relu_grad with the preset."""
    _check_semantics(semantics)
    return torch.relu(x)


@relu.register_fake
def _relu_fake(x: Tensor, semantics: str = "torch", threads: int = 0) -> Tensor:
    return torch.empty_like(x)


def _relu_setup(ctx, inputs: Tuple, output: Tensor) -> None:
    # Gate on y = relu(x), as PyTorch does. For the pass_if_gt presets (TF,
    # JAX, oneDNN) gating on y equals gating on x at threshold 0: x > 0 iff
    # relu(x) > 0, a NaN x gives a NaN y (closed both ways), and a subnormal
    # x stays the same subnormal y (flushed alike under FTZ/DAZ).
    ctx.save_for_backward(output)
    ctx.semantics, ctx.threads = inputs[1], inputs[2]


def _relu_backward(ctx, grad: Tensor):
    (y,) = ctx.saved_tensors
    return torch.ops.relugrad.relu_grad(grad, y, ctx.semantics, 0.0, 0.0, ctx.threads), None, None


relu.register_autograd(_relu_backward, setup_context=_relu_setup)


class ReLU(nn.Module):
    """Drop-in nn.ReLU whose backward is relugrad's ReluGrad.

    Args:
      semantics: "torch" (bit-equal to nn.ReLU's gradients), "tensorflow",
        "jax" or "onednn".
      inplace: accepted for nn.ReLU compatibility; the forward is always
        out of place (the backward needs y, and the op must not alias).
      threads: relugrad worker threads for the backward; 0 = all cores. Inside
        a framework that keeps its own threads busy, 1 avoids two pools
        competing for the same cores.
    """

    def __init__(self, semantics: str = "torch", inplace: bool = False, threads: int = 0) -> None:
        super().__init__()
        _check_semantics(semantics)
        if threads < 0:
            raise ValueError(f"threads: must be >= 0 (0 = all cores), got {threads}")
        self.semantics = semantics
        self.inplace = inplace
        self.threads = threads

    def forward(self, x: Tensor) -> Tensor:
        if x.device.type != "cpu":
            # The C library here is CPU-only: keep such models usable.
            return torch.relu(x)
        return torch.ops.relugrad.relu(x, self.semantics, self.threads)

    def extra_repr(self) -> str:
        return f"semantics={self.semantics!r}" + (f", threads={self.threads}" if self.threads else "")


def replace_relu(model: nn.Module, semantics: str = "torch", threads: int = 0) -> nn.Module:
    """Replaces every nn.ReLU submodule of model (in place or not) by
    relugrad.torch.ReLU(semantics); returns model. Functional calls
    (torch.relu, F.relu) inside forward() are not modules and stay as they are.
    A model that is itself an nn.ReLU is returned replaced."""
    _check_semantics(semantics)
    if isinstance(model, nn.ReLU):
        return ReLU(semantics, inplace=model.inplace, threads=threads)
    for name, child in list(model.named_children()):
        if isinstance(child, nn.ReLU):
            setattr(model, name, ReLU(semantics, inplace=child.inplace, threads=threads))
        else:
            replace_relu(child, semantics, threads)
    return model
