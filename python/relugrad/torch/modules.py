"""relugrad.torch's public modules (layer 2): ReLU, ReLUDropout, LinearReLU, and hardtanh_grad.

Each module picks one of three paths per call (docs/torch.md, "The three paths", has the table):
  - native eager: plain CPU tensors the kernels read, and plain CUDA tensors in a build with the
    CUDA backend, in eager mode, where the torch-native library loaded (_native): one C++ entry
    forward, a C++ autograd node backward;
  - custom ops: torch.compile, torch.export, torch.func, forward AD, dispatch modes, fake and meta
    tensors, and eager mode where the native library is absent: the torch.library ops (ops);
  - stock: what the kernels cannot read (subclasses, DTensor, nested tensors, other dtypes and
    devices, CUDA without the CUDA backend, and CUDA under the torch preset off the native path):
    torch's own ops with the preset's bits (_stock).
"""
from __future__ import annotations

import math
import numbers
from typing import Optional

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import _relugrad as _C
from .._options import _config
from .. import _compat
from . import _kernels, _layout, _model_hooks, _native, _stock, compiled, ops
from ._kernels import check_flag, check_real, check_semantics, check_tensor, check_threads

__all__ = ["ReLU", "ReLUDropout", "LinearReLU", "hardtanh_grad", "NATIVE", "NATIVE_STATUS",
           "use_native", "fused_linear_relu", "fused_relu_dropout", "native_dropout_may_serve"]

# Whether the torch-native library loaded, and why not (relugrad.torch.NATIVE / NATIVE_STATUS).
NATIVE = _native.LOADED
NATIVE_STATUS = _native.STATUS
use_native = _native.use_native

_is_dynamo_compiling = torch.compiler.is_dynamo_compiling


# ---- The modules' shared shape ------------------------------------------------------------------

class _Module:
    """What ReLU, ReLUDropout and LinearReLU share. An eager call tries the torch-native entry,
    then the custom ops (ReLUDropout: its composition of relugrad's kernels), then stock's ops
    (for the fused modules: the two modules unfused, whose ReLU takes its own paths); each path
    serves where one predicate says (ReLU: the C++ entry's own test, then ReLU._path; the fused
    modules: fused_relu_dropout and fused_linear_relu, None where neither pass serves). Graph
    capture records relugrad::relu: an FX proxy runs _captured (ReLU: _path's custom-op row, the
    same op), and torch.jit.script compiles a twin (__prepare_scriptable__, a _Scriptable subclass)
    whose scripted forward is _captured, so that the eager forward is never compiled and pays no
    scripting check per call."""

    def _captured(self, x: Tensor) -> Tensor:
        raise NotImplementedError

    def __prepare_scriptable__(self) -> nn.Module:
        # torch.jit.script cannot compile the eager paths: it scripts the twin, which calls the
        # relugrad::relu op (a TorchScript model that needs relugrad.torch imported where it runs).
        twin = object.__new__(_TWINS[next(c for c in type(self).__mro__ if c in _TWINS)])
        twin.__dict__.update(self.__dict__)  # the same parameters, buffers and flags
        for slots in ("_parameters", "_buffers", "_modules"):
            twin.__dict__[slots] = type(self.__dict__[slots])(self.__dict__[slots])
        _model_hooks.move_hooks(self, twin)
        return twin


class _Scriptable:
    """A relugrad module's TorchScript twin (_Module.__prepare_scriptable__): _captured where
    TorchScript compiles it. torch.jit.script also puts the twin into the eager model it was given
    (it replaces submodules in place), so called from Python it runs the module's eager forward; it
    is an instance of the module's class (restore_relu finds it) and the hooks move with it."""

    def forward(self, x: Tensor) -> Tensor:
        if torch.jit.is_scripting():
            return self._captured(x)
        return self._eager_forward(x)

    @torch.jit.unused
    def _eager_forward(self, x: Tensor) -> Tensor:
        return super().forward(x)

    def __prepare_scriptable__(self) -> nn.Module:
        return self

    def _get_name(self) -> str:
        return type(self).__mro__[2].__name__  # the eager model prints the twin as its module


# ---- ReLU ---------------------------------------------------------------------------------------

# ReLU's paths off the native entry (ReLU._path): stock's formulas (_stock.relu), stock's relu or
# relu_ itself, relu_mask's y with no mask (_stock.relu_y), the custom ops relu and relu_mask, and
# in place the ops' kernels over x itself (_ReluFunction).
_STOCK, _STOCK_RELU_, _STOCK_Y, _OPS, _OPS_MASK, _OPS_IN_PLACE = range(6)


class ReLU(_Module, nn.ReLU):
    """Drop-in nn.ReLU whose backward is relugrad's ReluGrad. An nn.ReLU subclass, so that code
    finding a model's ReLUs by isinstance (hooks for guided backpropagation, activation counters,
    a user's own replacement pass) finds these as it found stock's.

    Args:
      semantics: "torch" (bit-equal to nn.ReLU's gradients), "tensorflow",
        "jax", "onednn" or "mindspore".
      inplace: as nn.ReLU's: the forward overwrites x and returns it, and
        backward keeps x (or only the mask) instead of a second tensor. Under
        torch.compile the torch preset (no mask) is stock's relu_; the other
        presets and the mask run the ops out of place and copy into x.
      threads: None or 0 (default) splits forward (mask) and backward over torch's
        own intra-op threads (torch.get_num_threads(), at::parallel_for) on
        the torch-native path, or over relugrad's pool with as many threads
        where the custom ops serve (NATIVE_STATUS says which); N > 0:
        relugrad's pool with N threads.
      mask: keep only a packed 1-bit mask for backward (relugrad::relu_mask):
        ceil(n/8) bytes instead of the n-element y. Under torch.compile with saved_bits on
        (relugrad.torch.saved_bits), the torch preset is what inductor sees as aten.relu, and
        the gate the compiled graph saves is kept as bits. Forward y is relugrad's
        (for the torch preset torch.relu's bits, -0 and NaN kept; the other
        presets write their framework's y, +0 for x = -0);
        gradients are the same bits as mask=False. When autograd records
        nothing (no_grad, inference_mode, x needs no gradient) no mask is
        allocated or kept; y has the same bits.

    CUDA tensors (a build with the CUDA backend) take the same native path: relugrad's CUDA
    kernels on torch's current stream, mask=True included, with stock's bits in the torch preset
    (y is CUDA relu's: +0 for x = -0). threads does not apply there. Off the native path
    (torch.compile, the custom ops) the torch preset on CUDA is stock's relu and
    threshold_backward: the custom ops' Python costs more than stock's kernels there.
    """

    def __init__(self, semantics: str = "torch", inplace: bool = False, threads: Optional[int] = 0,
                 mask: bool = False) -> None:
        nn.Module.__init__(self)
        check_semantics(semantics)
        self.semantics = semantics
        self.inplace = check_flag("inplace", inplace)
        self.threads = check_threads(threads)
        self.mask = check_flag("mask", mask)

    def forward(self, x: Tensor) -> Tensor:
        # The native entry decides in C++ whether x is its plain case (NotImplemented if not:
        # dual tensors, dispatch modes, subclasses, jit.trace). Only dynamo's tracing is asked
        # here first, so that dynamo sees the branch to the custom ops: one check, since this body
        # is part of every eager call (docs/design.md, "One check before the native entry").
        native = _native.relu
        if not _is_dynamo_compiling():
            if native is not None:
                y = native(x, self.semantics, self.threads, self.mask, self.inplace)
                if y is not NotImplemented:
                    return y
        elif (self.semantics == "torch" and (not self.mask or compiled.is_enabled()) and isinstance(x, Tensor)
              and not _compat.is_exporting()):
            # Under torch.compile the torch preset is stock's relu (what relugrad::relu decomposes
            # to, its backward threshold_backward: the same graph and bits) and dynamo traces one
            # call, not the checks below, which cost compile time at every ReLU of a model.
            return torch.relu_(x) if self.inplace else torch.relu(x)
        check_tensor("x", x)  # TypeError for what is not a tensor, as nn.ReLU's
        path = self._path(x)
        if path == _STOCK:
            return _stock.relu(x, self.semantics, self.inplace)
        if path == _STOCK_RELU_:
            return torch.relu_(x) if self.inplace else torch.relu(x)
        if path == _STOCK_Y:
            return _stock.relu_y(x, self.semantics, self.inplace)
        if path == _OPS_MASK:
            y = torch.ops.relugrad.relu_mask(x, self.semantics, self.threads, True)[0]  # mask in y's storage order
        elif path == _OPS:
            y = torch.ops.relugrad.relu(x, self.semantics, self.threads)
        else:  # eager in place on a plain tensor autograd records: y written over x (_ReluFunction)
            _stock.refuse_in_place_on_a_leaf(x)
            y = _ReluFunction.apply(x, self.semantics, self.threads, self.mask)
        # Under compile and the transforms in place is the op's y copied into x (the ops cannot
        # alias their input: see _ReluFunction); copy_ moves x's version once and refuses a leaf.
        return x.copy_(y) if self.inplace and y is not x else y

    def _path(self, x) -> int:
        """The path of a call the native entry did not serve (docs/torch.md, "The three paths"):
        the custom ops where torch's transforms must see them (compile, torch.func, forward AD,
        dispatch modes, meta and fake tensors, graph capture) and for plain tensors relugrad's
        kernels read when the native library is absent; torch's own ops for the rest."""
        if not isinstance(x, Tensor) or _compat.tracing_state() is not None or _compat.is_exporting():
            # Graph capture (FX proxies, jit.trace, torch.export, both ONNX exporters) records one
            # op per ReLU: relugrad::relu (forward torch.relu, backward relugrad's, an aten.relu
            # decomposition in ops), or for ONNX, which has no autograd, torch.relu itself, a
            # standard Relu node. mask=True keeps its 1-bit saving in eager mode and torch.compile
            # only: captured graphs record relugrad::relu (the same gradient bits; y is torch.relu's).
            return _STOCK_RELU_ if torch.onnx.is_in_onnx_export() else _OPS
        if not (x.dtype in _kernels.DTYPES and x.layout is torch.strided and not x.is_nested):
            return _STOCK
        if self.semantics == "torch" and x.device.type == "cuda":
            # CUDA off the native path (compile, transforms, no native library), torch preset:
            # stock's relu and threshold_backward, mask or not. The custom ops' per-call Python
            # costs more than stock's kernels there (docs/cuda.md), inductor gets stock's graph, and
            # the ops' mask forward would keep -0 where CUDA's relu writes +0.
            return _STOCK
        exact = type(x) is Tensor or type(x) is nn.Parameter
        seen_by_transforms = (_kernels.is_compiling() or isinstance(x, _compat.fake_tensor_type())
                              or (exact and (x.is_meta or _compat.is_functorch_wrapped(x)
                                             or _compat.forward_ad_level() >= 0 or _compat.dispatch_mode_depth())))
        if not seen_by_transforms:
            if not (exact and _kernels.kernels_serve(x)) or x.is_neg():  # a lazy negation: torch's ops
                return _STOCK
            if not (x.requires_grad and torch.is_grad_enabled()):  # nothing recorded: y alone
                if self.mask:
                    return _STOCK_Y  # relu_mask's y, no mask allocated
                if self.inplace:
                    return _STOCK_RELU_  # every preset's y is torch.relu's: stock's in-place op itself
            if self.inplace:
                return _OPS_IN_PLACE
        if self.inplace and self.semantics == "torch" and not self.mask and _kernels.is_compiling():
            # In place under compile, the torch preset is stock's graph (relu_, whose backward is
            # threshold_backward on y): the ops cannot alias x, and copying their y into x leaves
            # a zero gradient for the old x to be added into the compiled backward.
            return _STOCK_RELU_
        if self.mask and not (self.semantics == "torch" and compiled.is_enabled() and _kernels.is_compiling()):
            # Under compile with saved_bits on, the torch preset is relugrad::relu, which inductor
            # sees as aten.relu: the partitioner keeps what it needs (often nothing: a gate it
            # recomputes from a saved y) and a saved gate is packed to bits in the same graph.
            return _OPS_MASK
        return _OPS

    def extra_repr(self) -> str:
        return (f"semantics={self.semantics!r}" + (", inplace=True" if self.inplace else "")
                + (f", threads={self.threads}" if self.threads else "") + (", mask=True" if self.mask else ""))

    def _captured(self, x: Tensor) -> Tensor:
        y = torch.ops.relugrad.relu(x, self.semantics, self.threads)
        if self.inplace:
            return x.copy_(y)
        return y


# In place off the native path. The custom ops cannot return an alias of their input, and their y
# copied into x (x.copy_(y), as under compile and the transforms) is not what stock computes in
# eager mode: copy_'s backward sends a zero gradient to the old x, which the engine adds to the
# ReLU's (an open element whose incoming gradient is -0 gets +0, not stock's -0), and without the
# mask the op's node keeps its y, a second tensor of n elements. Nor can the ops' own Functions
# write x: relu_mask's returns (y, mask), and autograd lets a Function that writes a view return
# one tensor only. So in place has one Function: the ops' kernels write y over x, the node keeps
# x itself (or only the mask), and its backward is the ops' relu_grad / relu_grad_mask.
# mark_dirty moves x's version and the write would move it again; stock's in-place ops move it
# once, so the write runs with the counter kept.
_keep_version = _compat.preserve_version_counter


class _ReluFunction(torch.autograd.Function):
    """ReLU(inplace=True) on a plain tensor off the native path (ReLU._path, _OPS_IN_PLACE)."""

    @staticmethod
    def forward(ctx, x: Tensor, semantics: str, threads: int, mask: bool) -> Tensor:
        ctx.mark_dirty(x)
        with _keep_version(x):
            if mask:
                y, bits, ctx.mask_strides = ops.relu_mask_kernel(x, semantics, threads, inplace=True)
            else:
                y = bits = torch.relu_(x)  # gate on y (x itself), as PyTorch does
        ctx.result_strides = y.stride()  # what nn.ReLU saves: x itself
        ctx.save_for_backward(bits)  # y, or only the 1-bit mask
        ctx.semantics, ctx.threads, ctx.mask = semantics, threads, mask
        return y

    @staticmethod
    def backward(ctx, grad: Tensor):
        (saved,) = ctx.saved_tensors
        direct = not torch.is_grad_enabled() and _kernels.plain_tensor(grad)  # else create_graph=True, or a wrapper
        if not ctx.mask:
            if direct:
                return ops.relu_grad_kernel(grad, saved, ctx.semantics, 0.0, 0.0, ctx.threads), None, None, None
            return torch.ops.relugrad.relu_grad(grad, saved, ctx.semantics, 0.0, 0.0, ctx.threads), None, None, None
        if direct:
            return (ops.relu_grad_mask_kernel(grad, saved, ctx.semantics, ctx.threads, ctx.mask_strides,
                                              ctx.result_strides), None, None, None)
        return (torch.ops.relugrad.relu_grad_mask(grad, saved, ctx.semantics, ctx.threads,
                                                  _layout.dim_order(ctx.mask_strides)), None, None, None)


# ---- ReLUDropout ------------------------------------------------------------------------------------
# ReLUDropout: nn.ReLU followed by nn.Dropout as one module that keeps two bits per element.
#
# Stock PyTorch on the CPU keeps, for relu -> dropout in training, the relu output y (ReLU's
# backward gates on it) and dropout's scaled noise tensor (mul's backward multiplies by it): two
# tensors of y's dtype. ReLUDropout keeps two packed bit planes instead, ceil(n/8) bytes each,
# LSB first, in y's storage order: the gate (relugrad's relu_mask bits of y) and keep (noise != 0).
#
# Bit-exactness with stock, given the same generator state. aten's CPU dropout (at::dropout ->
# _dropout_impl; the fused native_dropout serves CUDA/XPU only) draws
# `empty_like(input).bernoulli_(1 - p)`, divides it by (1 - p) and returns input * noise. The
# forward here makes that same draw on a tensor of the same shape, dtype and layout, so the RNG
# stream advances exactly as stock's, and computes the output with the same torch ops. Backward
# rebuilds the noise from the keep bits (keep ? scale : +0, scale being the kept noise value,
# computed by the same div) and computes dy * noise with torch's mul, then the ReLU gate by
# relugrad's relu_grad_mask: the same bits as stock, including a dropped element whose incoming
# gradient is negative (-0), infinite or NaN (NaN), where stock multiplies by a zero noise value.
#
# Where the bit planes are made and read: for float32/float64 in C order with the torch preset
# and torch's threads, one C++ pass each way (relugrad._relugrad_torch.relu_dropout, python/src/
# torch_dropout.cc: out = relu(x) * (keep ? scale : +0) after stock's draw; its backward node
# relugrad::ReluDropoutBackward computes dx = gate ? dy * (keep ? scale : +0) : +0 with plain IEEE
# multiplies, which are torch's for these two dtypes, and writes dx over an incoming gradient that
# nothing else holds, as relugrad.torch.ReLU does). Everything else composes: the packing and the
# gate select are relugrad's Highway kernels (relu_forward with a mask packs the bits of `v > 0` for
# y and for the 0/1 noise, in place, values unchanged; relu_grad_mask unpacks), and the products
# that must match stock are torch's own mul, so no element loop runs in Python and no separate
# kernel has to reproduce torch's rounding and NaN propagation for four dtypes.
#
# Served by the fused path: training, autograd recording, 0 < p < 1, a plain dense CPU tensor of
# float32/float64/float16/bfloat16 outside torch.compile, torch.func and anomaly mode, where the
# torch-native library loaded (its plain-tensor rule decides, _native.plain). Everything else (eval,
# no_grad, p = 0 or 1, subclasses, compile, no native library) runs relugrad's ReLU followed by
# F.dropout, which is stock's dropout.
#
# CUDA: a plain dense CUDA tensor of any of the four dtypes takes the C++ pass only (python/src/
# torch_dropout.cc, NativeReluDropoutCuda: relugrad's mask forward, stock's native_dropout draw
# packed into the keep plane, one backward pass with PyTorch CUDA's rounding); where it cannot
# serve (a build without the CUDA backend) the two modules run, never the composition, whose
# bernoulli_ draw is the CPU's, not CUDA dropout's.
#
# The fused forward computes out of place; replace_relu(mask=True) runs a pair
# through fused_relu_dropout only where that is exactly what the two modules compute
# (relugrad.torch.fusion), and only by the C++ pass: the composed path's Python forward and
# backward take more time than the unfused pair (docs/design.md, "ReLU + Dropout as a
# C++ node in cache-sized chunks"), so there the parent calls the two modules (the ReLU keeping
# its mask where the probe finds nothing else keeps y). ReLUDropout used directly still composes.


def _scale(p: float, dtype: torch.dtype) -> Tensor:
    """The value of a kept element of stock's noise: 1 divided by (1 - p) by the same div_ of
    a tensor by a Python scalar (for float16/bfloat16 computed in float32, then rounded)."""
    return torch.ones((), dtype=dtype).div_(1 - p)


def _pack_in_place(t: Tensor, threads: int, semantics: str = "torch") -> Tensor:
    """The packed gate bits of t (relu_forward's mask, in t's storage order); t is written with
    relu(t) in place, which leaves a tensor of +0/1 values or of relu outputs >= +0 unchanged."""
    _, bits, _ = ops.relu_mask_kernel(t, semantics, threads, inplace=True)
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
        noise = ops.relu_grad_mask_kernel(full, keep, "torch", ctx.threads, strides, strides)
        del full  # not kept through the products below: the backward's peak is stock's or less
        if torch.is_grad_enabled() or not _kernels.plain_tensor(dy):  # create_graph=True, or a wrapper
            g = dy * noise
            dx = torch.ops.relugrad.relu_grad_mask(g, gate, ctx.semantics, ctx.threads, _layout.dim_order(strides))
            return dx, None, None, None
        # dy * noise, stock's mul backward; in place into noise when dy has its layout
        # (commutative to the bit, as above), else a new tensor in mul's own layout.
        g = noise.mul_(dy) if _layout.same_order(dy, strides) else dy * noise
        return ops.relu_grad_mask_kernel(g, gate, ctx.semantics, ctx.threads, strides, strides), None, None, None


_DROPOUT_NATIVE_DTYPES = (torch.float32, torch.float64)


def native_dropout_may_serve(x, semantics: str, threads: int) -> bool:
    """Whether the C++ pass may serve relu + dropout of x: the library, the torch preset on torch's
    threads, a float32/float64 tensor or a CUDA tensor (the entry itself asks the rest: a contiguous
    CPU x, or a CUDA x in a build with the CUDA backend)."""
    return (_native.relu_dropout is not None and semantics == "torch" and threads == 0 and isinstance(x, Tensor)
            and (x.dtype in _DROPOUT_NATIVE_DTYPES or x.is_cuda))


def _dropout_fused_serves(x: Tensor, p: float, training: bool) -> bool:
    # Not in anomaly mode: stock's ReLU and dropout nodes each check their outputs for NaN (a NaN
    # gradient at a closed gate raises at dropout's node there); the fused node is one.
    return (training and 0.0 < p < 1.0 and torch.is_grad_enabled() and x.requires_grad
            and not torch.is_anomaly_enabled() and not torch.jit.is_tracing()
            and not _kernels.is_compiling() and _native.plain(x, True) and _layout.dense(x))


class ReLUDropout(_Module, nn.Module):
    """nn.ReLU followed by nn.Dropout(p) in one module: the same outputs and gradients, bit for bit,
    as the two stock modules given the same generator state, keeping 2 bits per element for
    backward instead of y and dropout's noise (see the module docstring for what it serves).

    Args: p, semantics, threads as relugrad.torch.ReLU's and nn.Dropout's; relu_inplace and
    dropout_inplace are the modules' flags where the fused path does not serve."""

    def __init__(self, p: float = 0.5, semantics: str = "torch", threads: int = 0, *,
                 relu_inplace: bool = False, dropout_inplace: bool = False) -> None:
        super().__init__()
        p = check_real("p", p)
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"p: dropout probability has to be between 0 and 1, but got {p}")
        check_semantics(semantics)
        threads = check_threads(threads)
        self.p, self.semantics, self.threads = float(p), semantics, threads
        self.relu_inplace = check_flag("relu_inplace", relu_inplace)
        self.dropout_inplace = check_flag("dropout_inplace", dropout_inplace)
        # Not a submodule: restore_relu and replace_relu see this module as one unit.
        object.__setattr__(self, "_relu", ReLU(semantics, inplace=self.relu_inplace, threads=threads))

    def forward(self, x: Tensor) -> Tensor:
        if not isinstance(x, Tensor):  # an FX proxy: the ops, since _relu is not a submodule
            check_tensor("x", x)
            return self._captured(x)
        out = fused_relu_dropout(x, self.p, self.training, self.semantics, self.threads)
        return F.dropout(self._relu(x), self.p, self.training, self.dropout_inplace) if out is None else out

    def _captured(self, x: Tensor) -> Tensor:
        # The relugrad::relu op, then stock's dropout (y kept, as unfused).
        y = torch.ops.relugrad.relu(x, self.semantics, self.threads)
        return F.dropout(y, self.p, self.training, self.dropout_inplace)

    def extra_repr(self) -> str:
        return (f"p={self.p}, semantics={self.semantics!r}" + (f", threads={self.threads}" if self.threads else ""))


def fused_relu_dropout(x: Tensor, p: float, training: bool, semantics: str, threads: int,
                       composed: bool = True):
    """dropout(relu(x), p, training) by the fused pass, or None where it does not serve the call
    (the caller then runs the two modules). composed=False: the C++ pass only (module docstring)."""
    if not _dropout_fused_serves(x, p, training):
        return None
    if native_dropout_may_serve(x, semantics, threads):
        out = _native.relu_dropout(x, p)  # NotImplemented unless a contiguous CPU tensor or served CUDA
        if out is not NotImplemented:
            return out
    if x.is_cuda:  # the composition's draw is the CPU's bernoulli_, not CUDA dropout's
        return None
    return _ReluDropoutFunction.apply(x, p, semantics, threads) if composed else None


# ---- LinearReLU -------------------------------------------------------------------------------------
# LinearReLU: nn.Linear followed by nn.ReLU, whose backward fuses the bias gradient into ReluGrad.
#
# Stock's backward of relu(linear(x)) makes dx = threshold_backward(dy, y, 0), then the bias
# gradient dx.sum(0) in a second pass over dx. LinearReLU's backward makes both in one pass, then
# the weight and input gradients with the matmuls stock's addmm backward picks from the operands'
# layouts (dx.t() @ x and dx @ W for a row-major weight; stock's bits and strides), computing only the
# gradients the backward asks for and keeping what stock keeps (x only where the weight needs a
# gradient, the weight only where x does). Forward and backward are C++
# (relugrad._relugrad_torch.linear_relu and its autograd node, python/src/torch_bias.cc): the
# forward runs relu in place over linear's own output (one
# allocation fewer than stock's relu into a new tensor, the same bits), and the backward writes dx
# over an incoming gradient that nothing else holds.
#
# What is guaranteed, against stock nn.Linear + nn.ReLU with the same parameters and inputs:
#   - the output, the input gradient and the weight gradient: the same bits;
#   - the bias gradient: a fixed-order sum of dx's columns (blocks of 128 rows each summed row by
#     row, then the block sums in block order, in the dtype: float32 or float64), the same bits for
#     any thread count, NOT stock's bits (torch's sum(0) adds in its own cascade order); the
#     difference is rounding only (docs/torch.md, "Bias-gradient fusion", has the measured size).
# Served by the fused pass: training with autograd recording, float32/float64 plain dense CPU
# tensors, a bias, the torch preset, eager mode (not torch.compile, torch.func, forward AD, CPU
# autocast or anomaly mode).
# Everything else runs F.linear then relugrad's ReLU: stock's bits everywhere. A backward under
# create_graph (or with a gradient the pass cannot read) runs stock's differentiable ops in the
# node: stock's bits, the bias gradient included.
#
# LinearReLU is an nn.Linear (same parameters, same state_dict keys). replace_relu(fuse_linear=True)
# does not use it: it leaves each nn.Linear where it is and has the parent run it with the ReLU
# after it by fused_linear_relu (relugrad.torch.fusion).




def _linear_fused_serves(m: "LinearReLU", x: Tensor) -> bool:
    # Not under autocast (linear runs in another dtype than the node's saved tensors) nor anomaly
    # mode (stock's two nodes each check their outputs for NaN; the fused node is one).
    return (m.training and m.bias is not None and torch.is_grad_enabled() and _native.linear_relu is not None
            and not torch.is_autocast_enabled("cpu") and not torch.is_anomaly_enabled()
            and not torch.jit.is_tracing()
            and (x.requires_grad or m.weight.requires_grad or m.bias.requires_grad)
            and x.dtype in (torch.float32, torch.float64) and m.weight.dtype == x.dtype
            and not _kernels.is_compiling() and _native.plain(x, False) and x.is_contiguous() and x.dim() >= 1
            and type(m.weight) is nn.Parameter and type(m.bias) is nn.Parameter)


class LinearReLU(_Module, nn.Linear):
    """nn.Linear(in_features, out_features, bias) followed by ReLU, the bias gradient fused into
    the ReLU backward (see the module docstring for what is served and guaranteed).
    relu_inplace: the replaced nn.ReLU's flag (restore_relu gives it back); threads as ReLU's."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None, dtype=None, *,
                 relu_inplace: bool = False, threads: Optional[int] = 0) -> None:
        for name, value in (("in_features", in_features), ("out_features", out_features)):
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                raise TypeError(f"{name}: expected an int, got {type(value).__name__}")
            if value < 0:
                raise ValueError(f"{name}: must be >= 0, got {value}")
        super().__init__(in_features, out_features, bias, device, dtype)
        self.relu_inplace = check_flag("relu_inplace", relu_inplace)
        self.relu_threads = check_threads(threads)
        # Not a submodule: state_dict and restore_relu see one Linear.
        object.__setattr__(self, "_relu", ReLU("torch", inplace=self.relu_inplace, threads=self.relu_threads))

    def forward(self, x: Tensor) -> Tensor:
        if not isinstance(x, Tensor):  # an FX proxy: the ops, since _relu is not a submodule
            check_tensor("x", x)
            return self._captured(x)
        y = fused_linear_relu(self, x)
        return self._relu(F.linear(x, self.weight, self.bias)) if y is None else y

    def _captured(self, x: Tensor) -> Tensor:
        # Linear, then the relugrad::relu op (relugrad's backward keeps y).
        return torch.ops.relugrad.relu(F.linear(x, self.weight, self.bias), "torch", self.relu_threads)

    def extra_repr(self) -> str:
        return super().extra_repr() + ", relu" + (" (inplace)" if self.relu_inplace else "")


def fused_linear_relu(linear: nn.Linear, x: Tensor) -> Optional[Tensor]:
    """relu(linear(x)) by the fused forward and node, or None where they do not serve the call
    (the caller then runs the two modules)."""
    if _native.linear_relu is None or not _linear_fused_serves(linear, x):
        return None
    y = _native.linear_relu(x, linear.weight, linear.bias)  # NotImplemented unless plain CPU tensors
    return None if y is NotImplemented else y


# ---- The TorchScript twins (_Module.__prepare_scriptable__) ----------------------------------------

class _ScriptableReLU(_Scriptable, ReLU):
    pass


class _ScriptableReLUDropout(_Scriptable, ReLUDropout):
    pass


class _ScriptableLinearReLU(_Scriptable, LinearReLU):
    pass


_TWINS = {ReLU: _ScriptableReLU, ReLUDropout: _ScriptableReLUDropout, LinearReLU: _ScriptableLinearReLU}


# ---- hardtanh_grad -------------------------------------------------------------------------------
# relugrad's kernel for hardtanh's backward, for direct callers. There is no relugrad Hardtanh or
# ReLU6 module: with a Python autograd.Function around the kernel it took more time than stock's
# (the Function's Python forward and backward cost more than the kernel saves), so until the
# kernel has a C++ node as ReLU's does, nn.Hardtanh / nn.ReLU6 stay torch's and replace_relu
# lists them as left.
#
# hardtanh_grad is aten::hardtanh_backward(dy, s, min_val, max_val): dx = dy where
# min_val < s < max_val, +0 elsewhere; relugrad computes it as the torch preset
# with threshold = min_val and gate_max = max_val (docs/semantics.md). A NaN s
# passes dy, as PyTorch's scalar loop and its CUDA kernel do; PyTorch's
# vectorised CPU loop closes it, so a NaN gate in the body of a contiguous CPU
# tensor is the one place the bits can differ.
#
# The result has hardtanh_backward's layout (a TensorIterator op over dy, then
# s), with relu_grad's layout machinery from relugrad.torch. What the kernels
# cannot read (CUDA in a CPU-only build, meta, subclasses, other devices) gets
# torch's own hardtanh_backward.


def _output(dy: Tensor, s: Tensor):
    """(hardtanh_backward(dy, s)'s output, uninitialised; whether dy and s share its order)."""
    out = _layout.fast_output(dy, s)
    if out is not None:
        return out, True
    return _layout.empty(dy, _layout.ti_strides(dy.shape, dy.stride(), s.stride())), False


def hardtanh_grad(dy: Tensor, s: Tensor, min_val: float, max_val: float, threads: Optional[int] = 0) -> Tensor:
    """aten::hardtanh_backward(dy, s, min_val, max_val) by relugrad's kernels; s
    is the forward input or output (same result)."""
    check_tensor("dy", dy)
    check_tensor("s", s)
    min_val, max_val = check_real("min_val", min_val), check_real("max_val", max_val)
    n_threads = check_threads(threads)
    # Plain tensors only (no subclass, no torch.func or is_grads_batched wrapper); a max_val of
    # +inf is torch's own op: there stock's gate s < max_val closes s = +inf, while relugrad's
    # gate_max = +inf means no bound (docs/semantics.md).
    serve = (_kernels.plain_tensor(dy) and _kernels.plain_tensor(s) and _kernels.kernels_serve(dy)
             and _kernels.kernels_serve(s) and dy.is_cpu and s.is_cpu and dy.dtype == s.dtype and dy.shape == s.shape
             and _kernels.host_dtype(dy.dtype) is not None and max_val != math.inf)
    if not serve:  # the bound has no CUDA kernel (RELUGRAD_UNSUPPORTED): torch's own op
        return torch.ops.aten.hardtanh_backward(dy, s, min_val, max_val)
    # The kernels read raw memory: lazily negated tensors (is_neg(): a negative view) are negated first.
    dy, s = dy.resolve_neg(), s.resolve_neg()
    out, same = _output(dy, s)
    if not same:
        dy, s = _layout.in_order(dy, out.stride()), _layout.in_order(s, out.stride())
    config = _config("torch", float(min_val), 0.0, None, _kernels.threads_of(n_threads), None, None, None, None,
                     "auto", float(max_val))
    plan = config.plan(_C.OP_RELU_GRAD, _kernels.host_dtype(dy.dtype))
    plan.run_host(dy.data_ptr(), s.data_ptr(), out.data_ptr(), out.numel())
    return out
