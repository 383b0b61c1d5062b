"""Module hooks (layer 0): moving a module's hooks to its replacement, and the hook pairs
replace_relu puts on a model (the mask probe's and the functional scope's: each an object whose
bound methods are the model's forward pre-hook and always-called forward hook). Finding and
removing them is the same for both kinds."""
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


# The per-module hook and state-dict-hook dicts. restore_relu and replace_relu hand these very
# dict objects to the new module, so handles the user holds (RemovableHandle keeps a weak
# reference to the dict) still remove their hooks afterwards.
HOOK_DICTS = ("_forward_hooks", "_forward_hooks_with_kwargs", "_forward_hooks_always_called",
              "_forward_pre_hooks", "_forward_pre_hooks_with_kwargs", "_backward_hooks",
              "_backward_pre_hooks", "_state_dict_hooks", "_state_dict_pre_hooks",
              "_load_state_dict_pre_hooks", "_load_state_dict_post_hooks")


def move_hooks(old: nn.Module, new: nn.Module) -> None:
    """new takes old's hook dicts (the same objects) and training flag."""
    for attr in HOOK_DICTS + ("_is_full_backward_hook",):
        if attr in old.__dict__:
            new.__dict__[attr] = old.__dict__[attr]
    new.training = old.training
