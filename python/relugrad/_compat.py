"""Every private torch API relugrad uses, in one place: relugrad.torch's (layer 0 of its layers)
and the core's one check of what a torch tensor's memory holds (relugrad._arrays, imported there
only once torch is loaded; the core never imports torch itself).

Each name below says what it stands for, the public API that would replace it (or that none
exists), and how it is guarded where torch releases differ. Everything else in relugrad imports
these names from here and never reaches into torch's private modules itself, so a torch upgrade
that moves one of them is fixed in this file alone. torch 2.8 is the oldest release
relugrad.torch supports (pyproject's torch extra).
"""
from __future__ import annotations

import sys

import torch
from torch import Tensor, nn
from torch._functorch.utils import enable_single_level_autograd_function as enable_single_level_autograd_function
from torch._library.utils import fill_defaults as fill_defaults

_TC = torch._C
_fwAD = torch.autograd.forward_ad

# ---- Checks inside kernels -----------------------------------------------------------------
# torch._check: the documented way for a fake kernel to check its arguments (it is symbolic-shape
# aware, unlike a plain `if ...: raise`); public in torch's docs, underscored in its name.
check = torch._check

# ---- The autograd kernel of a custom op ----------------------------------------------------
# Public: torch.library.register_autograd(op, backward, setup_context=...). It has no jvp, so
# forward AD and torch.func.jvp would fail on the ops; relugrad registers its own Autograd kernel
# (ops._register_autograd), which needs the names below.

# fill_defaults (imported above, torch._library.utils): binds an op call's positional and keyword
# arguments to its schema, defaults filled in. Public: inspect.signature(...).bind of the Python
# function, not of the schema.

# Runs the op's next kernel below Autograd. Public: none (torch.library's own Autograd kernel
# does this internally).
below_autograd = _TC._AutoDispatchBelowAutograd
after_autograd_keyset = _TC._after_autograd_keyset
# any(t.requires_grad for tensors in args), in C++ (public: that generator expression).
any_requires_grad = _TC._any_requires_grad
# Whether a torch.func transform (grad, vmap, jvp) is active. Public: none.
functorch_transforms_active = _TC._are_functorch_transforms_active
# The Function class torch.func applies at one transform level, and the switch that lets it run.
# Public: autograd.Function.apply under torch.func (it calls these itself).
SingleLevelFunction = torch.autograd.function._SingleLevelFunction
# enable_single_level_autograd_function (imported above, torch._functorch.utils).
# Forward AD on/off inside a Function's forward. Public: none (torch.autograd.forward_ad has
# dual_level, not the switch).
set_fwd_grad_enabled = _fwAD._set_fwd_grad_enabled


def forward_ad_level() -> int:
    """The innermost forward-AD level (-1: none). Public: none (forward_ad.dual_level enters one)."""
    return _fwAD._current_level


# In-place writes inside autograd.Function.forward without a second version bump.
# Public: none (mark_dirty bumps the version again).
preserve_version_counter = torch.autograd._unsafe_preserve_version_counter

# ---- What kind of tensor, and what is tracing it --------------------------------------------
# A tensor wrapped by torch.func (grad's or vmap's wrapper). Public: none.
is_functorch_wrapped = _TC._functorch.is_functorch_wrapped_tensor
# The BatchedTensor of autograd.grad(..., is_grads_batched=True), torch's older vmap; absent in
# releases that dropped it.
is_legacy_batched = getattr(_TC._functorch, "is_legacy_batchedtensor", lambda t: False)
# How many TorchDispatchModes are active. Public: none (torch.utils._python_dispatch is private too).
dispatch_mode_depth = _TC._len_torch_dispatch_stack
# jit.trace's state (None when not tracing). Public: torch.jit.is_tracing(), one call slower.
tracing_state = _TC._get_tracing_state

if hasattr(torch.compiler, "_is_exporting_flag"):
    def is_exporting() -> bool:
        """torch.compiler.is_exporting() as a read of the flag it returns, which torch.export sets
        for its trace. Dynamo up to torch 2.11 folds the public call itself to True in every
        trace, which would send a compiled module down its export path (no mask saving); dynamo
        reads the flag as the global it is (False under compile, True under export)."""
        return torch.compiler._is_exporting_flag
else:
    is_exporting = torch.compiler.is_exporting


def fake_tensor_type() -> type:
    """FakeTensor (torch.compile's and FakeTensorMode's tensors). Public: none; imported on first
    use (its module is large)."""
    from torch._subclasses.fake_tensor import FakeTensor
    return FakeTensor


def compile_tracing() -> bool:
    """A torch.compile / export trace is running (dynamo's or AOTAutograd's). Public:
    torch.compiler.is_compiling() answers in dynamo's trace only, not in AOTAutograd's backward."""
    if "torch._dynamo" not in sys.modules:
        return False
    from torch._guards import TracingContext
    return TracingContext.try_get() is not None


def view_base(t: Tensor):
    """The tensor t is a view of, or None. Public: none (Tensor._base is documented nowhere)."""
    return t._base


# ---- Graph export and inductor ----------------------------------------------------------------
def register_aten_decomposition(op, fn) -> None:
    """fn into torch._decomp's global table, which the dynamo ONNX exporter lowers through.
    Public: ExportedProgram.run_decompositions(table) for a table the caller passes."""
    import torch._decomp as decomp
    if op not in decomp.decomposition_table:
        decomp.register_decomposition(op)(fn)


def inductor_decomposition_tables() -> tuple:
    """The tables inductor decomposes by: its base table and the (cached) one compile_fx uses.
    Public: none (inductor has no registration API for custom ops' decompositions)."""
    from torch._inductor import decomposition as inductor
    return inductor.decompositions, inductor.select_decomp_table()


def register_inductor_pointwise(op, body, dtype) -> None:
    """Lowers op in inductor to one pointwise loop: out[i] = body(ops, in[i]) of dtype, body written
    with inductor's ops handler (torch._inductor.virtualized.ops). Once per op. Public: none
    (torch._inductor.lowering.register_lowering and make_pointwise are what inductor's own
    lowerings use)."""
    from torch._inductor.lowering import lowerings, make_pointwise, register_lowering
    from torch._inductor.virtualized import ops
    if op not in lowerings:
        register_lowering(op, type_promotion_kind=None)(
            make_pointwise(lambda x: body(ops, x), override_return_dtype=dtype))


# ---- Inductor's partitioner hook (relugrad.torch.saved_bits) ---------------------------------
# Inductor decides what a compiled training graph saves for backward in its partitioner, and
# lets a CustomPartitionerFn replace it (torch._inductor.config.custom_partitioner_fn, read when a
# graph is compiled; its uuid() enters the FX graph cache key). Public: none; torch releases
# without it (the hook landed after 2.8) get None from partitioner_hook() and the reason.
def partitioner_hook():
    """(CustomPartitionerFn, the inductor config module, stock's min-cut partitioner, the
    file-hash function for uuid()), or a str saying why this torch has no such hook."""
    try:
        from torch._functorch.partitioners import min_cut_rematerialization_partition
        from torch._inductor import config
        from torch._inductor.custom_graph_pass import CustomPartitionerFn, get_hash_for_files
    except ImportError as e:
        return f"torch {torch.__version__} has no inductor partitioner hook ({e})"
    if not hasattr(config, "custom_partitioner_fn"):
        return f"torch {torch.__version__} has no torch._inductor.config.custom_partitioner_fn"
    return CustomPartitionerFn, config, min_cut_rematerialization_partition, get_hash_for_files


def fake_mode_of(t: Tensor):
    """The FakeTensorMode a graph node's fake value belongs to. Public: none
    (torch._guards.detect_fake_mode searches the same attribute)."""
    return t.fake_mode


def on_compile_start(callback) -> None:
    """callback(args) at the start of every dynamo compilation, registered once: torch._dynamo.reset()
    forgets it, so callers register again where it may have run. Public: none
    (torch._dynamo.callback_handler is what torch's own tooling registers with)."""
    import torch._dynamo
    if callback not in torch._dynamo.callback_handler.start_callbacks:
        torch._dynamo.callback_handler.register_start_callback(callback)


def compiling_backend():
    """The backend of the dynamo compilation running on this thread (None outside one): the
    compiler_fn of dynamo's _compile frame, unwrapped. Public: none (torch.compile's backend is
    not readable once compiling)."""
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "_compile" and "compiler_fn" in frame.f_locals \
                and frame.f_globals.get("__name__") == "torch._dynamo.convert_frame":
            fn = frame.f_locals["compiler_fn"]
            while hasattr(fn, "_torchdynamo_orig_backend"):
                fn = fn._torchdynamo_orig_backend
            while hasattr(fn, "compiler_fn") and not hasattr(fn, "__name__"):  # WrapBackendDebug
                fn = fn.compiler_fn
            return fn
        frame = frame.f_back
    return None


def is_inductor_backend(fn) -> bool:
    """Whether a backend (current_compile_backend()) is inductor's: torch.compile's default
    wrapper or compile_fx itself."""
    wrapper = getattr(torch, "_TorchCompileInductorWrapper", None)
    if wrapper is not None and isinstance(fn, wrapper):
        return True
    return getattr(fn, "__name__", "") in ("compile_fx", "inductor")


# ---- Module hooks, modes and saved-tensor hooks --------------------------------------------
def global_module_hooks() -> tuple:
    """nn.Module's global hook dicts (register_module_forward_hook and friends, which are public;
    the dicts they fill are not)."""
    from torch.nn.modules import module as m
    return tuple(getattr(m, name, None) or {} for name in (
        "_global_forward_hooks", "_global_forward_pre_hooks", "_global_backward_hooks",
        "_global_backward_pre_hooks"))


def global_forward_hooks() -> dict:
    from torch.nn.modules import module as m
    return m._global_forward_hooks


# The names of nn.Module's per-instance hook dicts, read from a module's __dict__: those that
# run around forward (script copies drop relugrad's entries from them), and every dict a call
# runs. Public: none (register_*_hook only adds; the handles only remove).
PRE_HOOKS, POST_HOOKS, ALWAYS_CALLED = "_forward_pre_hooks", "_forward_hooks", "_forward_hooks_always_called"
FORWARD_HOOK_DICTS = (PRE_HOOKS, POST_HOOKS, ALWAYS_CALLED, "_forward_pre_hooks_with_kwargs",
                      "_forward_hooks_with_kwargs")
CALL_HOOK_DICTS = (POST_HOOKS, PRE_HOOKS, "_backward_hooks", "_backward_pre_hooks")
# What a replacement module takes over from the module it replaces: every hook and state-dict-hook
# dict (the same dict objects, so the handles a user holds still remove their hooks) and the
# full-backward-hook flag. Public: none.
MODULE_HOOK_STATE = FORWARD_HOOK_DICTS + ("_backward_hooks", "_backward_pre_hooks", "_state_dict_hooks",
                                          "_state_dict_pre_hooks", "_load_state_dict_pre_hooks",
                                          "_load_state_dict_post_hooks", "_is_full_backward_hook")
# Module.compile()'s per-instance compiled call, in a module's __dict__. Public: none.
COMPILED_CALL_ATTR = "_compiled_call_impl"


def forward_hooks(m: nn.Module) -> dict:
    """m's own forward hooks by handle id. Public: none to read them
    (register_forward_hook adds one)."""
    return m._forward_hooks


def forward_pre_hooks(m: nn.Module) -> dict:
    """m's own forward pre-hooks by handle id. Public: none to read them
    (register_forward_pre_hook adds one)."""
    return m._forward_pre_hooks


# ---- nn.Module's registered slots ------------------------------------------------------------
def child_slots(m: nn.Module) -> dict:
    """m's child slots by name (nn.Module._modules), in registration order, None slots and a child
    held under two names included. Public: named_children(), which skips both."""
    return m._modules


def set_child_slots(m: nn.Module, slots: dict) -> None:
    """Gives m (a shallow copy) a child-slot dict of its own (nn.Module._modules). Public: none
    (register_module writes into the dict m shares with the module it was copied from)."""
    m.__dict__["_modules"] = slots


def has_slots(m: nn.Module) -> bool:
    """Whether m registered any parameter, buffer or child, a None slot included. Public:
    named_parameters / named_buffers(recurse=False) and named_children(), which skip None slots."""
    return bool(m._parameters or m._buffers or m._modules)


# nn.Module's call path, whose frames mark a running module call. Public: none.
MODULE_CALL_CODE = nn.Module._call_impl.__code__

# Whether any TorchFunctionMode is active, and the active ones. Public: none
# (torch.overrides.TorchFunctionMode is public; its stack is not).
function_mode_enabled = _TC._is_torch_function_mode_enabled
current_function_modes = getattr(torch.overrides, "_get_current_function_mode_stack", None)
function_mode_depth = _TC._len_torch_function_stack
function_mode_at = _TC._get_function_stack_at
pop_function_mode = _TC._pop_torch_function_stack
push_function_mode = _TC._push_on_torch_function_stack

# The saved-tensor hooks stack (torch.autograd.graph.saved_tensors_hooks is the public way to
# enter one; reading or editing the stack has none). Absent in older releases: callers fall back.
_autograd = _TC._autograd
top_saved_tensors_hooks = getattr(_autograd, "_top_saved_tensors_default_hooks", None)
push_saved_tensors_hooks = _autograd._push_saved_tensors_default_hooks
pop_saved_tensors_hooks = _autograd._pop_saved_tensors_default_hooks
# A storage's use count (how many owners keep it). Public: none; absent: the probe decides nothing.
storage_use_count = getattr(_TC, "_storage_Use_Count", None)


def storage_handle(storage):
    """The C handle storage_use_count reads (UntypedStorage._cdata)."""
    return storage._cdata


def tree_leaves(tree) -> list:
    """torch.utils._pytree.tree_leaves (public in torch.utils.pytree from 2.9 on)."""
    import torch.utils._pytree as pytree
    return pytree.tree_leaves(tree)


# ---- Quantization ----------------------------------------------------------------------------
def fuser_table() -> dict:
    """fuse_modules' default table of fusers by module types. Public:
    fuse_modules(..., fuse_custom_config_dict={"additional_fuser_method_mapping": ...}) for one call."""
    from torch.ao.quantization import fuser_method_mappings as fmm
    return fmm._DEFAULT_OP_LIST_TO_FUSER_METHOD


def fused_quantization_module_type() -> type:
    """The base class of torch.ao.nn.intrinsic's fused modules (ConvReLU2d...). Public: none."""
    return torch.ao.nn.intrinsic._FusedModule


# ---- torch.library custom ops -----------------------------------------------------------------
def custom_op_parts(op_def):
    """(OpOverload, its schema, its Library, its name) of a torch.library.custom_op. Public: none
    (CustomOpDef exposes register_* methods, not its Library; OpOverload its schema as _schema)."""
    op = op_def._opoverload
    return op, op._schema, op_def._lib, op_def._name
