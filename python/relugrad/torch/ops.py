"""The torch.library custom ops of relugrad and everything torch's machinery asks of them (layer 1).

    torch.ops.relugrad.relu_grad(dy, s, semantics="torch", threshold=0.0, alpha=0.0, threads=0) -> Tensor
    torch.ops.relugrad.relu(x, semantics="torch", threads=0) -> Tensor   # forward = torch.relu,
                                                                          # backward = relugrad.relu_grad
    torch.ops.relugrad.relu_mask(x, semantics="torch", threads=0, storage_order=False) -> (y, mask)
    torch.ops.relugrad.relu_grad_mask(dy, mask, semantics="torch", threads=0, dim_order=None) -> Tensor

Registered the torch.library way: schema, CPU and CUDA kernels, fake kernels (torch.compile,
FakeTensorMode, meta tensors), vmap rules, autograd as setup_context Functions with jvp
(torch.func, forward AD), DTensor sharding, an aten decomposition and an ONNX symbolic.
Every result has the layout PyTorch's own op gives (_layout). threads 0 = torch's intra-op
threads. Nothing here routes a module's call: relugrad.torch.modules picks the path.
"""
from __future__ import annotations

import sys
import warnings
from typing import List, Optional, Sequence, Tuple

import torch
from torch import Tensor

from .. import _relugrad as _C
from .. import _compat
from .._options import PRESETS
from . import _kernels, _layout, _stock, compiled
from ._kernels import check_semantics, check_threads

# The kernels below run on both devices: the bindings pick the backend from the tensors' DLPack
# device (CPU -> CPU backend, CUDA -> CUDA backend).
_DEVICES = ("cpu", "cuda")
_PRESETS = frozenset(PRESETS)  # the library's preset names

__all__ = ["relu_grad", "relu", "relu_mask", "relu_grad_mask", "decompositions", "inductor_decompositions",
           "relu_grad_kernel", "relu_mask_kernel", "relu_grad_mask_kernel", "mask_len"]


# ---- relu_grad and relu ---------------------------------------------------------------------

def relu_grad_kernel(dy: Tensor, s: Tensor, semantics: str, threshold: float, alpha: float,
                     threads: int) -> Tensor:
    """relugrad::relu_grad's kernel."""
    code = _kernels.host_code(dy, s)
    if code is not None and semantics in _PRESETS and type(threads) is int and threads >= 0:
        # Contiguous CPU tensors of one supported dtype and shape (every eager ReLU backward):
        # the configuration's plan by address into a fresh contiguous out (empty_like: the
        # cheapest allocation with dy's options).
        plan = _kernels.config(semantics, threshold, alpha, threads).plan(_C.OP_RELU_GRAD, code)
        out = torch.empty_like(dy, memory_format=torch.contiguous_format)
        plan.run_host(dy.data_ptr(), s.data_ptr(), out.data_ptr(), dy.numel())
        return out
    check_semantics(semantics)
    check_threads(threads)
    if not (_kernels.kernels_serve(dy) and _kernels.kernels_serve(s)):
        return _stock.relu_grad_torch(dy, s, semantics, float(threshold), float(alpha))
    if dy.dtype != s.dtype:
        raise TypeError(f"s: dtype {s.dtype} does not match dy's {dy.dtype}")
    if dy.shape != s.shape:
        raise ValueError(f"s: shape {tuple(s.shape)} does not match dy's {tuple(dy.shape)}")
    if _kernels.host_dtype(dy.dtype) is None:
        raise TypeError(f"dy: dtype {dy.dtype} is not supported (float16, bfloat16, float32, float64)")
    if dy.device != s.device:
        raise ValueError(f"s: device {s.device} differs from dy's {dy.device}; "
                         "all tensors of a call must be on one device")
    # The kernels read raw memory: lazily negated tensors (is_neg(): a negative view) are negated first,
    # as the dispatcher's fallback does for torch's own ops.
    dy, s = dy.resolve_neg(), s.resolve_neg()
    config = _kernels.config(semantics, threshold, alpha, threads)
    out, flat = _layout.grad_output(dy, s)
    if not flat:
        dy, s = _layout.in_order(dy, out.stride()), _layout.in_order(s, out.stride())
    _kernels.run_relu_grad(dy, s, out, config)
    return out


@torch.library.custom_op("relugrad::relu_grad", mutates_args=(), device_types=_DEVICES)
def relu_grad(dy: Tensor, s: Tensor, semantics: str = "torch", threshold: float = 0.0,
              alpha: float = 0.0, threads: int = 0) -> Tensor:
    """ReluGrad of CPU or CUDA tensors, with threshold_backward(dy, s)'s layout;
    threads 0 = torch's intra-op thread count."""
    return relu_grad_kernel(dy, s, semantics, threshold, alpha, threads)


@relu_grad.register_fake
def _relu_grad_fake(dy: Tensor, s: Tensor, semantics: str = "torch", threshold: float = 0.0,
                    alpha: float = 0.0, threads: int = 0) -> Tensor:
    _compat.check(dy.shape == s.shape, lambda: f"s: shape {tuple(s.shape)} does not match dy's {tuple(dy.shape)}")
    _compat.check(dy.dtype == s.dtype, lambda: f"s: dtype {s.dtype} does not match dy's {dy.dtype}")
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
    check_semantics(semantics)
    return torch.relu(x)


@relu.register_fake
def _relu_fake(x: Tensor, semantics: str = "torch", threads: int = 0) -> Tensor:
    _let_inductor_see_through()
    compiled.check_backend()
    return torch.relu(x)  # its layout, from TensorIterator's meta


@relu.register_vmap
def _relu_vmap(info, in_dims, x, semantics="torch", threads=0):
    return torch.ops.relugrad.relu(x, semantics, threads), in_dims[0]



# ---- The 1-bit mask path (docs/mask.md) -------------------------------------
# relu_mask's forward writes y and a packed uint8 mask of ceil(n/8) bytes;
# autograd saves only the mask (not x, not y), and the backward reads only
# dy and the mask. In the torch preset dx equals torch.relu's autograd bit for
# bit, and y is torch.relu(x)'s bits, -0 kept (the configuration's
# keep_negative_zero, set by relugrad._options._torch_config for the torch preset).
# y has torch.relu(x)'s layout. By default the op's mask holds bit i for element i of x in its
# logical (row-major) order, whatever the strides of x and y: relu_grad_mask(dy, mask) needs
# nothing but dy and the mask, for any layout of either. Where y is not in C order the kernel runs
# over a C-ordered copy and y is copied into its layout (one more pass, for those layouts only).
# relugrad's own ReLU(mask=True), which keeps y's dim order beside the mask, asks for the mask in
# y's storage order (storage_order=True) and passes that order to relu_grad_mask (dim_order):
# no copy either way, and dx gets threshold_backward(dy, y)'s layout, as stock's.


def mask_len(x: Tensor):
    return (x.numel() + 7) // 8  # relugrad_mask_bytes; SymInt-friendly for the fake kernel


def relu_mask_kernel(x: Tensor, semantics: str, threads: int, inplace: bool = False,
                     logical_order: bool = False) -> Tuple[Tensor, Tensor, Tuple]:
    """(y, mask, the strides whose storage order the mask follows); inplace writes y over x;
    logical_order: the mask in x's logical (C) order whatever y's layout (the op's contract)."""
    check_semantics(semantics)
    check_threads(threads)
    final = None  # y's own layout where the kernel writes a C-ordered y first
    if inplace and _layout.dense(x) and not (logical_order and not _layout.c_order(x.shape, x.stride())):
        src = y = x
    else:
        y, flat = _layout.relu_output(x)
        if logical_order and not _layout.c_order(x.shape, y.stride()):
            final, y, flat = y, torch.empty_like(x, memory_format=torch.contiguous_format), False
        src = x if flat else y.copy_(x)
    mask = torch.empty((mask_len(x),), dtype=torch.uint8, device=x.device)
    config = _kernels.config(semantics, 0.0, 0.0, threads)
    with _kernels.DeviceScope(x) as scope:
        _kernels.device_plan(config, _C.OP_RELU_FORWARD_MASK, "x", x, scope)(_layout.flat(src), _layout.flat(y), mask)
    order = y.stride()
    if final is not None:
        y = final.copy_(y)
    if inplace and y is not x:
        y = x.copy_(y)
    return y, mask, order


@torch.library.custom_op("relugrad::relu_mask", mutates_args=(), device_types=_DEVICES)
def relu_mask(x: Tensor, semantics: str = "torch", threads: int = 0,
              storage_order: bool = False) -> Tuple[Tensor, Tensor]:
    """(y, mask): y = relu(x) under the preset, mask = the packed gate bits in x's logical order
    (storage_order=True: in y's storage order, read back with dim_order=y.dim_order())."""
    y, mask, _ = relu_mask_kernel(x, semantics, threads, logical_order=not storage_order)
    return y, mask


@relu_mask.register_fake
def _relu_mask_fake(x: Tensor, semantics: str = "torch", threads: int = 0,
                    storage_order: bool = False) -> Tuple[Tensor, Tensor]:
    return torch.relu(x), x.new_empty((mask_len(x),), dtype=torch.uint8)


@relu_mask.register_vmap
def _relu_mask_vmap(info, in_dims, x, semantics="torch", threads=0, storage_order=False):
    # One mask per sample, ceil(n/8) bytes each with its own padding bits, in the sample's logical
    # (or storage) order. Where a sample fills whole bytes (n % 8 == 0), the batch's mask in its
    # logical order (batch dim first) is the samples' masks one after the other: one call; in
    # storage order too where the batch dim is outermost in memory. Otherwise one call per
    # sample, split by unbind, whose backward places each sample's gradient as it is (an indexed
    # slice would add it to zeros: -0 would become +0).
    x = x.movedim(in_dims[0], 0)
    n = x[0].numel()
    batch_outermost = _layout.dense(x) and x.stride(0) == n and _layout.dense(x[0])
    if n % 8 == 0 and (not storage_order or batch_outermost):
        y, mask = torch.ops.relugrad.relu_mask(x, semantics, threads, storage_order)
        return (y, mask.view(x.shape[0], n // 8)), (0, 0)
    ys, masks = zip(*(torch.ops.relugrad.relu_mask(r, semantics, threads, storage_order) for r in x.unbind(0)))
    return (torch.stack(ys), torch.stack(masks)), (0, 0)


def relu_grad_mask_kernel(dy: Tensor, mask: Tensor, semantics: str, threads: int,
                          mask_strides: Optional[Sequence[int]] = None,
                          result_strides: Optional[Sequence[int]] = None) -> Tensor:
    """dx in threshold_backward(dy, result)'s layout; the mask follows the
    storage order of mask_strides (None: C order); result_strides: the layout of
    what nn.ReLU would have saved (None: mask_strides)."""
    check_semantics(semantics)
    check_threads(threads)
    _compat.check(mask.dtype == torch.uint8, lambda: f"mask: dtype must be torch.uint8, got {mask.dtype}")
    dy = dy.resolve_neg()  # the kernel reads raw memory (see relu_grad_kernel)
    if mask_strides is None:
        mask_strides = _layout.order_strides(dy.shape, None)
    if result_strides is None:
        result_strides = mask_strides
    if dy.is_contiguous() and _layout.c_order(dy.shape, result_strides) and _layout.c_order(dy.shape, mask_strides):
        out = torch.empty_like(dy, memory_format=torch.contiguous_format)
    else:
        out, _ = _layout.grad_output(dy, _layout.meta(dy, result_strides))  # a meta tensor: only its strides are read
    dy_m = _layout.in_order(dy, mask_strides)
    target = out if _layout.same_order(out, mask_strides) else (_layout.empty(dy, mask_strides) if dy_m is dy else dy_m)
    config = _kernels.config(semantics, 0.0, 0.0, threads)
    with _kernels.DeviceScope(dy) as scope:
        _kernels.device_plan(config, _C.OP_RELU_GRAD_MASK, "dy", dy_m, scope)(_layout.flat(dy_m), mask.contiguous(),
                                                                     _layout.flat(target))
    return out if target is out else out.copy_(target)


@torch.library.custom_op("relugrad::relu_grad_mask", mutates_args=(), device_types=_DEVICES)
def relu_grad_mask(dy: Tensor, mask: Tensor, semantics: str = "torch", threads: int = 0,
                   dim_order: Optional[List[int]] = None) -> Tensor:
    """dx = bit ? pass(dy) : closed(dy), from relu_mask's mask (x's logical order: dim_order None);
    dim_order: the dim order of a mask kept in another storage order (relugrad's own Functions)."""
    return relu_grad_mask_kernel(dy, mask, semantics, threads, _layout.order_strides(dy.shape, dim_order))


@relu_grad_mask.register_fake
def _relu_grad_mask_fake(dy: Tensor, mask: Tensor, semantics: str = "torch", threads: int = 0,
                         dim_order: Optional[List[int]] = None) -> Tensor:
    _compat.check(mask.dtype == torch.uint8, lambda: f"mask: dtype must be torch.uint8, got {mask.dtype}")
    _compat.check(mask.numel() == mask_len(dy),
                 lambda: f"mask: has {mask.numel()} bytes, dy has {dy.numel()} elements (needs ceil(n/8))")
    # A real dy with a meta mask reaches this kernel too (the Meta key wins): torch's own check of
    # one device, not a computation on the real dy.
    _compat.check(mask.device == dy.device,
                 lambda: f"mask: on {mask.device}, dy on {dy.device}; all tensors of a call must be on one device")
    s = dy.new_empty_strided(dy.shape, _layout.order_strides(dy.shape, dim_order))
    return torch.ops.aten.threshold_backward(dy, s, 0.0)


@relu_grad_mask.register_vmap
def _relu_grad_mask_vmap(info, in_dims, dy, mask, semantics="torch", threads=0, dim_order=None):
    # As relu_mask's rule: one call where each sample's mask fills whole bytes, else one call
    # per sample split by unbind.
    dy = dy.movedim(in_dims[0], 0) if in_dims[0] is not None else dy.expand(info.batch_size, *dy.shape)
    mask = mask.movedim(in_dims[1], 0) if in_dims[1] is not None else mask.expand(info.batch_size, *mask.shape)
    n = dy[0].numel()
    if n % 8 == 0 and mask.dim() == 2:
        order = None if dim_order is None else [0] + [d + 1 for d in dim_order]
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
    return _compat.below_autograd()


def _grad_op(dy, s, semantics, threshold, alpha, threads):
    """relugrad::relu_grad for backward formulas (torch.func nests it: _one_level)."""
    if semantics == "torch" and threshold == 0.0 and alpha == 0.0 and _compat.compile_tracing():
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
    def forward(x, semantics, threads, storage_order):
        with _below_autograd():
            return torch.ops.relugrad.relu_mask(x, semantics, threads, storage_order)

    @staticmethod
    def setup_context(ctx, inputs, output):
        # The whole point: only the 1-bit mask stays alive for backward.
        y, mask = output
        ctx.mark_non_differentiable(mask)
        ctx.save_for_backward(mask)
        ctx.save_for_forward(mask)
        ctx.semantics, ctx.threads = inputs[1], inputs[2]
        # The mask's order: y's storage order where asked for (dx then has stock's layout), else
        # x's logical order (None).
        ctx.order = _layout.dim_order(y.stride()) if inputs[3] else None

    @staticmethod
    def backward(ctx, grad_y, grad_mask):
        (mask,) = ctx.saved_tensors
        return _grad_mask_op(grad_y, mask, ctx.semantics, ctx.threads, ctx.order), None, None, None

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
        with torch.enable_grad(), _compat.set_fwd_grad_enabled(True):
            return function.forward(*args)

    methods = {name: function.__dict__[name] for name in ("setup_context", "backward", "jvp")}
    methods["forward"] = staticmethod(forward)
    return type(function.__name__ + "OneLevel", (_compat.SingleLevelFunction,), methods)


def _register_autograd(op_def, function) -> None:
    """function becomes op_def's autograd kernel (in place of the one
    torch.library.custom_op generates, which has no jvp, is not in
    setup_context style and fails under torch.func)."""
    op, schema, lib, name = _compat.custom_op_parts(op_def)
    one_level = _one_level(function)

    def autograd_kernel(keyset, *args, **kwargs):
        args, _ = _compat.fill_defaults(schema, args, kwargs)
        if not _dtensor_sharding_registered and "torch.distributed.tensor" in sys.modules:
            _register_dtensor_sharding()  # before DTensor's dispatch (below Autograd) needs it
        if (torch.is_grad_enabled() and _compat.any_requires_grad(*args)) or _compat.forward_ad_level() >= 0:
            if _compat.functorch_transforms_active():
                with _compat.enable_single_level_autograd_function():
                    return one_level.apply(*args)
            return function.apply(*args)
        with _below_autograd():
            return op.redispatch(keyset & _compat.after_autograd_keyset, *args)

    # Up to torch 2.14 custom_op registers its own Autograd kernel when the op is defined: ours
    # replaces it (allow_override; later releases register theirs only on request), and the
    # dispatcher's warning about that replacement is expected.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"(?s).*Overriding a previously registered kernel")
        try:
            lib.impl(name, autograd_kernel, "Autograd", with_keyset=True, allow_override=True)
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
    register_sharding(torch.ops.relugrad.relu_mask.default)(replicated(2, 1, 3))
    register_sharding(torch.ops.relugrad.relu_grad_mask.default)(replicated(1, 2, 3))


_register_autograd(relu_grad, _ReluGradOp)
_register_autograd(relu, _ReluOp)
_register_autograd(relu_mask, _ReluMaskOp)
_register_autograd(relu_grad_mask, _ReluGradMaskOp)



# ---- Graph export: aten decomposition and ONNX symbolic of relugrad::relu ------------------
# relugrad::relu's forward is torch.relu for every preset, so aten.relu is its exact
# decomposition. decompositions() is for ExportedProgram.run_decompositions; the same entry in
# torch's global aten decomposition table is what the dynamo ONNX exporter lowers ops without an ONNX function
# through (post-autograd: autograd has already recorded relugrad's backward when it applies).
# The TorchScript ONNX exporter maps the op to a standard Relu.

def _relu_decomposition(x: Tensor, semantics: str = "torch", threads: int = 0) -> Tensor:
    return torch.ops.aten.relu.default(x)


def decompositions() -> dict:
    """{relugrad op: aten decomposition}: ep.run_decompositions(table) with table =
    torch.export.default_decompositions() updated with these gives a graph of aten ops only."""
    return {torch.ops.relugrad.relu.default: _relu_decomposition}


def _register_export() -> None:
    _compat.register_aten_decomposition(torch.ops.relugrad.relu.default, _relu_decomposition)

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

def inductor_decompositions() -> dict:
    """{relugrad op: decomposition} that inductor applies (see above)."""
    return {torch.ops.relugrad.relu.default: _relu_decomposition}


_inductor_sees_through = False


def _let_inductor_see_through() -> None:
    global _inductor_sees_through
    if _inductor_sees_through or not _compat.compile_tracing():
        return
    _inductor_sees_through = True
    for table in _compat.inductor_decomposition_tables():
        for op, fn in inductor_decompositions().items():
            table.setdefault(op, fn)
