"""Bias-gradient fusion: relugrad_native.relu_grad_bias (dx and the bias gradient in one pass)
against ReluGrad + dx.sum(0) (relugrad's and stock's threshold_backward), and the whole
Linear + ReLU training step: stock nn.Linear + nn.ReLU against relugrad.torch.LinearReLU.

    .venv/bin/python bench/torch_linear.py --threads 1,2 --json docs/results/torch_linear.json

Candidates run interleaved in one process, round by round; each round times every candidate
(best of 3 repeats of a loop sized to ~20 ms) and the reported ratio is the median over rounds of
the per-round ratio candidate / baseline (the machine is shared: only ratios taken side by side
mean anything). f32; shapes are (rows = batch, cols = out_features).
"""
import argparse
import json
import platform
import statistics
import sys
import timeit

import torch
from torch import nn

import relugrad.torch as rt


def per_call(fn, target=0.02) -> float:
    number = max(1, int(target / max(timeit.timeit(fn, number=1), 1e-7)))
    return min(timeit.repeat(fn, number=number, repeat=3)) / number


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shapes", default="64x4096,256x1024,512x4096,2048x2048,8192x512")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--json")
    args = ap.parse_args()
    if not rt.NATIVE:
        raise SystemExit(f"the torch-native library is not loaded: {rt.NATIVE_STATUS}")
    fused = torch.ops.relugrad_native.relu_grad_bias
    rows = []
    print(f"torch {torch.__version__}, {platform.processor() or platform.machine()}; us per call, "
          f"median of {args.rounds} interleaved rounds of per-round ratios")
    print("| threads | rows x cols | fused us | relugrad ReluGrad + sum(0) us | stock threshold_backward + sum(0) us | "
          "fused / relugrad+sum | fused / stock+sum | step stock us | step LinearReLU us | step ratio |")
    print("|---" * 10 + "|")
    for threads in (int(t) for t in args.threads.split(",")):
        torch.set_num_threads(threads)
        for shape in args.shapes.split(","):
            r, c = (int(v) for v in shape.split("x"))
            g = torch.Generator().manual_seed(0)
            dy = torch.randn(r, c, generator=g)
            y = torch.relu(torch.randn(r, c, generator=g))
            torch.manual_seed(0)
            stock = nn.Sequential(nn.Linear(512, c), nn.ReLU())
            ours = rt.replace_relu(nn.Sequential(nn.Linear(512, c), nn.ReLU()), fuse_linear=True)
            ours.load_state_dict(stock.state_dict())
            x = torch.randn(r, 512, requires_grad=True)
            gy = torch.randn(r, c)

            def step(m):
                m(x).backward(gy)
                m.zero_grad(set_to_none=True)
                x.grad = None

            cands = {
                "fused": lambda: fused(dy, y),
                "relugrad+sum": lambda: rt.relu_grad(dy, y).sum(0),
                "stock+sum": lambda: torch.ops.aten.threshold_backward(dy, y, 0.0).sum(0),
                "step stock": lambda: step(stock),
                "step ours": lambda: step(ours),
            }
            times = {k: [] for k in cands}
            for _ in range(args.rounds):
                for k, fn in cands.items():
                    times[k].append(per_call(fn))
            ratio = lambda a, b: statistics.median(x / y for x, y in zip(times[a], times[b]))  # noqa: E731
            row = {"threads": threads, "rows": r, "cols": c,
                   **{f"{k}_us": 1e6 * statistics.median(v) for k, v in times.items()},
                   "fused_vs_relugrad_sum": ratio("fused", "relugrad+sum"), "fused_vs_stock_sum": ratio("fused", "stock+sum"),
                   "step_ratio": ratio("step ours", "step stock")}
            rows.append(row)
            print(f"| {threads} | {r}x{c} | {row['fused_us']:.1f} | {row['relugrad+sum_us']:.1f} | {row['stock+sum_us']:.1f} | "
                  f"{row['fused_vs_relugrad_sum']:.3f} | {row['fused_vs_stock_sum']:.3f} | {row['step stock_us']:.1f} | "
                  f"{row['step ours_us']:.1f} | {row['step_ratio']:.3f} |", flush=True)
    if args.json:
        meta = {"torch": torch.__version__, "machine": platform.machine(), "rounds": args.rounds,
                "command": " ".join(sys.argv)}
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
