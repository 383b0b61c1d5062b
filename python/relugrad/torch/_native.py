"""The torch-native eager path: relugrad._relugrad_torch, loaded or not, and why (layer 0).

relugrad._relugrad_torch (python/src/torch_native.cc) holds ReLU's forward and backward in C++
(autograd nodes of its own); its module functions are the eager entries: relu(x, semantics,
threads, mask, inplace), linear_relu(x, weight, bias) and relu_dropout(x, p). Each answers
NotImplemented for a tensor it does not serve (the C++ PlainCpu test decides; Python does not
repeat it, and asks that same test, plain(x, cuda), where it must know before a call). Importing
the library registers its torch.ops.relugrad_native operators. It is built against one torch
version and imported only under that version; otherwise (one RuntimeWarning
says why), or with RELUGRAD_TORCH_NATIVE=0 in the environment (no warning: asked for), eager
calls take the custom ops (relugrad.torch.ops) instead: the same bits, more time per call.

use_native(False) turns the entries off for a block (tests and benchmarks compare the paths).
"""
from __future__ import annotations

import contextlib
import os
import warnings
from typing import ContextManager, Iterable, Iterator, Optional, Tuple

import torch

from .. import _relugrad as _C
from .._info import _TORCH_NATIVE_LIB, _torch_native_absence, _torch_native_stamp


def _load() -> Tuple[Optional[object], str]:
    """(the library's module or None, and why not)."""
    if os.environ.get("RELUGRAD_TORCH_NATIVE", "1") == "0":
        return None, "disabled by RELUGRAD_TORCH_NATIVE=0"
    built_for = _torch_native_stamp()
    if built_for is None:
        return None, f"not built: {_torch_native_absence()}"
    if built_for != torch.__version__:
        return None, f"built for torch {built_for}, this is torch {torch.__version__}: rebuild relugrad"
    try:
        from .. import _relugrad_torch
        torch.ops.relugrad_native.bind(_C.c_api_table())
    except (ImportError, OSError, RuntimeError) as e:
        return None, f"{_TORCH_NATIVE_LIB} did not load: {e}"
    return _relugrad_torch, "loaded"


_library, STATUS = _load()
LOADED = _library is not None
if not LOADED and not STATUS.startswith("disabled"):
    warnings.warn(f"relugrad.torch: the torch-native ReLU is not loaded ({STATUS}); eager ReLU runs "
                  "through the custom ops torch.ops.relugrad.* instead (the same bits, more time per call)",
                  RuntimeWarning, stacklevel=2)

# The entries the modules call (None: not loaded, or turned off by use_native(False)).
relu = _library.relu if LOADED else None
linear_relu = _library.linear_relu if LOADED else None
relu_dropout = _library.relu_dropout if LOADED else None


ENTRIES = ("relu", "linear_relu", "relu_dropout")


def _no_library(x: object, cuda: bool) -> bool:
    return False


# plain(x, cuda) -> bool: the entries' own plain-tensor rule (PlainCpu, with cuda PlainCuda too:
# python/src/torch_python_module.cc), which the fused modules ask before their own checks. A rule,
# not an entry: use_native leaves it on. Where the library did not load, no tensor is plain:
# the fused passes are the library's, and the two modules run instead.
plain = _library.plain if LOADED else _no_library


def use_native(enabled: bool, entries: Iterable[str] = ENTRIES) -> ContextManager[None]:
    """Within the block, the named eager entries ("relu": ReLU, "linear_relu": LinearReLU,
    "relu_dropout": ReLUDropout; default all) are the torch-native ones (enabled=True, where they
    loaded) or not (False: ReLU takes the custom ops, the fused modules their unfused or composed
    path, as without the library). Process-wide, not per thread: for tests and benchmarks that
    compare the paths. The arguments are checked when it is called, before the block."""
    if type(enabled) is not bool:
        raise TypeError(f"enabled: expected a bool, got {type(enabled).__name__}")
    if isinstance(entries, str) or not isinstance(entries, Iterable):
        raise TypeError(f"entries: expected an iterable of entry names {ENTRIES}, got {type(entries).__name__}")
    names = tuple(entries)
    unknown = [n for n in names if n not in ENTRIES]
    if unknown:
        raise ValueError(f"entries: {unknown} not among {ENTRIES}")
    return _entries_set(enabled, names)


@contextlib.contextmanager
def _entries_set(enabled: bool, names: Tuple[str, ...]) -> Iterator[None]:
    module = globals()
    saved = {n: module[n] for n in ENTRIES}
    for n in names:
        module[n] = getattr(_library, n) if enabled and LOADED else (saved[n] if enabled else None)
    try:
        yield
    finally:
        module.update(saved)
