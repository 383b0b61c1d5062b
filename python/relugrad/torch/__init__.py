"""PyTorch integration: torch.library custom ops, drop-in modules and model surgery.

Ops (relugrad.torch.ops; registered the torch.library way: schema, CPU and CUDA kernels, fake
kernels, vmap rules, autograd with jvp):

    torch.ops.relugrad.relu_grad(dy, s, semantics="torch", threshold=0.0, alpha=0.0, threads=0) -> Tensor
    torch.ops.relugrad.relu(x, semantics="torch", threads=0) -> Tensor   # forward = torch.relu,
                                                                          # backward = relugrad.relu_grad
    torch.ops.relugrad.relu_mask(x, semantics="torch", threads=0, storage_order=False) -> (y, mask)
    torch.ops.relugrad.relu_grad_mask(dy, mask, semantics="torch", threads=0) -> Tensor

The mask holds one bit per element of x in x's logical (row-major) order, whatever x's strides,
so relu_grad_mask(dy, relu_mask(x)[1]) is threshold_backward(dy, relu(x), 0) for any layout of x
and dy. Every result has the layout PyTorch's own op gives (channels_last stays channels_last).
threads 0 = torch's intra-op threads. relugrad.torch.relu_grad, relu, relu_mask and relu_grad_mask
call these ops with their arguments checked first (_checked_ops).

Every public entry refuses an argument of the wrong kind with a TypeError (an unknown preset name or
an out-of-range number with a ValueError) whose message starts with the argument's name, as
relugrad's NumPy API does.

Modules (relugrad.torch.modules):

    ReLU(semantics="torch", inplace=False, threads=0, mask=False)   # an nn.ReLU, relugrad's backward
    ReLUDropout(p=0.5, semantics="torch", threads=0)                # ReLU + Dropout, 2 bits kept
    LinearReLU(in_features, out_features)                           # Linear + ReLU, the bias gradient
                                                                    # summed in the ReluGrad pass
    hardtanh_grad(dy, s, min_val, max_val)                          # aten::hardtanh_backward's bits

Compiled training (relugrad.torch.compiled):

    saved_bits(enabled=True)    # booleans a compiled training graph saves (ReLU gates, dropout
                                # masks, any saved comparison) kept as bits; also a context manager

Model surgery (relugrad.torch.surgery):

    replace_relu(model, semantics="torch", threads=0, mask=False, *, functional=False, strict=False,
                 return_report=False, fuse_linear=False)
    restore_relu(model)                                             # back to stock modules, hooks kept

A ReLU call takes one of three paths (docs/torch.md, "The three paths"): native eager (the C++ entry and
autograd node of relugrad._relugrad_torch; NATIVE and NATIVE_STATUS say whether it loaded), the
custom ops above (torch.compile, export, torch.func, forward AD, dispatch modes, fake and meta
tensors, and eager mode without the native library), or stock (torch's own ops with the preset's
bits, for what the kernels cannot read). use_native(False) turns the native path off for a block.

In the torch preset the gradients equal PyTorch's own bit for bit: autograd of torch.relu calls
threshold_backward(grad, result, 0), which is the gate zero_if_le on y with select, exactly what
the preset computes.

The package is in layers, each importing only from the layers below it (import-linter checks it;
pyproject.toml): _layout, _kernels, _stock, _native and the hook helpers; ops; modules and _checked_ops;
fusion and mask_probe; surgery and testing (the hooks relugrad's own tests need, documented
there). Every private torch API they use is in relugrad._compat.
"""
from .modules import NATIVE, NATIVE_STATUS, LinearReLU, ReLU, ReLUDropout, hardtanh_grad, use_native
from .compiled import saved_bits
from .ops import decompositions, inductor_decompositions
from ._checked_ops import relu, relu_grad, relu_grad_mask, relu_mask
from .surgery import (
                      ReplaceEntry,
                      ReplaceError,
                      ReplaceReport,
                      ReplaceWarning,
                      fuse_custom_config,
                      replace_relu,
                      restore_relu,
)

__all__ = ["relu_grad", "relu", "relu_mask", "relu_grad_mask", "decompositions", "inductor_decompositions",
           "ReLU", "ReLUDropout", "LinearReLU", "hardtanh_grad", "NATIVE", "NATIVE_STATUS",
           "use_native", "replace_relu", "restore_relu", "ReplaceReport", "ReplaceEntry", "ReplaceError",
           "ReplaceWarning", "fuse_custom_config", "saved_bits"]
