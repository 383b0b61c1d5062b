"""relugrad.torch.relu_grad, relu, relu_mask and relu_grad_mask: the custom ops (ops) called from
Python with their arguments checked first (layer 2, beside modules).

The dispatcher refuses an argument of the wrong kind with a RuntimeError that quotes the schema;
these say what the NumPy API says (a TypeError or ValueError that starts with the argument's
name), as torch.relu raises TypeError where torch.ops.aten.relu raises RuntimeError. Tensor
arguments may be tensor-likes that torch's dispatch hands on (FX proxies), and numbers may be
torch.compile's symbolic ones. torch.ops.relugrad.* stay the ops themselves, checked by the
dispatcher.
"""
from __future__ import annotations

from typing import Any, List, Optional, Tuple

import torch
from torch import Tensor

from . import ops
from ._kernels import check_flag, check_real, check_semantics, check_tensor, check_threads

__all__ = ["relu_grad", "relu", "relu_mask", "relu_grad_mask"]


def _threads(threads: Any) -> Any:
    # None or 0 = torch's intra-op threads, as in every Python entry point.
    return threads if isinstance(threads, torch.SymInt) else check_threads(threads)


def relu_grad(dy: Tensor, s: Tensor, semantics: str = "torch", threshold: float = 0.0, alpha: float = 0.0,
              threads: Optional[int] = 0) -> Tensor:
    """torch.ops.relugrad.relu_grad: ReluGrad of CPU or CUDA tensors, with threshold_backward(dy, s)'s
    layout; threads None or 0 = torch's intra-op thread count."""
    check_tensor("dy", dy)
    check_tensor("s", s)
    check_semantics(semantics)
    return ops.relu_grad(dy, s, semantics, check_real("threshold", threshold), check_real("alpha", alpha),
                         _threads(threads))


def relu(x: Tensor, semantics: str = "torch", threads: Optional[int] = 0) -> Tensor:
    """torch.ops.relugrad.relu: torch.relu forward; backward through relugrad::relu_grad with the preset."""
    check_tensor("x", x)
    check_semantics(semantics)
    return ops.relu(x, semantics, _threads(threads))


def relu_mask(x: Tensor, semantics: str = "torch", threads: Optional[int] = 0,
              storage_order: bool = False) -> Tuple[Tensor, Tensor]:
    """torch.ops.relugrad.relu_mask: (y, mask), mask the packed gate bits in x's logical order
    (storage_order=True: in y's storage order)."""
    check_tensor("x", x)
    check_semantics(semantics)
    return ops.relu_mask(x, semantics, _threads(threads), check_flag("storage_order", storage_order))


def relu_grad_mask(dy: Tensor, mask: Tensor, semantics: str = "torch", threads: Optional[int] = 0,
                   dim_order: Optional[List[int]] = None) -> Tensor:
    """torch.ops.relugrad.relu_grad_mask: dx = bit ? pass(dy) : closed(dy), from relu_mask's mask
    (a uint8 tensor); dim_order: the dim order of a mask kept in another storage order."""
    check_tensor("dy", dy)
    check_tensor("mask", mask)
    if isinstance(mask, Tensor) and mask.dtype != torch.uint8:
        raise TypeError(f"mask: dtype must be torch.uint8, got {mask.dtype}")
    check_semantics(semantics)
    if dim_order is not None:
        if not isinstance(dim_order, (list, tuple)) or not all(isinstance(d, (int, torch.SymInt)) for d in dim_order):
            raise TypeError(f"dim_order: expected None or a sequence of ints, got {type(dim_order).__name__}")
        dim_order = list(dim_order)
    return ops.relu_grad_mask(dy, mask, semantics, _threads(threads), dim_order)
