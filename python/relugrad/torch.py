"""PyTorch integration: torch.library custom ops and a drop-in ReLU module.

Ops (registered the torch.library way: schema, CPU and CUDA kernels, fake
kernels for torch.compile, FakeTensorMode and meta tensors, autograd as
setup_context Functions with jvp (torch.func, forward AD), vmap rules):

    torch.ops.relugrad.relu_grad(dy, s, semantics="torch", threshold=0.0, alpha=0.0, threads=0) -> Tensor
    torch.ops.relugrad.relu(x, semantics="torch", threads=0) -> Tensor   # forward = torch.relu,
                                                              # backward = relugrad.relu_grad
    torch.ops.relugrad.relu_mask(x, semantics="torch", threads=0) -> (y, mask)   # 1-bit mask path:
    torch.ops.relugrad.relu_grad_mask(dy, mask, semantics="torch", threads=0,
                                      dim_order=None) -> Tensor  # mask in y's storage order

Every result has the layout PyTorch's own op gives (torch.relu,
threshold_backward): channels_last stays channels_last, and dense layouts
run over the storage without a copy. threads 0 = torch's intra-op threads.

Modules:

    relugrad.torch.ReLU(semantics="torch", mask=False)   # an nn.ReLU whose backward runs relugrad
    relugrad.torch.replace_relu(model, mask=False, *, functional=False, strict=False,
                                return_report=False,     # nn.ReLU modules; functional relu
                                fuse_linear=False)       # only inside the scope it opens
    relugrad.torch.restore_relu(model)                   # back to stock modules, hooks kept
    relugrad.torch.LinearReLU(in_features, out_features) # Linear + ReLU, the bias gradient summed
                                                         # in the ReluGrad pass (_linear.py)

In eager mode ReLU runs the C++ forward and autograd nodes of the
relugrad._relugrad_torch module when the package was built against this torch;
NATIVE (bool) and NATIVE_STATUS ("loaded" or why not) say whether it did.
Everywhere else (torch.compile, torch.func, fake tensors, CUDA, or eager mode
without the native library) ReLU calls the custom ops above.

CUDA tensors run on relugrad's CUDA backend (same C ABI, device pointers,
torch's current stream) when the library was built with CUDA and a device is
present. Whatever the kernels cannot read (CUDA in a CPU-only build, with one
warning; tensor subclasses, DTensor, nested tensors, other dtypes) gets
torch's own ops with the preset's bits (threshold_backward itself for the
torch preset).

In the torch preset the gradients equal PyTorch's own bit for bit: autograd of
torch.relu calls threshold_backward(grad, result, 0), which is the gate
zero_if_le on y with select, exactly what the preset computes.
"""
from __future__ import annotations

import os
import sys
import warnings
from typing import List, Optional, Sequence, Tuple

import torch
from torch import Tensor, nn
from torch._library.utils import fill_defaults as _fill_defaults

from . import _api
from . import _relugrad as _C

_PRESET_CODES = {name: _C.preset_from_name(name) for name in _api.PRESETS}
# The kernels below run on both devices: the bindings pick the backend from
# the tensors' DLPack device (CPU -> CPU backend, CUDA -> CUDA backend).
_DEVICES = ("cpu", "cuda")
_TC = torch._C
_fwAD = torch.autograd.forward_ad
_CL = torch.channels_last

__all__ = ["relu_grad", "relu", "relu_mask", "relu_grad_mask", "ReLU", "replace_relu"]


def _check_semantics(semantics: str) -> None:
    if semantics not in _api.PRESETS:
        raise ValueError(f"semantics: {semantics!r} is not one of {', '.join(_api.PRESETS)}")


def _check_threads(threads: Optional[int]) -> int:
    """The checked threads argument, as in every Python entry point: None or
    0 -> 0 (torch's intra-op threads), N -> N."""
    return _api._thread_count(threads)


def _threads(threads: int) -> int:
    """relugrad's thread count for a call on torch tensors: 0 means torch's
    own intra-op thread count (torch.get_num_threads()), as on the native
    path, where such calls run on torch's threads themselves."""
    return threads if threads else torch.get_num_threads()


_warned_cuda = False


def _kernels_serve(t: Tensor) -> bool:
    """relugrad's kernels can read t's memory: a strided, non-nested tensor
    on the CPU, or on CUDA when this build has the CUDA backend. Everything
    else (meta, other devices, CUDA in a CPU-only build) gets torch's own ops."""
    if t.layout is not torch.strided or t.is_nested:
        return False
    if t.is_cpu:
        return True
    if t.device.type == "cuda":
        if _C.backend_available(_C.BACKEND_CUDA):
            return True
        global _warned_cuda
        if not _warned_cuda:
            _warned_cuda = True
            warnings.warn("relugrad: this build has no CUDA backend (rebuild with: pip install . -C "
                          "cmake.define.RELUGRAD_CUDA=ON); CUDA tensors get torch's own ReLU and "
                          "threshold_backward instead (same bits in the torch preset)", RuntimeWarning, stacklevel=3)
    return False


# ---- Layouts ------------------------------------------------------------------
# Every result has the strides PyTorch's own op gives it: ReLU's backward is
# threshold_backward(grad, result, 0) and its forward torch.relu(x), both
# TensorIterator ops. TensorIterator's fast setup is mirrored here (a few flag
# reads): all operands contiguous -> contiguous; all channels_last ->
# channels_last; all non-overlapping and dense with equal strides -> those
# strides. There every operand has one storage order and the kernel runs once
# over the storage. Any other case gets TensorIterator's general rule
# (reorder_dimensions, allocate_or_resize_outputs), _ti_strides below; the
# tests compare both with PyTorch's own results. The same rules are in
# python/src/torch_native.cc.


def _dense(t: Tensor) -> bool:
    """Non-overlapping and dense (c10's is_non_overlapping_and_dense)."""
    if t.is_contiguous():
        return True
    expected = 1
    for stride, size in sorted((st, sz) for st, sz in zip(t.stride(), t.shape) if sz != 1):
        if stride != expected:
            return False
        expected *= size
    return True


def _ti_strides(shape: Sequence[int], *operand_strides: Sequence[int]) -> List[int]:
    """The strides TensorIterator gives a new output of `shape` from inputs of
    that shape with these strides (not its fast setup): dims sorted by the
    inputs' strides, first input first, stride 0 (broadcast) skipped, equal
    strides ordered by size; a C-ordered result when nothing moves."""
    n = len(shape)
    perm = list(range(n - 1, -1, -1))

    def should_swap(d0: int, d1: int) -> int:
        for st in operand_strides:
            s0, s1 = st[d0], st[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return -1 if s0 < s1 else 1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    for i in range(1, n):  # insertion sort with ambiguous comparisons
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = should_swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    if perm == list(range(n - 1, -1, -1)):
        return _order_strides(shape, None)
    out = [0] * n
    step = 1
    for d in perm:
        out[d] = step
        step *= shape[d]
    return out


def _meta(t: Tensor, strides: Optional[Sequence[int]] = None) -> Tensor:
    return torch.empty_strided(t.shape, t.stride() if strides is None else strides, dtype=t.dtype, device="meta")


def _empty(like: Tensor, strides: Sequence[int]) -> Tensor:
    return torch.empty_strided(like.shape, strides, dtype=like.dtype, device=like.device)


def _fast_output(a: Tensor, b: Tensor) -> Optional[Tensor]:
    """TensorIterator's output for operands a, b when its fast setup serves, else None."""
    if a.is_contiguous() and b.is_contiguous():
        return torch.empty_like(a, memory_format=torch.contiguous_format)
    if a.is_contiguous(memory_format=_CL) and b.is_contiguous(memory_format=_CL):
        return torch.empty_like(a, memory_format=_CL)
    if a.stride() == b.stride() and _dense(a) and _dense(b):
        return _empty(a, a.stride())
    return None


def _grad_output(dy: Tensor, s: Tensor) -> Tuple[Tensor, bool]:
    """(threshold_backward(dy, s)'s output, uninitialised; whether dy and s
    share its storage order). Its TensorIterator takes s, then dy: s's layout leads."""
    out = _fast_output(dy, s)
    if out is not None:
        return out, True
    return _empty(dy, _ti_strides(dy.shape, s.stride(), dy.stride())), False


def _relu_output(x: Tensor) -> Tuple[Tensor, bool]:
    """(torch.relu(x)'s output, uninitialised; whether it shares x's storage order)."""
    out = _fast_output(x, x)
    if out is not None:
        return out, True
    return _empty(x, _ti_strides(x.shape, x.stride())), False


def _same_order(t: Tensor, strides: Sequence[int]) -> bool:
    """t is dense and addresses its elements in the storage order of `strides`."""
    return all(a == b or n == 1 for a, b, n in zip(t.stride(), strides, t.shape)) and _dense(t)


def _c_order(shape: Sequence[int], strides: Sequence[int]) -> bool:
    """strides lay shape out in C order (any stride on a dim of size 1)."""
    return all(st == want or n == 1 for n, st, want in zip(shape, strides, _order_strides(shape, None)))


def _in_order(t: Tensor, strides: Sequence[int]) -> Tensor:
    """t itself when dense in the storage order `strides`, else a copy in that layout."""
    return t if _same_order(t, strides) else _empty(t, strides).copy_(t)


def _dim_order(strides: Sequence[int]) -> List[int]:
    """Dims from outermost to innermost in memory (Tensor.dim_order of a dense layout)."""
    return sorted(range(len(strides)), key=lambda d: -strides[d])


def _order_strides(shape: Sequence[int], order: Optional[Sequence[int]]) -> List[int]:
    """The dense strides that lay out `shape` in dim order `order` (None: C order)."""
    order = range(len(shape)) if order is None else order
    strides = [0] * len(shape)
    step = 1
    for d in reversed(list(order)):
        strides[d] = step
        step *= shape[d]
    return strides


def _flat(t: Tensor) -> Tensor:
    """A dense tensor's storage as a 1-d view (what the bindings read)."""
    return t.detach().as_strided((t.numel(),), (1,))


# ---- torch's own ops for what the kernels do not serve ---------------------------
# The preset's rules written with torch ops, for tensors relugrad cannot read
# (subclasses, DTensor, nested, meta, CUDA without the CUDA backend). The torch
# preset is threshold_backward itself; the others are built from the preset's
# settings (docs: README "Semantics").


def _gate_open(s: Tensor, semantics: str, threshold: float) -> Tensor:
    st = _api.preset_settings(semantics)
    g = s.float() if s.dtype in (torch.float16, torch.bfloat16) else s  # the compute type
    t = threshold
    if st["threshold_rounding"] == "dtype":
        t = float(torch.tensor(threshold, dtype=s.dtype))
    if st["denormals"] == "ftz_daz" and s.dtype is not torch.float16:  # f16 has no subnormals in f32
        g = torch.where(g.abs() < torch.finfo(s.dtype).tiny, torch.zeros_like(g), g)
    return g > t if st["gate"] == "pass_if_gt" else ~(g <= t)


def _relu_grad_torch(dy: Tensor, s: Tensor, semantics: str, threshold: float, alpha: float) -> Tensor:
    st = _api.preset_settings(semantics)
    if semantics == "torch" and alpha == 0.0:
        return torch.ops.aten.threshold_backward(dy, s, threshold)
    if dy.is_nested and dy.layout is torch.strided:  # few ops take strided nested tensors: per component
        return torch.nested.as_nested_tensor([_relu_grad_torch(a, b, semantics, threshold, alpha)
                                              for a, b in zip(dy.unbind(), s.unbind())])
    open_ = _gate_open(s, semantics, threshold)
    if st["combine"] == "select":
        closed = dy * alpha if alpha != 0.0 else torch.zeros_like(dy)
        return torch.where(open_, dy, closed)
    dx = dy * torch.where(open_, torch.ones_like(dy), torch.full_like(dy, alpha))
    if st["denormals"] == "ftz_daz" and dy.dtype is not torch.float16:
        dx = torch.where(dx.abs() < torch.finfo(dy.dtype).tiny, dx * 0, dx)
    return dx


# ---- Kernels ------------------------------------------------------------------------


_GRAD = _C.OP_RELU_GRAD * 8  # the plan-table key of a CPU relu_grad plan, less its dtype
# (semantics, threshold, alpha, threads, dtype) -> the CPU relu_grad plan: every eager ReLU
# backward looks its plan up here, one dict probe (bounded like the configurations).
_EAGER_PLANS = {}


def _config(semantics: str, threshold: float, alpha: float, threads: int):
    """The configuration (relugrad.Options and its plans) of a kernel call;
    threads: the checked argument (0 = torch's intra-op threads)."""
    return _api._torch_config(semantics, float(threshold), float(alpha), _threads(int(threads)))


def _device_plan(config, op: int, name: str, t: Tensor, scope):
    """The plan of op for t's dtype on t's device: the CPU, or CUDA on the
    scope's stream (torch's current stream of t's device); TypeError naming
    the argument for other dtypes."""
    code = _api._torch_host_dtype(t.dtype)
    if code is None:
        raise _api._unsupported(name, str(t.dtype).replace("torch.", ""))
    if t.device.type == "cuda":
        _api._require_cuda(name, f"a tensor on {t.device}")
        return config.cuda_plan(op, code, scope.stream)
    return config.plans.get(op * 8 + code) or config.plan(op, code)


def _run_relu_grad(dy: Tensor, s: Tensor, out: Tensor, config) -> None:
    """relugrad_relu_grad over the storage of dense dy, s, out of one storage order."""
    if out.is_cpu:
        code = _api._torch_host_dtype(dy.dtype)
        if code is not None and s.dtype == dy.dtype and s.is_cpu and dy.is_cpu:
            plan = config.plans.get(_GRAD + code) or config.plan(_C.OP_RELU_GRAD, code)
            plan.run_host(dy.data_ptr(), s.data_ptr(), out.data_ptr(), out.numel())
            return
    with _api._DeviceScope(dy) as scope:
        _device_plan(config, _C.OP_RELU_GRAD, "dy", dy, scope)(_flat(dy), _flat(s), _flat(out))


def _relu_grad_eager(dy: Tensor, s: Tensor, semantics: str, threshold: float, alpha: float,
                     threads: int) -> Tensor:
    """relugrad::relu_grad's kernel, also called directly by the eager Functions' backward."""
    code = _api._torch_host_code(dy, s)
    if code is not None and semantics in _PRESET_CODES and type(threads) is int and threads >= 0:
        # Contiguous CPU tensors of one supported dtype and shape (every
        # ReLU backward in eager mode): the configuration's plan by address
        # into a fresh contiguous out (torch.empty with keywords alone costs
        # 2.3 us, empty_like 0.8).
        key = (semantics, threshold, alpha, threads or torch.get_num_threads(), code)
        plan = _EAGER_PLANS.get(key)
        if plan is None:
            plan = _api._torch_config(*key[:4]).plan(_C.OP_RELU_GRAD, code)
            if len(_EAGER_PLANS) >= 1024:
                _EAGER_PLANS.clear()
            _EAGER_PLANS[key] = plan
        out = torch.empty_like(dy, memory_format=torch.contiguous_format)
        plan.run_host(dy.data_ptr(), s.data_ptr(), out.data_ptr(), dy.numel())
        return out
    _check_semantics(semantics)
    _check_threads(threads)
    if not (_kernels_serve(dy) and _kernels_serve(s)):
        return _relu_grad_torch(dy, s, semantics, float(threshold), float(alpha))
    if dy.dtype != s.dtype:
        raise TypeError(f"s: dtype {s.dtype} does not match dy's {dy.dtype}")
    if dy.shape != s.shape:
        raise ValueError(f"s: shape {tuple(s.shape)} does not match dy's {tuple(dy.shape)}")
    if _api._torch_host_dtype(dy.dtype) is None:
        raise TypeError(f"dy: dtype {dy.dtype} is not supported (float16, bfloat16, float32, float64)")
    if dy.device != s.device:
        raise ValueError(f"s: device {s.device} differs from dy's {dy.device}; all tensors of a call must be on one device")
    # The kernels read raw memory: lazily negated tensors (torch._neg_view) are negated first,
    # as the dispatcher's fallback does for torch's own ops.
    dy, s = dy.resolve_neg(), s.resolve_neg()
    config = _config(semantics, threshold, alpha, threads)
    out, flat = _grad_output(dy, s)
    if not flat:
        dy, s = _in_order(dy, out.stride()), _in_order(s, out.stride())
    _run_relu_grad(dy, s, out, config)
    return out


@torch.library.custom_op("relugrad::relu_grad", mutates_args=(), device_types=_DEVICES)
def relu_grad(dy: Tensor, s: Tensor, semantics: str = "torch", threshold: float = 0.0,
              alpha: float = 0.0, threads: int = 0) -> Tensor:
    """ReluGrad of CPU or CUDA tensors, with threshold_backward(dy, s)'s layout;
    threads 0 = torch's intra-op thread count."""
    return _relu_grad_eager(dy, s, semantics, threshold, alpha, threads)


@relu_grad.register_fake
def _relu_grad_fake(dy: Tensor, s: Tensor, semantics: str = "torch", threshold: float = 0.0,
                    alpha: float = 0.0, threads: int = 0) -> Tensor:
    torch._check(dy.shape == s.shape, lambda: f"s: shape {tuple(s.shape)} does not match dy's {tuple(dy.shape)}")
    torch._check(dy.dtype == s.dtype, lambda: f"s: dtype {s.dtype} does not match dy's {dy.dtype}")
    return torch.ops.aten.threshold_backward(dy, s, 0.0)  # its layout, from TensorIterator's meta


@relu_grad.register_vmap
def _relu_grad_vmap(info, in_dims, dy, s, semantics="torch", threshold=0.0, alpha=0.0, threads=0):
    # Elementwise: one call over the whole batch, the batch dim first.
    dy_dim, s_dim = in_dims[0], in_dims[1]
    dy = dy.movedim(dy_dim, 0) if dy_dim is not None else dy.expand(info.batch_size, *dy.shape)
    s = s.movedim(s_dim, 0) if s_dim is not None else s.expand(info.batch_size, *s.shape)
    return torch.ops.relugrad.relu_grad(dy, s, semantics, threshold, alpha, threads), 0


@torch.library.custom_op("relugrad::relu", mutates_args=())
def relu(x: Tensor, semantics: str = "torch", threads: int = 0) -> Tensor:
    """torch.relu forward; backward through relugrad::relu_grad with the preset."""
    _check_semantics(semantics)
    return torch.relu(x)


@relu.register_fake
def _relu_fake(x: Tensor, semantics: str = "torch", threads: int = 0) -> Tensor:
    _let_inductor_see_through()
    return torch.relu(x)  # its layout, from TensorIterator's meta


@relu.register_vmap
def _relu_vmap(info, in_dims, x, semantics="torch", threads=0):
    return torch.ops.relugrad.relu(x, semantics, threads), in_dims[0]


# ---- The 1-bit mask path (docs/mask.md) -------------------------------------
# relu_mask's forward writes y and a packed uint8 mask of ceil(n/8) bytes;
# autograd saves only the mask (not x, not y), and the backward reads only
# dy and the mask. In the torch preset dx equals torch.relu's autograd bit for
# bit, and y is torch.relu(x)'s bits, -0 kept (the configuration's
# keep_negative_zero, set by _api._torch_config for the torch preset).
# y has torch.relu(x)'s layout and mask bit i is the element at storage
# position i of y: relu_grad_mask takes y's dim order (y.dim_order(); None =
# C order) to read it.


def _mask_len(x: Tensor):
    return (x.numel() + 7) // 8  # relugrad_mask_bytes; SymInt-friendly for the fake kernel


def _relu_mask_eager(x: Tensor, semantics: str, threads: int, inplace: bool = False) -> Tuple[Tensor, Tensor, Tuple]:
    """(y, mask, the strides whose storage order the mask follows); inplace writes y over x."""
    _check_semantics(semantics)
    _check_threads(threads)
    if inplace and _dense(x):
        src = y = x
    else:
        y, flat = _relu_output(x)
        src = x if flat else y.copy_(x)
    mask = torch.empty((_mask_len(x),), dtype=torch.uint8, device=x.device)
    config = _config(semantics, 0.0, 0.0, threads)
    with _api._DeviceScope(x) as scope:
        _device_plan(config, _C.OP_RELU_FORWARD_MASK, "x", x, scope)(_flat(src), _flat(y), mask)
    order = y.stride()
    if inplace and y is not x:
        y = x.copy_(y)
    return y, mask, order


@torch.library.custom_op("relugrad::relu_mask", mutates_args=(), device_types=_DEVICES)
def relu_mask(x: Tensor, semantics: str = "torch", threads: int = 0) -> Tuple[Tensor, Tensor]:
    """(y, mask): y = relu(x) under the preset, mask = the packed gate bits in y's storage order."""
    y, mask, _ = _relu_mask_eager(x, semantics, threads)
    return y, mask


@relu_mask.register_fake
def _relu_mask_fake(x: Tensor, semantics: str = "torch", threads: int = 0) -> Tuple[Tensor, Tensor]:
    return torch.relu(x), x.new_empty((_mask_len(x),), dtype=torch.uint8)


@relu_mask.register_vmap
def _relu_mask_vmap(info, in_dims, x, semantics="torch", threads=0):
    # One mask per sample, ceil(n/8) bytes each with its own padding bits, in the sample's
    # storage order. Where a sample fills whole bytes (n % 8 == 0) and the batch dim is
    # outermost in memory, the batch's mask is the samples' masks one after the other: one call.
    # Otherwise one call per sample, split by unbind, whose backward places each sample's
    # gradient as it is (an indexed slice would add it to zeros: -0 would become +0).
    x = x.movedim(in_dims[0], 0)
    n = x[0].numel()
    if n % 8 == 0 and _dense(x) and x.stride(0) == n and _dense(x[0]):
        y, mask = torch.ops.relugrad.relu_mask(x, semantics, threads)
        return (y, mask.view(x.shape[0], n // 8)), (0, 0)
    ys, masks = zip(*(torch.ops.relugrad.relu_mask(r, semantics, threads) for r in x.unbind(0)))
    return (torch.stack(ys), torch.stack(masks)), (0, 0)


def _relu_grad_mask_eager(dy: Tensor, mask: Tensor, semantics: str, threads: int,
                          mask_strides: Optional[Sequence[int]] = None,
                          result_strides: Optional[Sequence[int]] = None) -> Tensor:
    """dx in threshold_backward(dy, result)'s layout; the mask follows the
    storage order of mask_strides (None: C order); result_strides: the layout of
    what nn.ReLU would have saved (None: mask_strides)."""
    _check_semantics(semantics)
    _check_threads(threads)
    torch._check(mask.dtype == torch.uint8, lambda: f"mask: dtype must be torch.uint8, got {mask.dtype}")
    dy = dy.resolve_neg()  # the kernel reads raw memory (see _relu_grad_eager)
    if mask_strides is None:
        mask_strides = _order_strides(dy.shape, None)
    if result_strides is None:
        result_strides = mask_strides
    if dy.is_contiguous() and _c_order(dy.shape, result_strides) and _c_order(dy.shape, mask_strides):
        out = torch.empty_like(dy, memory_format=torch.contiguous_format)
    else:
        out, _ = _grad_output(dy, _meta(dy, result_strides))  # a meta tensor: only its strides are read
    dy_m = _in_order(dy, mask_strides)
    target = out if _same_order(out, mask_strides) else (_empty(dy, mask_strides) if dy_m is dy else dy_m)
    config = _config(semantics, 0.0, 0.0, threads)
    with _api._DeviceScope(dy) as scope:
        _device_plan(config, _C.OP_RELU_GRAD_MASK, "dy", dy_m, scope)(_flat(dy_m), mask.contiguous(),
                                                                     _flat(target))
    return out if target is out else out.copy_(target)


@torch.library.custom_op("relugrad::relu_grad_mask", mutates_args=(), device_types=_DEVICES)
def relu_grad_mask(dy: Tensor, mask: Tensor, semantics: str = "torch", threads: int = 0,
                   dim_order: Optional[List[int]] = None) -> Tensor:
    """dx = bit ? pass(dy) : closed(dy), from relu_mask's mask; dim_order:
    y.dim_order() of relu_mask's y (None: C order)."""
    return _relu_grad_mask_eager(dy, mask, semantics, threads, _order_strides(dy.shape, dim_order))


@relu_grad_mask.register_fake
def _relu_grad_mask_fake(dy: Tensor, mask: Tensor, semantics: str = "torch", threads: int = 0,
                         dim_order: Optional[List[int]] = None) -> Tensor:
    torch._check(mask.dtype == torch.uint8, lambda: f"mask: dtype must be torch.uint8, got {mask.dtype}")
    torch._check(mask.numel() == _mask_len(dy),
                 lambda: f"mask: has {mask.numel()} bytes, dy has {dy.numel()} elements (needs ceil(n/8))")
    # A real dy with a meta mask reaches this kernel too (the Meta key wins): torch's own check of
    # one device, not a computation on the real dy.
    torch._check(mask.device == dy.device,
                 lambda: f"mask: on {mask.device}, dy on {dy.device}; all tensors of a call must be on one device")
    return torch.ops.aten.threshold_backward(dy, dy.new_empty_strided(dy.shape, _order_strides(dy.shape, dim_order)), 0.0)


@relu_grad_mask.register_vmap
def _relu_grad_mask_vmap(info, in_dims, dy, mask, semantics="torch", threads=0, dim_order=None):
    # As relu_mask's rule: one call where each sample's mask fills whole bytes, else one call
    # per sample split by unbind.
    dy = dy.movedim(in_dims[0], 0) if in_dims[0] is not None else dy.expand(info.batch_size, *dy.shape)
    mask = mask.movedim(in_dims[1], 0) if in_dims[1] is not None else mask.expand(info.batch_size, *mask.shape)
    n = dy[0].numel()
    if n % 8 == 0 and mask.dim() == 2:
        order = [0] + [d + 1 for d in (range(dy.dim() - 1) if dim_order is None else dim_order)]
        return torch.ops.relugrad.relu_grad_mask(dy, mask.reshape(-1), semantics, threads, order), 0
    dxs = [torch.ops.relugrad.relu_grad_mask(d, m, semantics, threads, dim_order)
           for d, m in zip(dy.unbind(0), mask.unbind(0))]
    return torch.stack(dxs), 0


# ---- Autograd of the ops ---------------------------------------------------------
# Each op's autograd kernel is an autograd.Function in setup_context style,
# so the ops work with torch.func (grad, vjp, jacrev, jvp, vmap: the ops'
# own vmap rules) and torch.autograd.forward_ad. Every formula is linear in
# the incoming gradient or tangent with the gate fixed by the forward, so
# backward and jvp are the same op: ReluGrad with that gate (double backward
# works, and relu's jvp is threshold_backward(tangent, y, 0), as PyTorch's).


def _below_autograd():
    return _TC._AutoDispatchBelowAutograd()


def _grad_op(dy, s, semantics, threshold, alpha, threads):
    """relugrad::relu_grad for backward formulas (torch.func nests it: _one_level)."""
    if semantics == "torch" and threshold == 0.0 and alpha == 0.0 and _compile_tracing():
        return torch.ops.aten.threshold_backward.default(dy, s, 0.0)  # the same bits; inductor fuses it
    return torch.ops.relugrad.relu_grad(dy, s, semantics, threshold, alpha, threads)


def _grad_mask_op(dy, mask, semantics, threads, dim_order):
    """relugrad::relu_grad_mask for backward formulas."""
    return torch.ops.relugrad.relu_grad_mask(dy, mask, semantics, threads, dim_order)


def _stock_tangent(t: Tensor, semantics: str, alpha: float) -> Tensor:
    """The tangent of ReluGrad in dy. PyTorch's forward derivative of threshold_backward is
    zeros + threshold_backward(tangent, self): a -0 tangent of an open element comes out +0.
    The torch preset gives those bits (t + 0.0 changes nothing else: NaN stays NaN); the other
    presets have no stock formula and give ReluGrad of the tangent itself."""
    return t + 0.0 if semantics == "torch" and alpha == 0.0 else t


class _ReluGradOp(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(dy, s, semantics, threshold, alpha, threads):
        with _below_autograd():
            return torch.ops.relugrad.relu_grad(dy, s, semantics, threshold, alpha, threads)

    @staticmethod
    def setup_context(ctx, inputs, output):
        _, s, *ctx.options = inputs
        ctx.save_for_backward(s)
        ctx.save_for_forward(s)

    @staticmethod
    def backward(ctx, grad):
        (s,) = ctx.saved_tensors
        # s moves only the gate: its derivative is zero, returned as zeros_like(grad) (stock's
        # formula for threshold_backward's self), so that a second derivative through a saved
        # output reaches x and is zero, as stock's, instead of leaving x out of the graph.
        ds = torch.zeros_like(grad) if ctx.needs_input_grad[1] else None
        return _grad_op(grad, s, *ctx.options), ds, None, None, None, None

    @staticmethod
    def jvp(ctx, t_dy, t_s, *_):
        (s,) = ctx.saved_tensors
        if t_dy is None:  # s moves the gate only: zero almost everywhere
            return torch.zeros_like(s)
        semantics, _, alpha, _ = ctx.options
        return _stock_tangent(torch.ops.relugrad.relu_grad(t_dy, s, *ctx.options), semantics, alpha)


class _ReluOp(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x, semantics, threads):
        with _below_autograd():
            return torch.ops.relugrad.relu(x, semantics, threads)

    @staticmethod
    def setup_context(ctx, inputs, output):
        # Gate on y = relu(x), as PyTorch does. For the pass_if_gt presets (TF,
        # JAX, oneDNN) gating on y equals gating on x at threshold 0: x > 0 iff
        # relu(x) > 0, a NaN x gives a NaN y (closed both ways), and a subnormal
        # x stays the same subnormal y (flushed alike under FTZ/DAZ).
        ctx.save_for_backward(output)
        ctx.save_for_forward(output)
        ctx.semantics, ctx.threads = inputs[1], inputs[2]

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return _grad_op(grad, y, ctx.semantics, 0.0, 0.0, ctx.threads), None, None

    @staticmethod
    def jvp(ctx, t, *_):
        (y,) = ctx.saved_tensors
        return torch.ops.relugrad.relu_grad(t, y, ctx.semantics, 0.0, 0.0, ctx.threads)


class _ReluMaskOp(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x, semantics, threads):
        with _below_autograd():
            return torch.ops.relugrad.relu_mask(x, semantics, threads)

    @staticmethod
    def setup_context(ctx, inputs, output):
        # The whole point: only the 1-bit mask stays alive for backward.
        y, mask = output
        ctx.mark_non_differentiable(mask)
        ctx.save_for_backward(mask)
        ctx.save_for_forward(mask)
        ctx.semantics, ctx.threads = inputs[1], inputs[2]
        ctx.order = _dim_order(y.stride())

    @staticmethod
    def backward(ctx, grad_y, grad_mask):
        (mask,) = ctx.saved_tensors
        return _grad_mask_op(grad_y, mask, ctx.semantics, ctx.threads, ctx.order), None, None

    @staticmethod
    def jvp(ctx, t, *_):
        (mask,) = ctx.saved_tensors
        return torch.ops.relugrad.relu_grad_mask(t, mask, ctx.semantics, ctx.threads, ctx.order), None


class _ReluGradMaskOp(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(dy, mask, semantics, threads, dim_order):
        with _below_autograd():
            return torch.ops.relugrad.relu_grad_mask(dy, mask, semantics, threads, dim_order)

    @staticmethod
    def setup_context(ctx, inputs, output):
        _, mask, *ctx.options = inputs
        ctx.save_for_backward(mask)
        ctx.save_for_forward(mask)

    @staticmethod
    def backward(ctx, grad):
        (mask,) = ctx.saved_tensors
        return _grad_mask_op(grad, mask, *ctx.options), None, None, None, None

    @staticmethod
    def jvp(ctx, t, *_):
        (mask,) = ctx.saved_tensors
        return _stock_tangent(torch.ops.relugrad.relu_grad_mask(t, mask, *ctx.options), ctx.options[0], 0.0)


def _one_level(function):
    """function as a _SingleLevelFunction: what an op's autograd kernel applies under torch.func.

    A direct op call under a transform reaches the op's autograd kernel through functorch's
    dynamic layer, which has already set the dispatch keys for the innermost level: there
    function.apply would hand the Function to functorch's custom_function_call, whose dispatch
    cannot start again from that point (nested transforms fail), so the kernel does what an
    ATen op's autograd kernel does instead: record one node at this level and run the op below
    autograd, where the dispatcher sends it on to the next transform (vmap rule, the next grad
    level). Grad and forward-grad modes stay on in forward, as in a C++ autograd kernel: an outer
    grad or jvp level records the inner call too (grad of grad, jvp of grad)."""
    def forward(*args):
        with torch.enable_grad(), _fwAD._set_fwd_grad_enabled(True):
            return function.forward(*args)

    methods = {name: function.__dict__[name] for name in ("setup_context", "backward", "jvp")}
    methods["forward"] = staticmethod(forward)
    return type(function.__name__ + "OneLevel", (torch.autograd.function._SingleLevelFunction,), methods)


def _register_autograd(op_def, function) -> None:
    """function becomes op_def's autograd kernel (in place of the one
    torch.library.custom_op generates, which has no jvp, is not in
    setup_context style and fails under torch.func)."""
    op = op_def._opoverload
    schema = op._schema
    one_level = _one_level(function)
    from torch._functorch.utils import enable_single_level_autograd_function

    def autograd_kernel(keyset, *args, **kwargs):
        args, _ = _fill_defaults(schema, args, kwargs)
        if not _dtensor_sharding_registered and "torch.distributed.tensor" in sys.modules:
            _register_dtensor_sharding()  # before DTensor's dispatch (below Autograd) needs it
        if (_TC.is_grad_enabled() and _TC._any_requires_grad(*args)) or _fwAD._current_level >= 0:
            if _TC._are_functorch_transforms_active():
                with enable_single_level_autograd_function():
                    return one_level.apply(*args)
            return function.apply(*args)
        with _below_autograd():
            return op.redispatch(keyset & _TC._after_autograd_keyset, *args)

    # Up to torch 2.14 custom_op registers its own Autograd kernel when the op is defined: ours
    # replaces it (allow_override; later releases register theirs only on request), and the
    # dispatcher's warning about that replacement is expected.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"(?s).*Overriding a previously registered kernel")
        try:
            op_def._lib.impl(op_def._name, autograd_kernel, "Autograd", with_keyset=True, allow_override=True)
        except TypeError as e:  # Library.impl before allow_override (torch 2.8)
            raise ImportError(f"relugrad.torch needs torch 2.8 or later (torch.library's allow_override); "
                              f"this is torch {torch.__version__}") from e


# ---- DTensor: sharding strategies of the ops -------------------------------------------
# relu and relu_grad are elementwise: any sharding of x (of dy and s alike) gives the same
# sharding of the result, and each shard computes its own elements. The mask ops pack 8
# elements per byte into a flat mask, so they run on replicated tensors. DTensor's module costs
# two seconds to import: the strategies are registered the first time an op is called after
# a program imported it (from the ops' autograd kernel, which runs before DTensor's dispatch).

_dtensor_sharding_registered = False


def _register_dtensor_sharding() -> None:
    global _dtensor_sharding_registered
    _dtensor_sharding_registered = True
    from torch.distributed.tensor import Replicate, Shard
    from torch.distributed.tensor.experimental import register_sharding

    def elementwise(n_tensors: int, n_others: int):
        def strategies(x, *args):
            same = [Replicate()] + [Shard(d) for d in range(x.ndim)]
            return [([p], [p] * n_tensors + [None] * n_others) for p in same]
        return strategies

    def replicated(n_outputs: int, n_tensors: int, n_others: int):
        def strategies(*args):
            return [([Replicate()] * n_outputs, [Replicate()] * n_tensors + [None] * n_others)]
        return strategies

    register_sharding(torch.ops.relugrad.relu.default)(elementwise(1, 2))
    register_sharding(torch.ops.relugrad.relu_grad.default)(elementwise(2, 4))
    register_sharding(torch.ops.relugrad.relu_mask.default)(replicated(2, 1, 2))
    register_sharding(torch.ops.relugrad.relu_grad_mask.default)(replicated(1, 2, 3))


_register_autograd(relu_grad, _ReluGradOp)
_register_autograd(relu, _ReluOp)
_register_autograd(relu_mask, _ReluMaskOp)
_register_autograd(relu_grad_mask, _ReluGradMaskOp)


# ---- The eager path of ReLU ---------------------------------------------------
# One eager path and one compiled path. In eager mode ReLU runs the C++
# ops of _relugrad_torch.so (torch.ops.relugrad_native, below; C++ autograd nodes):
# one dispatcher call forward, no Python in backward. Under torch.compile,
# torch.func, forward AD, dispatch modes, meta and fake tensors, and in eager
# mode where the native library did not load (said once, in a warning), ReLU
# calls the custom ops above: their fake kernels, vmap rules and jvp are what
# the transforms see, and their eager kernels read the same memory. torch's
# own ops serve only the tensors relugrad's kernels do not read (_torch_relu).
# inplace: like nn.ReLU(inplace=True), y is x overwritten (mark_dirty bumps
# x's version, so autograd rejects a later use of the old x as it does for
# torch.relu_), and the saved y is x itself: no second tensor of n elements.
# The custom ops cannot return an alias of their input, so without the native
# library in-place ReLU on plain tensors runs the two Functions below, which
# call the ops' own kernels; under compile and the transforms the ops' y is
# copied into x.


def _plain_tensor(t: Tensor) -> bool:
    """t is a torch.Tensor itself, not a subclass or torch.func's wrapper (the BatchedTensor of
    autograd.grad(..., is_grads_batched=True)): the eager Functions' backward reads its memory
    directly only then; anything else takes the custom ops, which the dispatcher routes."""
    return type(t) is Tensor and not _is_wrapped(t) and not _is_legacy_batched(t)


def _refuse_in_place_on_a_leaf(x: Tensor) -> None:
    """Stock's refusal of an in-place op on a leaf that requires grad, or a view of one (autograd's
    check_inplace), asked before the write: an autograd.Function that writes x in place is told
    only after its forward has written x."""
    if x.is_leaf:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    base = x._base
    if base is not None and base.is_leaf and base.requires_grad:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")


# An in-place write inside an autograd.Function moves x's version, and mark_dirty moves it again;
# stock's in-place ops move it once: the write runs with the counter kept.
_keep_version = torch.autograd._unsafe_preserve_version_counter


class _ReluFunction(torch.autograd.Function):
    """In-place ReLU without the native library: y is x overwritten and saved (the ops cannot
    alias their input; copying their y into x would keep a second tensor)."""
    @staticmethod
    def forward(ctx, x: Tensor, semantics: str, threads: int, inplace: bool) -> Tensor:
        if inplace:
            ctx.mark_dirty(x)
            with _keep_version(x):
                y = torch.relu_(x)
        else:
            y = torch.relu(x)
        ctx.save_for_backward(y)  # gate on y, as PyTorch does (_ReluOp)
        ctx.semantics, ctx.threads = semantics, threads
        return y

    @staticmethod
    def backward(ctx, grad: Tensor):
        (y,) = ctx.saved_tensors
        if torch.is_grad_enabled() or not _plain_tensor(grad):  # create_graph=True, or a wrapper
            return torch.ops.relugrad.relu_grad(grad, y, ctx.semantics, 0.0, 0.0, ctx.threads), None, None, None
        return _relu_grad_eager(grad, y, ctx.semantics, 0.0, 0.0, ctx.threads), None, None, None


class _ReluMaskFunction(torch.autograd.Function):
    """In-place ReLU(mask=True) without the native library: y written over x, the mask saved."""
    @staticmethod
    def forward(ctx, x: Tensor, semantics: str, threads: int, inplace: bool) -> Tensor:
        if inplace:
            ctx.mark_dirty(x)
        with _keep_version(x):
            y, mask, ctx.mask_strides = _relu_mask_eager(x, semantics, threads, inplace)
        ctx.result_strides = y.stride()  # what nn.ReLU saves: y, or x in place
        ctx.save_for_backward(mask)  # only the 1-bit mask stays alive
        ctx.semantics, ctx.threads = semantics, threads
        return y

    @staticmethod
    def backward(ctx, grad: Tensor):
        (mask,) = ctx.saved_tensors
        if torch.is_grad_enabled() or not _plain_tensor(grad):  # create_graph=True, or a wrapper
            return (torch.ops.relugrad.relu_grad_mask(grad, mask, ctx.semantics, ctx.threads,
                                                      _dim_order(ctx.mask_strides)), None, None, None)
        return (_relu_grad_mask_eager(grad, mask, ctx.semantics, ctx.threads, ctx.mask_strides, ctx.result_strides),
                None, None, None)


_is_compiling = getattr(getattr(torch, "compiler", None), "is_compiling", lambda: False)


class _ReluTorchOps(torch.autograd.Function):
    """ReLU of a preset other than torch's, from torch ops alone (_relu_grad_torch)."""
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
        return _relu_grad_torch(grad, y, ctx.semantics, 0.0, 0.0), None

    @staticmethod
    def jvp(ctx, t, _):
        (y,) = ctx.saved_tensors
        return _relu_grad_torch(t, y, ctx.semantics, 0.0, 0.0)


def _torch_relu(x: Tensor, semantics: str, inplace: bool) -> Tensor:
    """nn.ReLU's forward; its gradient is the preset's, from torch ops."""
    if semantics == "torch":
        return torch.relu_(x) if inplace else torch.relu(x)
    if x.is_nested and x.layout is torch.strided:  # autograd.Function cannot take these: per component
        y = torch.nested.as_nested_tensor([_ReluTorchOps.apply(c, semantics) for c in x.unbind()])
    else:
        y = _ReluTorchOps.apply(x, semantics)
    return x.copy_(y) if inplace else y


def _mask_y(x: Tensor, semantics: str, inplace: bool) -> Tensor:
    """relu_mask's y without the mask, for forwards autograd does not record:
    x where the gate is open or x is NaN (its bits), +0 elsewhere; for the
    torch preset x < 0 ? +0 : x (torch.relu's y, -0 kept, as the mask
    forward's; NaN bits kept where torch's 16-bit relu may change them)."""
    if semantics == "torch":
        if x.dtype in (torch.float32, torch.float64):  # torch.relu's own bits there
            return torch.relu_(x) if inplace else torch.relu(x)
        # torch.where selects bits: a NaN x keeps its payload, a -0 x its sign.
        y = torch.where(x < 0, torch.zeros_like(x), x)
        return x.copy_(y) if inplace else y
    y = torch.where(_gate_open(x, semantics, 0.0) | torch.isnan(x), x, torch.zeros_like(x))
    return x.copy_(y) if inplace else y


def _fake_tensor_type():
    from torch._subclasses.fake_tensor import FakeTensor
    return FakeTensor


_NATIVE_DTYPES = frozenset((torch.float32, torch.float16, torch.bfloat16, torch.float64))
_is_wrapped = _TC._functorch.is_functorch_wrapped_tensor
# The BatchedTensor of autograd.grad(..., is_grads_batched=True) (torch's older vmap).
_is_legacy_batched = getattr(_TC._functorch, "is_legacy_batchedtensor", lambda t: False)
_dispatch_modes = _TC._len_torch_dispatch_stack
_tracing_state = _TC._get_tracing_state
if hasattr(torch.compiler, "_is_exporting_flag"):
    def _is_exporting() -> bool:
        """torch.compiler.is_exporting() as a read of the flag it returns, which torch.export sets
        for its trace. Dynamo up to torch 2.11 folds the call itself to True in every trace,
        which would send a compiled module down its export path (no mask saving); dynamo reads
        the flag as the global it is (False under compile, True under export)."""
        return torch.compiler._is_exporting_flag
else:
    _is_exporting = torch.compiler.is_exporting
# True only while dynamo traces (it folds the call to a constant); False in eager, also inside
# torch.export's and AOTAutograd's tracers, which the native entry refuses by their tensors.
_is_dynamo_compiling = torch.compiler.is_dynamo_compiling
_grad_enabled = _TC.is_grad_enabled
_STRIDED = torch.strided


def _plain_cpu(x) -> bool:
    """The fast path's one predicate, exact about what it accepts: a torch.Tensor
    or nn.Parameter itself (no subclass: FakeTensor, DTensor, wrappers), strided
    and not nested, on the CPU (not meta), of relugrad's dtypes, not wrapped by
    torch.func, no forward-AD level and no TorchDispatchMode active, not
    being compiled: the fused modules' fast-path test (ReLU's is the native
    entry's own, PlainCpu in python/src/torch_python_module.cc)."""
    return ((type(x) is Tensor or type(x) is nn.Parameter) and not _is_compiling() and x.is_cpu
            and x.dtype in _NATIVE_DTYPES and x.layout is _STRIDED and not x.is_nested
            and _fwAD._current_level < 0 and not _is_wrapped(x) and not _dispatch_modes())


# ---- The torch-native eager path ---------------------------------------------
# relugrad._relugrad_torch (python/src/torch_native.cc) holds ReLU's forward and
# backward in C++ (autograd nodes of its own); its module function
# relu(x, semantics, threads, mask, inplace) is the forward's entry
# (docs/performance-notes.md, "Torch-native ReLU", "A Python entry for the
# eager ReLU"), and importing it registers its torch.ops.relugrad_native
# operators (ReLUDropout, LinearReLU). It is built against one torch version
# and imported only under that version; otherwise (one RuntimeWarning says
# why), or with RELUGRAD_TORCH_NATIVE=0 in the environment (no warning: asked
# for), eager ReLU runs through the custom ops.

def _load_native() -> Tuple[Optional[object], str]:
    """(the native relu(x, semantics, threads, mask, inplace) or None, and why not)."""
    if os.environ.get("RELUGRAD_TORCH_NATIVE", "1") == "0":
        return None, "disabled by RELUGRAD_TORCH_NATIVE=0"
    built_for = _api._torch_native_stamp()
    if built_for is None:
        return None, f"not built: {_api._torch_native_absence()}"
    if built_for != torch.__version__:
        return None, f"built for torch {built_for}, this is torch {torch.__version__}: rebuild relugrad"
    try:
        from . import _relugrad_torch
        torch.ops.relugrad_native.bind(_C.c_api_table())
    except (ImportError, OSError, RuntimeError) as e:
        return None, f"{_api._TORCH_NATIVE_LIB} did not load: {e}"
    return _relugrad_torch.relu, "loaded"


_native_relu, NATIVE_STATUS = _load_native()
NATIVE = _native_relu is not None
if not NATIVE and not NATIVE_STATUS.startswith("disabled"):
    warnings.warn(f"relugrad.torch: the torch-native ReLU is not loaded ({NATIVE_STATUS}); eager ReLU runs "
                  "through the custom ops torch.ops.relugrad.* instead (the same bits, more time per call)",
                  RuntimeWarning, stacklevel=2)


class ReLU(nn.ReLU):
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
        ceil(n/8) bytes instead of the n-element y. Forward y is relugrad's
        (for the torch preset torch.relu's bits, -0 and NaN kept; the other
        presets write their framework's y, +0 for x = -0);
        gradients are the same bits as mask=False. When autograd records
        nothing (no_grad, inference_mode, x needs no gradient) no mask is
        allocated or kept; y has the same bits.

    CUDA tensors with the torch preset get stock's relu and threshold_backward (mask=True
    included): on CUDA relugrad's ops were slower than stock's and kept no less memory
    (docs/cuda.md). The other presets run relugrad's CUDA kernels.
    """

    def __init__(self, semantics: str = "torch", inplace: bool = False, threads: Optional[int] = 0,
                 mask: bool = False) -> None:
        nn.Module.__init__(self)
        _check_semantics(semantics)
        self.semantics = semantics
        self.inplace = bool(inplace)
        self.threads = _check_threads(threads)
        self.mask = bool(mask)

    def forward(self, x: Tensor) -> Tensor:
        # The native entry decides in C++ whether x is its plain case (NotImplemented if not:
        # dual tensors, dispatch modes, subclasses, jit.trace). Only dynamo's tracing is asked
        # here first, so that dynamo sees the branch to the custom ops: one call, since this body
        # is part of every eager call (two more checks here cost about 1% of a 64K f32 forward +
        # backward: docs/performance-notes.md, "One check before the native entry").
        if _native_relu is not None and not _is_dynamo_compiling():
            y = _native_relu(x, self.semantics, self.threads, self.mask, self.inplace)
            if y is not NotImplemented:
                return y
        if not isinstance(x, Tensor) or _tracing_state() is not None or _is_exporting():
            return self._captured_forward(x)  # FX proxies, jit.trace, torch.export, ONNX export
        return self._forward_other(x)

    def _forward_other(self, x: Tensor) -> Tensor:
        """Every tensor but the native path's: the custom ops where torch's
        transforms must see them (compile, torch.func, forward AD, dispatch
        modes, meta and fake tensors) and for plain tensors relugrad's kernels
        read when the native library is absent; torch's own ops for the rest."""
        exact = type(x) is Tensor or type(x) is nn.Parameter
        if not (x.dtype in _NATIVE_DTYPES and x.layout is torch.strided and not x.is_nested):
            return _torch_relu(x, self.semantics, self.inplace)
        if self.semantics == "torch" and x.device.type == "cuda":
            # CUDA, torch preset: stock's relu and threshold_backward, mask or not. Measured on an
            # H200 (docs/cuda.md): relugrad's ops cost 3.6-4.7x stock's time per forward+backward
            # from 16 to 16M elements, saved no peak memory in the models measured, and the mask
            # forward's y kept -0 where CUDA's relu writes +0.
            return _torch_relu(x, self.semantics, self.inplace)
        seen_by_transforms = (_is_compiling() or isinstance(x, _fake_tensor_type())
                              or (exact and (x.is_meta or _is_wrapped(x) or _fwAD._current_level >= 0
                                             or _dispatch_modes())))
        if not seen_by_transforms:
            if not (exact and _kernels_serve(x)) or x.is_neg():  # a lazy negation: torch's ops
                return _torch_relu(x, self.semantics, self.inplace)
            if self.mask and not (x.requires_grad and _TC.is_grad_enabled()):
                return _mask_y(x, self.semantics, self.inplace)  # nothing to keep: no mask
            if self.inplace:
                if not (x.requires_grad and _TC.is_grad_enabled()):
                    return torch.relu_(x)  # nothing recorded: stock's in-place op itself
                _refuse_in_place_on_a_leaf(x)
                function = _ReluMaskFunction if self.mask else _ReluFunction
                return function.apply(x, self.semantics, self.threads, True)
        if self.inplace and self.semantics == "torch" and not self.mask and _is_compiling():
            # In place under compile, the torch preset is stock's graph (relu_, whose backward is
            # threshold_backward on y): the ops cannot alias x, and copying their y into x leaves
            # a zero gradient for the old x to be added into the compiled backward.
            return torch.relu_(x)
        if self.mask:
            y = torch.ops.relugrad.relu_mask(x, self.semantics, self.threads)[0]
        else:
            y = torch.ops.relugrad.relu(x, self.semantics, self.threads)
        return x.copy_(y) if self.inplace else y

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


# replace_relu / restore_relu and their report live in _replace.py (they need ReLU above); the
# names are served by __getattr__ at the end of this file.
from . import _replace  # noqa: E402

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


# ---- torch.compile: what inductor sees through ----------------------------------------------
# In the torch preset (threshold 0, alpha 0) ReLU's backward is exactly aten.threshold_backward(dy,
# y, 0), and relugrad::relu is aten.relu in every preset. So while a compilation traces the
# backward, the ops' autograd formulas (_grad_op) emit threshold_backward for the torch preset,
# and inductor's table decomposes relugrad::relu into aten.relu: a compiled model with relugrad is
# the graph compiled stock gives (the same fusions, the same bits). Other presets, thresholds and
# alphas, and the mask ops stay opaque custom ops. Inductor's module costs seconds to import, so
# its table is filled the first time relugrad::relu's fake kernel runs inside a compilation
# (dynamo traces the model before inductor builds its decomposition table).

def _compile_tracing() -> bool:
    """A torch.compile / export trace is running (dynamo's or AOTAutograd's)."""
    if "torch._dynamo" not in sys.modules:
        return False
    from torch._guards import TracingContext
    return TracingContext.try_get() is not None


def inductor_decompositions() -> dict:
    """{relugrad op: decomposition} that inductor applies (see above)."""
    return {torch.ops.relugrad.relu.default: _relu_decomposition}


_inductor_sees_through = False


def _let_inductor_see_through() -> None:
    global _inductor_sees_through
    if _inductor_sees_through or not _compile_tracing():
        return
    _inductor_sees_through = True
    from torch._inductor import decomposition as inductor
    # select_decomp_table() is the (cached) table compile_fx uses; `decompositions` the one it
    # starts from under config.fallback_random.
    for table in (inductor.decompositions, inductor.select_decomp_table()):
        for op, fn in inductor_decompositions().items():
            table.setdefault(op, fn)


# The two-sided gate's modules (hardtanh_backward by relugrad's upper gate bound).
from . import _hardtanh  # noqa: E402

__all__ += ["Hardtanh", "ReLU6", "hardtanh_grad"]

# Linear + ReLU with the bias gradient fused into the ReLU backward (replace_relu(fuse_linear=True)).
from . import _linear  # noqa: E402

__all__ += ["LinearReLU"]

# The names above that live in other files resolve when asked for (PEP 562), not by
# `from ._linear import LinearReLU` here: an unpickler (torch.load of a whole model) may import
# one of those files first, which imports this module while it is itself half made, and a name
# import from it would fail; its module object is enough here.
_ELSEWHERE = {name: module for module, names in (
    (_replace, ("ReplaceEntry", "ReplaceError", "ReplaceReport", "fuse_custom_config", "replace_relu",
                "restore_relu")),
    (_hardtanh, ("Hardtanh", "ReLU6", "hardtanh_grad")),
    (_linear, ("LinearReLU",))) for name in names}


def __getattr__(name: str):
    module = _ELSEWHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(module, name)


def __dir__():
    return sorted(set(globals()) | set(_ELSEWHERE))
