"""The point-of-use report: relugrad.torch against stock PyTorch on this machine, every "never
slower" and memory target in one run, each with its verdict.

    .venv/bin/python bench/torch_report.py                       # about 25 min on 2 cores
    .venv/bin/python bench/torch_report.py --quick               # a few minutes: fewer sizes and rounds
    .venv/bin/python bench/torch_report.py --out docs/results/torch_report_zen5

It runs, one after another (nothing else should run on the machine meanwhile), each as a child
process of this directory's benchmarks, writing OUT-<part>.json and the child's table to OUT.log:
  module   bench/torch_module.py --control: relugrad.torch.ReLU forward + backward against nn.ReLU,
           f32/bf16/f16, 1 and 2 torch threads, NCHW and channels_last, n = 16 and 64K..64M;
  steps    bench/torch_steps.py --one-model --with-control: resnet18 and resnet50 training steps,
           NCHW and channels_last (one model whose ReLU modules are switched);
  memory   bench/torch_steps.py --mask --peak --with-control: saved-for-backward bytes, peak memory
           and step time of transformer, mlp_dropout, mlp and resnet50 with replace_relu(mask=True);
  compile  bench/torch_steps.py --compile inductor --with-control: compiled resnet18/resnet50 against
           compiled stock (the torch preset compiles to stock's own graph: its A/A is the bench's noise).
Then OUT.md: the tables and, per target, what was measured and its verdict (`verdict_*` below).

Verdicts. A module row meets "at most nn.ReLU's time" when its ratio (median of per-round ratios)
is at most 1.00; n = 16 rows are held to 1.3x. A step ratio comes with a ~95% interval of its
median: "shown" when the whole interval is at most 1.00, "point at most 1.00" when only the
median is, "over" when the median is above 1.00 (with the A/A control of the same rounds beside
it: a copy of stock timed like relugrad, which shows what the bench puts between identical
models). Memory: saved bytes and peak memory at most stock's for every model (a peak is the median of
five child processes per candidate, three with --quick: resnet50's children spread over ~0.5 MiB of
160 on the Xeon VM; a peak above stock's median but not above its highest child process is reported
as within the children's spread), and the issue's
targets for the two models with ReLU + Dropout (saved bytes about 0.88x for the transformer and
0.70x for mlp_dropout, read here as at most those).
"""
import argparse
import datetime
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
N16_LIMIT = 1.3
SAVED_TARGETS = {"transformer": 0.88, "mlp_dropout": 0.70}


# ---- verdicts (pure: tested by python/tests/test_torch_report.py) ----------------------------

def verdict_module(row: dict) -> str:
    """'met' or 'over' for one module row (n = 16 against N16_LIMIT, else against 1.00)."""
    limit = N16_LIMIT if row["n"] <= 16 else 1.0
    return "met" if row["ratio"] <= limit else "over"


def verdict_ratio(ratio: float, interval) -> str:
    """'shown' (the whole ~95% interval at most 1.00), 'point at most 1.00' or 'over'."""
    if interval[1] <= 1.0:
        return "shown"
    return "point at most 1.00" if ratio <= 1.0 else "over"


def verdict_memory(row: dict) -> list:
    """[(what, measured, verdict)] for one memory row: saved bytes and peak at most stock's, the
    saved-bytes target where the issue sets one, and the step time."""
    saved = row["saved_relugrad"] / row["saved_stock"]
    out = [("saved bytes at most stock's", f"{saved:.3f}", "met" if saved <= 1.0 else "over")]
    target = SAVED_TARGETS.get(row["model"])
    if target is not None:
        out.append((f"saved bytes at most {target:.2f}x", f"{saved:.3f}", "met" if saved <= target else "over"))
    if "peak_stock" in row:
        out.append(("peak at most stock's",) + verdict_peak(row))
    out.append(("step time at most stock's", ratio_text(row),
                verdict_ratio(row["time_ratio"], row["ratio_ci95"])))
    return out


def verdict_peak(row: dict) -> tuple:
    """(measured, verdict) of the peak: medians of child processes; above stock's median but not
    above stock's highest child is 'within the children's spread' (VmHWM moves by pages from one
    child to the next), above that 'over'."""
    peak = row["peak_relugrad"] / row["peak_stock"]
    extra = (row["peak_relugrad"] - row["peak_stock"]) / 2**20
    measured = f"{peak:.3f} ({extra:+.1f} MiB)"
    stock_runs, ours_runs = row.get("peak_stock_runs"), row.get("peak_relugrad_runs")
    if stock_runs and ours_runs:
        measured += (f"; children stock {min(stock_runs) / 2**20:.1f}-{max(stock_runs) / 2**20:.1f}, relugrad "
                     f"{min(ours_runs) / 2**20:.1f}-{max(ours_runs) / 2**20:.1f} MiB")
    if peak <= 1.0:
        return measured, "met"
    if stock_runs and row["peak_relugrad"] <= max(stock_runs):
        return measured, "within the children's spread"
    return measured, "over"


def ratio_text(row: dict) -> str:
    lo, hi = row["ratio_ci95"]
    text = f"{row['time_ratio']:.3f} [{lo:.3f}, {hi:.3f}]"
    if "control_ratio" in row:
        clo, chi = row["control_ci95"]
        text += f", A/A {row['control_ratio']:.3f} [{clo:.3f}, {chi:.3f}]"
    return text


# ---- running the benchmarks ------------------------------------------------------------------

FULL_MODULE_SIZES = "16,64K,256K,1M,4M,16M,64M"
QUICK_MODULE_SIZES = "16,64K,1M,16M"


def parts(quick: bool, module_sizes: str = "") -> dict:
    """part -> the child's arguments (its --json is added); module_sizes: the module part's sizes
    (empty: the full or quick list)."""
    module_sizes = module_sizes or (QUICK_MODULE_SIZES if quick else FULL_MODULE_SIZES)
    return {
        "module": ["torch_module.py", "--control", "--sizes", module_sizes, "--dtypes", "f32,bf16,f16",
                   "--threads", "1,2", "--layouts", "nchw,channels_last", "--rounds", "5" if quick else "11"],
        "steps": ["torch_steps.py", "--one-model", "--with-control", "--models", "resnet18,resnet50",
                  "--layouts", "nchw,channels_last", "--rounds", "21" if quick else "101", "--steps", "1"],
        "memory": ["torch_steps.py", "--mask", "--peak", "--with-control", "--models",
                   "transformer,mlp_dropout,mlp,resnet50", "--layouts", "nchw", "--rounds", "7" if quick else "31",
                   "--steps", "3", "--peak-runs", "3" if quick else "5"],
        "compile": ["torch_steps.py", "--compile", "inductor", "--with-control", "--models", "resnet18,resnet50",
                    "--layouts", "nchw", "--rounds", "5" if quick else "15", "--steps", "3"],
    }


def run_part(name: str, argv: list, out: str, log) -> dict:
    path = f"{out}-{name}.json"
    cmd = [sys.executable, os.path.join(HERE, argv[0])] + argv[1:] + ["--json", path]
    shown = " ".join(["bench/" + argv[0]] + argv[1:])
    print(f"torch_report: {name}: {shown}", file=sys.stderr, flush=True)
    log.write(f"\n## {name}: {shown}\n")
    log.flush()
    start = time.monotonic()
    result = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT)
    seconds = time.monotonic() - start
    if result.returncode != 0:
        raise SystemExit(f"torch_report: {name} failed (exit {result.returncode}); see {out}.log")
    with open(path) as f:
        data = json.load(f)
    data["command"] = shown
    data["seconds"] = seconds
    return data


# ---- the report ------------------------------------------------------------------------------

def module_section(data: dict) -> list:
    rows = data["rows"]
    over = [r for r in rows if verdict_module(r) == "over"]
    big = [r for r in rows if r["n"] > 16]
    small = [r for r in rows if r["n"] <= 16]
    lines = [f"### relugrad.torch.ReLU forward + backward against nn.ReLU ({data['seconds'] / 60:.0f} min)", "",
             f"    {data['command']}", "",
             f"- n >= 64K: **{sum(verdict_module(r) == 'met' for r in big)} of {len(big)}** rows at most 1.00.",
             f"- n = 16: **{sum(verdict_module(r) == 'met' for r in small)} of {len(small)}** rows within "
             f"{N16_LIMIT}x (worst {max((r['ratio'] for r in small), default=float('nan')):.3f}).",
             f"- A/A control (a second nn.ReLU) over all rows: "
             f"{min(r['control_ratio'] for r in rows):.3f}-{max(r['control_ratio'] for r in rows):.3f}.", ""]
    if over:
        lines += ["Rows over their limit:", "", "| threads | dtype | layout | n | nn.ReLU us | relugrad us | ratio | A/A |",
                  "|---|---|---|---|---|---|---|---|"]
        lines += [f"| {r['threads']} | {r['dtype']} | {r['layout']} | {r['n']} | {r['stock_us']:.1f} | "
                  f"{r['relugrad_us']:.1f} | {r['ratio']:.3f} | {r['control_ratio']:.3f} |" for r in over]
        lines.append("")
    return lines


def steps_section(title: str, data: dict) -> list:
    lines = [f"### {title} ({data['seconds'] / 60:.0f} min)", "", f"    {data['command']}", "",
             "| model | layout | same bits | stock ms | relugrad ms | relugrad / stock [95%] | verdict |",
             "|---|---|---|---|---|---|---|"]
    for r in data["rows"]:
        lines.append(f"| {r['model']} | {r['layout']} | {'yes' if r['same_bits'] else 'NO'} | {r['stock_ms']:.1f} | "
                     f"{r['relugrad_ms']:.1f} | {ratio_text(r)} | {verdict_ratio(r['time_ratio'], r['ratio_ci95'])} |")
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


def report(results: dict, started: str, seconds: float) -> str:
    import torch  # here, after the children ran: this process measures nothing

    import relugrad.torch as rt
    from torch_steps import cpu_name  # this directory's step benchmark
    lines = ["# relugrad.torch at the point of use", "",
             f"{cpu_name()}, {os.cpu_count()} CPUs; torch {torch.__version__}, relugrad native={rt.NATIVE}; "
             f"started {started} UTC, {seconds / 60:.0f} min in all (`bench/torch_report.py`).", ""]
    if "module" in results:
        lines += module_section(results["module"])
    if "steps" in results:
        lines += steps_section("Training steps, eager (resnet18 8x3x112x112, resnet50 4x3x112x112)", results["steps"])
    if "memory" in results:
        lines += memory_section(results["memory"])
    if "compile" in results:
        lines += steps_section("Training steps under torch.compile (inductor), against compiled stock",
                               results["compile"])
    verdicts = [v for name, data in results.items() for v in all_verdicts(name, data)]
    counts = {v: verdicts.count(v) for v in sorted(set(verdicts))}
    lines += ["### All verdicts", "", ", ".join(f"{k}: {n}" for k, n in counts.items()) or "none", ""]
    return "\n".join(lines)


def all_verdicts(part: str, data: dict) -> list:
    """Every verdict of one part (a name of parts())."""
    rows = data["rows"]
    if part == "module":
        return [verdict_module(r) for r in rows]
    if part == "memory":
        return [v for r in rows for _, _, v in verdict_memory(r)]
    return [verdict_ratio(r["time_ratio"], r["ratio_ci95"]) for r in rows]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="fewer sizes and rounds: a look, not a record")
    ap.add_argument("--parts", default="module,steps,memory,compile")
    ap.add_argument("--module-sizes", default="",
                    help=f"the module part's sizes (default {FULL_MODULE_SIZES}; --quick: {QUICK_MODULE_SIZES}): "
                         "a quick run over every size takes the full list with the quick rounds")
    ap.add_argument("--out", help="output prefix (default bench/results/torch-report-<date>)")
    args = ap.parse_args()
    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M")
    out = args.out or os.path.join(HERE, "results", "torch-report-" + started[:10])
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
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
    print(f"torch_report: {out}.md", file=sys.stderr)


if __name__ == "__main__":
    main()
