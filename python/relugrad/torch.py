"""PyTorch integration: torch.library custom ops and a drop-in ReLU module.

Ops (registered the torch.library way: schema, CPU and CUDA kernels, fake
kernel for torch.compile, autograd formula):

    torch.ops.relugrad.relu_grad(dy, s, semantics="torch", threshold=0.0, alpha=0.0, threads=0) -> Tensor
    torch.ops.relugrad.relu(x, semantics="torch", threads=0) -> Tensor   # forward = torch.relu,
                                                              # backward = relugrad.relu_grad
    torch.ops.relugrad.relu_mask(x, semantics="torch", threads=0) -> (y, mask)   # 1-bit mask path:
    torch.ops.relugrad.relu_grad_mask(dy, mask, semantics="torch", threads=0) -> Tensor  # keeps only mask

Modules:

    relugrad.torch.ReLU(semantics="torch", mask=False)   # an nn.ReLU whose backward runs relugrad
    relugrad.torch.replace_relu(model, mask=False)       # swaps every nn.ReLU (in-place ones too)

In eager mode ReLU runs C++ autograd Functions from _relugrad_torch.so
(torch.ops.relugrad_native) when the package was built against this torch;
NATIVE (bool) and NATIVE_STATUS ("loaded" or why not) say whether it did.

CUDA tensors run on relugrad's CUDA backend (same C ABI, device pointers,
torch's current stream) when the library was built with CUDA and a device is
present; otherwise the ops raise a clear RuntimeError and ReLU falls back to
torch.relu's own autograd for CUDA tensors.

In the torch preset the gradients equal PyTorch's own bit for bit: autograd of
torch.relu calls threshold_backward(grad, result, 0), which is the gate
zero_if_le on y with select, exactly what the preset computes.
"""
from __future__ import annotations

import os
from typing import Optional, Tuple

import torch
from torch import Tensor, nn

from . import _api
from . import _relugrad as _C

_PRESET_CODES = {name: _C.preset_from_name(name) for name in _api.PRESETS}
# The kernels below run on both devices: the bindings pick the backend from
# the tensors' DLPack device (CPU -> CPU backend, CUDA -> CUDA backend).
_DEVICES = ("cpu", "cuda")

__all__ = ["relu_grad", "relu", "relu_mask", "relu_grad_mask", "ReLU", "replace_relu"]


def _check_device(op: str, *tensors: Tensor) -> None:
    for t in tensors:
        if t.device.type == "cuda":
            _api._require_cuda(op, f"a tensor on {t.device}")
        elif t.device.type != "cpu":
            raise ValueError(f"{op}: tensors must be on the CPU or a CUDA device, got {t.device}")


def _check_semantics(semantics: str) -> None:
    if semantics not in _api.PRESETS:
        raise ValueError(f"semantics: {semantics!r} is not one of {', '.join(_api.PRESETS)}")


def _check_threads(threads: int) -> None:
    if threads < 0:
        raise ValueError(f"threads: must be >= 0 (0 = all cores), got {threads}")


def _relu_grad_eager(dy: Tensor, s: Tensor, semantics: str, threshold: float, alpha: float,
                     threads: int) -> Tensor:
    """relugrad::relu_grad's kernel, also called directly by _ReluFunction's backward."""
    preset = _PRESET_CODES.get(semantics)
    code = _api._torch_host_code(dy, s)
    if preset is not None and code is not None and type(threads) is int and threads >= 0:
        # Contiguous CPU tensors of one supported dtype and shape (every
        # ReLU backward in eager mode): by address into a fresh contiguous
        # out. 2.3 us at n = 16, where the general path below takes 6.5
        # (torch.empty with keywords alone costs 2.3 us, empty_like 0.8).
        out = torch.empty_like(dy, memory_format=torch.contiguous_format)
        _C.relu_grad_host_ptr(dy.data_ptr(), s.data_ptr(), out.data_ptr(), dy.numel(), code, preset,
                              -1, -1, -1, -1, float(threshold), float(alpha), False, 0.0, 0.0, threads, 0)
        return out
    _check_semantics(semantics)
    _check_threads(threads)
    _check_device("relugrad::relu_grad", dy, s)
    # relugrad reads C-ordered memory; contiguous() is a no-op when it already is.
    dy = dy.contiguous()
    s = s.contiguous()
    out = torch.empty(dy.shape, dtype=dy.dtype, device=dy.device)
    # The bindings' option arguments (_api._options' order). They check
    # dtypes, shapes and devices by argument name.
    opts = (_PRESET_CODES[semantics], -1, -1, -1, -1, float(threshold), float(alpha), False, 0.0, 0.0,
            int(threads), 0)
    with _api._DeviceScope(dy) as scope:
        _C.relu_grad_into(dy.detach(), s.detach(), out, 0, 0, 0, *opts, False, scope.stream)
    return out


@torch.library.custom_op("relugrad::relu_grad", mutates_args=(), device_types=_DEVICES)
def relu_grad(dy: Tensor, s: Tensor, semantics: str = "torch", threshold: float = 0.0,
              alpha: float = 0.0, threads: int = 0) -> Tensor:
    """ReluGrad of CPU or CUDA tensors (a fresh contiguous result); threads 0 = all cores."""
    return _relu_grad_eager(dy, s, semantics, threshold, alpha, threads)


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


# ---- The 1-bit mask path (docs/mask.md) -------------------------------------
# relu_mask's forward writes y and a packed uint8 mask of ceil(n/8) bytes;
# autograd saves only the mask (not x, not y), and the backward reads only
# dy and the mask. In the torch preset dx equals torch.relu's autograd bit for
# bit; y equals torch.threshold(x, 0, 0), i.e. torch.relu except that
# torch.relu(-0.) is -0. while relugrad writes +0. (values compare equal).


def _mask_len(x: Tensor):
    return (x.numel() + 7) // 8  # relugrad_mask_bytes; SymInt-friendly for the fake kernel


def _relu_mask_eager(x: Tensor, semantics: str, threads: int, inplace: bool = False) -> Tuple[Tensor, Tensor]:
    """relugrad::relu_mask's kernel; inplace (contiguous x only) writes y over x."""
    _check_semantics(semantics)
    _check_threads(threads)
    _check_device("relugrad::relu_mask", x)
    if inplace and not x.is_contiguous():
        y, mask = _relu_mask_eager(x, semantics, threads)
        return x.copy_(y), mask
    x = x.contiguous()
    y = x if inplace else torch.empty(x.shape, dtype=x.dtype, device=x.device)
    mask = torch.empty((_mask_len(x),), dtype=torch.uint8, device=x.device)
    with _api._DeviceScope(x) as scope:
        _C.relu_forward_into(x.detach(), y, mask, 0, 0, _PRESET_CODES[semantics], -1, -1, -1, -1, 0.0, 0.0,
                             False, 0.0, 0.0, int(threads), 0, scope.stream)
    return y, mask


@torch.library.custom_op("relugrad::relu_mask", mutates_args=(), device_types=_DEVICES)
def relu_mask(x: Tensor, semantics: str = "torch", threads: int = 0) -> Tuple[Tensor, Tensor]:
    """(y, mask): y = relu(x) under the preset, mask = the packed gate bits."""
    return _relu_mask_eager(x, semantics, threads)


@relu_mask.register_fake
def _relu_mask_fake(x: Tensor, semantics: str = "torch", threads: int = 0) -> Tuple[Tensor, Tensor]:
    return x.new_empty(x.shape), x.new_empty((_mask_len(x),), dtype=torch.uint8)


def _relu_grad_mask_eager(dy: Tensor, mask: Tensor, semantics: str, threads: int) -> Tensor:
    _check_semantics(semantics)
    _check_threads(threads)
    _check_device("relugrad::relu_grad_mask", dy, mask)
    torch._check(mask.dtype == torch.uint8, lambda: f"mask: dtype must be torch.uint8, got {mask.dtype}")
    dy = dy.contiguous()
    mask = mask.contiguous()
    out = torch.empty(dy.shape, dtype=dy.dtype, device=dy.device)
    with _api._DeviceScope(dy) as scope:
        _C.relu_grad_mask_into(dy.detach(), mask, out, 0, 0, _PRESET_CODES[semantics], -1, -1, -1, -1, 0.0, 0.0,
                               False, 0.0, 0.0, int(threads), 0, scope.stream)
    return out


@torch.library.custom_op("relugrad::relu_grad_mask", mutates_args=(), device_types=_DEVICES)
def relu_grad_mask(dy: Tensor, mask: Tensor, semantics: str = "torch", threads: int = 0) -> Tensor:
    """dx = bit ? pass(dy) : closed(dy), from relu_mask's mask."""
    return _relu_grad_mask_eager(dy, mask, semantics, threads)


@relu_grad_mask.register_fake
def _relu_grad_mask_fake(dy: Tensor, mask: Tensor, semantics: str = "torch", threads: int = 0) -> Tensor:
    torch._check(mask.dtype == torch.uint8, lambda: f"mask: dtype must be torch.uint8, got {mask.dtype}")
    torch._check(mask.numel() == _mask_len(dy),
                 lambda: f"mask: has {mask.numel()} bytes, dy has {dy.numel()} elements (needs ceil(n/8))")
    return dy.new_empty(dy.shape)


def _relu_grad_mask_setup(ctx, inputs: Tuple, output: Tensor) -> None:
    _, mask, semantics, threads = inputs
    ctx.save_for_backward(mask)
    ctx.semantics, ctx.threads = semantics, threads


def _relu_grad_mask_backward(ctx, grad: Tensor):
    # Linear in dy with a fixed gate: the gradient is the same op (double backward).
    (mask,) = ctx.saved_tensors
    return torch.ops.relugrad.relu_grad_mask(grad, mask, ctx.semantics, ctx.threads), None, None, None


relu_grad_mask.register_autograd(_relu_grad_mask_backward, setup_context=_relu_grad_mask_setup)


def _relu_mask_setup(ctx, inputs: Tuple, output: Tuple[Tensor, Tensor]) -> None:
    # The whole point: only the 1-bit mask stays alive for backward.
    _, mask = output
    ctx.mark_non_differentiable(mask)
    ctx.save_for_backward(mask)
    ctx.semantics, ctx.threads = inputs[1], inputs[2]


def _relu_mask_backward(ctx, grad_y: Tensor, grad_mask):
    (mask,) = ctx.saved_tensors
    return torch.ops.relugrad.relu_grad_mask(grad_y, mask, ctx.semantics, ctx.threads), None, None


relu_mask.register_autograd(_relu_mask_backward, setup_context=_relu_mask_setup)


# ---- The eager path of ReLU ---------------------------------------------------
# The ops above are what torch.compile and torch.library see (schema, fake
# kernels, opcheck). In eager mode each custom op call goes through
# torch.library's Python dispatch and autograd wrappers: a ReLU step
# (forward and backward) cost 97 us at n = 16 against nn.ReLU's 21-24 us,
# 240 against 127 us at 256K (bench/NOTES.md section 23). ReLU.forward
# therefore runs these autograd.Functions outside compilation, calling the
# same kernels directly. With create_graph (double backward) the backward
# calls the ops, whose autograd formulas make it differentiable.


# inplace: like nn.ReLU(inplace=True), y is x overwritten (mark_dirty bumps
# x's version, so autograd rejects a later use of the old x as it does for
# torch.relu_), and the saved y is x itself: no second tensor of n elements.


class _ReluFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: Tensor, semantics: str, threads: int, inplace: bool) -> Tensor:
        if inplace:
            ctx.mark_dirty(x)
            y = torch.relu_(x)
        else:
            y = torch.relu(x)
        ctx.save_for_backward(y)  # gate on y, as PyTorch does (_relu_setup)
        ctx.semantics, ctx.threads = semantics, threads
        return y

    @staticmethod
    def backward(ctx, grad: Tensor):
        (y,) = ctx.saved_tensors
        if torch.is_grad_enabled():  # create_graph=True
            return torch.ops.relugrad.relu_grad(grad, y, ctx.semantics, 0.0, 0.0, ctx.threads), None, None, None
        return _relu_grad_eager(grad, y, ctx.semantics, 0.0, 0.0, ctx.threads), None, None, None


class _ReluMaskFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: Tensor, semantics: str, threads: int, inplace: bool) -> Tensor:
        if inplace:
            ctx.mark_dirty(x)
        y, mask = _relu_mask_eager(x, semantics, threads, inplace)
        ctx.save_for_backward(mask)  # only the 1-bit mask stays alive
        ctx.semantics, ctx.threads = semantics, threads
        return y

    @staticmethod
    def backward(ctx, grad: Tensor):
        (mask,) = ctx.saved_tensors
        if torch.is_grad_enabled():  # create_graph=True
            return torch.ops.relugrad.relu_grad_mask(grad, mask, ctx.semantics, ctx.threads), None, None, None
        return _relu_grad_mask_eager(grad, mask, ctx.semantics, ctx.threads), None, None, None


_is_compiling = getattr(getattr(torch, "compiler", None), "is_compiling", lambda: False)


# ---- The torch-native eager path ---------------------------------------------
# The autograd.Functions above still cost 41 us per forward + backward at
# n = 16 (nn.ReLU: 21-23 us), nearly all of it Python. _relugrad_torch.so
# (python/src/torch_native.cc) holds the same two Functions in C++, registered
# as torch.ops.relugrad_native.relu / relu_: one dispatcher call forward, no
# Python in backward (bench/NOTES.md 27). It is built against one torch
# version and loaded only under that version; otherwise, or with
# RELUGRAD_TORCH_NATIVE=0 in the environment, the Python path serves.

_NATIVE_DTYPES = frozenset((torch.float32, torch.float16, torch.bfloat16, torch.float64))


def _load_native() -> Tuple[Optional[object], Optional[object], str]:
    """(relu, relu_ op overloads or None, and why not)."""
    if os.environ.get("RELUGRAD_TORCH_NATIVE", "1") == "0":
        return None, None, "disabled by RELUGRAD_TORCH_NATIVE=0"
    built_for = _api._torch_native_stamp()
    if built_for is None:
        return None, None, ("not built: relugrad was built without torch (build it with torch installed: "
                            "pip install --no-build-isolation .)")
    if built_for != torch.__version__:
        return None, None, f"built for torch {built_for}, this is torch {torch.__version__}: rebuild relugrad"
    try:
        torch.ops.load_library(_api._TORCH_NATIVE_LIB)
        torch.ops.relugrad_native.bind(_C.c_api_table())
    except (OSError, RuntimeError) as e:
        return None, None, f"{_api._TORCH_NATIVE_LIB} did not load: {e}"
    return torch.ops.relugrad_native.relu.default, torch.ops.relugrad_native.relu_.default, "loaded"


_native_relu, _native_relu_, NATIVE_STATUS = _load_native()
NATIVE = _native_relu is not None


class ReLU(nn.Module):
    """Drop-in nn.ReLU whose backward is relugrad's ReluGrad.

    Args:
      semantics: "torch" (bit-equal to nn.ReLU's gradients), "tensorflow",
        "jax", "onednn" or "mindspore".
      inplace: as nn.ReLU's: the forward overwrites x and returns it, and
        backward keeps x (or only the mask) instead of a second tensor. Under
        torch.compile the ops run out of place and the result is copied
        into x.
      threads: 0 (default) splits forward (mask) and backward over torch's
        own intra-op threads (torch.get_num_threads(), at::parallel_for) on
        the torch-native path, or over relugrad's pool on all cores where the
        Python path serves (NATIVE_STATUS says which); N > 0: relugrad's pool
        with N threads.
      mask: keep only a packed 1-bit mask for backward (relugrad::relu_mask):
        ceil(n/8) bytes instead of the n-element y. Forward y is relugrad's
        (for the torch preset: torch.relu except +0 instead of -0 for x = -0);
        gradients are the same bits as mask=False.
    """

    def __init__(self, semantics: str = "torch", inplace: bool = False, threads: int = 0,
                 mask: bool = False) -> None:
        super().__init__()
        _check_semantics(semantics)
        _check_threads(threads)
        self.semantics = semantics
        self.inplace = bool(inplace)
        self.threads = threads
        self.mask = bool(mask)

    def forward(self, x: Tensor) -> Tensor:
        if not isinstance(x, Tensor) or torch._C._get_tracing_state() is not None or torch.compiler.is_exporting():
            return self._captured_forward(x)  # FX proxies, jit.trace, torch.export, ONNX export
        if x.is_cpu and _native_relu is not None and x.dtype in _NATIVE_DTYPES and not _is_compiling():
            op = _native_relu_ if self.inplace else _native_relu
            return op(x, self.semantics, self.threads, self.mask)
        if x.device.type == "cuda" and not _C.backend_available(_C.BACKEND_CUDA):
            # No CUDA backend in this build (or no device): keep such models usable.
            return torch.relu_(x) if self.inplace else torch.relu(x)
        if _is_compiling():  # the custom ops: fake kernels, one node each in the graph
            if self.mask:
                y = torch.ops.relugrad.relu_mask(x, self.semantics, self.threads)[0]
            else:
                y = torch.ops.relugrad.relu(x, self.semantics, self.threads)
            return x.copy_(y) if self.inplace else y
        if self.mask:
            return _ReluMaskFunction.apply(x, self.semantics, self.threads, self.inplace)
        return _ReluFunction.apply(x, self.semantics, self.threads, self.inplace)

    def extra_repr(self) -> str:
        return (f"semantics={self.semantics!r}" + (", inplace=True" if self.inplace else "")
                + (f", threads={self.threads}" if self.threads else "") + (", mask=True" if self.mask else ""))

    # Graph capture (FX symbolic tracing, jit.trace, torch.export, both ONNX exporters) records one
    # op per ReLU: relugrad::relu (forward torch.relu, backward relugrad's, an aten.relu
    # decomposition below), or for ONNX, which has no autograd, torch.relu itself, a standard
    # Relu node. mask=True keeps its 1-bit saving in eager mode and torch.compile only: captured
    # graphs record relugrad::relu (the same gradient bits; y is torch.relu's, -0 kept).
    def _captured_forward(self, x):
        if torch.onnx.is_in_onnx_export():
            return torch.relu_(x) if self.inplace else torch.relu(x)
        y = torch.ops.relugrad.relu(x, self.semantics, self.threads)
        return x.copy_(y) if self.inplace else y

    def __prepare_scriptable__(self) -> nn.Module:
        # torch.jit.script cannot compile forward's eager paths: it scripts a module that calls
        # relugrad::relu (a TorchScript model that needs relugrad.torch imported where it runs).
        from ._replace import _ScriptableReLU
        return _ScriptableReLU(self)


# replace_relu / restore_relu and their report live in _replace.py (they need ReLU above).
from ._replace import (ReplaceEntry, ReplaceError, ReplaceReport, fuse_custom_config,  # noqa: E402
                       replace_relu, restore_relu)

__all__ += ["restore_relu", "ReplaceReport", "ReplaceEntry", "ReplaceError", "fuse_custom_config",
            "decompositions"]


# ---- Graph export: aten decomposition and ONNX symbolic of relugrad::relu ------------------
# relugrad::relu's forward is torch.relu for every preset, so aten.relu is its exact
# decomposition. decompositions() is for ExportedProgram.run_decompositions; the same entry in
# torch._decomp's table is what the dynamo ONNX exporter lowers ops without an ONNX function
# through (post-autograd: autograd has already recorded relugrad's backward when it applies).
# The TorchScript ONNX exporter maps the op to a standard Relu.

def _relu_decomposition(x: Tensor, semantics: str = "torch", threads: int = 0) -> Tensor:
    return torch.ops.aten.relu.default(x)


def decompositions() -> dict:
    """{relugrad op: aten decomposition}: ep.run_decompositions(table) with table =
    torch.export.default_decompositions() updated with these gives a graph of aten ops only."""
    return {torch.ops.relugrad.relu.default: _relu_decomposition}


def _register_export() -> None:
    import torch._decomp as decomp

    if torch.ops.relugrad.relu.default not in decomp.decomposition_table:
        decomp.register_decomposition(torch.ops.relugrad.relu.default)(_relu_decomposition)

    def relu_symbolic(g, x, semantics, threads):
        return g.op("Relu", x)

    torch.onnx.register_custom_op_symbolic("relugrad::relu", relu_symbolic, 9)


_register_export()
