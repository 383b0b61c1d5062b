"""ReLUDropout: nn.ReLU followed by nn.Dropout as one module that keeps two bits per element.

Stock PyTorch on the CPU keeps, for relu -> dropout in training, the relu output y (ReLU's
backward gates on it) and dropout's scaled noise tensor (mul's backward multiplies by it): two
tensors of y's dtype. ReLUDropout keeps two packed bit planes instead, ceil(n/8) bytes each,
LSB first, in y's storage order: the gate (relugrad's relu_mask bits of y) and keep (noise != 0).

Bit-exactness with stock, given the same generator state. aten's CPU dropout (at::dropout ->
_dropout_impl; the fused native_dropout serves CUDA/XPU only) draws
`empty_like(input).bernoulli_(1 - p)`, divides it by (1 - p) and returns input * noise. The
forward here makes that same draw on a tensor of the same shape, dtype and layout, so the RNG
stream advances exactly as stock's, and computes the output with the same torch ops. Backward
rebuilds the noise from the keep bits (keep ? scale : +0, scale being the kept noise value,
computed by the same div) and computes dy * noise with torch's mul, then the ReLU gate by
relugrad's relu_grad_mask: the same bits as stock, including a dropped element whose incoming
gradient is negative (-0), infinite or NaN (NaN), where stock multiplies by a zero noise value.

Where the bit planes are made and read: for float32/float64 in C order with the torch preset
and torch's threads, one C++ pass each way (relugrad._relugrad_torch.relu_dropout, python/src/
torch_dropout.cc: out = relu(x) * (keep ? scale : +0) after stock's draw; its backward node
relugrad::ReluDropoutBackward computes dx = gate ? dy * (keep ? scale : +0) : +0 with plain IEEE
multiplies, which are torch's for these two dtypes, and writes dx over an incoming gradient that
nothing else holds, as relugrad.torch.ReLU does). Everything else composes: the packing and the
gate select are relugrad's Highway kernels (relu_forward with a mask packs the bits of `v > 0` for
y and for the 0/1 noise, in place, values unchanged; relu_grad_mask unpacks), and the products
that must match stock are torch's own mul, so no element loop runs in Python and no separate
kernel has to reproduce torch's rounding and NaN propagation for four dtypes.

Served by the fused path: training, autograd recording, 0 < p < 1, a plain dense CPU tensor of
float32/float64/float16/bfloat16 outside torch.compile, torch.func and anomaly mode. Everything else (eval,
no_grad, p = 0 or 1, CUDA, subclasses, compile) runs relugrad's ReLU followed by F.dropout, which
is stock's dropout. The fused forward computes out of place; replace_relu(mask=True) runs a pair
through fused_relu_dropout only where that is exactly what the two modules compute (_fusion.py),
and only by the C++ pass: the composed path's Python forward and backward measured 2-3x the
unfused pair's time up to about 4K elements and 1.05-1.2x at 64K-1M (bfloat16, float16,
channels_last; a point-of-use hunt on the Zen 5 VM), so there the parent calls the two modules
(the ReLU keeping its mask where the probe finds nothing else keeps y). ReLUDropout used directly
still composes.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from . import torch as _rt

__all__ = ["ReLUDropout", "fused_relu_dropout"]


def _scale(p: float, dtype: torch.dtype) -> Tensor:
    """The value of a kept element of stock's noise: 1 divided by (1 - p) by the same div_ of
    a tensor by a Python scalar (for float16/bfloat16 computed in float32, then rounded)."""
    return torch.ones((), dtype=dtype).div_(1 - p)


def _pack_in_place(t: Tensor, threads: int, semantics: str = "torch") -> Tensor:
    """The packed gate bits of t (relu_forward's mask, in t's storage order); t is written with
    relu(t) in place, which leaves a tensor of +0/1 values or of relu outputs >= +0 unchanged."""
    _, bits, _ = _rt._relu_mask_eager(t, semantics, threads, inplace=True)
    return bits


class _ReluDropoutFunction(torch.autograd.Function):
    """The composition: every dtype and layout, any preset and thread count."""

    @staticmethod
    def forward(ctx, x: Tensor, p: float, semantics: str, threads: int) -> Tensor:
        y = torch.relu(x)  # stock's y, -0 kept: the product below is stock's
        noise = torch.empty_like(y).bernoulli_(1 - p)  # stock's draw: same shape, dtype, layout
        keep = _pack_in_place(noise, threads)
        noise.div_(1 - p)
        # y * noise, as stock, written into noise: the product is commutative to the bit (noise
        # is never NaN, so a NaN result is y's NaN either way).
        out = noise.mul_(y)
        gate = _pack_in_place(y, threads, semantics)  # y is not needed after this
        ctx.save_for_backward(gate, keep)
        ctx.p, ctx.semantics, ctx.threads, ctx.strides = p, semantics, threads, y.stride()
        return out

    @staticmethod
    def backward(ctx, dy: Tensor):
        gate, keep = ctx.saved_tensors
        strides = ctx.strides
        full = torch.empty_strided(dy.shape, strides, dtype=dy.dtype).fill_(_scale(ctx.p, dy.dtype))
        noise = _rt._relu_grad_mask_eager(full, keep, "torch", ctx.threads, strides, strides)
        del full  # not kept through the products below: the backward's peak is stock's or less
        if torch.is_grad_enabled() or not _rt._plain_tensor(dy):  # create_graph=True, or a wrapper
            g = dy * noise
            dx = torch.ops.relugrad.relu_grad_mask(g, gate, ctx.semantics, ctx.threads, _rt._dim_order(strides))
            return dx, None, None, None
        # dy * noise, stock's mul backward; in place into noise when dy has its layout
        # (commutative to the bit, as above), else a new tensor in mul's own layout.
        g = noise.mul_(dy) if _rt._same_order(dy, strides) else dy * noise
        return _rt._relu_grad_mask_eager(g, gate, ctx.semantics, ctx.threads, strides, strides), None, None, None


def _load_native_entry():
    """relugrad._relugrad_torch.relu_dropout where the torch-native library loaded, else None."""
    if not _rt.NATIVE:
        return None
    from . import _relugrad_torch
    return _relugrad_torch.relu_dropout


# The fused C++ forward (and backward node); None: the composition serves every case.
_native_entry = _load_native_entry()
_NATIVE_DTYPES = (torch.float32, torch.float64)


def native_pass_may_serve(x, semantics: str, threads: int) -> bool:
    """Whether the C++ pass may serve relu + dropout of x: the library, the torch preset on torch's
    threads, a float32/float64 tensor (the entry itself asks the rest: a contiguous CPU x)."""
    return (_native_entry is not None and semantics == "torch" and threads == 0 and isinstance(x, Tensor)
            and x.dtype in _NATIVE_DTYPES)


def _fused_serves(x: Tensor, p: float, training: bool) -> bool:
    # Not in anomaly mode: stock's ReLU and dropout nodes each check their outputs for NaN (a NaN
    # gradient at a closed gate raises at dropout's node there); the fused node is one.
    return (training and 0.0 < p < 1.0 and torch.is_grad_enabled() and x.requires_grad
            and not torch.is_anomaly_enabled() and not torch.jit.is_tracing()
            and _rt._plain_cpu(x) and _rt._dense(x))


class ReLUDropout(nn.Module):
    """nn.ReLU followed by nn.Dropout(p) in one module: the same outputs and gradients, bit for bit,
    as the two stock modules given the same generator state, keeping 2 bits per element for
    backward instead of y and dropout's noise (see the module docstring for what it serves).

    Args: p, semantics, threads as relugrad.torch.ReLU's and nn.Dropout's; relu_inplace and
    dropout_inplace are the modules' flags where the fused path does not serve."""

    def __init__(self, p: float = 0.5, semantics: str = "torch", threads: int = 0, *,
                 relu_inplace: bool = False, dropout_inplace: bool = False) -> None:
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"p: dropout probability has to be between 0 and 1, but got {p}")
        _rt._check_semantics(semantics)
        threads = _rt._check_threads(threads)
        self.p, self.semantics, self.threads = float(p), semantics, threads
        self.relu_inplace, self.dropout_inplace = bool(relu_inplace), bool(dropout_inplace)
        # Not a submodule: restore_relu and replace_relu see this module as one unit.
        object.__setattr__(self, "_relu", _rt.ReLU(semantics, inplace=relu_inplace, threads=threads))

    def forward(self, x: Tensor) -> Tensor:
        if torch.jit.is_scripting():
            # TorchScript: the relugrad::relu op, then stock's dropout (y kept, as unfused).
            y = torch.ops.relugrad.relu(x, self.semantics, self.threads)
            return F.dropout(y, self.p, self.training, self.dropout_inplace)
        return self._eager_forward(x)

    @torch.jit.unused
    def _eager_forward(self, x: Tensor) -> Tensor:
        if not isinstance(x, Tensor):  # an FX proxy: the ops, since _relu is not a submodule
            return F.dropout(torch.ops.relugrad.relu(x, self.semantics, self.threads), self.p, self.training,
                             self.dropout_inplace)
        out = fused_relu_dropout(x, self.p, self.training, self.semantics, self.threads)
        if out is not None:
            return out
        return F.dropout(self._relu(x), self.p, self.training, self.dropout_inplace)

    def extra_repr(self) -> str:
        return (f"p={self.p}, semantics={self.semantics!r}" + (f", threads={self.threads}" if self.threads else ""))


def fused_relu_dropout(x: Tensor, p: float, training: bool, semantics: str, threads: int,
                       composed: bool = True):
    """dropout(relu(x), p, training) by the fused pass, or None where it does not serve the call
    (the caller then runs the two modules). composed=False: the C++ pass only (module docstring)."""
    if not _fused_serves(x, p, training):
        return None
    if native_pass_may_serve(x, semantics, threads):
        out = _native_entry(x, p)  # NotImplemented unless a contiguous CPU tensor
        if out is not NotImplemented:
            return out
    return _ReluDropoutFunction.apply(x, p, semantics, threads) if composed else None
