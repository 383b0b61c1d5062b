"""Whether a model's hook pair was left half-run: a forward pre-hook that finds the state of an
earlier call of the same model still open.

replace_relu brackets a model's forward with a pre-hook and an always-called forward hook (the
functional scope, the mask probe). nn.Module calls always-called hooks from `except Exception`,
so a forward stopped by another BaseException (KeyboardInterrupt, the usual Ctrl-C in a notebook)
never runs the second hook, and whatever the first one opened (a TorchFunctionMode, saved-tensor
hooks) would stay open for the rest of the process. The next pre-hook call can tell such a
leftover from a legitimate nesting only by looking for the earlier call itself: if no call of
the model is still running further up this thread's stack, the open state belongs to a call
that has ended. Python's frames are the one record of that; nothing in torch keeps it.
"""
from __future__ import annotations

import sys

from torch import nn

# The frame of nn.Module._call_impl is where every call of a module runs its hooks.
_CALL_IMPL = nn.Module._call_impl.__code__


def stale_call(module: nn.Module) -> bool:
    """Called from module's forward pre-hook: True when exactly one call of module is running
    in this thread (this one), so state an earlier call opened and did not close is stale.
    Where this call's own frame is not found (a compiled call path), nothing is known: False."""
    running = 0
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code is _CALL_IMPL and frame.f_locals.get("self") is module:
            running += 1
            if running > 1:
                return False
        frame = frame.f_back
    return running == 1
