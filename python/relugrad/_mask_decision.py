"""Per-ReLU mask decision: replace_relu(mask=True) keeps the 1-bit mask only where it saves memory.

A ReLU's 1-bit mask replaces its saved output y only if nothing else keeps y: where the consumer
saves its input for its own backward (Linear, conv, batch norm, max pooling, a square...), y
stays alive anyway and the mask is ceil(n/8) bytes on top. Which consumers save their input is
read from what the autograd graph actually saves, not from a list of module types: the first
forward of the model that autograd records (grad enabled) is a probe. In it every undecided
ReLU runs without the mask (so the probe step keeps what stock keeps), torch's
saved_tensors_hooks record the storage of every tensor saved outside the ReLUs' own forwards,
and a ReLU whose outputs (each call's, for a module called more than once) share none of those
storages gets mask=True; the others keep mask=False. A ReLU the probe did not run stays at
mask=False (stock's memory). The hooks are removed after the probe; later steps pay nothing.

The decision is per training flag of the model: a module's forward may differ between train and
eval (dropout is the identity in eval, so a consumer after it saves y), so the first recorded
forward in each mode probes for that mode, and switching modes switches the ReLUs to that mode's
decision. A forward that raises decides nothing (the next one probes again). A stale probe, whose
forward was stopped by a BaseException that is not an Exception (KeyboardInterrupt: nn.Module
calls no forward hook then), is torn down by the next forward of the model (_stale.py).

A ReLU call whose saves the probe cannot see keeps y too: one under no_grad (a reentrant
checkpoint's first pass), one where other saved-tensor hooks are on top of the probe's (a
non-reentrant checkpoint or offloading region inside the model), and every call when the model's
forward itself runs inside torch.utils.checkpoint. Checkpointed code runs again in the backward,
and the recomputation must save what the first pass saved (non-reentrant checkpoint checks it and
raises otherwise); a ReLU whose consumer is recomputed would keep its mask on top of the y the
consumer saves then.
"""
from __future__ import annotations

import sys
import threading
from typing import Dict, List, Optional, Tuple

import torch
import torch.utils._pytree
from torch import Tensor, nn
from torch.nn.modules import module as _module_globals

from . import _model_hooks, _stale

__all__ = ["MaskProbe", "decisions", "DECIDED_ATTR"]

# Set on each ReLU the probe decided: why it keeps y or only the mask.
DECIDED_ATTR = "_relugrad_mask_decision"


def _storage_ptr(t) -> int:
    """The address of t's storage, or 0 where it has none to read (nested, fake, meta...)."""
    try:
        if not isinstance(t, Tensor) or t.is_nested or t.layout is not torch.strided or t.is_meta:
            return 0
        return t.untyped_storage().data_ptr()
    except (RuntimeError, NotImplementedError):
        return 0


_compiling = torch.compiler.is_compiling

# The saved-tensor hooks active now ((pack, unpack) or None) and whether hooks may be entered:
# torch's own accessors, private, so each has a fallback (without the first, hooks active during
# the probe step do not see that step's saved tensors).
_top_hooks = getattr(torch._C._autograd, "_top_saved_tensors_default_hooks", None)
_hooks_enabled = getattr(torch._C._autograd, "_saved_tensors_hooks_is_enabled", lambda: True)


class MaskProbe:
    """Forward pre-hook and always-called forward hook on the model (one object, both roles)."""

    _relugrad_model_hooks = True  # torch.jit.script compiles the model without them (_script.py)

    def __init__(self, relus: List[nn.Module]) -> None:
        self.relus = list(relus)
        for r in self.relus:
            r.mask = False  # until decided: what stock keeps
        # training flag -> each ReLU's (mask, why), in self.relus' order
        self.decided: Dict[bool, List[Tuple[bool, str]]] = {}
        self._applied: Optional[bool] = None  # the flag whose decision the ReLUs hold
        self._training = True  # the flag the probe step running now decides
        self._thread: Optional[int] = None  # the thread it runs in
        self._depth = 0  # calls of the model inside that step, not yet returned
        self._active = False
        self._inside = 0
        self._saved: set = set()
        self._outputs: Dict[int, List[int]] = {}
        self._unseen: Dict[int, str] = {}  # id(ReLU) -> why the probe could not see its consumer
        self._with_grad: set = set()  # id(ReLU) with an output that needed a gradient in the probe step
        self._handles: list = []
        self._hooks = None
        self._pack = None
        self._checkpointed = False

    @property
    def done(self) -> bool:
        """Whether some mode has been decided."""
        return bool(self.decided)

    def _apply(self, training: bool) -> None:
        for r, (mask, why) in zip(self.relus, self.decided[training]):
            r.mask = mask
            setattr(r, DECIDED_ATTR, why)
        self._applied = training

    # ---- the model's hooks
    def enter(self, module, args) -> None:
        if self._active and self._thread == threading.get_ident():
            if not _stale.stale_call(module):
                self._depth += 1  # the model called inside its own probe step: part of it
                return
            self._abandon()
        training = bool(module.training)
        if training in self.decided:
            if self._applied is not training:
                self._apply(training)
            return
        if self._active or not torch.is_grad_enabled():
            return
        if self._applied is not None:  # the other mode's decision: this one keeps y until probed
            for r in self.relus:
                r.mask = False
            self._applied = None
        if _compiling():
            # torch.compile's and torch.export's traces run the forward on fake tensors, whose
            # saves the probe cannot read, and the probe's per-ReLU hooks would split dynamo's
            # graph at every ReLU, for good (it does not guard on hooks): the probe waits for an
            # eager step, and until then every ReLU keeps y (compiled stock's graph and memory).
            # (Asked before anything dynamo cannot trace, such as the hooks query below.)
            return
        if not _hooks_enabled():
            return
        self._training = training
        self._thread = threading.get_ident()
        self._depth = 0
        self._active = True
        self._saved.clear()
        self._outputs = {id(r): [] for r in self.relus}
        self._unseen = {}
        self._with_grad = set()
        for r in self.relus:
            self._handles.append(r.register_forward_pre_hook(self._relu_enter, prepend=True))
            self._handles.append(r.register_forward_hook(self._relu_exit, always_call=True))
        # Hooks already active (offloading, checkpointing, a user's counter) go on serving: the
        # probe's pack records, then hands the tensor to them, and its unpack to theirs.
        outer = _top_hooks(False) if _top_hooks is not None else None
        outer_pack, outer_unpack = outer if outer else (None, None)
        self._checkpointed = _is_checkpoint_hook(outer_pack)

        def pack(t):
            self._record(t)
            if outer_pack is not None:
                return outer_pack(t)
            # Detached: a saved output handed back as itself would hold its own node (through
            # grad_fn) from inside that node, a cycle through C++ that gc cannot see, and a graph
            # dropped without a backward would never be freed. Autograd gives the unpacked tensor
            # its history back, as for any saved-tensor hook. The version is kept with it: autograd
            # checks no version of a hooked save, and the probe step must raise where stock does.
            return _Saved(t.detach(), t._version)

        def unpack(x):
            if outer_unpack is not None:
                return outer_unpack(x)
            x.check_version()
            return x.tensor

        self._pack = pack
        self._hooks = torch.autograd.graph.saved_tensors_hooks(pack, unpack)
        self._hooks.__enter__()

    def _end_probe(self) -> None:
        """Removes the probe step's hooks: its saved-tensor hooks from wherever they lie on the
        stack (a stale probe's may be under the caller's own hooks or a nested model's)."""
        if _top_hooks is None:  # no way to look at the stack: the probe's are on top
            self._hooks.__exit__(None, None, None)
        else:
            _stale.remove_saved_tensors_hooks(self._pack)
        self._hooks = None
        self._pack = None
        for h in self._handles:
            h.remove()
        self._handles.clear()
        self._active = False
        self._inside = 0

    def _abandon(self) -> None:
        """Ends a probe step without deciding: its forward raised or never finished."""
        self._end_probe()
        self._saved.clear()
        self._outputs = {}
        self._unseen = {}
        self._with_grad = set()

    def exit(self, module, args, output) -> None:
        # Only the probing thread's own step ends it: a call of the model from another thread
        # meanwhile neither probed nor ends the probe, nor does a call nested in the step.
        if not self._active or self._thread != threading.get_ident():
            return
        if self._depth:
            self._depth -= 1
            return
        if output is None and sys.exc_info()[1] is not None:
            # nn.Module calls this always-called hook from its `except Exception` block, with no
            # output: the forward raised, and what it saved so far does not decide anything.
            self._abandon()
            return
        self._end_probe()
        # What the model returns may be kept by the loss, which runs after the probe: a ReLU
        # whose output is returned keeps y.
        for t in torch.utils._pytree.tree_leaves(output):
            p = _storage_ptr(t)
            if p:
                self._saved.add(p)
        decided = []
        for r in self.relus:
            outs = self._outputs.get(id(r), [])
            unseen = self._unseen.get(id(r))
            if not outs:
                decided.append((False, "not run in the probe step: keeps y"))
            elif unseen is not None:
                decided.append((False, f"{unseen}: keeps y"))
            elif id(r) not in self._with_grad:
                # Its consumer saved nothing for a gradient that no step asked for (a frozen
                # layer): the step says nothing of what it saves once the layer trains.
                decided.append((False, "its output needed no gradient in the probe step: keeps y"))
            elif _forward_hooked(r):
                decided.append((False, "a forward hook sees its output (and may keep it): keeps y"))
            elif any(p in self._saved for p in outs):
                decided.append((False, "y is saved by its consumer: keeps y"))
            else:
                decided.append((True, "y is saved by nothing else: keeps the 1-bit mask"))
        self.decided[self._training] = decided
        self._apply(self._training)
        self._saved.clear()
        self._outputs = {}
        self._unseen = {}
        self._with_grad = set()

    # ---- inside the probe
    def _record(self, t) -> None:
        if not self._inside:
            p = _storage_ptr(t)
            if p:
                self._saved.add(p)

    def _relu_enter(self, module, args) -> None:
        if self._thread != threading.get_ident():
            return  # another thread's call of the model: not the probe step's
        self._inside += 1
        if id(module) in self._unseen:
            return
        if self._checkpointed:
            self._unseen[id(module)] = "the model ran inside torch.utils.checkpoint, which recomputes it"
        elif not torch.is_grad_enabled():
            self._unseen[id(module)] = "ran without grad in the probe step (a reentrant checkpoint recomputes it)"
        elif _top_hooks is not None:
            top = _top_hooks(False)
            if top is None or top[0] is not self._pack:
                self._unseen[id(module)] = ("ran under saved-tensor hooks of its own (checkpoint, offloading): "
                                            "its consumer's saves were not the probe's to see")

    def _relu_exit(self, module, args, output) -> None:
        if self._thread != threading.get_ident():
            return
        self._inside -= 1
        p = _storage_ptr(output)
        if p:
            self._outputs.setdefault(id(module), []).append(p)
        if isinstance(output, Tensor) and output.requires_grad:
            self._with_grad.add(id(module))

    def __getstate__(self):  # pickling / deepcopy: the modules and the decisions
        return {"relus": self.relus, "decided": self.decided, "applied": self._applied}

    def __setstate__(self, state) -> None:
        masks = [r.mask for r in state["relus"]]
        self.__init__(state["relus"])
        if "decided" not in state:  # pickled before decisions were kept per training flag
            if state.get("done"):
                self.decided[True] = [(m, getattr(r, DECIDED_ATTR, "decided")) for r, m in zip(self.relus, masks)]
                self._apply(True)
            return
        self.decided = dict(state["decided"])
        if state["applied"] is not None:
            self._apply(state["applied"])


class _Saved:
    """A tensor the probe step saved, with its version then (the detached tensor shares the
    original's version counter, as its views do)."""

    __slots__ = ("tensor", "version")

    def __init__(self, tensor: Tensor, version: int) -> None:
        self.tensor, self.version = tensor, version

    def check_version(self) -> None:
        """Stock's error for a saved tensor modified in place since (SavedVariable::unpack's)."""
        now = self.tensor._version
        if now != self.version:
            hint = (" Hint: the backtrace further above shows the operation that failed to compute its "
                    "gradient. The variable in question was changed in there or anywhere later. Good luck!"
                    if torch.is_anomaly_enabled() else
                    " Hint: enable anomaly detection to find the operation that failed to compute its gradient, "
                    "with torch.autograd.set_detect_anomaly(True, check_nan=False).")
            raise RuntimeError("one of the variables needed for gradient computation has been modified by an "
                               f"inplace operation: [{self.tensor.type()} {list(self.tensor.shape)}], is at "
                               f"version {now}; expected version {self.version} instead.{hint}")


def _forward_hooked(m: nn.Module) -> bool:
    """Whether a forward hook of the user's (on m, or global) sees m's output after the probe's
    own hooks are gone."""
    return bool(m._forward_hooks or _module_globals._global_forward_hooks)


def _is_checkpoint_hook(pack) -> bool:
    """Whether pack is torch.utils.checkpoint's (its non-reentrant form, selective checkpointing
    too): the code that runs under it is recomputed in the backward."""
    return pack is not None and getattr(pack, "__module__", None) == "torch.utils.checkpoint"


def install(model: nn.Module, relus: List[nn.Module]):
    """A probe on model for relus and the ReLUs an earlier probe of model had (a second
    replace_relu call keeps them probed); the earlier probe's decisions start over."""
    existing = _model_hooks.owners(model, MaskProbe)
    earlier = [r for p in existing for r in p.relus]
    if not relus:
        return existing[0] if existing else None
    remove(model)
    probe = MaskProbe(earlier + [r for r in relus if all(r is not e for e in earlier)])
    model.register_forward_pre_hook(probe.enter)
    model.register_forward_hook(probe.exit, always_call=True)
    return probe


def remove(model: nn.Module) -> bool:
    return _model_hooks.remove(model, MaskProbe)


def decisions(model: nn.Module) -> Dict[str, str]:
    """{qualified name: decision} for the ReLUs of model that a probe decided."""
    return {name: getattr(m, DECIDED_ATTR) for name, m in model.named_modules() if hasattr(m, DECIDED_ATTR)}
