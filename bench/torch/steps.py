"""steps: one training step of whole models, stock against relugrad, in one process.

    .venv/bin/python -m bench.torch steps --models resnet18,mlp --layouts nchw,channels_last
    .venv/bin/python -m bench.torch steps --mask --peak --models transformer,mlp,mlp_dropout,resnet50 \
        --layouts nchw --json docs/results/<machine>/torch_report-memory.json

For each model and layout, a stock model and a copy with relugrad.torch.replace_relu (same
weights) each run `loss = model(x).square().mean(); loss.backward(); zero_grad` in alternating
rounds (the first of each round alternating); a round times each candidate over --steps steps,
and the reported ratio is the median of the per-round ratios relugrad / stock with a
distribution-free ~95% interval of that median in brackets (the machine is shared: only ratios
taken side by side mean anything). The CPU time ratio is the same statistic over the process's CPU
time in those rounds (time.process_time: every thread's user and system time, torch's spinning
OpenMP threads included; under a hypervisor the time the host took the vCPU away is not in it). Saved-for-backward bytes are counted with saved_tensors_hooks (each storage
once). Both candidates' first step is checked bit for bit (loss and every gradient, the same
generator seed for dropout) before timing; with --mask that first step is also replace_relu's
probe step, which decides each ReLU's mask.

--control: the "relugrad" candidate is a plain copy of the stock model (no replace_relu): an A/A run
that shows what the bench itself puts between two identical models (placement, order).

--one-model: both candidates are one model whose ReLU modules are switched between stock's nn.ReLU
and relugrad's before each candidate runs, so they share every parameter, gradient and input
tensor, and where those sit in memory (two models' weights land at different addresses, and
placement alone moves a step's time). With --control the other candidate's modules are
fresh nn.ReLUs. Eager, without --mask, for models replace_relu serves without the functional
scope (resnets, mlp).

--with-control: a third candidate, a copy of stock (with --one-model: fresh copies of stock's
ReLU modules), timed in the same rounds (the order rotating), so the A/A ratio copy / stock is
taken under the same conditions as relugrad / stock.

--relu-profile: the time a step spends in its ReLUs, from torch.profiler over --steps steps per
candidate (--profile-passes profiled passes each, interleaved; the medians, and the median of the
per-pass ratios): the summed CPU time of every top-level ReLU
event, forward (stock aten::relu/relu_, relugrad relugrad_native::relu/relu_ and the custom ops)
and backward (the engine's evaluate_function of ReluBackward0 / relugrad's nodes), an event
nested in another one counted once. Both sides pay the profiler's per-event cost, relugrad's
forward once more than stock's (relugrad_native::relu_ records an event around aten::relu_: one
more event per ReLU call), so this measure leans against relugrad.

--peak: the peak memory of one eager training step (also with --compile), measured in a child process per model and
candidate (so neither sees the other's allocations; the median of --peak-runs children): after two warm-up steps the kernel's
resident-set high-water mark is reset (writing 5 to /proc/self/clear_refs), one step runs, and
the figure is VmHWM minus the resident set before the step. The child runs with glibc's mmap
threshold fixed at 128 KiB (MALLOC_MMAP_THRESHOLD_; a fixed value turns off its growth), so every
tensor of a step above that is its own mapping, returned to the kernel when freed: the resident
set follows the live tensors (torch's CPU allocator caches nothing). Linux and glibc only.
"""
import argparse
import copy
import ctypes
import json
import os
import re
import statistics
import subprocess
import sys
import time
from typing import Optional

import torch
from torch import nn

import relugrad.torch as rt

from .common import (MODELS, ROOT, build_stock, command_line, cpu_name, median_ratio, ratio_interval, rotated,
                     step)


def saved_bytes(model: nn.Module, x: torch.Tensor) -> int:
    """Bytes of the storages one training step saves for backward (each storage once), on any
    device: what saved_tensors_hooks sees, which is what a compiled graph hands to autograd too."""
    seen = {}

    def pack(t):
        if isinstance(t, torch.Tensor) and not t.is_nested:
            storage = t.untyped_storage()
            seen[storage.data_ptr()] = storage.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        loss = model(x).square().mean()
    loss.backward()
    model.zero_grad(set_to_none=True)
    return sum(seen.values())


def same_first_step(candidate, x: torch.Tensor) -> bool:
    """Loss and every gradient of one step, stock's and relugrad's, equal bit for bit."""
    results = []
    for who in ("stock", "ours"):
        model = candidate(who)
        torch.manual_seed(1)
        loss = step(model, x)
        results.append((loss, [None if p.grad is None else p.grad.clone() for p in model.parameters()]))
        model.zero_grad(set_to_none=True)
    (a, grads_a), (b, grads_b) = results
    return torch.equal(a, b) and len(grads_a) == len(grads_b) and all(
        (g is None and h is None) or (g is not None and h is not None and torch.equal(g, h))
        for g, h in zip(grads_a, grads_b))


class TwoModels:
    """The candidates as separate models with the same weights ("copy": --with-control's)."""

    def __init__(self, stock: nn.Module, ours: nn.Module, control_copy: Optional[nn.Module]):
        self.models = {"stock": stock, "ours": ours}
        if control_copy is not None:  # a copy of stock made before any compile, compiled as stock was
            self.models["copy"] = control_copy

    def __call__(self, who: str) -> nn.Module:
        return self.models[who]


class OneModel:
    """The candidates as one model whose ReLU modules are switched (see --one-model)."""

    def __init__(self, model: nn.Module, control: bool, with_control: bool):
        before = _child_slots(model)
        if control:
            for parent, attr, child in before.values():
                if type(child) is nn.ReLU:
                    setattr(parent, attr, copy.deepcopy(child))
        else:
            _, report = rt.replace_relu(model, return_report=True)
            if report.left:
                raise SystemExit(f"--one-model: replace_relu leaves {report.left}; run without --one-model")
        after = _child_slots(model)
        switched = [key for key, (_, _, child) in before.items() if after[key][2] is not child]
        if not switched:
            raise SystemExit("--one-model: the model has no nn.ReLU module to switch")
        self.slots = [before[key][:2] for key in switched]
        self.modules = {"stock": [before[key][2] for key in switched], "ours": [after[key][2] for key in switched]}
        if with_control:  # fresh copies of stock's modules
            self.modules["copy"] = [copy.deepcopy(before[key][2]) for key in switched]
        self.model = model
        self("stock")

    def __call__(self, who: str) -> nn.Module:
        for (parent, attr), module in zip(self.slots, self.modules[who]):
            setattr(parent, attr, module)
        return self.model


def _child_slots(model: nn.Module) -> dict:
    """(id(parent), attribute) -> (parent, attribute, child) for every submodule."""
    return {(id(parent), attr): (parent, attr, child)
            for parent in model.modules() for attr, child in parent.named_children()}


RELU_EVENTS = re.compile(
    r"^(aten::relu_?|relugrad_native::relu_?|relugrad::relu(_mask)?"
    r"|autograd::engine::evaluate_function: (ReluBackward0|relugrad::Relu(Mask)?Backward))$")


def relu_ms_per_step(model: nn.Module, x: torch.Tensor, steps: int) -> float:
    """CPU ms per step in top-level ReLU events (see --relu-profile)."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(steps):
            step(model, x)
            model.zero_grad(set_to_none=True)
    total_us = 0.0
    for event in prof.events():
        if not RELU_EVENTS.match(event.name):
            continue
        parent = event.cpu_parent
        while parent is not None and not RELU_EVENTS.match(parent.name):
            parent = parent.cpu_parent
        if parent is None:
            total_us += event.cpu_time_total
    return total_us / 1e3 / steps


def time_steps(model: nn.Module, x: torch.Tensor, steps: int):
    """(wall seconds, process CPU seconds) per step."""
    start, start_cpu = time.perf_counter(), time.process_time()
    for _ in range(steps):
        step(model, x)
        model.zero_grad(set_to_none=True)
    return (time.perf_counter() - start) / steps, (time.process_time() - start_cpu) / steps


def build(name: str, layout: str, mask: bool, control: bool = False):
    """(stock, relugrad, x) for model `name`: the same weights, replace_relu(mask=mask), with
    functional=True only where a functional relu would be left (none of MODELS leaves one): the
    functional scope costs a Python call per torch function in the forward."""
    stock, x = build_stock(name, layout)
    if control:
        ours = copy.deepcopy(stock)
    else:
        ours, report = rt.replace_relu(copy.deepcopy(stock), mask=mask, return_report=True)
        if report.left:
            ours = rt.replace_relu(copy.deepcopy(stock), mask=mask, functional=True)
    return stock, ours, x


def _status_kib(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"/proc/self/status has no {field}")


def child_peak(name: str, layout: str, mask: bool, which: str) -> None:
    """Prints the peak memory (bytes) of one training step of one candidate: see --peak."""
    stock, ours, x = build(name, layout, mask)
    model = stock if which == "stock" else ours
    del stock, ours  # model holds the one measured
    for _ in range(2):  # warm-up; with --mask the first is the probe step
        torch.manual_seed(1)
        step(model, x)
        model.zero_grad(set_to_none=True)
    print(json.dumps({"peak_bytes": step_peak(model, x)}))


def step_peak(model: nn.Module, x: torch.Tensor) -> int:
    """The resident-set high-water mark of one seeded step above the resident set before it
    (bytes; see --peak), after warm-up steps the caller ran."""
    ctypes.CDLL("libc.so.6").malloc_trim(0)  # what small-block arenas hold free goes back first
    before = _status_kib("VmRSS")
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    torch.manual_seed(1)
    step(model, x)
    return (_status_kib("VmHWM") - before) * 1024


def peak_bytes(name: str, layout: str, mask: bool, which: str, threads: int, runs: int) -> list:
    """The figures of `runs` child processes, sorted (a child's figure moves by a few pages)."""
    cmd = [sys.executable, "-m", "bench.torch", "steps", "--child", f"{name}:{layout}:{which}"] + (
        ["--mask"] if mask else [])
    if threads:
        cmd += ["--torch-threads", str(threads)]
    env = dict(os.environ, MALLOC_MMAP_THRESHOLD_="131072")
    peaks = []
    for _ in range(runs):
        out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env, cwd=ROOT).stdout
        peaks.append(json.loads(out.strip().splitlines()[-1])["peak_bytes"])
    return sorted(peaks)


def add_arguments(ap) -> None:
    ap.add_argument("--models", default="resnet18,resnet50,mlp,transformer")
    ap.add_argument("--layouts", default="nchw,channels_last")
    ap.add_argument("--mask", action="store_true", help="replace_relu(mask=True)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--torch-threads", type=int, default=0, help="torch.set_num_threads (0: leave as is)")
    ap.add_argument("--peak", action="store_true", help="also the peak memory of a step (a child process each)")
    ap.add_argument("--peak-runs", type=int, default=3, help="child processes per candidate (--peak): the median")
    ap.add_argument("--json", help="write the rows to this JSON file")
    ap.add_argument("--control", action="store_true", help="A/A: the second candidate is a copy of stock")
    ap.add_argument("--with-control", action="store_true",
                    help="also time a copy of stock in the same rounds: the A/A column")
    ap.add_argument("--one-model", action="store_true",
                    help="one model whose ReLU modules are switched between the candidates (eager, no --mask)")
    ap.add_argument("--relu-profile", action="store_true", help="also the ReLUs' time per step (torch.profiler)")
    ap.add_argument("--profile-passes", type=int, default=6, help="profiled passes per candidate (--relu-profile)")
    ap.add_argument("--child", help=argparse.SUPPRESS)  # model:layout:stock|relugrad, for --peak
    ap.add_argument("--compile", default="", metavar="BACKEND",
                    help="torch.compile both models with this backend (inductor, aot_eager) before timing")


def main(args, ap) -> None:
    if args.one_model and (args.mask or args.compile):
        ap.error("--one-model is for eager steps without --mask")
    if args.torch_threads:
        torch.set_num_threads(args.torch_threads)
    if args.child:
        name, layout, which = args.child.split(":")
        child_peak(name, layout, args.mask, which)
        return
    rows = []
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, relugrad native={rt.NATIVE}, "
          f"mask={args.mask}, compile={args.compile or 'no'}; ms per step, median of {args.rounds} interleaved "
          f"rounds of {args.steps} steps" + (" (CONTROL: the second candidate is a copy of stock)" if args.control else "")
          + (" (ONE MODEL: ReLU modules switched)" if args.one_model else ""))
    extra_head = " A/A: copy / stock [95%] |" if args.with_control else ""
    extra_head += " ReLU ms/step stock | ReLU ms/step relugrad | ReLU ratio |" if args.relu_profile else ""
    extra_head += " peak MiB stock | peak MiB relugrad | peak ratio |" if args.peak else ""
    print("| model | layout | same bits | stock ms | relugrad ms | relugrad / stock [95% interval] | CPU time ratio "
          "[95%] | saved MiB stock | saved MiB relugrad | saved ratio |" + extra_head)
    print("|---" * (10 + args.with_control + 3 * args.peak + 3 * args.relu_profile) + "|")
    for name in args.models.split(","):
        _, _, has_layout = MODELS[name]
        for layout in args.layouts.split(",") if has_layout else ["-"]:
            if args.one_model:
                model, x = build_stock(name, layout)
                candidate = OneModel(model, args.control, args.with_control)
            else:
                stock, ours, x = build(name, layout, args.mask, args.control)
                control_copy = copy.deepcopy(stock) if args.with_control else None
                if args.compile:  # the first steps compile; bits are compared on compiled steps
                    torch.compiler.reset()
                    stock, ours = torch.compile(stock, backend=args.compile), torch.compile(ours, backend=args.compile)
                    if control_copy is not None:
                        control_copy = torch.compile(control_copy, backend=args.compile)
                    for m in (stock, ours) + ((control_copy,) if control_copy is not None else ()):
                        step(m, x)
                        m.zero_grad(set_to_none=True)
                candidate = TwoModels(stock, ours, control_copy)
                del stock, ours, control_copy  # candidate holds them
            same = same_first_step(candidate, x)
            bytes_stock, bytes_ours = saved_bytes(candidate("stock"), x), saved_bytes(candidate("ours"), x)
            whos = ["stock", "ours"] + (["copy"] if args.with_control else [])
            times = {who: [] for who in whos}
            cpu = {who: [] for who in whos}
            for r in range(args.rounds):
                for who in rotated(whos, r):
                    wall, cpu_s = time_steps(candidate(who), x, args.steps)
                    times[who].append(wall)
                    cpu[who].append(cpu_s)
            ratio, (lo, hi) = ratio_interval(times["ours"], times["stock"])
            cpu_ratio, (cpu_lo, cpu_hi) = ratio_interval(cpu["ours"], cpu["stock"])
            row = {"model": name, "layout": layout, "same_bits": same, "stock_ms": 1e3 * min(times["stock"]),
                   "relugrad_ms": 1e3 * min(times["ours"]), "time_ratio": ratio, "ratio_ci95": [lo, hi],
                   "cpu_ratio": cpu_ratio, "cpu_ratio_ci95": [cpu_lo, cpu_hi],
                   "saved_stock": bytes_stock, "saved_relugrad": bytes_ours}
            line = (f"| {name} | {layout} | {'yes' if same else 'NO'} | {row['stock_ms']:.1f} | "
                    f"{row['relugrad_ms']:.1f} | {ratio:.3f} [{lo:.3f}, {hi:.3f}] | "
                    f"{cpu_ratio:.3f} [{cpu_lo:.3f}, {cpu_hi:.3f}] | {bytes_stock / 2**20:.1f} | "
                    f"{bytes_ours / 2**20:.1f} | {bytes_ours / bytes_stock:.3f} |")
            if args.with_control:
                row["control_ratio"], row["control_ci95"] = ratio_interval(times["copy"], times["stock"])
                line += f" {row['control_ratio']:.3f} [{row['control_ci95'][0]:.3f}, {row['control_ci95'][1]:.3f}] |"
            if args.relu_profile:
                relu = {"stock": [], "ours": []}
                for r in range(args.profile_passes):
                    for who in rotated(["stock", "ours"], r):
                        relu[who].append(relu_ms_per_step(candidate(who), x, args.steps))
                row["relu_ms_stock"] = statistics.median(relu["stock"])
                row["relu_ms_relugrad"] = statistics.median(relu["ours"])
                row["relu_ratio"] = median_ratio(relu["ours"], relu["stock"])
                line += f" {row['relu_ms_stock']:.2f} | {row['relu_ms_relugrad']:.2f} | {row['relu_ratio']:.3f} |"
            if args.peak:
                del candidate
                for who, key in (("stock", "peak_stock"), ("relugrad", "peak_relugrad")):
                    runs = peak_bytes(name, layout, args.mask, who, args.torch_threads, args.peak_runs)
                    row[key] = int(statistics.median(runs))
                    row[key + "_runs"] = runs  # each child's figure: their spread is the measure's
                line += (f" {row['peak_stock'] / 2**20:.1f} | {row['peak_relugrad'] / 2**20:.1f} | "
                         f"{row['peak_relugrad'] / row['peak_stock']:.3f} |")
            print(line, flush=True)
            rows.append(row)
    if args.json:
        meta = {"torch": torch.__version__, "machine": cpu_name(), "threads": torch.get_num_threads(), "mask": args.mask, "compile": args.compile,
                "rounds": args.rounds, "steps": args.steps, "control": args.control,
                "one_model": args.one_model, "with_control": args.with_control,
                "command": command_line()}
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "rows": rows}, f, indent=1)

