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
is stock's dropout. The fused forward computes out of place even where the replaced nn.ReLU was
in place (the output is the same; the ReLU's input is not overwritten).
"""
from __future__ import annotations

from typing import Tuple

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from . import torch as _rt

__all__ = ["ReLUDropout", "FusedAway"]


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


def _fused_serves(x: Tensor, p: float, training: bool) -> bool:
    # Not in anomaly mode: stock's ReLU and dropout nodes each check their outputs for NaN (a NaN
    # gradient at a closed gate raises at dropout's node there); the fused node is one.
    return (training and 0.0 < p < 1.0 and torch.is_grad_enabled() and x.requires_grad
            and not torch.is_anomaly_enabled()
            and _rt._plain_cpu(x) and _rt._dense(x))


class ReLUDropout(nn.Module):
    """nn.ReLU followed by nn.Dropout(p) in one module: the same outputs and gradients, bit for bit,
    as the two stock modules given the same generator state, keeping 2 bits per element for
    backward instead of y and dropout's noise (see the module docstring for what it serves).

    Args: p, semantics, threads as relugrad.torch.ReLU's and nn.Dropout's; relu_inplace and
    dropout_inplace are the replaced modules' flags, used where the fused path does not serve
    (restore_relu gives them back)."""

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
        if _fused_serves(x, self.p, self.training):
            if _native_entry is not None and self.semantics == "torch" and self.threads == 0:
                out = _native_entry(x, self.p)  # NotImplemented unless contiguous float32/float64
                if out is not NotImplemented:
                    return out
            return _ReluDropoutFunction.apply(x, self.p, self.semantics, self.threads)
        return F.dropout(self._relu(x), self.p, self.training, self.dropout_inplace)

    def extra_repr(self) -> str:
        return (f"p={self.p}, semantics={self.semantics!r}" + (f", threads={self.threads}" if self.threads else ""))


def stock_pair(m: ReLUDropout) -> Tuple[nn.ReLU, nn.Dropout]:
    """The nn.ReLU and nn.Dropout a ReLUDropout stands for."""
    return nn.ReLU(inplace=m.relu_inplace), nn.Dropout(m.p, inplace=m.dropout_inplace)


# ---- replace_relu / restore_relu ----------------------------------------------------
# Only pairs whose order is known from the model's structure are fused: consecutive children
# of an nn.Sequential (an nn.ReLU, then an nn.Dropout of exact type), and the activation and
# `dropout` of nn.TransformerEncoderLayer / TransformerDecoderLayer, whose _ff_block computes
# linear2(dropout(activation(linear1(x)))) and uses `dropout` nowhere else. A pair is left as it
# is when either module holds hooks (they would see other tensors) or appears more than once.

_TRANSFORMER_LAYERS = (nn.TransformerEncoderLayer, nn.TransformerDecoderLayer)
# Set on a ReLU that replaced a functional activation (as in _replace), so restore_relu puts F.relu back.
_FROM_FUNCTION = "_relugrad_replaced_function"
_HOOKS = ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks")


class FusedAway(nn.Identity):
    """Stands where an nn.Dropout was fused into the ReLUDropout before it (restore_relu gives it back)."""

    def __init__(self, p: float, inplace: bool) -> None:
        super().__init__()
        self.p, self.inplace = p, inplace

    def extra_repr(self) -> str:
        return f"p={self.p}: fused into the ReLUDropout before it"


def _hooked(m: nn.Module) -> bool:
    return any(m.__dict__.get(a) for a in _HOOKS)


def _fusable(relu, drop, ours: set, counts: dict) -> bool:
    return (isinstance(relu, _rt.ReLU) and id(relu) in ours and type(drop) is nn.Dropout
            and counts.get(id(relu)) == 1 and counts.get(id(drop)) == 1 and not _hooked(relu) and not _hooked(drop))


def _fused(relu, drop) -> ReLUDropout:
    new = ReLUDropout(drop.p, relu.semantics, relu.threads, relu_inplace=relu.inplace, dropout_inplace=drop.inplace)
    new.training = relu.training
    if getattr(relu, _FROM_FUNCTION, False):
        setattr(new, _FROM_FUNCTION, True)
    return new


def runs_children_in_order(m: nn.Module) -> bool:
    """m is an nn.Sequential whose forward is nn.Sequential's own: each child takes the output of
    the one before it, and nothing else. A subclass with a forward of its own may call its
    children in any order or use an output twice, so its neighbours are never fused. (A parent
    that calls a Sequential's children one by one cannot be seen: docs/python.md.)"""
    return isinstance(m, nn.Sequential) and type(m).forward is nn.Sequential.forward


def _stock_feed_forward(m: nn.Module) -> bool:
    """m is a transformer layer whose forward and _ff_block are its class's stock ones, which
    compute linear2(dropout(activation(linear1(x)))) and use `dropout` nowhere else."""
    for base in _TRANSFORMER_LAYERS:
        if isinstance(m, base):
            return type(m).forward is base.forward and type(m)._ff_block is base._ff_block
    return False


def fuse_pairs(model: nn.Module, ours: set, report) -> set:
    """Fuses the ReLU + Dropout pairs of model whose ReLU replace_relu just made (ids in ours);
    returns the ids of the ReLUs fused away and updates their entries in the report."""
    counts: dict = {}
    for _, m in model.named_modules(remove_duplicate=False):
        counts[id(m)] = counts.get(id(m), 0) + 1
    fused = set()
    names = {id(m): n for n, m in model.named_modules()}
    for m in list(model.modules()):
        pairs = []
        if runs_children_in_order(m):
            keys = list(m._modules)
            pairs = [(a, b) for a, b in zip(keys, keys[1:])]
        elif _stock_feed_forward(m) and "activation" in m._modules and "dropout" in m._modules:
            pairs = [("activation", "dropout")]
        for a, b in pairs:
            relu, drop = m._modules.get(a), m._modules.get(b)
            if id(relu) in fused or not _fusable(relu, drop, ours, counts):
                continue
            fused.add(id(relu))
            m._modules[a] = _fused(relu, drop)
            away = FusedAway(drop.p, drop.inplace)
            away.training = drop.training
            m._modules[b] = away
            rname, dname = names.get(id(relu), a), names.get(id(drop), b)
            for i, e in enumerate(report.replaced):
                if e.name == rname:
                    report.replaced[i] = type(e)(e.name, e.kind, f"relugrad ReLUDropout with {dname} (p={drop.p}): "
                                                 "2 bits per element kept for backward")
    return fused


def unfuse(parent: nn.Module, attr: str, m: nn.Module) -> str:
    """Puts back what a ReLUDropout or FusedAway stands for at parent.attr; says what it became."""
    if isinstance(m, FusedAway):
        new = nn.Dropout(m.p, inplace=m.inplace)
    elif getattr(m, _FROM_FUNCTION, False) and isinstance(parent, _TRANSFORMER_LAYERS):
        del parent._modules[attr]
        parent.activation = F.relu
        return "F.relu activation"
    else:
        new = nn.ReLU(inplace=m.relu_inplace)
    new.training = m.training
    setattr(parent, attr, new)
    return type(new).__name__
