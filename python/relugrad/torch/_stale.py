"""Whether a model's hook pair was left half-run: a forward pre-hook that finds the state of an
earlier call of the same model still open.

replace_relu brackets a model's forward with a pre-hook and an always-called forward hook (the
functional scope, the mask probe). nn.Module calls always-called hooks from `except Exception`,
so a forward stopped by another BaseException (KeyboardInterrupt, the usual Ctrl-C in a notebook)
never runs the second hook, and whatever the first one opened (a TorchFunctionMode, saved-tensor
hooks) would stay open for the rest of the process. The next pre-hook call can tell such a
leftover from a legitimate nesting only by looking for the earlier call itself: if no call of
the model is still running further up this thread's stack, the open state belongs to a call
that has ended. Python's frames are the one record of that; nothing in torch keeps it. The
leftover is then taken off its stack wherever it lies (remove_function_mode,
remove_saved_tensors_hooks): under a nested model's, or the caller's own hooks, it is not on top.
"""
from __future__ import annotations

import sys

from torch import nn

from .. import _compat

# The frame of nn.Module._call_impl is where every call of a module runs its hooks.
_CALL_IMPL = _compat.MODULE_CALL_CODE


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


def remove_function_mode(mode) -> bool:
    """Takes `mode` off this thread's TorchFunctionMode stack wherever it is (a stale mode may lie
    under a live one: a nested model's, or another stale one), leaving the others in their order.
    torch pops only the top, so the modes above it come off and go back on. False if absent."""
    depth = _compat.function_mode_depth()
    for i in range(depth - 1, -1, -1):
        if _compat.function_mode_at(i) is mode:
            above = [_compat.pop_function_mode() for _ in range(depth - 1 - i)]
            _compat.pop_function_mode()  # mode itself
            for m in reversed(above):
                _compat.push_function_mode(m)
            return True
    return False


def remove_saved_tensors_hooks(pack) -> bool:
    """Takes the saved-tensor hooks whose pack is `pack` off this thread's stack wherever they
    are, as remove_function_mode does for a mode. False if absent (the stack is left as it was)."""
    if _compat.top_saved_tensors_hooks is None:
        return False
    above = []
    found = False
    while True:
        top = _compat.top_saved_tensors_hooks(False)
        if top is None:
            break
        _compat.pop_saved_tensors_hooks()
        if top[0] is pack:
            found = True
            break
        above.append(top)
    for hooks in reversed(above):
        _compat.push_saved_tensors_hooks(*hooks)
    return found
