"""Fused pairs run by their parent, the modules left as they are.

replace_relu(mask=True) runs a relugrad ReLU followed by an nn.Dropout as one pass that keeps two
bit planes for backward (modules.ReLUDropout), and replace_relu(fuse_linear=True) an nn.Linear followed
by a relugrad ReLU as one pass that sums the bias gradient in the ReLU backward (modules.LinearReLU).
Neither module is replaced: the nn.Dropout and the nn.Linear stay the same objects in the same
places (their parameters, buffers, attributes, hooks and state_dict as they were), and so do the
ReLUs replace_relu made. Only the parent that calls the two in a row changes class, to one whose
forward calls them as stock's does but runs a pair fused where that computes exactly what the two
calls compute: an nn.Sequential (exact type) becomes FusingSequential, and an
nn.TransformerEncoderLayer / DecoderLayer (exact types) one whose _ff_block is stock's with the
pair fused. restore_relu gives the parent its class back.

The decision is made at each call from the modules as they are then, so a model edited after
replace_relu (a slice, an inserted or replaced child, a changed dropout p, a dropout set back to
training for Monte-Carlo sampling, hooks registered later, a quantized or parametrized Linear)
computes what the stock model computes. A pair runs fused only when
  - the input is a tensor outside tracing (torch.compile, torch.export, torch.jit.trace, FX) and
    no TorchFunctionMode but replace_relu's own scope is active: they see the two calls;
  - no module hook could see the tensor between the two (none on either module, no global module
    hook) and neither module has a forward of its own set on the instance or a compiled call
    (Module.compile());
  - the modules are of the exact types (an nn.Linear, a relugrad ReLU, an nn.Dropout) and the
    fused pass serves the call (training with grad, dtype, layout: modules.fused_linear_relu,
    modules.fused_relu_dropout);
  - for ReLU + Dropout: the dropout is not in place (stock's backward then refuses the modified
    y), and an in-place ReLU follows a module of its own output (a Linear, convolution or
    normalization layer without hooks), so no other code holds the tensor it would have written.
Everything else calls the modules one by one, as stock does.
"""
from __future__ import annotations

from typing import List, Optional

import torch
from torch import Tensor, nn

from .. import _compat
from . import _kernels, _script, modules

__all__ = ["FusingSequential", "FusingTransformerEncoderLayer", "FusingTransformerDecoderLayer", "install",
           "remove", "fused_pairs"]

LINEAR = "linear"  # nn.Linear + ReLU (replace_relu(fuse_linear=True))
DROPOUT = "dropout"  # ReLU + nn.Dropout (replace_relu(mask=True))
# The instance attribute naming the kinds of pair a fusing parent runs fused.
_KINDS_ATTR = "relugrad_fused_pairs"

# Modules whose output is a tensor of their own that they do not keep: an in-place ReLU after
# one of them writes memory no other code can see.
_OWN_OUTPUT = (nn.Linear, nn.Conv1d, nn.Conv2d, nn.Conv3d, nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d,
               nn.LayerNorm, nn.GroupNorm)


def _called_as_stock(m: nn.Module) -> bool:
    """Calling m is calling its class's forward and nothing else: no hooks but the mask probe's
    (which only watch the ReLU's output: a fused ReLU has none, and the probe counts it as not
    run), no instance forward, no call of its own from Module.compile()."""
    d = m.__dict__
    if "forward" in d or d.get(_compat.COMPILED_CALL_ATTR) is not None:
        return False
    for h in _compat.CALL_HOOK_DICTS:
        hooks = d.get(h)
        if hooks and not all(_script.is_ours(f) for f in hooks.values()):
            return False
    return True


def _global_hooks() -> bool:
    return any(_compat.global_module_hooks())


def _eager_tensor(x) -> bool:
    return isinstance(x, Tensor) and not _kernels.is_compiling() and not torch.jit.is_tracing()


# Set on the class of replace_relu's own functional scope mode, which the pairs may run under.
SCOPE_MODE_ATTR = "_relugrad_scope_mode"


def _function_modes_see_calls() -> bool:
    """Whether a TorchFunctionMode other than replace_relu's own scope is active: it must see
    F.linear / F.dropout as stock calls them."""
    if not _compat.function_mode_enabled():
        return False
    if _compat.current_function_modes is None:
        return True
    return not all(getattr(m, SCOPE_MODE_ATTR, False) for m in _compat.current_function_modes())


def _calls_unseen(first: nn.Module, second: nn.Module, x) -> bool:
    """Nothing could see the two calls or the tensor between them: an eager tensor, both modules
    called as stock, no global module hook, no TorchFunctionMode but replace_relu's own."""
    return (_eager_tensor(x) and _called_as_stock(first) and _called_as_stock(second) and not _global_hooks()
            and not _function_modes_see_calls())


def pair_output(kinds, first: nn.Module, second: nn.Module, x, before: Optional[nn.Module]) -> Optional[Tensor]:
    """second(first(x)) by one fused pass where that is exactly what the two calls compute (the
    module docstring's rules); None where the two must be called. before: the module whose
    output x is, or None. The cheapest tests come first: most pairs are not candidates."""
    if type(second) is nn.Dropout:
        if (DROPOUT not in kinds or not second.training or second.inplace or not isinstance(first, modules.ReLU)
                or not modules.native_dropout_may_serve(x, first.semantics, first.threads)
                or (first.inplace and not (type(before) in _OWN_OUTPUT and _called_as_stock(before)))):
            return None  # (a parent fuses by the C++ pass only, asked first: it is cheap)
        if not _calls_unseen(first, second, x) or type(second.p) is not float:
            return None  # F.dropout converts another p (a tensor, a NumPy scalar) in C++, its own way
        return modules.fused_relu_dropout(x, second.p, second.training, first.semantics, first.threads,
                                           composed=False)
    if type(first) is nn.Linear:
        if (LINEAR not in kinds or not first.training or not isinstance(second, modules.ReLU)
                or second.semantics != "torch" or second.mask or torch.is_autocast_enabled("cpu")):
            return None  # (autocast, which the fused pass never serves, is asked first: it is cheap)
        if not _calls_unseen(first, second, x):
            return None
        return modules.fused_linear_relu(first, x)
    return None


class _StockName:
    """A fusing parent prints as its stock class does: the repr of a model (and what a tool
    logs from it) is stock's; type(m).__name__ still tells the fusing class."""

    def _get_name(self) -> str:
        return _BASE_OF[type(self)].__name__


class FusingSequential(_StockName, nn.Sequential):
    """An nn.Sequential whose forward runs the pairs of adjacent children named in its
    relugrad_fused_pairs as one fused pass where they qualify at that call (module docstring),
    and calls every other child as nn.Sequential does."""

    def forward(self, input):
        if torch.jit.is_scripting():
            for module in self:
                input = module(input)
            return input
        return self._fusing_forward(input)

    @torch.jit.unused
    def _fusing_forward(self, input):
        kinds = self.__dict__.get(_KINDS_ATTR, ())
        if not (kinds and torch.is_grad_enabled()) or torch.compiler.is_dynamo_compiling():
            # Every fused pass records a backward: without grad (inference) nothing can fuse,
            # and the loop is stock's at stock's cost. Nor under dynamo, where the fused passes
            # (eager C++ nodes) never serve: dynamo traces stock's loop, not the pair tests.
            for module in self:
                input = module(input)
            return input
        modules: List[nn.Module] = list(self)
        i, n = 0, len(modules)
        while i < n:
            first = modules[i]
            # pair_output's first tests inlined (it asks the rest, the input's kind included): a
            # pair can only fuse where its dropout or Linear trains, so an eval step with grad
            # calls the children with no more tests than this one per child.
            if i + 1 < n and ((type(first) is nn.Linear and first.training)
                              or (type(modules[i + 1]) is nn.Dropout and modules[i + 1].training)):
                out = pair_output(kinds, first, modules[i + 1], input, modules[i - 1] if i else None)
                if out is not None:
                    input = out
                    i += 2
                    continue
            input = first(input)
            i += 1
        return input


class _FusingFeedForward(_StockName):
    """The transformer layers' feed-forward block, stock's, with activation + dropout fused."""

    def __setstate__(self, state) -> None:
        # nn.TransformerDecoderLayer.__setstate__ puts F.relu in __dict__ when the state has no
        # plain `activation` attribute, which would hide the activation submodule (a ReLU here).
        nn.Module.__setstate__(self, state)
        if "activation" not in self.__dict__ and "activation" not in _compat.child_slots(self):
            self.activation = torch.nn.functional.relu

    @torch.jit.unused
    def _feed_forward_pair(self, x: Tensor) -> Tensor:
        """activation, then dropout, of linear1(x): fused where the pair qualifies (eager only)."""
        h = self.linear1(x)
        if torch.compiler.is_dynamo_compiling():  # eager C++ passes only: dynamo traces stock's calls
            return self.dropout(self.activation(h))
        out = pair_output(self.__dict__.get(_KINDS_ATTR, ()), self.activation, self.dropout, h, self.linear1)
        return self.dropout(self.activation(h)) if out is None else out


class FusingTransformerEncoderLayer(_FusingFeedForward, nn.TransformerEncoderLayer):
    def _ff_block(self, x: Tensor) -> Tensor:
        if torch.jit.is_scripting():
            return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))
        return self.dropout2(self.linear2(self._feed_forward_pair(x)))


class FusingTransformerDecoderLayer(_FusingFeedForward, nn.TransformerDecoderLayer):
    def _ff_block(self, x: Tensor) -> Tensor:
        if torch.jit.is_scripting():
            return self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(x)))))
        return self.dropout3(self.linear2(self._feed_forward_pair(x)))


# stock class -> its fusing class, and back
_FUSING_OF = {nn.Sequential: FusingSequential, nn.TransformerEncoderLayer: FusingTransformerEncoderLayer,
              nn.TransformerDecoderLayer: FusingTransformerDecoderLayer}
_BASE_OF = {v: k for k, v in _FUSING_OF.items()}


def _rebuild(base: type) -> nn.Module:
    """An empty fusing module of base's fusing class: pickle and deepcopy make it first, then set
    its state (so state that refers back to the module resolves to it, as for any module)."""
    module = base.__new__(base)
    module.__class__ = _FUSING_OF[base]
    return module


def _reduce_ex(self, protocol):
    return _rebuild, (_BASE_OF[type(self)],), self.__dict__


# The transformer layers' fusing classes say they are torch.nn's: torch.fx and quantization's
# tracers keep a torch.nn module as one call (a leaf) and trace into any other, whose forward
# (the fast path's checks) they cannot trace; stock's layer is a leaf, so the fusing one must be.
# Pickle and deepcopy then find them through _rebuild, not by that module path. (A Sequential is
# never a leaf: FusingSequential keeps its own path.)
for _cls in (FusingTransformerEncoderLayer, FusingTransformerDecoderLayer):
    _cls.__module__ = nn.TransformerEncoderLayer.__module__
    _cls.__reduce_ex__ = _reduce_ex


def _candidate_pairs(m: nn.Module, kind: str, ours: set):
    """[(first name, second name)] of m's children that kind fuses, the ReLU one replace_relu made."""
    base = _BASE_OF.get(type(m), type(m))
    if base is nn.Sequential:
        keys = list(_compat.child_slots(m))
        pairs = list(zip(keys, keys[1:]))
    elif base in (nn.TransformerEncoderLayer, nn.TransformerDecoderLayer) and kind == DROPOUT:
        pairs = [("activation", "dropout")]
    else:
        return []
    found = []
    children = _compat.child_slots(m)
    for a, b in pairs:
        first, second = children.get(a), children.get(b)
        if (kind == LINEAR and type(first) is nn.Linear and id(second) in ours and isinstance(second, modules.ReLU)
                and second.semantics == "torch"):
            found.append((a, b))
        elif kind == DROPOUT and id(first) in ours and isinstance(first, modules.ReLU) and type(second) is nn.Dropout:
            found.append((a, b))
    return found


def install(model: nn.Module, kind: str, ours: set) -> dict:
    """Makes each exact nn.Sequential / transformer layer of model with a pair of kind (its ReLU
    one of ours, the ids replace_relu just made) run that pair fused; returns {id(ReLU): (parent
    name, first name, second name)} of the pairs found."""
    found = {}
    for name, m in model.named_modules():
        if type(m) not in _FUSING_OF and type(m) not in _BASE_OF:
            continue
        pairs = _candidate_pairs(m, kind, ours)
        if not pairs:
            continue
        m.__class__ = _FUSING_OF.get(type(m), type(m))
        m.__dict__[_KINDS_ATTR] = tuple(sorted(set(m.__dict__.get(_KINDS_ATTR, ())) | {kind}))
        for a, b in pairs:
            relu = _compat.child_slots(m)[b if kind == LINEAR else a]
            found[id(relu)] = (name, a, b)
    return found


def remove(model: nn.Module) -> List[str]:
    """Gives every fusing parent in model its stock class back; returns their names."""
    names = []
    for name, m in model.named_modules():
        base = _BASE_OF.get(type(m))
        if base is not None:
            m.__class__ = base
            m.__dict__.pop(_KINDS_ATTR, None)
            names.append(name)
    return names


def fused_pairs(model: nn.Module) -> List[str]:
    """'parent.first + parent.second' of each pair model's fusing parents may run fused."""
    out = []
    for name, m in model.named_modules():
        for kind in m.__dict__.get(_KINDS_ATTR, ()):
            for a, b in _candidate_pairs(m, kind, {id(c) for c in m.children()}):
                prefix = f"{name}." if name else ""
                out.append(f"{prefix}{a} + {prefix}{b}")
    return out
