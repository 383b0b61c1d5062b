"""replace_relu / restore_relu: put relugrad's ReLU into a model and take it out again.

replace_relu(model, semantics="torch", threads=0, mask=False, *, functional=False, strict=False,
             return_report=False)
restore_relu(model, *, return_report=False)
fuse_custom_config()                 # relugrad's fusers (fuse_modules finds them without it too)

What is replaced (and only that):
  - nn.ReLU of exact type, and subclasses of nn.ReLU that neither override forward nor hold
    parameters, buffers or submodules (their forward is nn.ReLU's, so nothing is lost);
  - the F.relu activation of nn.TransformerEncoderLayer / TransformerDecoderLayer, which becomes
    a ReLU submodule named `activation` (an attribute the layer calls: no scope needed);
  - with functional=True, functional relu inside the model's forward: F.relu, F.relu_,
    torch.relu, torch.relu_, Tensor.relu, Tensor.relu_ on plain float tensors, served while the
    model's forward runs.
What is left, with the reason in the report: subclasses that override forward, nn.ReLU inside
fused quantization modules (their conversion needs nn.ReLU), TorchScript modules, and, without
functional=True, the modules whose forward calls relu functionally. Anything left gets one
ReplaceWarning (count, reason, fix) unless the caller asked for the report or strict=True.
nn.ReLU6 and nn.Hardtanh are listed as left too (HARDTANH_LEFT): relugrad has no hardtanh node
that is bit-exact at most stock's time, so they stay torch's; they are not ReLUs, so they neither
warn nor make strict=True raise. relugrad.torch.hardtanh_grad gives the kernel to direct callers.
"""
from __future__ import annotations

import dataclasses
import dis
import threading
import types
import warnings
from typing import Dict, List, Optional

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.overrides import TorchFunctionMode

from .. import _compat
from . import _kernels, _model_hooks, _script, _stale, compiled, fusion, mask_probe, modules
from ._kernels import check_flag, check_semantics, check_threads

__all__ = ["replace_relu", "restore_relu", "ReplaceReport", "ReplaceEntry", "ReplaceError", "ReplaceWarning",
           "fuse_custom_config"]

# Set on a ReLU that replaced a functional activation, so restore_relu puts the function back.
_FROM_FUNCTION = "_relugrad_replaced_function"

_TRANSFORMER_LAYERS = (nn.TransformerEncoderLayer, nn.TransformerDecoderLayer)


@dataclasses.dataclass(frozen=True)
class ReplaceEntry:
    name: str    # qualified name in the model ("" for the model itself)
    kind: str    # what was found: a class name, or "F.relu activation", or "functional relu"
    detail: str  # for replaced entries what it became; for left ones why


@dataclasses.dataclass
class ReplaceReport:
    """What replace_relu / restore_relu did: replaced entries, and those left with the reason."""
    replaced: List[ReplaceEntry] = dataclasses.field(default_factory=list)
    left: List[ReplaceEntry] = dataclasses.field(default_factory=list)

    def __str__(self) -> str:
        lines = [f"replaced {len(self.replaced)}, left {len(self.left)}"]
        lines += [f"  replaced {e.name or '<model>'} ({e.kind}): {e.detail}" for e in self.replaced]
        lines += [f"  left     {e.name or '<model>'} ({e.kind}): {e.detail}" for e in self.left]
        return "\n".join(lines)


class ReplaceWarning(UserWarning):
    """replace_relu left relu-like entries of the model as torch's (one warning per call, with the
    count, the reason and the fix); not given when the caller asked for the report or strict=True."""


def _left_message(report: ReplaceReport) -> str:
    """The warning of a replace_relu call that left entries: each reason once, with its count."""
    left = _relus_left(report)
    groups: Dict[str, int] = {}
    for e in left:
        if e.kind.startswith("functional relu in "):
            what = "modules calling relu functionally: pass functional=True"
        else:
            what = f"{e.kind}: {e.detail}"
        groups[what] = groups.get(what, 0) + 1
    parts = "; ".join(f"{n} {what}" for what, n in groups.items())
    return (f"replace_relu left {len(left)} relu-like entries as torch's: {parts} "
            "(return_report=True lists them; strict=True raises instead)")


class ReplaceError(ValueError):
    """strict=True and something relu-like would be left; the model is unchanged. .report has it all."""

    def __init__(self, report: ReplaceReport) -> None:
        super().__init__("replace_relu(strict=True): would leave " + "; ".join(
            f"{e.name or '<model>'} ({e.kind}): {e.detail}" for e in _relus_left(report)))
        self.report = report


def _has_state(m: nn.Module) -> bool:
    return _compat.has_slots(m)


# What a class body holds without adding anything a caller could use (extra_repr and __repr__
# change only how the module prints).
_CLASS_METADATA = {"__module__", "__qualname__", "__doc__", "__init__", "__annotations__",
                   "__firstlineno__", "__static_attributes__", "__dict__", "__weakref__",
                   "extra_repr", "__repr__"}


def _adds_members(m: nn.Module, base: type) -> bool:
    """Whether m's class (a subclass of base) or, for a subclass, m itself has attributes or
    methods base and a base instance lack: replacing m would drop them (a tag, a helper method, a
    property). An instance of base itself carries only what tooling sets (a qconfig, a compiled
    call, an initialised flag), which the replacement has never kept: it is replaced."""
    if type(m) is base:
        return False
    for cls in type(m).__mro__:
        if cls is base:
            break
        if set(vars(cls)) - _CLASS_METADATA:
            return True
    return bool(set(vars(m)) - set(vars(_plain_instance(base))))


_PLAIN_INSTANCES: Dict[type, nn.Module] = {}


def _plain_instance(base: type) -> nn.Module:
    instance = _PLAIN_INSTANCES.get(base)
    if instance is None:
        instance = _PLAIN_INSTANCES[base] = base()
    return instance


def _calls_relu(m: nn.Module) -> bool:
    """Whether m's own forward calls relu functionally (F.relu, torch.relu, x.relu_(), a relu
    function held as an attribute...): read from its bytecode and that of functions defined in
    it, so helpers it calls are not seen (the functional scope serves those too). `self.relu`
    where `relu` names one of m's submodules (torchvision's BasicBlock and Bottleneck) is that
    module's call, not functional relu: the submodule is visited and replaced as a module."""
    code = getattr(type(m).forward, "__code__", None)
    if code is None:
        return False
    self_name = code.co_varnames[0] if code.co_argcount else None
    return _names_relu(code, self_name, _compat.child_slots(m))


def _names_relu(code: types.CodeType, self_name: Optional[str], submodules) -> bool:
    previous = None
    for ins in dis.get_instructions(code):
        if ins.opcode in dis.hasname and ins.argval in ("relu", "relu_"):
            submodule_call = (ins.opname in ("LOAD_ATTR", "LOAD_METHOD") and ins.argval in submodules
                              and _loads_name(previous, self_name))
            if not submodule_call:
                return True
        previous = ins
    return any(_names_relu(const, self_name, submodules)
               for const in code.co_consts if isinstance(const, types.CodeType))


def _loads_name(ins: Optional[dis.Instruction], name: Optional[str]) -> bool:
    """Whether ins pushes the local (or closed-over) variable `name` last."""
    if ins is None or name is None or not ins.opname.startswith(("LOAD_FAST", "LOAD_DEREF")):
        return False
    pushed = ins.argval[-1] if isinstance(ins.argval, tuple) else ins.argval
    return pushed == name


def _children(m: nn.Module):
    # Every slot, None ones and a child held under two names included: each name is replaced.
    return list(_compat.child_slots(m).items())


# The report's reason for an nn.Hardtanh (nn.ReLU6 too) left as torch's.
HARDTANH_LEFT = ("not a ReLU: stays torch's hardtanh (relugrad has no hardtanh node that is bit-exact at most "
                 "stock's time; relugrad.torch.hardtanh_grad has the kernel)")


def _relus_left(report: ReplaceReport) -> List[ReplaceEntry]:
    """The left entries strict=True and the warning concern: all but the hardtanh family."""
    return [e for e in report.left if e.detail != HARDTANH_LEFT]


def _plan(model: nn.Module, functional: bool, semantics: str = "torch"):
    """[(parent, attr, qualname, child, action)], report. Actions: "module" (replace an nn.ReLU),
    "activation" (a transformer layer's F.relu), "functional" (served by the scope)."""
    report = ReplaceReport()
    actions = []
    seen: Dict[int, str] = {}

    def visit(parent: Optional[nn.Module], attr: str, name: str, m: nn.Module) -> None:
        kind = type(m).__name__
        first = id(m) not in seen
        if first:
            seen[id(m)] = name
        if isinstance(m, modules.ReLU):
            return
        if isinstance(m, torch.jit.ScriptModule):
            if first:
                report.left.append(ReplaceEntry(name, kind, "a TorchScript module cannot be changed"))
            return
        if isinstance(m, nn.ReLU):
            reason = None
            if type(m).forward is not nn.ReLU.forward:
                reason = "overrides forward: replacing it would drop that forward"
            elif _has_state(m):
                reason = "holds parameters, buffers or submodules that ReLU would drop"
            elif _adds_members(m, nn.ReLU):
                reason = "a subclass with attributes or methods of its own, which ReLU would drop"
            elif "forward" in vars(m):
                reason = "a forward of its own set on the instance, which ReLU would drop"
            elif isinstance(parent, _compat.fused_quantization_module_type()):
                reason = f"inside the fused quantization module {type(parent).__name__}, which needs nn.ReLU"
            if reason is None:
                actions.append((parent, attr, name, m, "module"))
                if first:
                    report.replaced.append(ReplaceEntry(name, kind, "relugrad ReLU"))
                return
            if first:
                report.left.append(ReplaceEntry(name, kind, reason))
        elif isinstance(m, nn.Hardtanh):  # nn.ReLU6 too
            if first:
                report.left.append(ReplaceEntry(name, kind, HARDTANH_LEFT))
            return
        if not first:
            return
        if isinstance(m, _TRANSFORMER_LAYERS) and getattr(m, "activation", None) is F.relu:
            # An attribute the layer calls, not a call in forward's code: replaced like a module
            # (restore_relu puts F.relu back), so it needs no functional scope.
            aname = f"{name}.activation" if name else "activation"
            actions.append((m, "activation", aname, m, "activation"))
            report.replaced.append(ReplaceEntry(aname, "F.relu activation", "relugrad ReLU submodule"))
        elif _calls_relu(m) and not isinstance(m, nn.ReLU):
            if functional:
                report.replaced.append(ReplaceEntry(name, f"functional relu in {kind}.forward",
                                                    "served by the functional scope of the model's forward"))
            else:
                report.left.append(ReplaceEntry(name, f"functional relu in {kind}.forward",
                                                "functional relu: pass functional=True"))
        for cname, child in _children(m):
            if child is not None:
                visit(m, cname, f"{name}.{cname}" if name else cname, child)  # noqa: F821 (deleted below)

    visit(None, "", "", model)
    del visit  # the closure refers to itself: a cycle that would keep model alive until gc runs
    return actions, report


# ---- The functional scope -----------------------------------------------------
# A TorchFunctionMode entered by a forward pre-hook on the model and left by an always-called
# forward hook: while the model's forward runs with grad enabled, the six relu functions on
# plain tensors of a dtype relugrad serves go to a relugrad ReLU with the model's options
# (also inside modules replace_relu left, whose type is what they needed); everything else
# (other ops, relu6 and hardtanh, tensor subclasses, quantized or integer tensors) goes on to
# torch unchanged.
# The mode is off inside its own handler, so the ReLU's own torch calls are not caught again.
# Cost: every torch function call in the forward passes through the handler (docs/torch.md,
# "Compatibility").

_NOT_RELU = object()
_INPLACE_OF = {F.relu: None, torch.relu: False, Tensor.relu: False,  # None: F.relu's inplace argument
               F.relu_: True, torch.relu_: True, Tensor.relu_: True}
_PLAIN = (Tensor, nn.Parameter)


class _ReluMode(TorchFunctionMode):
    _relugrad_scope_mode = True  # fused pairs may run under it (fusion.SCOPE_MODE_ATTR)

    def __init__(self, scope: "_FunctionalScope") -> None:
        super().__init__()
        self.scope = scope

    def __torch_function__(self, func, types, args=(), kwargs=None):
        inplace = _INPLACE_OF.get(func, _NOT_RELU)
        # Only calls that autograd records: with grad off (no_grad, inference, and inside an
        # autograd.Function's forward, such as ReLU's own Python path) torch.relu is the same
        # forward, and serving it there would nest ReLU's Functions in one another.
        if inplace is not _NOT_RELU and args and torch.is_grad_enabled():
            x = args[0]
            # Plain tensors; under torch.compile / torch.export any tensor (fake and functional
            # ones stand for plain tensors there), where ReLU records the custom op.
            if (type(x) in _PLAIN or _kernels.is_compiling()) and x.dtype in _kernels.DTYPES:
                kw = kwargs or {}
                if inplace is None:  # F.relu(input, inplace=False)
                    rest = args[1:]
                    if len(rest) > 1 or any(k != "inplace" for k in kw):
                        return func(*args, **kw)
                    inplace = bool(rest[0]) if rest else bool(kw.get("inplace", False))
                elif len(args) > 1 or kw:
                    return func(*args, **kw)
                self.scope.served += 1
                return self.scope.module(inplace).forward(x)  # a private module: no hooks to run
        return func(*args, **(kwargs or {}))


class _FunctionalScope:
    """The pre-hook / forward-hook pair of the functional scope (one object, both roles)."""

    _relugrad_model_hooks = True  # torch.jit.script compiles the model without them (_script.py)

    def __init__(self, semantics: str, threads: int, mask: bool) -> None:
        self.semantics, self.threads, self.mask = semantics, threads, mask
        self.served = 0  # relu calls served so far (all threads): what the tests count
        self._relus: Dict[bool, nn.Module] = {}  # by inplace
        self._tls = threading.local()

    def module(self, inplace: bool) -> nn.Module:
        # mask=False even under replace_relu(mask=True): one module serves every functional call
        # site, and no probe decides whether a site's consumer keeps y anyway (a Linear after
        # F.relu does, and the mask would be kept on top of it), so functional relu keeps
        # what stock keeps. (Transformer layers' F.relu activations become modules: probed.)
        m = self._relus.get(inplace)
        if m is None:
            m = self._relus[inplace] = modules.ReLU(self.semantics, inplace=inplace, threads=self.threads)
        return m

    def _stack(self) -> list:
        stack = getattr(self._tls, "stack", None)
        if stack is None:
            stack = self._tls.stack = []
        return stack

    def enter(self, module, args) -> None:
        stack = self._stack()
        if stack and _stale.stale_call(module):
            _close_stale_modes(stack)
        if not torch.is_grad_enabled():
            # The mode would serve nothing (it serves only what autograd records), and an active
            # mode alone turns off torch's inference fast paths (TransformerEncoderLayer's and
            # MultiheadAttention's under no_grad check for one): None holds the place.
            stack.append(None)
            return
        mode = _ReluMode(self)
        mode.__enter__()
        stack.append(mode)

    def exit(self, module, args, output) -> None:
        stack = self._stack()
        if stack:
            mode = stack.pop()
            if mode is not None:
                mode.__exit__(None, None, None)

    def __getstate__(self):  # pickling / deepcopy: the options only
        return {"semantics": self.semantics, "threads": self.threads, "mask": self.mask}

    def __setstate__(self, state) -> None:
        self.__init__(state["semantics"], state["threads"], state["mask"])


def _close_stale_modes(stack: list) -> None:
    """Takes the modes of a scope's calls that ended without its exit hook (_stale.py) off
    torch's function-mode stack, wherever they lie in it."""
    while stack:
        mode = stack.pop()
        if mode is not None:
            _stale.remove_function_mode(mode)


def _remove_scope(model: nn.Module) -> bool:
    return _model_hooks.remove(model, _FunctionalScope)


def functional_scope(model: nn.Module) -> Optional[_FunctionalScope]:
    """The functional scope replace_relu(functional=True) put on model, or None."""
    found = _model_hooks.owners(model, _FunctionalScope)
    return found[0] if found else None


def _check_model(model) -> None:
    if not isinstance(model, nn.Module):
        what = f"the class {model.__name__}; pass an instance" if isinstance(model, type) else type(model).__name__
        raise TypeError(f"model: expected a torch.nn.Module, got {what}")


def replace_relu(model: nn.Module, semantics: str = "torch", threads: Optional[int] = 0, mask: bool = False, *,
                 functional: bool = False, strict: bool = False, return_report: bool = False,
                 fuse_linear: bool = False):
    """Replaces nn.ReLU modules of model by relugrad.torch.ReLU(semantics, inplace=<theirs>,
    threads=threads, mask=mask), in place, keeping each
    one's hooks (the same hook dicts, so existing handles still work) and training flag;
    state_dict is unchanged. The F.relu activation of a transformer layer becomes a ReLU
    submodule.

    functional=True also serves functional relu while model's forward runs (see the module
    docstring).
    fuse_linear=True (torch preset, no mask) has each nn.Sequential run an nn.Linear directly
    followed by a replaced nn.ReLU as one pass whose backward sums the bias gradient in the ReLU
    pass (same bits but for the bias gradient's rounding: modules.LinearReLU); mask=True runs a replaced
    nn.ReLU directly followed by an nn.Dropout as one pass keeping two bits per element, and turns
    saved_bits on for the process (torch.compile: saved booleans as bits). The
    modules stay where they are; the parent runs a pair fused where it qualifies at that call
    (fusion.py).
    strict=True raises ReplaceError, leaving the model unchanged, if anything relu-like would be
    left; otherwise anything left gets one ReplaceWarning (its count, reason and fix) unless
    return_report=True. Returns model (a ReLU if model itself is a replaceable nn.ReLU), or (model, report)
    with return_report=True."""
    _check_model(model)
    check_semantics(semantics)
    threads = check_threads(threads)
    mask = check_flag("mask", mask)
    functional, strict = check_flag("functional", functional), check_flag("strict", strict)
    return_report, fuse_linear = check_flag("return_report", return_report), check_flag("fuse_linear", fuse_linear)
    actions, report = _plan(model, functional, semantics)
    if strict and _relus_left(report):
        raise ReplaceError(report)
    made: Dict[int, nn.Module] = {}
    for parent, attr, _, child, action in actions:
        if action == "activation":
            new = modules.ReLU(semantics, inplace=False, threads=threads, mask=mask)
            setattr(new, _FROM_FUNCTION, True)
            child.activation = new  # a submodule now; activation_relu_or_gelu keeps the fast path
            made[id(new)] = new
            continue
        new = made.get(id(child))
        if new is None:
            new = modules.ReLU(semantics, inplace=bool(child.inplace), threads=threads, mask=mask)
            made[id(child)] = new
            _model_hooks.move_hooks(child, new)
        if parent is None:
            model = new
        else:
            setattr(parent, attr, new)
    whole = not isinstance(model, (modules.ReLU, torch.jit.ScriptModule))
    ours = {id(m) for m in made.values()}
    if fuse_linear and semantics == "torch" and not mask and whole:
        # Linear + ReLU pairs run as one pass by their parent, where they qualify at each call.
        _note_fused(report, fusion.install(model, fusion.LINEAR, ours),
                    "runs fused with the nn.Linear {first} (bias gradient in the ReLU pass)")
        _script.install(model)
    if mask and whole:
        # The memory option: ReLU + Dropout pairs run as one pass keeping 2 bits per element
        # (by their parent, where they qualify at each call), and each new ReLU keeps the mask
        # only where the probe step finds that nothing else keeps its output (mask_probe).
        _note_fused(report, fusion.install(model, fusion.DROPOUT, ours),
                    "runs fused with the nn.Dropout {second} (2 bits per element kept for backward)")
        mask_probe.install(model, list(made.values()))
        _script.install(model)
    if mask:
        # Compiled training: the booleans compiled graphs save (gates, dropout masks) as bits.
        compiled.request()
    if functional and not isinstance(model, (modules.ReLU, torch.jit.ScriptModule)):
        _remove_scope(model)
        scope = _FunctionalScope(semantics, threads, mask)
        model.register_forward_pre_hook(scope.enter)
        model.register_forward_hook(scope.exit, always_call=True)
        _script.install(model)
        report.replaced.append(ReplaceEntry("", "functional scope", f"on {type(model).__name__}.forward"))
    if return_report:
        return model, report
    if _relus_left(report):
        warnings.warn(_left_message(report), ReplaceWarning, stacklevel=2)
    return model


def _note_fused(report: ReplaceReport, pairs: dict, what: str) -> None:
    """Adds to each fused ReLU's report entry the pair its parent runs fused."""
    by_name = {}
    for parent, first, second in pairs.values():
        prefix = f"{parent}." if parent else ""
        by_name[prefix + (second if "{first}" in what else first)] = what.format(first=prefix + first,
                                                                                  second=prefix + second)
    for i, e in enumerate(report.replaced):
        note = by_name.get(e.name)
        if note is not None:
            report.replaced[i] = type(e)(e.name, e.kind, f"{e.detail}; {note}")


def restore_relu(model: nn.Module, *, return_report: bool = False):
    """Turns every relugrad ReLU in model back into nn.ReLU(inplace=<its>) (a transformer
    activation back into F.relu), keeping hooks, and removes the functional scope. state_dict
    is unchanged. Returns model (an nn.ReLU if model itself is a ReLU), or (model, report)."""
    _check_model(model)
    return_report = check_flag("return_report", return_report)
    report = ReplaceReport()
    made: Dict[int, nn.Module] = {}

    def back(m: "modules.ReLU", name: str) -> nn.Module:
        new = made.get(id(m))
        if new is None:
            new = made[id(m)] = nn.ReLU(inplace=m.inplace)
            _model_hooks.move_hooks(m, new)
            report.replaced.append(ReplaceEntry(name, "relugrad ReLU", f"nn.ReLU (was {m.extra_repr()})"))
        return new

    def visit(m: nn.Module, name: str, seen: set) -> None:
        if id(m) in seen or isinstance(m, torch.jit.ScriptModule):
            return
        seen.add(id(m))
        for cname, child in _children(m):
            qual = f"{name}.{cname}" if name else cname
            if isinstance(child, modules.ReLU):
                if getattr(child, _FROM_FUNCTION, False) and isinstance(m, _TRANSFORMER_LAYERS):
                    delattr(m, cname)
                    m.activation = F.relu
                    report.replaced.append(ReplaceEntry(qual, "relugrad ReLU", "F.relu activation"))
                else:
                    setattr(m, cname, back(child, qual))
            elif child is not None:
                visit(child, qual, seen)  # noqa: F821 (deleted below, after its last call)

    if isinstance(model, modules.ReLU):
        model = back(model, "")
    else:
        # The model's own hooks, and those of replaced models nested in it.
        for name, m in model.named_modules():
            if mask_probe.remove(m):
                report.replaced.append(ReplaceEntry(name, "mask probe", "removed"))
            if _remove_scope(m):
                report.replaced.append(ReplaceEntry(name, "functional scope", "removed"))
            _script.remove(m)
        for name in fusion.remove(model):
            report.replaced.append(ReplaceEntry(name, "fusing parent", "its stock class"))
        visit(model, "", set())
    del visit  # the closure refers to itself (a cycle holding the modules until gc runs)
    return (model, report) if return_report else model


# ---- Quantization fusion ---------------------------------------------------------
# fuse_modules looks fusers up by the exact types of the modules (Conv2d, BatchNorm2d, ReLU) in
# one table, torch.ao.quantization.fuser_method_mappings._DEFAULT_OP_LIST_TO_FUSER_METHOD, and the
# fused modules (ConvReLU2d, ConvBnReLU2d) assert an nn.ReLU inside. A user fuses a replaced model
# as a stock one (fuse_modules(model, [["conv1", "bn1", "relu"]])), so importing relugrad.torch
# adds to that table, for every pattern that ends in nn.ReLU, the same pattern ending in
# relugrad's ReLU: its fuser hands torch's fuser an nn.ReLU (same inplace, hooks and training
# flag) and fuses as torch does. The fused module then computes the relu with torch's own
# autograd: the same gradients in the torch preset; for QAT under another preset (which would
# change the gradients) the fuser refuses. fuse_custom_config() gives the same fusers for an
# explicit fuse_custom_config_dict.


def _stock(relu: "modules.ReLU", is_qat: bool) -> nn.ReLU:
    if is_qat and relu.semantics != "torch":
        raise ValueError(f"fuse_modules(is_qat=True): the fused module would train with torch's relu "
                         f"gradients, not {relu.semantics!r}'s; restore_relu first to do that knowingly")
    stock = nn.ReLU(inplace=relu.inplace)
    _model_hooks.move_hooks(relu, stock)  # and the training flag, which torch's fusers compare
    return stock


def _relugrad_fusers(table: dict) -> dict:
    """{pattern ending in relugrad's ReLU: fuser} for each pattern of table ending in nn.ReLU."""
    mapping = {}
    for key, fuser in list(table.items()):
        if not (isinstance(key, tuple) and key and key[-1] is nn.ReLU):
            continue

        def ours(is_qat_, *mods, _fuser=fuser):
            mods = list(mods)
            mods[-1] = _stock(mods[-1], is_qat_)
            return _fuser(is_qat_, *mods)

        mapping[key[:-1] + (modules.ReLU,)] = ours
    return mapping


def fuse_custom_config() -> dict:
    """fuse_custom_config_dict with relugrad's fusers (fuse_modules finds them without it too):
    fuse_modules(model, [["conv1", "bn1", "relu"]], fuse_custom_config_dict=fuse_custom_config())."""
    return {"additional_fuser_method_mapping": _relugrad_fusers(_compat.fuser_table())}


def _register_fusers() -> None:
    table = _compat.fuser_table()
    for key, fuser in _relugrad_fusers(table).items():
        table.setdefault(key, fuser)


_register_fusers()
