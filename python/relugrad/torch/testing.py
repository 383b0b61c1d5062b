"""Test support: the hooks relugrad's own tests and benchmarks need that no other public name
gives, in one place, so that they import no private module. Deliberately public for that use
alone: the names follow the package's internals and change with them; applications should not
call them.

    native_entries()        the eager entries the modules call now, {"relu", "linear_relu",
                            "relu_dropout"} -> function or None (not loaded, or off by use_native);
                            each answers NotImplemented for a tensor it does not serve
    native_library()        the torch-native library's module (its entry functions, cuda_served())
                            or None where it did not load
    plain(t, cuda)          the native entries' plain-tensor rule, which the fused modules ask (False
                            for every tensor where the library did not load)
    kernels_serve(t)        whether relugrad's kernels (not torch's ops) serve t; warns once per
                            process for CUDA without the CUDA backend (reset_cuda_warning())
    stock_relu_grad(dy, s, semantics, threshold, alpha), stock_relu_y(x, semantics, mask)
                            the stock path's formulas in torch ops
    grad_output(dy, s), relu_output(x), dense(t), ti_strides(shape, *strides)
                            the custom ops' result layouts (TensorIterator's rule)
    is_exporting()          the export check on which the modules take their captured-graph path
"""
from __future__ import annotations

from typing import Any, Dict, Optional

from .. import _compat
from . import _kernels, _layout, _native, _stock

plain = _native.plain
kernels_serve = _kernels.kernels_serve
stock_relu_grad = _stock.relu_grad_torch
stock_relu_y = _stock.relu_y
grad_output = _layout.grad_output
relu_output = _layout.relu_output
ti_strides = _layout.ti_strides
dense = _layout.dense
is_exporting = _compat.is_exporting


def native_entries() -> Dict[str, Any]:
    """The eager entries as the modules read them at this moment (use_native changes them)."""
    return {name: getattr(_native, name) for name in _native.ENTRIES}


def native_library() -> Optional[Any]:
    """relugrad._relugrad_torch where it loaded (relugrad.torch.NATIVE), else None."""
    return _native._library


def reset_cuda_warning() -> None:
    """The next kernels_serve of a CUDA tensor without the CUDA backend warns again."""
    _kernels._warned_cuda = False
