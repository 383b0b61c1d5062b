"""linear: bias-gradient fusion: relugrad_native.relu_grad_bias (dx and the bias gradient in one
pass) against ReluGrad + dx.sum(0) (relugrad's and stock's threshold_backward), and the whole
Linear + ReLU training step: stock nn.Linear + nn.ReLU against relugrad.torch.LinearReLU.

    .venv/bin/python -m bench.torch linear --threads 1,2 --json docs/results/<machine>/torch_linear.json
    .venv/bin/python -m bench.torch linear --grad-from-op --mlp-batches 256,1024,4096

--grad-from-op makes each Linear + ReLU step `(m(x) * gy).sum().backward()`: the pair's backward
gets a gradient made by an op (mul's backward) that nothing else holds, as inside a model, instead
of the caller's gy. --mlp-batches adds, per batch size, one training step of the 3-block MLP
(Linear(512, 2048), ReLU, Linear(2048, 512)) x 3, loss = model(x).square().mean(), stock against
replace_relu(fuse_linear=True), interleaved the same way.

Candidates run interleaved in one process, round by round; each round times every candidate
(best of 3 repeats of a loop sized to ~20 ms; the MLP steps ~200 ms, the first of the two
alternating) and the reported ratio is the median over rounds of the per-round ratio candidate /
baseline (the machine is shared: only ratios taken side by side mean anything). f32; shapes are
(rows = batch, cols = out_features).
"""
import json
import statistics

import torch
from torch import nn

import relugrad.torch as rt

from .common import command_line, cpu_name, median_ratio, mlp, per_call, require_native, rotated


def add_arguments(ap) -> None:
    ap.add_argument("--shapes", default="64x4096,256x1024,512x4096,2048x2048,8192x512")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--grad-from-op", action="store_true", help="step loss (m(x) * gy).sum()")
    ap.add_argument("--mlp-batches", default="", help="also the 3-block MLP's step at these batch sizes")
    ap.add_argument("--json")


def main(args, ap) -> None:
    require_native()
    # The fused op the native library registers (LinearReLU's backward calls it).
    fused = torch.ops.relugrad_native.relu_grad_bias
    rows = []
    print(f"torch {torch.__version__}, {cpu_name()}; us per call, "
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
                if args.grad_from_op:
                    (m(x) * gy).sum().backward()
                else:
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
                for k, fn in cands.items():  # a fixed order: each ratio pairs two of five candidates
                    times[k].append(per_call(fn, target=0.02))
            row = {"threads": threads, "rows": r, "cols": c,
                   **{f"{k}_us": 1e6 * statistics.median(v) for k, v in times.items()},
                   "fused_vs_relugrad_sum": median_ratio(times["fused"], times["relugrad+sum"]),
                   "fused_vs_stock_sum": median_ratio(times["fused"], times["stock+sum"]),
                   "step_ratio": median_ratio(times["step ours"], times["step stock"])}
            rows.append(row)
            print(f"| {threads} | {r}x{c} | {row['fused_us']:.1f} | {row['relugrad+sum_us']:.1f} | {row['stock+sum_us']:.1f} | "
                  f"{row['fused_vs_relugrad_sum']:.3f} | {row['fused_vs_stock_sum']:.3f} | {row['step stock_us']:.1f} | "
                  f"{row['step ours_us']:.1f} | {row['step_ratio']:.3f} |", flush=True)
    mlp_rows = [mlp_step(threads, int(b), args.rounds)
                for threads in (int(t) for t in args.threads.split(",")) if args.mlp_batches
                for b in args.mlp_batches.split(",")]
    if args.json:
        meta = {"torch": torch.__version__, "machine": cpu_name(), "rounds": args.rounds,
                "command": command_line()}
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "rows": rows, "mlp_rows": mlp_rows}, f, indent=1)


def mlp_step(threads: int, batch: int, rounds: int) -> dict:
    """One training step of the 3-block MLP, stock against replace_relu(fuse_linear=True)."""
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    stock = mlp()
    ours = rt.replace_relu(mlp(), fuse_linear=True)
    ours.load_state_dict(stock.state_dict())
    x = torch.randn(batch, 512)

    def step(m):
        m(x).square().mean().backward()
        m.zero_grad(set_to_none=True)

    cands = {"stock": lambda: step(stock), "ours": lambda: step(ours)}
    times = {k: [] for k in cands}
    for r in range(rounds):
        for k in rotated(list(cands), r):
            times[k].append(per_call(cands[k], target=0.2))
    ratio = median_ratio(times["ours"], times["stock"])
    row = {"threads": threads, "batch": batch, "stock_ms": 1e3 * statistics.median(times["stock"]),
           "ours_ms": 1e3 * statistics.median(times["ours"]), "ratio": ratio}
    print(f"MLP step, {threads} thread(s), batch {batch}: stock {row['stock_ms']:.2f} ms, "
          f"LinearReLU {row['ours_ms']:.2f} ms, ratio {ratio:.3f}", flush=True)
    return row
