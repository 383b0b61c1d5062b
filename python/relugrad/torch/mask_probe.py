"""Per-ReLU mask decision: replace_relu(mask=True) keeps the 1-bit mask only where it saves memory.

A ReLU's 1-bit mask replaces its saved output y only if nothing else keeps y: where the consumer
saves its input for its own backward (Linear, conv, batch norm, max pooling, a square...), y
stays alive anyway and the mask is ceil(n/8) bytes on top. Which consumers keep y is read from
what actually holds y's memory once the forward has returned, not from a list of module types:
the first forward of the model that autograd records (grad enabled) is a probe. In it every
undecided ReLU runs without the mask (so the probe step keeps what stock keeps), the probe
watches the storage of each output through a weak reference (a storage the forward drops is freed
as in stock's step), and when the model's forward returns it reads the storage's use count. A
storage held only by the ReLU's own saved y (and its Python object, which torch keeps with it) is
freed by saving the mask instead: that ReLU gets mask=True. Anything else holding it (a
consumer's saved input or a view of it, the model's output, which the loss may keep, a tensor
the user kept) keeps y: mask=False.
The ReLU's own share is read at each call in the probe step (what a new output's storage has
then, less the output itself; what an in-place call adds), not assumed. A ReLU the probe did not
run stays at mask=False (stock's memory). The probe adds no saved-tensor hooks, so a forward that
runs torch.func transforms or turns saved-tensor hooks off probes as any other. Only where the
caller's own hooks are on already (offloading, a byte counter), whose packs may hold y in ways
counting cannot tell apart, does the probe put a pack on top of theirs for the step, recording
what is saved outside the ReLUs' forwards (MaskProbe._chain). The probe's per-ReLU hooks and its
end-of-forward hook are removed after the probe step; later steps pay one forward pre-hook.

The decision is per training flag of the model: a module's forward may differ between train and
eval (dropout is the identity in eval, so a consumer after it saves y), so the first recorded
forward in each mode probes for that mode, and switching modes switches the ReLUs to that mode's
decision. A forward that raises decides nothing (the next one probes again). A stale probe, whose
forward was stopped by a BaseException that is not an Exception (KeyboardInterrupt: nn.Module
calls no forward hook then), is torn down by the next forward of the model (_stale.py).

A ReLU call whose consumer the probe cannot judge keeps y too: one under no_grad (a reentrant
checkpoint's first pass), one under saved-tensor hooks that were not on when the model was called
(a non-reentrant checkpoint or offloading region inside the model), and every call when the
model's forward itself runs inside torch.utils.checkpoint. Checkpointed code runs again in the
backward, and the recomputation must save what the first pass saved (non-reentrant checkpoint
checks it and raises otherwise); a ReLU whose consumer is recomputed would keep its mask on top
of the y the consumer saves then.
"""
from __future__ import annotations

import sys
import threading
from typing import Dict, List, Optional, Tuple

import torch
from torch import Tensor, nn
from torch.multiprocessing.reductions import StorageWeakRef

from .. import _compat
from . import _model_hooks, _stale

__all__ = ["MaskProbe", "decisions", "DECIDED_ATTR"]

# Set on each ReLU the probe decided: why it keeps y or only the mask.
DECIDED_ATTR = "_relugrad_mask_decision"


def _storage_of(t) -> Optional[torch.UntypedStorage]:
    """t's storage, or None where it has none to read (nested, fake, meta, a functorch wrapper...)."""
    try:
        if not isinstance(t, Tensor) or t.is_nested or t.layout is not torch.strided or t.is_meta:
            return None
        return t.untyped_storage()
    except (RuntimeError, NotImplementedError):
        return None


class _Watched:
    """A storage watched without keeping it alive (a weak reference: a storage the forward drops
    is freed then, as in stock's step), and how many owners it has now: tensors sharing it,
    saved tensors, its Python object while the storage lives (torch's own accessor, private:
    without it nothing is decided). A freed storage has none."""

    __slots__ = ("weak", "data_ptr", "python_share")

    def __init__(self, weak: StorageWeakRef, data_ptr: int, with_object: int) -> None:
        self.weak, self.data_ptr = weak, data_ptr
        # What the storage's Python object itself counts once no Python name refers to it
        # (torch keeps the object with the storage: 1 where it is counted, 0 where not).
        self.python_share = 1 - (with_object - self.owners())

    def owners(self) -> int:
        return 0 if self.weak.expired() else _storage_use_count(self.weak.cdata)


def _watch(t) -> Optional[_Watched]:
    """t's storage watched, or None where it has none to read."""
    storage = _storage_of(t)
    if storage is None:
        return None
    with_object = _storage_use_count(_compat.storage_handle(storage))
    weak, data_ptr = StorageWeakRef(storage), storage.data_ptr()
    del storage  # the last Python name of the storage object: the counts after this are its own
    return _Watched(weak, data_ptr, with_object)


_storage_use_count = _compat.storage_use_count
_compiling = torch.compiler.is_compiling

# The saved-tensor hooks active now ((pack, unpack) or None): torch's own accessor, private, so it
# has a fallback (without it, hooks entered inside the model are not told apart).
_top_hooks = _compat.top_saved_tensors_hooks


def _top_pack():
    """The pack function of the saved-tensor hooks active now, or None."""
    top = _top_hooks(False) if _top_hooks is not None else None
    return top[0] if top else None


class _Output:
    """One output of a ReLU call in the probe step: its storage, watched until the model's forward
    returns, and how many of the storage's owners are the ReLU's own (its saved y) and the
    storage's Python object: more owners than that then, and something else keeps y."""

    __slots__ = ("watched", "own")

    def __init__(self, watched: _Watched, own: int) -> None:
        self.watched, self.own = watched, own

    def kept_by_others(self) -> bool:
        return self.watched.owners() > self.own


class MaskProbe:
    """The model's forward pre-hook, and during a probe step its always-called forward hook too
    (one object, both roles)."""

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
        self._outputs: Dict[int, List[_Output]] = {}
        self._entered: Dict[int, List[Tuple[_Watched, int]]] = {}  # in-place calls running: their input
        self._unseen: Dict[int, str] = {}  # id(ReLU) -> why the probe could not judge its consumer
        self._with_grad: set = set()  # id(ReLU) with an output that needed a gradient in the probe step
        self._ran: set = set()  # id(ReLU) called in the probe step
        self._handles: list = []
        self._outer_pack = None  # the pack of the saved-tensor hooks on top when the probe step began
        self._chained = None  # the probe step's own pack on top of those, if any
        self._saved: set = set()  # the storages those saved outside the ReLUs' forwards
        self._inside = 0
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
            # owners the probe cannot count, and the probe's per-ReLU hooks would split dynamo's
            # graph at every ReLU, for good (it does not guard on hooks): the probe waits for an
            # eager step, and until then every ReLU keeps y (compiled stock's graph and memory).
            # (Asked before anything dynamo cannot trace, such as the hooks query below.)
            return
        if _storage_use_count is None:
            return
        self._training = training
        self._thread = threading.get_ident()
        self._depth = 0
        self._active = True
        self._reset()
        for r in self.relus:
            # Last of the ReLU's pre-hooks, right before its forward: an in-place call's input as
            # the forward gets it, with whatever a user's pre-hook keeps of it counted as not
            # the ReLU's own.
            self._handles.append(r.register_forward_pre_hook(self._relu_enter))
            self._handles.append(r.register_forward_hook(self._relu_exit, always_call=True))
        # The end of the forward is where the owners are counted: a hook for this step only, so
        # that steps after the decision pay the pre-hook alone.
        self._handles.append(module.register_forward_hook(self.exit, always_call=True))
        outer = _top_hooks(False) if _top_hooks is not None else None
        self._outer_pack = outer[0] if outer else None
        self._checkpointed = _is_checkpoint_hook(self._outer_pack)
        if outer and not self._checkpointed:
            self._chain(*outer)

    def _chain(self, outer_pack, outer_unpack) -> None:
        """Saved-tensor hooks already on (offloading, a user's byte counter) decide what each save
        holds, which counting owners cannot see through (a pack that returns the tensor itself
        keeps y's storage through the ReLU's own save). For this step the probe puts a pack of its
        own on top of theirs: it records the storage of every tensor saved outside the ReLUs' own
        forwards and hands the tensor on to theirs; a ReLU whose output is among those, or is the
        model's output, keeps y. (With no hooks on, the probe adds none: torch.func refuses to run
        under saved-tensor hooks, and a forward may turn them off.)"""
        def pack(t):
            if not self._inside:
                storage = _storage_of(t)
                if storage is not None:
                    self._saved.add(storage.data_ptr())
            return outer_pack(t)

        self._chained = pack
        _compat.push_saved_tensors_hooks(pack, outer_unpack)

    def _end_probe(self) -> None:
        """Removes the probe step's hooks."""
        for h in self._handles:
            h.remove()
        self._handles.clear()
        if self._chained is not None:  # a stale probe's may lie under the caller's own hooks
            _stale.remove_saved_tensors_hooks(self._chained)
            self._chained = None
        self._active = False
        self._outer_pack = None
        self._inside = 0

    def _abandon(self) -> None:
        """Ends a probe step without deciding: its forward raised or never finished."""
        self._end_probe()
        self._reset()

    def _reset(self) -> None:
        self._outputs = {}
        self._entered = {}
        self._unseen = {}
        self._with_grad = set()
        self._ran = set()
        self._saved = set()

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
        chained = self._chained is not None
        self._end_probe()
        if chained:
            # What the model returns may be kept by the loss, which runs after the probe.
            for t in _compat.tree_leaves(output):
                storage = _storage_of(t)
                if storage is not None:
                    self._saved.add(storage.data_ptr())
        # The forward has returned: its locals are gone, and what still owns an output's storage
        # keeps it for the backward (a consumer's saved input), or past it (the model's output,
        # which the loss may save; a tensor the user kept).
        decided = []
        for r in self.relus:
            outs = self._outputs.get(id(r), [])
            unseen = self._unseen.get(id(r))
            if id(r) not in self._ran:
                decided.append((False, "not run in the probe step: keeps y"))
            elif unseen is not None:
                decided.append((False, f"{unseen}: keeps y"))
            elif id(r) not in self._with_grad:
                # Its consumer saved nothing for a gradient that no step asked for (a frozen
                # layer): the step says nothing of what it saves once the layer trains.
                decided.append((False, "its output needed no gradient in the probe step: keeps y"))
            elif _forward_hooked(r):
                decided.append((False, "a forward hook sees its output (and may keep it): keeps y"))
            elif any(o.watched.data_ptr in self._saved if chained else o.kept_by_others() for o in outs):
                decided.append((False, "y is kept by its consumer or the model's output: keeps y"))
            else:
                decided.append((True, "y is kept by nothing else: keeps the 1-bit mask"))
        self.decided[self._training] = decided
        self._apply(self._training)
        self._reset()

    # ---- inside the probe
    def _relu_enter(self, module, args) -> None:
        if self._thread != threading.get_ident():
            return  # another thread's call of the model: not the probe step's
        self._inside += 1
        if getattr(module, "inplace", False):
            # An in-place call's output is its input: the owners it has before the call are
            # counted now, so that the ReLU's own saved y is what the call adds.
            watched = _watch(args[0]) if args else None
            if watched is not None:
                self._entered.setdefault(id(module), []).append((watched, watched.owners()))
        if id(module) in self._unseen:
            return
        if self._checkpointed:
            self._unseen[id(module)] = "the model ran inside torch.utils.checkpoint, which recomputes it"
        elif not torch.is_grad_enabled():
            self._unseen[id(module)] = "ran without grad in the probe step (a reentrant checkpoint recomputes it)"
        elif _top_pack() is not (self._chained or self._outer_pack):
            self._unseen[id(module)] = ("ran under saved-tensor hooks of its own (checkpoint, offloading): "
                                        "its consumer's saves were not the probe's to judge")

    def _relu_exit(self, module, args, output) -> None:
        if self._thread != threading.get_ident():
            return
        self._inside -= 1
        entered = self._entered.get(id(module))
        before = entered.pop() if entered else None
        self._ran.add(id(module))
        if not (isinstance(output, Tensor) and output.requires_grad):
            return  # nothing saved for a backward: not a call that decides
        self._with_grad.add(id(module))
        watched = _watch(output)
        if watched is None:
            self._unseen.setdefault(id(module), "an output in the probe step was not a plain tensor (its owners "
                                                "cannot be counted)")
            return
        if before is not None and before[0].data_ptr == watched.data_ptr:
            # In place: the owners the call added are the ReLU's own saves; with the storage's
            # Python object, they are what remains once nothing else holds x.
            watched, count_before = before
            own = watched.owners() - count_before + watched.python_share
        else:
            # A new output: its storage's owners now are the output itself, the ReLU's own saves
            # and the storage's Python object; once the output is gone, the last two.
            own = watched.owners() - 1
        self._outputs.setdefault(id(module), []).append(_Output(watched, own))

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


def _forward_hooked(m: nn.Module) -> bool:
    """Whether a forward hook of the user's (on m, or global) sees m's output after the probe's
    own hooks are gone."""
    return bool(_compat.forward_hooks(m) or _compat.global_forward_hooks())


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
    return probe


def remove(model: nn.Module) -> bool:
    return _model_hooks.remove(model, MaskProbe)


def decisions(model: nn.Module) -> Dict[str, str]:
    """{qualified name: decision} for the ReLUs of model that a probe decided."""
    return {name: getattr(m, DECIDED_ATTR) for name, m in model.named_modules() if hasattr(m, DECIDED_ATTR)}
