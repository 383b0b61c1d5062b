"""numpy-call: relugrad.relu_grad(dy, x, out=out) on NumPy arrays against NumPy's own
np.multiply(dy, x > 0, out=out), interleaved in one process, with the A/A control.

    .venv/bin/python -m bench.torch numpy-call
    .venv/bin/python -m bench.torch numpy-call --sizes 16,4K --rounds 31 --json /tmp/numpy_call.json

The target: the NumPy call (one cache lookup and one C call) costs no more than NumPy's two ufuncs
at any n. Each round times the three candidates once (best of 3 repeats of a loop sized to ~10 ms),
the order rotating from round to round: relugrad, NumPy, and a second copy of the NumPy call (the
A/A control: what the bench itself puts between identical candidates). A row's ratio is the median
of the per-round ratios relugrad / NumPy with its ~95% interval, beside the control's; the verdict
is verdicts.verdict_ratio's: shown (the interval at most 1.00), tie (the interval contains 1.00 and
the median is no farther from 1.00 than the A/A median), point at most 1.00, or over. relugrad runs
with its default threads (all cores; small arrays on the calling thread) unless --threads is given;
NumPy's ufuncs run on one.
"""
import json
import statistics

import numpy as np

import relugrad

from .common import command_line, cpu_name, parse_sizes, per_call, ratio_interval, rotated
from .verdicts import verdict_ratio

NUMPY_DTYPES = {"f32": np.float32, "f64": np.float64, "f16": np.float16}


def add_arguments(ap) -> None:
    ap.add_argument("--sizes", default="16,256,4K,64K,1M")
    ap.add_argument("--dtypes", default="f32", help="of " + ",".join(NUMPY_DTYPES))
    ap.add_argument("--threads", type=int, default=None, help="relugrad's threads (default: its own, all cores)")
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--json")


def candidates(dy, x, out, threads):
    """name -> a call writing dx into out: relugrad's, NumPy's, and NumPy's again (the A/A copy)."""
    def ours():
        relugrad.relu_grad(dy, x, out=out, threads=threads)

    def numpy():
        np.multiply(dy, x > 0, out=out)

    def control():
        np.multiply(dy, x > 0, out=out)
    return {"relugrad": ours, "numpy": numpy, "control": control}


def main(args, ap) -> None:
    print(f"numpy {np.__version__}, relugrad {relugrad.__version__}, {cpu_name()}, relugrad threads="
          f"{args.threads if args.threads is not None else 'default'}; us per call (median of {args.rounds} "
          "rounds); ratio = median of per-round ratios relugrad / NumPy [~95% interval]")
    head = ["dtype", "n", "numpy us", "relugrad us", "ratio", "A/A ratio", "verdict"]
    print("| " + " | ".join(head) + " |")
    print("|---" * len(head) + "|")
    rows = []
    rng = np.random.default_rng(0)
    for dname in args.dtypes.split(","):
        dtype = NUMPY_DTYPES[dname]
        for n in parse_sizes(args.sizes):
            dy = rng.standard_normal(n).astype(dtype)
            x = rng.standard_normal(n).astype(dtype)
            out = np.empty_like(dy)
            cands = candidates(dy, x, out, args.threads)
            want = np.multiply(dy, x > 0)
            cands["relugrad"]()
            assert np.array_equal(out, want), "relugrad and NumPy disagree"  # the same dx, -0 aside
            times = {k: [] for k in cands}
            for r in range(args.rounds):
                for name in rotated(list(cands), r):
                    times[name].append(per_call(cands[name]))
            ratio, interval = ratio_interval(times["relugrad"], times["numpy"])
            control, control_interval = ratio_interval(times["control"], times["numpy"])
            row = {"dtype": dname, "n": n, "numpy_us": 1e6 * statistics.median(times["numpy"]),
                   "relugrad_us": 1e6 * statistics.median(times["relugrad"]), "ratio": ratio, "ratio_ci95": interval,
                   "control_ratio": control, "control_ci95": control_interval,
                   "verdict": verdict_ratio(ratio, interval, control)}
            rows.append(row)
            print(f"| {dname} | {n} | {row['numpy_us']:.2f} | {row['relugrad_us']:.2f} | {ratio:.3f} "
                  f"[{interval[0]:.3f}, {interval[1]:.3f}] | {control:.3f} [{control_interval[0]:.3f}, "
                  f"{control_interval[1]:.3f}] | {row['verdict']} |", flush=True)
    print(f"repro: .venv/bin/{command_line()}")
    if args.json:
        meta = {"numpy": np.__version__, "relugrad": relugrad.__version__, "machine": cpu_name(),
                "threads": args.threads, "rounds": args.rounds, "command": command_line()}
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "rows": rows}, f, indent=1)
