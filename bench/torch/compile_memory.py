"""compile-memory: what a compiled training step keeps for backward, with relugrad against stock.

    .venv/bin/python -m bench.torch compile-memory --models transformer,mlp_dropout,resnet50 \
        --json docs/results/<machine>/torch_report-compile_memory.json

Per model, five candidates with the same weights and the same dropout seed:
  eager stock; eager relugrad (replace_relu(mask=True), after its probe step);
  compiled stock (torch.compile, inductor, relugrad.torch.saved_bits off);
  compiled relugrad (replace_relu(mask=True), then torch.compile: saved_bits on, nothing else);
  compiled copy (a second compiled stock: the A/A control of the step times).
Measured:
  - saved-for-backward bytes of one step (saved_tensors_hooks: what a compiled graph hands to
    autograd is what it keeps), and which saved booleans the rewrite packed or left;
  - peak memory of one step, in a child process per candidate as `steps --peak` measures it (the
    median of --peak-runs children; the compiled children use inductor's caches, so they compile
    once between them); with --device cuda, in this process from the CUDA allocator's peak
    statistics (max_memory_allocated over one step, less what was allocated before it);
  - step time in interleaved rounds (the order rotating): compiled relugrad / compiled stock, with
    the compiled copy / compiled stock A/A ratio taken in the same rounds, and eager relugrad /
    eager stock beside them; each the median of per-round ratios with its ~95% interval;
  - the same bits: compiled relugrad's output, every gradient and the RNG state after one step
    against compiled stock's;
  - compile time (the first call; inductor's FX graph and AOTAutograd caches off, its kernel cache
    warmed by one untimed compile of each), in interleaved rounds (--compile-rounds, then more while
    the total stays within --compile-seconds), each compile in a fresh dynamo state after a gc:
    compiled relugrad / compiled stock, with a compiled copy of stock as the A/A,
    each the median of per-round ratios with its interval; and dynamo's graph,
    graph-break and recompilation counts of each compiled candidate over the whole run.
"""
import argparse
import copy
import gc
import json
import os
import statistics
import subprocess
import sys
import time

import torch

import relugrad.torch as rt
from relugrad.torch import compiled as rt_compiled

from .common import MODELS, ROOT, build_stock, command_line, cpu_name, ratio_interval, rotated, step
from .steps import saved_bytes, step_peak
from .verdicts import compile_text

WHO = ("eager_stock", "eager_relugrad", "compiled_stock", "compiled_relugrad", "compiled_copy")
COMPILED = ("compiled_copy", "compiled_stock", "compiled_relugrad")


def _caches(on: bool) -> None:
    """Inductor's FX graph cache and AOTAutograd's cache: off where a compile is timed."""
    import torch._functorch.config as functorch_config
    from torch._inductor import config
    config.fx_graph_cache = on
    functorch_config.enable_autograd_cache = on


def _dynamo_counts() -> dict:
    from torch._dynamo.utils import counters
    return {"graphs": counters["stats"]["unique_graphs"],
            "breaks": sum(counters["graph_break"].values()),
            "recompiles": counters["recompiles"]["total"] if "recompiles" in counters else 0}


def rng_state(x) -> torch.Tensor:
    return torch.cuda.get_rng_state(x.device) if x.is_cuda else torch.get_rng_state()


def sync(x) -> None:
    if x.is_cuda:
        torch.cuda.synchronize(x.device)


def first_step(model, x):
    """(output, every gradient, RNG state after) of one seeded step."""
    model.zero_grad(set_to_none=True)
    torch.manual_seed(1)
    out = model(x)
    out.square().mean().backward()
    grads = [p.grad.clone() for p in model.parameters() if p.grad is not None]
    model.zero_grad(set_to_none=True)
    return out.detach(), grads, rng_state(x)


def same_bits(a, b) -> bool:
    def eq(s, t):
        return s.shape == t.shape and torch.equal(s.reshape(-1).view(torch.uint8), t.reshape(-1).view(torch.uint8))
    return eq(a[0], b[0]) and len(a[1]) == len(b[1]) and all(eq(s, t) for s, t in zip(a[1], b[1])) and torch.equal(
        a[2], b[2])


def candidate(name: str, who: str, device: str = "cpu"):
    """(model, x) for one candidate, built as the parent builds it (compiled ones not yet called)."""
    stock, x = build_stock(name, "nchw")
    stock, x = stock.to(device), x.to(device)
    if who in ("eager_relugrad", "compiled_relugrad"):
        model = rt.replace_relu(copy.deepcopy(stock), mask=True)
        rt.saved_bits(False)  # replace_relu turned it on: on only where relugrad's candidate compiles
    else:
        model = copy.deepcopy(stock)
    if who.startswith("compiled"):
        model = torch.compile(model)
    return model, x


def _call_first(model, x, who: str) -> float:
    """The first step (compiling a compiled candidate, probing an eager relugrad one), timed."""
    with rt.saved_bits(who in ("eager_relugrad", "compiled_relugrad")):
        start = time.perf_counter()
        torch.manual_seed(1)
        step(model, x)
        model.zero_grad(set_to_none=True)
        sync(x)
        return time.perf_counter() - start


def child_peak(name: str, who: str) -> None:
    """Prints the peak memory (bytes) of one training step of one candidate (steps.py's --peak)."""
    _caches(True)
    model, x = candidate(name, who)
    for _ in range(2):
        _call_first(model, x, who)
    print(json.dumps({"peak_bytes": step_peak(model, x)}))


def peak_bytes(name: str, who: str, runs: int) -> list:
    cmd = [sys.executable, "-m", "bench.torch", "compile-memory", "--child", f"{name}:{who}"]
    env = dict(os.environ, MALLOC_MMAP_THRESHOLD_="131072")
    out = []
    for _ in range(runs):
        text = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env, cwd=ROOT).stdout
        out.append(json.loads(text.strip().splitlines()[-1])["peak_bytes"])
    return sorted(out)


def cuda_peak(model, x) -> int:
    """The CUDA allocator's peak over one step, less what was allocated before it."""
    sync(x)
    torch.cuda.reset_peak_memory_stats(x.device)
    before = torch.cuda.memory_allocated(x.device)
    torch.manual_seed(1)
    step(model, x)
    sync(x)
    peak = torch.cuda.max_memory_allocated(x.device) - before
    model.zero_grad(set_to_none=True)
    return peak


def measure(name: str, rounds: int, steps: int, peak_runs: int, device: str = "cpu",
            compile_rounds: int = 3, compile_seconds: float = 0.0) -> dict:
    _caches(False)
    warm = torch.randn(8, device=device, requires_grad=True)
    torch.compile(lambda t: t.relu() * 2)(warm).sum().backward()  # warm-up: inductor's first compile
    # Compile times, each in a fresh dynamo state, in compile_rounds rounds of the A/A copy, stock and
    # relugrad (the order rotating); after one untimed compile of stock and of relugrad, so that each
    # timed compile finds inductor's on-disk kernel cache warm for its own kernels (else the first
    # compiler of a kernel pays its C++ build).
    for who in ("compiled_stock", "compiled_relugrad"):
        torch._dynamo.reset()
        _call_first(*candidate(name, who, device), who)
    models, counts = {}, {}
    runs = {who: [] for who in COMPILED}
    r, spent = 0, 0.0
    # At least compile_rounds rounds, then more while the next one keeps the total within
    # compile_seconds: a model that compiles in seconds gets the rounds a 10% threshold needs.
    while r < max(1, compile_rounds) or spent * (r + 1) / r <= compile_seconds:
        for who in rotated(list(COMPILED), r):
            torch._dynamo.reset()
            models[who], x = candidate(name, who, device)
            gc.collect()  # the garbage of the compiles before it is collected before this one is timed
            before = _dynamo_counts()
            rt_compiled.decisions()
            runs[who].append(_call_first(models[who], x, who))
            after = _dynamo_counts()
            counts[who] = {k: after[k] - before[k] for k in after}
            if who == "compiled_relugrad":
                made = rt_compiled.decisions()
        spent += sum(t[-1] for t in runs.values())
        r += 1
    compile_s = {who: statistics.median(t) for who, t in runs.items()}
    for who in ("eager_stock", "eager_relugrad"):
        models[who], x = candidate(name, who, device)
        _call_first(models[who], x, who)  # the relugrad one's probe step
    for who in COMPILED:  # those compiled before the last reset compile again (untimed), each as timed
        _call_first(models[who], x, who)
    _caches(True)
    before = _dynamo_counts()
    same = same_bits(first_step(models["compiled_stock"], x), first_step(models["compiled_relugrad"], x))
    saved = {}
    for who in WHO:
        torch.manual_seed(1)
        saved[who] = saved_bytes(models[who], x)
    times = {who: [] for who in WHO}
    for r in range(rounds):
        for who in rotated(list(WHO), r):
            model = models[who]
            start = time.perf_counter()
            for _ in range(steps):
                step(model, x)
                model.zero_grad(set_to_none=True)
            sync(x)
            times[who].append((time.perf_counter() - start) / steps)
    during = _dynamo_counts()
    row = {"model": name, "shape": list(x.shape), "same_bits": same,
           "packed": [d.name for d in made if d.packed],
           "left": [f"{d.name}: {d.reason}" for d in made if not d.packed],
           "saved": saved, "ms": {who: 1e3 * min(t) for who, t in times.items()},
           "compile_s": compile_s, "compile_runs": runs, "dynamo": counts,
           "recompiled_while_timed": {k: during[k] - before[k] for k in during}}
    row["time_ratio"], row["ratio_ci95"] = ratio_interval(times["compiled_relugrad"], times["compiled_stock"])
    row["control_ratio"], row["control_ci95"] = ratio_interval(times["compiled_copy"], times["compiled_stock"])
    row["eager_ratio"], row["eager_ci95"] = ratio_interval(times["eager_relugrad"], times["eager_stock"])
    row["compile_ratio"], row["compile_ci95"] = ratio_interval(runs["compiled_relugrad"], runs["compiled_stock"])
    row["compile_control"], row["compile_control_ci95"] = ratio_interval(runs["compiled_copy"], runs["compiled_stock"])
    if device == "cuda" and peak_runs:
        row["peak"] = {who: cuda_peak(models[who], x) for who in WHO[:4]}
        row["peak_runs"] = {who: [row["peak"][who]] for who in WHO[:4]}
        peak_runs = 0
    del models
    if peak_runs:
        row["peak"], row["peak_runs"] = {}, {}
        for who in WHO[:4]:
            runs = peak_bytes(name, who, peak_runs)
            row["peak"][who], row["peak_runs"][who] = int(statistics.median(runs)), runs
    return row


def line(r: dict) -> str:
    s, mib = r["saved"], lambda b: f"{b / 2**20:.1f}"
    text = (f"| {r['model']} | {'yes' if r['same_bits'] else 'NO'} | {mib(s['eager_stock'])} | "
            f"{mib(s['eager_relugrad'])} | {mib(s['compiled_stock'])} | {mib(s['compiled_relugrad'])} | "
            f"{s['compiled_relugrad'] / s['compiled_stock']:.3f} | ")
    if "peak" in r:
        p = r["peak"]
        text += f"{mib(p['compiled_stock'])} | {mib(p['compiled_relugrad'])} | " \
                f"{p['compiled_relugrad'] / p['compiled_stock']:.3f} | "
    else:
        text += "- | - | - | "
    text += (f"{r['ms']['compiled_stock']:.1f} | {r['ms']['compiled_relugrad']:.1f} | {r['time_ratio']:.3f} "
             f"[{r['ratio_ci95'][0]:.3f}, {r['ratio_ci95'][1]:.3f}] | {r['control_ratio']:.3f} "
             f"[{r['control_ci95'][0]:.3f}, {r['control_ci95'][1]:.3f}] | "
             f"{compile_text(r)} | "
             f"{len(r['packed'])} / {len(r['packed']) + len(r['left'])} |")
    return text


HEADER = ("| model | same bits | saved MiB eager stock | saved MiB eager relugrad | saved MiB compiled stock | "
          "saved MiB compiled relugrad | saved ratio | peak MiB compiled stock | peak MiB compiled relugrad | "
          "peak ratio | ms compiled stock | ms compiled relugrad | relugrad / stock [95%] | A/A [95%] | "
          "compile time ratio | booleans packed |")


def add_arguments(ap) -> None:
    ap.add_argument("--models", default="transformer,mlp_dropout,resnet50")
    ap.add_argument("--rounds", type=int, default=11)
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--compile-rounds", type=int, default=3,
                    help="interleaved compiles of each compiled candidate, timed (at least)")
    ap.add_argument("--compile-seconds", type=float, default=0.0,
                    help="more compile rounds while their total stays within this (0: --compile-rounds only)")
    ap.add_argument("--peak-runs", type=int, default=3, help="child processes per candidate (0: no peak)")
    ap.add_argument("--torch-threads", type=int, default=0, help="torch.set_num_threads (0: leave as is)")
    ap.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    ap.add_argument("--json", help="write the rows to this JSON file")
    ap.add_argument("--child", help=argparse.SUPPRESS)  # model:candidate, for the peak


def main(args, ap) -> None:
    if args.torch_threads:
        torch.set_num_threads(args.torch_threads)
    if args.child:
        name, who = args.child.split(":")
        child_peak(name, who)
        return
    unknown = [m for m in args.models.split(",") if m not in MODELS]
    if unknown:
        ap.error(f"unknown models {unknown}; known: {','.join(MODELS)}")
    if args.device == "cuda" and not torch.cuda.is_available():
        raise SystemExit("compile-memory: --device cuda: no CUDA device")
    where = torch.cuda.get_device_name() if args.device == "cuda" else f"{torch.get_num_threads()} threads"
    print(f"torch {torch.__version__}, {where}; inductor; ms per step: the fastest "
          f"of {args.rounds} interleaved rounds of {args.steps} steps; ratios: medians of per-round ratios")
    print(HEADER)
    print("|---" * HEADER.count(" | ") + "|---|")
    rows = []
    for name in args.models.split(","):
        row = measure(name, args.rounds, args.steps, args.peak_runs, args.device, args.compile_rounds,
                      args.compile_seconds)
        print(line(row), flush=True)
        rows.append(row)
    if args.json:
        meta = {"torch": torch.__version__, "device": args.device,
                "machine": torch.cuda.get_device_name() if args.device == "cuda" else cpu_name(),
                "threads": torch.get_num_threads(),
                "rounds": args.rounds, "compile_rounds": args.compile_rounds,
                "compile_seconds": args.compile_seconds,
                "steps": args.steps, "peak_runs": args.peak_runs, "command": command_line()}
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "rows": rows}, f, indent=1)
