"""Saved booleans as bits in compiled training graphs: relugrad.torch.saved_bits, the switch, and
the graph rewrite it turns on.

A compiled training step keeps, for backward, what inductor's partitioner chooses: among them
booleans at one byte per element (ReLU gates `le`, dropout's keep mask `gt`, any other saved
comparison). With saved_bits on, every boolean the partitioner saves is saved packed, one bit per
element, LSB first (bit k of byte j is element 8j + k of the tensor's storage order, as relugrad's
mask), written by the forward graph and read by the backward graph through inductor's own code
generation (C++ on the CPU, Triton on a GPU): the rewrite adds graph ops that inductor generates
code for, never a kernel of its own.

Where: after stock's partitioner. The partitioner decides what is saved (and what is recomputed);
saved_bits keeps every one of those decisions and only changes how the saved booleans cross from
the forward graph to the backward graph: in the forward graph, one packed plane (per device)
replaces them among the saved outputs; in the backward graph, a uint8 placeholder replaces theirs
and unpacks of the plane feed their users. Nothing is recomputed, no random op moves, so outputs,
gradients and the RNG stream are compiled stock's bit for bit (the booleans read back are the
ones written).

The plane: the booleans in the order the backward graph first reads them, each in its memory
order and starting on a byte of bits, concatenated (inductor's cat has each forward kernel write
its boolean into its place: no copy), viewed as int64 words of 8 bytes of 0/1 and packed, each
word folded by three shift-ors (w |= w >> 7, >> 14, >> 28: byte j gathers bytes j..j+7 into its
bits 0..7, no bit set twice) and its low byte kept. In the backward graph, each run of booleans
whose first readers only pointwise nodes and views separate (the ReLU gate and the dropout mask
one kernel reads) is unpacked by one loop (p |= p << 28, << 14, << 7, masked to the low bit of
each byte) into int64 words viewed as bools, just before the run's first reader. The two word
loops are relugrad ops (pack_words, unpack_words) that inductor lowers to one pointwise loop each.
One plane and one unpack per run, rather than a pack and an unpack per boolean, is compile time:
each loop is a kernel inductor lowers, schedules and generates code for. Both ends go through the
bitcast on purpose: a bitcast that changes the element size makes inductor materialize the bool
buffer, so the forward kernels that write it and the backward kernels that read it are stock's
own, fused as stock fuses them (an unpack inlined into a backward kernel changes that kernel's
loop, its vectorization and so the order of its reductions: other bits). The cost is one pass
over n bytes each way.

Left as they are (saved_bits.decisions() says which and why): a boolean that is also a graph
output (its bytes exist anyway), a graph input, one with a symbolic shape (dynamic shapes: the
backward graph would lose the symbols its size binds), one that is not dense in memory, and one of
fewer than MIN_ELEMENTS elements (no saving worth a kernel).

How it is turned on: saved_bits() (process-wide, or as a context manager around the calls that
compile: torch.compile compiles at the first call), and replace_relu(model, mask=True), which
turns it on for the process. Off (the default), inductor's config is untouched and the compiled
graph is stock's, byte for byte. On a torch without the hook, or under another backend than
inductor, nothing changes and one warning says why.
"""
from __future__ import annotations

import collections
import math
import threading
import warnings
from typing import List, NamedTuple, Optional

import torch

from .. import _compat

__all__ = ["saved_bits", "is_enabled", "decisions", "Decision", "MIN_ELEMENTS"]

aten = torch.ops.aten

# Below a 64-bit word of bits the packed copy saves fewer bytes than one allocation's alignment
# (torch's allocators round every block to at least 64 bytes).
MIN_ELEMENTS = 64
# Every shift keeps values below 2**57: no sign bit, no overflow, in C++ and Triton alike.
_PACK_SHIFTS = (7, 14, 28)
_UNPACK_SHIFTS = (28, 14, 7)
_LOW_BITS = 0x0101010101010101


def _pack_body(ops, w):
    """Bytes b0..b7 (each 0 or 1) of int64 word w -> the byte sum(b_k << k), as uint8; ops is
    torch for eager tensors and inductor's ops handler in a lowering."""
    for s in _PACK_SHIFTS:
        w = ops.bitwise_or(w, ops.bitwise_right_shift(w, _const(ops, s)))
    return _to(ops, ops.bitwise_and(w, _const(ops, 255)), torch.uint8)


def _unpack_body(ops, p):
    """A packed byte -> the int64 word of its 8 bits, one per byte (0 or 1), bit 0 in byte 0."""
    w = _to(ops, p, torch.int64)
    for s in _UNPACK_SHIFTS:
        w = ops.bitwise_or(w, ops.bitwise_left_shift(w, _const(ops, s)))
    return ops.bitwise_and(w, _const(ops, _LOW_BITS))


def _const(ops, value):
    return value if ops is torch else ops.constant(value, torch.int64)


def _to(ops, x, dtype):
    return x.to(dtype) if ops is torch else ops.to_dtype(x, dtype)


@torch.library.custom_op("relugrad::pack_words", mutates_args=())
def _pack_words(words: torch.Tensor) -> torch.Tensor:
    """int64 words of 8 bools each -> one byte of 8 bits each (saved_bits' pack)."""
    return _pack_body(torch, words)


@_pack_words.register_fake
def _(words):
    return torch.empty_like(words, dtype=torch.uint8)


@torch.library.custom_op("relugrad::unpack_words", mutates_args=())
def _unpack_words(bits: torch.Tensor) -> torch.Tensor:
    """Bytes of 8 bits -> int64 words of 8 bools each (saved_bits' unpack)."""
    return _unpack_body(torch, bits)


@_unpack_words.register_fake
def _(bits):
    return torch.empty_like(bits, dtype=torch.int64)


def _lower_words_ops() -> None:
    """Inductor's lowerings of the two word ops (inductor is loaded: the rewrite runs inside it)."""
    _compat.register_inductor_pointwise(torch.ops.relugrad.pack_words.default, _pack_body, torch.uint8)
    _compat.register_inductor_pointwise(torch.ops.relugrad.unpack_words.default, _unpack_body, torch.int64)


class Decision(NamedTuple):
    """What the rewrite did with one saved boolean: packed, or left and why."""
    name: str
    shape: tuple
    packed: bool
    reason: str


_lock = threading.Lock()
_state = {"on": False, "installed": None, "warned": set()}
_decisions: collections.deque = collections.deque(maxlen=256)


def is_enabled() -> bool:
    """Whether compiled training graphs save their booleans as bits now (on, and this torch has
    inductor's partitioner hook)."""
    return _state["on"] and _state["installed"] is not None


def decisions() -> List[Decision]:
    """The rewrite's decisions for the graphs compiled since the last call (oldest first), then
    forgotten: which saved booleans were packed, which were left and why."""
    with _lock:
        out = list(_decisions)
        _decisions.clear()
    return out


def _warn_once(key: str, message: str) -> None:
    if key not in _state["warned"]:
        _state["warned"].add(key)
        warnings.warn(f"relugrad.torch.saved_bits: {message}", RuntimeWarning, stacklevel=3)


class saved_bits:
    """Turns bit-packed saved booleans in compiled training graphs on (enabled=True) or off.

    Called, it sets the state for the process; as a context manager, it restores the state it
    found on exit (as torch.set_grad_enabled). It applies to graphs compiled while it is on:
    torch.compile compiles at a model's first call (and at each recompilation), so turn it on
    before that call. Where this torch has no inductor partitioner hook it warns once and
    changes nothing."""

    def __init__(self, enabled: bool = True) -> None:
        if not isinstance(enabled, bool):
            raise TypeError(f"saved_bits: enabled must be a bool, not {type(enabled).__name__}")
        self.prev = _state["on"]
        _set(enabled)

    def __enter__(self) -> "saved_bits":
        return self

    def __exit__(self, *exc) -> None:
        _set(self.prev)

    def __repr__(self) -> str:
        return f"saved_bits({_state['on']})"


def _set(on: bool, quiet: bool = False) -> None:
    """Turns the rewrite on or off. Where this torch has no hook, on is remembered and the
    warning comes now (quiet=False) or at the next compilation (replace_relu's quiet request)."""
    with _lock:
        _state["on"] = on
        hook = _compat.partitioner_hook()
        if on:
            _compat.on_compile_start(check_backend)
        if isinstance(hook, str):
            if on and not quiet:
                _warn_once("hook", hook + "; compiled graphs save booleans as stock does")
            return
        _, config, _, _ = hook
        if on and _state["installed"] is None:
            # Wrap whatever partitioner is configured (a user's own included): it decides, then
            # the saved booleans are packed.
            _state["installed"] = _Partitioner(config.custom_partitioner_fn)
            config.custom_partitioner_fn = _state["installed"]
        elif not on and _state["installed"] is not None:
            if config.custom_partitioner_fn is _state["installed"]:
                config.custom_partitioner_fn = _state["installed"].inner
            _state["installed"] = None


def request() -> None:
    """replace_relu(mask=True)'s request: on for the process, warning (if this torch has no hook)
    at the first compilation rather than in eager code that never compiles."""
    if not _state["on"]:
        _set(True, quiet=True)


def check_backend(_args=None) -> None:
    """At each dynamo compilation while saved_bits is on (and from relugrad's ops while dynamo
    traces them): one warning where the backend is not inductor (its partitioner is the only one
    that calls saved_bits)."""
    if not _state["on"]:
        return
    _compat.on_compile_start(check_backend)  # again after a torch._dynamo.reset()
    hook = _compat.partitioner_hook()
    if isinstance(hook, str):
        _warn_once("hook", hook + "; compiled graphs save booleans as stock does")
        return
    if "backend" in _state["warned"]:
        return
    backend = _compat.compiling_backend()
    if backend is not None and not _compat.is_inductor_backend(backend):
        name = getattr(backend, "__name__", type(backend).__name__)
        _warn_once("backend", f"backend {name!r} is not inductor: its graphs save booleans as stock "
                              "does (saved_bits rewrites inductor's partition only)")


def _partitioner_base():
    hook = _compat.partitioner_hook()
    return object if isinstance(hook, str) else hook[0]


class _Partitioner(_partitioner_base()):
    """inductor's custom_partitioner_fn: the configured partitioner (stock's min-cut, or the
    user's), then the saved booleans packed."""

    def __init__(self, inner) -> None:
        super().__init__()
        self.inner = inner

    def __call__(self, gm, joint_inputs, **kwargs):
        _, _, min_cut, _ = _compat.partitioner_hook()

        def partition():
            if self.inner is not None:
                return self.inner(gm, joint_inputs, **kwargs)
            return min_cut(gm, joint_inputs, **kwargs)
        fw, bw = partition()
        if "num_fwd_outputs" not in kwargs:
            _warn_once("outputs", "this torch's partitioner call does not say how many forward outputs there "
                                  "are; compiled graphs save booleans as stock does")
            return fw, bw
        try:
            made = rewrite(fw, bw, kwargs["num_fwd_outputs"])
        except Exception as e:  # a graph the rewrite does not know: stock's partition, not a failed compile
            _warn_once("rewrite", f"the rewrite failed ({type(e).__name__}: {e}); this graph saves "
                                  "booleans as stock does")
            return partition()
        with _lock:
            _decisions.extend(made)
        return fw, bw

    def uuid(self):
        _, _, _, file_hash = _compat.partitioner_hook()
        inner = self.inner.uuid() if self.inner is not None else None
        return (file_hash((__file__,)), inner)


# ---- The rewrite -------------------------------------------------------------------------------

def _emit(graph, fake_mode, target, *args, **kwargs):
    """A call_function node with its fake value (inductor lowers by node.meta["val"])."""
    node = graph.call_function(target, args, kwargs)
    fake_args, fake_kwargs = torch.fx.node.map_arg((args, kwargs), lambda a: a.meta["val"])
    with fake_mode:
        node.meta["val"] = target(*fake_args, **fake_kwargs)
    return node


def _memory_order(v: torch.Tensor) -> Optional[list]:
    """The permutation that makes a dense tensor contiguous (dims by stride, outermost first), or
    None where it is not dense (overlapping or with gaps)."""
    if v.is_contiguous():
        return list(range(v.dim()))
    dims = sorted(range(v.dim()), key=lambda d: (-v.stride(d), d))
    expected = 1
    for d in reversed(dims):
        if v.shape[d] != 1 and v.stride(d) != expected:
            return None
        expected *= v.shape[d]
    return dims


def _why_left(node, v, outputs) -> Optional[str]:
    if node.op != "call_function":
        return "a graph input"
    if node in outputs:
        return "also a graph output"
    if any(not isinstance(s, int) for s in (*v.shape, *v.stride(), v.storage_offset())):
        return "symbolic shape"
    if v.numel() < MIN_ELEMENTS:
        return f"fewer than {MIN_ELEMENTS} elements"
    if _memory_order(v) is None:
        return "not dense in memory"
    return None


class _Member(NamedTuple):
    """A saved boolean the rewrite packs."""
    index: int           # its place among the forward graph's outputs
    node: torch.fx.Node  # in the forward graph
    val: torch.Tensor    # its fake value
    old: torch.fx.Node   # its placeholder in the backward graph
    first: int           # where its first reader stands in the backward graph


def _fused_away(node) -> bool:
    """A backward node inductor folds into the kernel that reads it (pointwise, a view, a fill):
    unpacking a boolean before such nodes keeps its bytes alive no longer than stock's."""
    t = node.target
    return node.op == "call_function" and isinstance(t, torch._ops.OpOverload) and (
        torch.Tag.pointwise in t.tags or t.is_view or t is aten.full.default)


def _pack(graph, fm, members):
    """One plane for the members (in that order): each in memory order, starting on a byte of
    bits. Where they have two or more dims, share their memory-order shape past dim 0 and its last
    dim holds whole bytes, they are concatenated along dim 0 as they are (rows=True: spans count
    rows of the plane); else each is flattened and padded with False to whole bytes (spans count
    bytes). Returns (plane, [(lo, hi) of each member along the plane's dim 0], rows)."""
    shapes = [[m.val.shape[d] for d in _memory_order(m.val)] for m in members]
    rows = len(shapes[0]) > 1 and all(s[1:] == shapes[0][1:] for s in shapes) and shapes[0][-1] % 8 == 0
    pieces, spans, at = [], [], 0
    for m, shape in zip(members, shapes):
        b, order = m.node, _memory_order(m.val)
        if order != list(range(m.val.dim())):
            b = _emit(graph, fm, aten.permute.default, b, order)
        if rows:
            pieces.append(b)
            spans.append((at, at + shape[0]))
            at += shape[0]
            continue
        n = m.val.numel()
        pad = -n % 8
        flat = _emit(graph, fm, aten.view.default, b, [n])
        if pad and len(members) == 1:  # a new buffer of whole words, zero bits after the last element
            flat = _emit(graph, fm, aten.constant_pad_nd.default, flat, [0, pad], 0.0)
        pieces.append(flat)
        if pad and len(members) > 1:
            pieces.append(_emit(graph, fm, aten.full.default, [pad], False, dtype=torch.bool, device=m.val.device))
        spans.append((at // 8, (at + n + pad) // 8))
        at += n + pad
    if len(pieces) > 1:
        # inductor's cat writes each piece where its kernel computes it: no copy (the members
        # are contiguous, so each piece's loop is its kernel's).
        plane = _emit(graph, fm, aten.cat.default, pieces)
    elif members[0].val.storage_offset() % 8:  # a view off a word boundary: its own buffer
        plane = _emit(graph, fm, aten.clone.default, pieces[0])
    else:
        plane = pieces[0]
    words = _emit(graph, fm, aten.view.dtype, plane, torch.int64)
    return _emit(graph, fm, torch.ops.relugrad.pack_words.default, words), spans, rows


def _unpack(graph, fm, bits, members, spans, rows):
    """The members (adjacent in the plane) read back from bits, one unpack for all: each with
    its shape and strides, views of one buffer; returns them in order."""
    lo, hi = spans[0][0], spans[-1][1]
    if (lo, hi) != (0, bits.meta["val"].shape[0]):
        bits = _emit(graph, fm, aten.slice.Tensor, bits, 0, lo, hi)
    words = _emit(graph, fm, torch.ops.relugrad.unpack_words.default, bits)
    plane = _emit(graph, fm, aten.view.dtype, words, torch.bool)
    # Elements of the unpacked plane per unit of a span: a row, or a byte of bits.
    per = math.prod(plane.meta["val"].shape[1:]) if rows else 8
    out = []
    for m, (a, _) in zip(members, spans):
        # Each member is dense and was packed in its memory order: its own sizes and strides from
        # its first element in the plane (one view, the permutation included).
        out.append(_emit(graph, fm, aten.as_strided.default, plane, list(m.val.shape), list(m.val.stride()),
                         (a - lo) * per))
    return out


def _live_bytes(nodes) -> Optional[list]:
    """An estimate of the bytes the backward graph holds at each of its nodes: each tensor from
    the node that makes it to its last reader, a view nothing of its own (inductor keeps many
    fused intermediates in registers: an upper bound, used only to compare placements). None
    where a size is symbolic."""
    pos = {n: k for k, n in enumerate(nodes)}
    delta = [0] * (len(nodes) + 1)
    for n in nodes:
        v = n.meta.get("val")
        if not isinstance(v, torch.Tensor) or (n.op == "call_function" and getattr(n.target, "is_view", False)):
            continue
        size = v.numel() * v.element_size()
        if not isinstance(size, int):
            return None
        delta[pos[n]] += size
        delta[max((pos[u] for u in n.users), default=pos[n]) + 1] -= size
    live, total = [], 0
    for d in delta[:-1]:
        total += d
        live.append(total)
    return live


def _runs(members, bw_nodes, bits_bytes) -> list:
    """The members (sorted by first reader) in runs, each unpacked by one kernel just before its
    first member's first reader: consecutive members whose first readers only fused-away nodes
    separate (one backward kernel reads them), then, run after run, the next run too where
    unpacking it that early keeps the backward graph's estimated peak (_live_bytes, with the
    booleans held from their unpacks on and the plane until the last) where it is. Every unpack
    is a kernel to compile; a boolean unpacked early holds its bytes no longer than stock's
    saved one, which lives from the backward graph's start."""
    runs: list = []
    for k, m in enumerate(members):
        if m.first == len(bw_nodes):  # not read by the backward graph: nothing to unpack
            continue
        if runs and all(_fused_away(n) for n in bw_nodes[members[runs[-1][-1]].first:m.first]):
            runs[-1].append(k)
        else:
            runs.append([k])
    live = _live_bytes(bw_nodes)
    if live is None or len(runs) < 2:
        return runs
    size = [m.val.numel() for m in members]  # bool: a byte each
    for run in runs:  # held from the unpack on, not from the start as the saved booleans were
        held = sum(size[k] for k in run)
        for t in range(members[run[0]].first):
            live[t] -= held
    for t in range(members[runs[-1][0]].first):
        live[t] += bits_bytes
    peak = max(live)
    merged = [runs[0]]
    for run in runs[1:]:
        start, end = members[merged[-1][0]].first, members[run[0]].first
        extra = sum(size[k] for k in run)
        if max(live[start:end]) + extra <= peak:
            for t in range(start, end):
                live[t] += extra
            merged[-1] = merged[-1] + run
        else:
            merged.append(run)
    return merged


def rewrite(fw: torch.fx.GraphModule, bw: torch.fx.GraphModule, num_fwd_outputs: int) -> List[Decision]:
    """Packs the saved booleans of a partitioned pair (fw returns its num_fwd_outputs outputs,
    then what bw takes by the same names); edits both graphs in place, returns the decisions."""
    out = fw.graph.output_node()
    values = list(out.args[0])
    outputs = {a for a in values[:num_fwd_outputs] if isinstance(a, torch.fx.Node)}
    bw_nodes = list(bw.graph.nodes)
    where = {n: k for k, n in enumerate(bw_nodes)}
    bw_inputs = {n.name: n for n in bw_nodes if n.op == "placeholder"}
    made: List[Decision] = []
    groups: dict = collections.defaultdict(list)  # (device, None or the index of a permuted one) -> members
    done = set()
    for i in range(num_fwd_outputs, len(values)):
        b = values[i]
        v = b.meta.get("val") if isinstance(b, torch.fx.Node) else None
        if not isinstance(v, torch.Tensor) or v.dtype is not torch.bool or b in done:
            continue
        done.add(b)
        reason = _why_left(b, v, outputs)
        if reason is None and b.name not in bw_inputs:
            reason = "not a backward input by its name"
        if reason is not None:
            made.append(Decision(b.name, tuple(v.shape), False, reason))
            continue
        old = bw_inputs[b.name]
        first = min((where[u] for u in old.users), default=len(bw_nodes))
        # One plane for the contiguous booleans of a device. A permuted one (channels_last) has
        # its own: flattened in its memory order into a cat, its loop would no longer be the one
        # of the kernel that computes it in stock's graph, but a kernel of its own.
        key = (v.device, None if v.is_contiguous() else i)
        groups[key].append(_Member(i, b, v, old, first))
    if not groups:
        return made
    _lower_words_ops()
    dropped = set()
    for members in groups.values():
        # The plane holds the members in the order the backward graph first reads them, so that
        # those read by one backward kernel are adjacent and unpacked together.
        members.sort(key=lambda m: (m.first, m.index))
        fm = _compat.fake_mode_of(members[0].val)
        with fw.graph.inserting_before(out):
            bits, spans, rows = _pack(fw.graph, fm, members)
        slot = min(m.index for m in members)
        values[slot] = bits
        dropped.update(m.index for m in members if m.index != slot)
        slot_old = next(m.old for m in members if m.index == slot)
        with bw.graph.inserting_before(slot_old):
            new = bw.graph.placeholder(slot_old.name + "_bits")
        new.meta["val"] = bits.meta["val"]
        runs = _runs(members, bw_nodes, bits.meta["val"].numel())
        for run in runs:
            with bw.graph.inserting_before(bw_nodes[members[run[0]].first]):
                got = _unpack(bw.graph, fm, new, [members[k] for k in run], [spans[k] for k in run], rows)
            for k, t in zip(run, got):
                members[k].old.replace_all_uses_with(t)
        for m in members:
            bw.graph.erase_node(m.old)
            made.append(Decision(m.node.name, tuple(m.val.shape), True, "packed"))
    out.args = (tuple(a for i, a in enumerate(values) if i not in dropped),)
    fw.graph.lint()
    bw.graph.lint()
    fw.recompile()
    bw.recompile()
    return made
