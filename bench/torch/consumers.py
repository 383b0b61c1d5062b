"""consumers: ReLU's backward with the node that reads its dx, stock nn.ReLU against
relugrad.torch.ReLU, interleaved in one process.

    .venv/bin/python -m bench.torch consumers --threads 1 --sizes 1M,2M,3M,4M,8M

The module bench (`module`) hands dx to AccumulateGrad, which keeps it without reading it; in a
model the next node reads dx at once, so where dx was left (in the cache or, streamed, in memory)
shows in that node's time. Each case is one training step of a small graph around one ReLU of n
f32 elements (n a multiple of 1024):
  bn -> relu    BatchNorm2d(64) then ReLU, as in a ResNet: BatchNorm's backward reads dx;
  x + b -> relu a broadcast bias then ReLU, x not requiring grad: the bias's gradient is dx summed
                over rows, a light reader;
  relu -> mm    ReLU on a leaf, then a matmul: dx goes to AccumulateGrad, the matmul's backward
                made dy;
  none          ReLU on a leaf x whose .grad is cleared each step: dx is never read (the module
                bench's step).
A round times each candidate (common.per_call: the best of 3 loops of steps, each loop about
10 ms), the first candidate alternating; the ratio is the median of the per-round ratios
relugrad / stock.
"""
import statistics

import torch
from torch import nn

import relugrad.torch as rt

from .common import cpu_name, median_ratio, parse_sizes, per_call, rotated


def cases(n: int) -> dict:
    """name -> step(module) for the graphs around a ReLU of n elements."""
    rows = n // 1024
    xb, b, gb = torch.randn(rows, 1024), torch.randn(1024, requires_grad=True), torch.randn(rows, 1024)

    def bias_sum(m):
        b.grad = None
        m(xb + b).backward(gb)

    channels = 64
    batch = max(1, n // (channels * 32 * 32))
    xc, bn, gc = torch.randn(batch, channels, 32, 32), nn.BatchNorm2d(channels), torch.randn(batch, channels, 32, 32)

    def bn_relu(m):
        bn.zero_grad(set_to_none=True)
        m(bn(xc)).backward(gc)

    xl, w = torch.randn(n // 256, 256, requires_grad=True), torch.randn(256, 256, requires_grad=True)
    gl = torch.randn(n // 256, 256)

    def relu_mm(m):
        xl.grad, w.grad = None, None
        (m(xl) @ w).backward(gl)

    xa, ga = torch.randn(n, requires_grad=True), torch.randn(n)

    def unread(m):
        xa.grad = None
        m(xa).backward(ga)

    return {"bn -> relu": bn_relu, "x + b -> relu": bias_sum, "relu -> mm": relu_mm, "none": unread}


def add_arguments(ap) -> None:
    ap.add_argument("--sizes", default="1M,2M,3M,4M,8M", help="elements of the ReLU (multiples of 1024)")
    ap.add_argument("--threads", default="1", help="torch.set_num_threads values")
    ap.add_argument("--rounds", type=int, default=15)


def main(args, ap) -> None:
    print(f"torch {torch.__version__}, {cpu_name()}; f32; ms per step (each side's median), "
          f"ratio = median of {args.rounds} per-round ratios relugrad / stock")
    print("| threads | n | dx MiB | consumer | stock ms | relugrad ms | ratio |")
    print("|---|---|---|---|---|---|---|")
    for threads in (int(t) for t in args.threads.split(",")):
        torch.set_num_threads(threads)
        for n in parse_sizes(args.sizes):
            if n % 1024:
                raise SystemExit(f"--sizes: {n} is not a multiple of 1024")
            modules = {"stock": nn.ReLU(), "relugrad": rt.ReLU()}
            for name, step in cases(n).items():
                times = {"stock": [], "relugrad": []}
                for r in range(args.rounds):
                    for who in rotated(list(modules), r):
                        times[who].append(per_call(lambda: step(modules[who])))
                ratio = median_ratio(times["relugrad"], times["stock"])
                print(f"| {threads} | {n} | {n * 4 / 2**20:g} | {name} | {1e3 * statistics.median(times['stock']):.2f} | "
                      f"{1e3 * statistics.median(times['relugrad']):.2f} | {ratio:.3f} |", flush=True)
