"""torch.jit.script of a model replace_relu gave forward hooks of its own (the mask probe, the
functional scope).

TorchScript compiles a module's forward hooks with it, and these hooks are Python objects that
enter saved-tensor hooks or a TorchFunctionMode: they cannot be compiled, and script would fail
on such a model. They have nothing to do in a scripted model either (its relugrad ReLUs are
relugrad::relu ops, whose backward keeps y; functional relu compiles to aten's relu, stock's).
So replace_relu gives the model an instance attribute __prepare_scriptable__ (torch.jit.script
calls it, through getattr, on every module it scripts): it returns a copy of the model's module
tree without those hooks, each module a shallow copy (the same parameters, buffers and other
hooks) with a _modules dict of its own. Script compiles that copy and swaps submodules in its
_modules dicts only (relugrad ReLUs for their scriptable form): the eager model keeps its hooks
and its modules, which the probe decides. A __prepare_scriptable__ of the model's class runs on the copy.
"""
from __future__ import annotations

import weakref
from collections import OrderedDict

from torch import nn

from .. import _compat

# Set on the objects whose bound methods are replace_relu's model hooks.
MODEL_HOOKS_ATTR = "_relugrad_model_hooks"
_ATTR = "__prepare_scriptable__"


def is_ours(hook) -> bool:
    """Whether hook is a bound method of one of replace_relu's model-hook objects."""
    return getattr(getattr(hook, "__self__", None), MODEL_HOOKS_ATTR, False)


class PrepareScriptable:
    """The callable replace_relu sets as model.__prepare_scriptable__. It refers to the model
    weakly (the model holds it: a strong reference would be a cycle that keeps a deleted model's
    parameters until gc runs); a pickled or copied model gets one of its own."""

    def __init__(self, model: nn.Module) -> None:
        self._model = weakref.ref(model)

    @property
    def model(self) -> nn.Module:
        return self._model()

    def __reduce__(self):
        return PrepareScriptable, (self.model,)

    def __call__(self) -> nn.Module:
        model = self.model
        clone = _tree_copy(model, {})
        del clone.__dict__[_ATTR]
        ours = {key for key, hook in _compat.forward_pre_hooks(model).items() if is_ours(hook)}
        ours |= {key for key, hook in _compat.forward_hooks(model).items() if is_ours(hook)}
        for name in _compat.FORWARD_HOOK_DICTS:
            hooks = model.__dict__.get(name)
            if isinstance(hooks, dict):
                clone.__dict__[name] = OrderedDict((k, v) for k, v in hooks.items() if k not in ours)
        # The class's own __prepare_scriptable__ (relugrad's modules: their TorchScript twin) gets
        # the copy, whose hooks are already without ours.
        own = getattr(type(clone), _ATTR, None)
        return clone if own is None else own(clone)


def _tree_copy(m: nn.Module, memo: dict) -> nn.Module:
    """m's module tree, each module a shallow copy with a child-slot dict of its own (a module
    reached twice is one copy)."""
    clone = memo.get(id(m))
    if clone is None:
        # A plain copy of the instance's attributes: copy.copy would run the class's
        # __setstate__, and nn.TransformerDecoderLayer's adds an F.relu attribute that hides an
        # activation submodule.
        clone = memo[id(m)] = object.__new__(type(m))
        clone.__dict__.update(m.__dict__)
        _compat.set_child_slots(clone, OrderedDict(
            (name, None if child is None else _tree_copy(child, memo))
            for name, child in _compat.child_slots(m).items()))
    return clone


def install(model: nn.Module) -> None:
    """Lets torch.jit.script compile model without replace_relu's hooks (idempotent)."""
    if not isinstance(model.__dict__.get(_ATTR), PrepareScriptable):
        model.__dict__[_ATTR] = PrepareScriptable(model)


def remove(model: nn.Module) -> None:
    if isinstance(model.__dict__.get(_ATTR), PrepareScriptable):
        del model.__dict__[_ATTR]
