"""The layouts of ReLU's results: the strides PyTorch's own ops give them (layer 0).

ReLU's backward is threshold_backward(grad, result, 0) and its forward torch.relu(x), both
TensorIterator ops, and every relugrad result has the strides those ops would give it.
TensorIterator's fast setup is mirrored first (a few flag reads): all operands contiguous ->
contiguous; all channels_last -> channels_last; all non-overlapping and dense with equal strides
-> those strides. There every operand has one storage order and the kernel runs once over the
storage. Any other case gets TensorIterator's general rule (reorder_dimensions,
allocate_or_resize_outputs): ti_strides(shape, *strides), the C++ rule itself
(python/src/ti_strides.h, which the native path's torch_layouts.cc runs too), from
relugrad._relugrad, which every build has. python/tests hold the results to PyTorch's own.
"""
from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

import torch
from torch import Tensor

from .. import _relugrad as _C

_CL = torch.channels_last

# ti_strides(shape, *strides) -> list: the strides TensorIterator gives a new output of `shape`
# from inputs of that shape with these strides (its general rule, not its fast setup).
ti_strides = _C.ti_strides


def dense(t: Tensor) -> bool:
    """Non-overlapping and dense (c10's is_non_overlapping_and_dense)."""
    if t.is_contiguous():
        return True
    expected = 1
    for stride, size in sorted((st, sz) for st, sz in zip(t.stride(), t.shape) if sz != 1):
        if stride != expected:
            return False
        expected *= size
    return True


def meta(t: Tensor, strides: Optional[Sequence[int]] = None) -> Tensor:
    return torch.empty_strided(t.shape, t.stride() if strides is None else strides, dtype=t.dtype, device="meta")


def empty(like: Tensor, strides: Sequence[int]) -> Tensor:
    return torch.empty_strided(like.shape, strides, dtype=like.dtype, device=like.device)


def fast_output(a: Tensor, b: Tensor) -> Optional[Tensor]:
    """TensorIterator's output for operands a, b when its fast setup serves, else None."""
    if a.is_contiguous() and b.is_contiguous():
        return torch.empty_like(a, memory_format=torch.contiguous_format)
    if a.is_contiguous(memory_format=_CL) and b.is_contiguous(memory_format=_CL):
        return torch.empty_like(a, memory_format=_CL)
    if a.stride() == b.stride() and dense(a) and dense(b):
        return empty(a, a.stride())
    return None


def grad_output(dy: Tensor, s: Tensor) -> Tuple[Tensor, bool]:
    """(threshold_backward(dy, s)'s output, uninitialised; whether dy and s
    share its storage order). Its TensorIterator takes s, then dy: s's layout leads."""
    out = fast_output(dy, s)
    if out is not None:
        return out, True
    return empty(dy, ti_strides(dy.shape, s.stride(), dy.stride())), False


def relu_output(x: Tensor) -> Tuple[Tensor, bool]:
    """(torch.relu(x)'s output, uninitialised; whether it shares x's storage order)."""
    out = fast_output(x, x)
    if out is not None:
        return out, True
    return empty(x, ti_strides(x.shape, x.stride())), False


def same_order(t: Tensor, strides: Sequence[int]) -> bool:
    """t is dense and addresses its elements in the storage order of `strides`."""
    return all(a == b or n == 1 for a, b, n in zip(t.stride(), strides, t.shape)) and dense(t)


def c_order(shape: Sequence[int], strides: Sequence[int]) -> bool:
    """strides lay shape out in C order (any stride on a dim of size 1)."""
    return all(st == want or n == 1 for n, st, want in zip(shape, strides, order_strides(shape, None)))


def in_order(t: Tensor, strides: Sequence[int]) -> Tensor:
    """t itself when dense in the storage order `strides`, else a copy in that layout."""
    return t if same_order(t, strides) else empty(t, strides).copy_(t)


def dim_order(strides: Sequence[int]) -> List[int]:
    """Dims from outermost to innermost in memory (Tensor.dim_order of a dense layout)."""
    return sorted(range(len(strides)), key=lambda d: -strides[d])


def order_strides(shape: Sequence[int], order: Optional[Sequence[int]]) -> List[int]:
    """The dense strides that lay out `shape` in dim order `order` (None: C order)."""
    order = range(len(shape)) if order is None else order
    strides = [0] * len(shape)
    step = 1
    for d in reversed(list(order)):
        strides[d] = step
        step *= shape[d]
    return strides


def flat(t: Tensor) -> Tensor:
    """A dense tensor's storage as a 1-d view (what the bindings read)."""
    return t.detach().as_strided((t.numel(),), (1,))

