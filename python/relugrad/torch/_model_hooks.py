"""Module hooks (layer 0): moving a module's hooks to its replacement, and the hook pairs
replace_relu puts on a model (the mask probe's and the functional scope's: each an object whose
bound methods are the model's forward pre-hook and always-called forward hook). Finding and
removing them is the same for both kinds."""
from __future__ import annotations

from typing import List

from torch import nn

from .. import _compat


def owners(model: nn.Module, kind: type) -> List[object]:
    """The objects of type kind whose bound methods are model's own forward pre-hooks."""
    found = []
    for hook in model.__dict__.get(_compat.PRE_HOOKS, {}).values():
        owner = getattr(hook, "__self__", None)
        if isinstance(owner, kind):
            found.append(owner)
    return found


def remove(model: nn.Module, kind: type) -> bool:
    """Removes model's own hooks bound to objects of type kind; whether there were any."""
    found = False
    for attr in (_compat.PRE_HOOKS, _compat.POST_HOOKS):
        hooks = model.__dict__.get(attr, {})
        for key, hook in list(hooks.items()):
            if isinstance(getattr(hook, "__self__", None), kind):
                hooks.pop(key, None)
                model.__dict__.get(_compat.ALWAYS_CALLED, {}).pop(key, None)
                found = True
    return found


def move_hooks(old: nn.Module, new: nn.Module) -> None:
    """new takes old's hook dicts (the same objects, so the handles a user holds still remove
    their hooks: RemovableHandle keeps a weak reference to the dict) and training flag."""
    for attr in _compat.MODULE_HOOK_STATE:
        if attr in old.__dict__:
            new.__dict__[attr] = old.__dict__[attr]
    new.training = old.training
