"""The hook pairs replace_relu puts on a model, the mask probe's and the functional scope's: each
an object whose bound methods are the model's forward pre-hook and always-called forward hook.
Finding and removing them is the same for both kinds."""
from __future__ import annotations

from typing import List

from torch import nn


def owners(model: nn.Module, kind: type) -> List[object]:
    """The objects of type kind whose bound methods are model's own forward pre-hooks."""
    found = []
    for hook in model.__dict__.get("_forward_pre_hooks", {}).values():
        owner = getattr(hook, "__self__", None)
        if isinstance(owner, kind):
            found.append(owner)
    return found


def remove(model: nn.Module, kind: type) -> bool:
    """Removes model's own hooks bound to objects of type kind; whether there were any."""
    found = False
    for attr in ("_forward_pre_hooks", "_forward_hooks"):
        hooks = model.__dict__.get(attr, {})
        for key, hook in list(hooks.items()):
            if isinstance(getattr(hook, "__self__", None), kind):
                hooks.pop(key, None)
                model.__dict__.get("_forward_hooks_always_called", {}).pop(key, None)
                found = True
    return found
