"""report: relugrad.torch against stock PyTorch on this machine, every "never slower" and memory
target in one run, each with its verdict.

    .venv/bin/python -m bench.torch report                        # about 25 min on 2 cores
    .venv/bin/python -m bench.torch report --quick                # a few minutes: fewer sizes and rounds
    .venv/bin/python -m bench.torch report --out docs/results/<machine>/torch_report

It runs, one after another (nothing else should run on the machine meanwhile), each as a child
process (`python -m bench.torch <subcommand>`), writing OUT-<part>.json and the child's table to
OUT.log:
  module   module --control: relugrad.torch.ReLU forward + backward against nn.ReLU, f32/bf16/f16,
           1 and 2 torch threads, NCHW and channels_last, n = 16 and 64K..64M;
  steps    steps --one-model --with-control: resnet18 and resnet50 training steps, NCHW and
           channels_last (one model whose ReLU modules are switched);
  memory   steps --mask --peak --with-control: saved-for-backward bytes, peak memory and step time
           of transformer, mlp_dropout, mlp and resnet50 with replace_relu(mask=True);
  compile  steps --compile inductor --with-control: compiled resnet18/resnet50 against compiled
           stock (the torch preset compiles to stock's own graph: its A/A is the bench's noise);
  compile_memory  compile-memory: compiled training with replace_relu(mask=True) (saved_bits on)
           against compiled stock, beside eager stock and eager relugrad: saved bytes, peak, step
           and compile time, the same bits (the transformer, the MLP with dropout at batch 2048,
           and torchvision resnet50, resnet18, densenet121, mobilenet_v2, vgg11 at 64x64).
Then OUT.md: the tables and, per target, what was measured and its verdict (verdicts.py).

Verdicts. A module row meets "at most nn.ReLU's time" when its ratio (median of per-round ratios)
is at most 1.00; n = 16 rows are held to 1.3x. A step ratio comes with a ~95% interval of its
median: "shown" when the whole interval is at most 1.00, "point at most 1.00" when only the
median is, "over" when the median is above 1.00. Beside them "tie": the interval (module rows:
of the per-round ratios too) contains 1.00 and the median is no farther from 1.00 than the A/A
control's, a copy of stock timed like relugrad in the same rounds: the bench tells relugrad from
stock no better than stock from itself. A tie meets an "at most stock" target. Memory: saved bytes
and peak memory at most stock's for every model (a peak is the median of five child processes per
candidate, three with --quick; a peak above stock's median but not above its highest child
process is reported as within the children's spread), and the issue's targets for the two models
with ReLU + Dropout (saved bytes about 0.88x for the transformer and 0.70x for mlp_dropout, read
here as at most those).
"""
import datetime
import json
import os
import subprocess
import sys
import time

from .common import ROOT
from .verdicts import (MEETS, N16_LIMIT, all_verdicts, ratio_text, verdict_compiled, verdict_memory, verdict_module,
                       verdict_step)

FULL_MODULE_SIZES = "16,64K,256K,1M,4M,16M,64M"
COMPILE_MEMORY_MODELS = "transformer,mlp_dropout-b2048,resnet50-64,resnet18-64,densenet121-64,mobilenet_v2-64,vgg11-64"
COMPILE_MEMORY_QUICK = "transformer,mlp_dropout-b2048,resnet18-64"
QUICK_MODULE_SIZES = "16,64K,1M,16M"


def parts(quick: bool, module_sizes: str = "") -> dict:
    """part -> the child's subcommand and arguments (its --json is added); module_sizes: the
    module part's sizes (empty: the full or quick list)."""
    module_sizes = module_sizes or (QUICK_MODULE_SIZES if quick else FULL_MODULE_SIZES)
    return {
        "module": ["module", "--control", "--sizes", module_sizes, "--dtypes", "f32,bf16,f16",
                   "--threads", "1,2", "--layouts", "nchw,channels_last", "--rounds", "5" if quick else "11"],
        "steps": ["steps", "--one-model", "--with-control", "--models", "resnet18,resnet50",
                  "--layouts", "nchw,channels_last", "--rounds", "21" if quick else "101", "--steps", "1"],
        "memory": ["steps", "--mask", "--peak", "--with-control", "--models",
                   "transformer,mlp_dropout,mlp,resnet50", "--layouts", "nchw", "--rounds", "7" if quick else "31",
                   "--steps", "3", "--peak-runs", "3" if quick else "5"],
        "compile": ["steps", "--compile", "inductor", "--with-control", "--models", "resnet18,resnet50",
                    "--layouts", "nchw", "--rounds", "5" if quick else "15", "--steps", "3"],
        "compile_memory": ["compile-memory", "--models", COMPILE_MEMORY_QUICK if quick else COMPILE_MEMORY_MODELS,
                           "--rounds", "5" if quick else "11", "--steps", "2", "--peak-runs", "1" if quick else "3",
                           "--compile-rounds", "1" if quick else "3", "--compile-seconds", "0" if quick else "120"],
    }


def run_part(name: str, argv: list, out: str, log) -> dict:
    path = f"{out}-{name}.json"
    cmd = [sys.executable, "-m", "bench.torch"] + argv + ["--json", path]
    shown = " ".join(["python -m bench.torch"] + argv)
    print(f"report: {name}: {shown}", file=sys.stderr, flush=True)
    log.write(f"\n## {name}: {shown}\n")
    log.flush()
    start = time.monotonic()
    result = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)
    seconds = time.monotonic() - start
    if result.returncode != 0:
        raise SystemExit(f"report: {name} failed (exit {result.returncode}); see {out}.log")
    with open(path) as f:
        data = json.load(f)
    data["command"] = shown
    data["seconds"] = seconds
    return data


# ---- the report ------------------------------------------------------------------------------

def module_section(data: dict) -> list:
    rows = data["rows"]
    big = [r for r in rows if r["n"] > 16]
    small = [r for r in rows if r["n"] <= 16]
    not_met = [r for r in rows if verdict_module(r) != "met"]
    big_verdicts = [verdict_module(r) for r in big]
    lines = [f"### relugrad.torch.ReLU forward + backward against nn.ReLU ({data['seconds'] / 60:.0f} min)", "",
             f"    {data['command']}", "",
             f"- n >= 64K: **{sum(v in MEETS for v in big_verdicts)} of {len(big)}** rows at most 1.00 or tied "
             f"({big_verdicts.count('met')} met, {big_verdicts.count('tie')} tie, {big_verdicts.count('over')} over).",
             f"- n = 16: **{sum(verdict_module(r) == 'met' for r in small)} of {len(small)}** rows within "
             f"{N16_LIMIT}x (worst {max((r['ratio'] for r in small), default=float('nan')):.3f}).",
             f"- A/A control (a second nn.ReLU) over all rows: "
             f"{min(r['control_ratio'] for r in rows):.3f}-{max(r['control_ratio'] for r in rows):.3f}.", ""]
    if not_met:
        lines += ["Rows not met: ties (the interval contains 1.00, the median within the A/A control's distance "
                  "from 1.00) and rows over their limit:", "",
                  "| threads | dtype | layout | n | nn.ReLU us | relugrad us | ratio [95%] | A/A | verdict |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for r in not_met:
            ci = r.get("ratio_ci95")
            ratio = f"{r['ratio']:.3f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "")
            lines.append(f"| {r['threads']} | {r['dtype']} | {r['layout']} | {r['n']} | {r['stock_us']:.1f} | "
                         f"{r['relugrad_us']:.1f} | {ratio} | {r['control_ratio']:.3f} | {verdict_module(r)} |")
        lines.append("")
    return lines


def steps_section(title: str, data: dict) -> list:
    lines = [f"### {title} ({data['seconds'] / 60:.0f} min)", "", f"    {data['command']}", "",
             "| model | layout | same bits | stock ms | relugrad ms | relugrad / stock [95%] | verdict |",
             "|---|---|---|---|---|---|---|"]
    for r in data["rows"]:
        lines.append(f"| {r['model']} | {r['layout']} | {'yes' if r['same_bits'] else 'NO'} | {r['stock_ms']:.1f} | "
                     f"{r['relugrad_ms']:.1f} | {ratio_text(r)} | {verdict_step(r)} |")
    return lines + [""]


def memory_section(data: dict) -> list:
    lines = [f"### Memory and step time, replace_relu(mask=True) ({data['seconds'] / 60:.0f} min)", "",
             f"    {data['command']}", "",
             "| model | same bits | saved MiB stock | saved MiB relugrad | target | measured | verdict |",
             "|---|---|---|---|---|---|---|"]
    for r in data["rows"]:
        for what, measured, verdict in verdict_memory(r):
            lines.append(f"| {r['model']} | {'yes' if r['same_bits'] else 'NO'} | {r['saved_stock'] / 2**20:.1f} | "
                         f"{r['saved_relugrad'] / 2**20:.1f} | {what} | {measured} | {verdict} |")
    return lines + [""]


def compiled_memory_section(data: dict) -> list:
    from .compile_memory import HEADER, line
    lines = [f"### Compiled training: replace_relu(mask=True), saved booleans as bits ({data['seconds'] / 60:.0f} min)",
             "", f"    {data['command']}", "", HEADER, "|---" * HEADER.count(" | ") + "|---|"]
    lines += [line(r) for r in data["rows"]]
    lines += ["", "| model | target | measured | verdict |", "|---|---|---|---|"]
    for r in data["rows"]:
        lines += [f"| {r['model']} | {what} | {measured} | {verdict} |" for what, measured, verdict in verdict_compiled(r)]
    return lines + [""]


def report(results: dict, started: str, seconds: float) -> str:
    import torch  # here, after the children ran: this process measures nothing

    import relugrad.torch as rt

    from .common import cpu_name
    lines = ["# relugrad.torch at the point of use", "",
             f"{cpu_name()}, {os.cpu_count()} CPUs; torch {torch.__version__}, relugrad native={rt.NATIVE}; "
             f"started {started} UTC, {seconds / 60:.0f} min in all (`python -m bench.torch report`).", ""]
    if "module" in results:
        lines += module_section(results["module"])
    if "steps" in results:
        lines += steps_section("Training steps, eager (resnet18 8x3x112x112, resnet50 4x3x112x112)", results["steps"])
    if "memory" in results:
        lines += memory_section(results["memory"])
    if "compile" in results:
        lines += steps_section("Training steps under torch.compile (inductor), against compiled stock",
                               results["compile"])
    if "compile_memory" in results:
        lines += compiled_memory_section(results["compile_memory"])
    verdicts = [v for name, data in results.items() for v in all_verdicts(name, data)]
    counts = {v: verdicts.count(v) for v in sorted(set(verdicts))}
    lines += ["### All verdicts", "", ", ".join(f"{k}: {n}" for k, n in counts.items()) or "none", ""]
    return "\n".join(lines)


def add_arguments(ap) -> None:
    ap.add_argument("--quick", action="store_true", help="fewer sizes and rounds: a look, not a record")
    ap.add_argument("--parts", default="module,steps,memory,compile,compile_memory")
    ap.add_argument("--module-sizes", default="",
                    help=f"the module part's sizes (default {FULL_MODULE_SIZES}; --quick: {QUICK_MODULE_SIZES}): "
                         "a quick run over every size takes the full list with the quick rounds")
    ap.add_argument("--out", help="output prefix, e.g. docs/results/<machine>/torch_report "
                                  "(default bench/results/torch-report-<date>)")


def main(args, ap) -> None:
    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M")
    out = args.out or os.path.join(ROOT, "bench", "results", "torch-report-" + started[:10])
    out = os.path.abspath(out)  # the children run in the repository root
    os.makedirs(os.path.dirname(out), exist_ok=True)
    table = parts(args.quick, args.module_sizes)
    chosen = args.parts.split(",")
    unknown = [p for p in chosen if p not in table]
    if unknown:
        ap.error(f"unknown parts {unknown}; known: {','.join(table)}")
    start = time.monotonic()
    results = {}
    with open(out + ".log", "w") as log:
        for name in chosen:
            results[name] = run_part(name, table[name], out, log)
            # Rewritten after each part: a run stopped early keeps the report of what it measured.
            text = report(results, started, time.monotonic() - start)
            with open(out + ".md", "w") as f:
                f.write(text)
    print(text)
    print(f"report: {out}.md", file=sys.stderr)
