"""call-cost: fixed cost of one small ReLU call: nn.ReLU against relugrad.torch.ReLU, interleaved in
one process, best of many samples (the floor a loaded machine still reaches).

    .venv/bin/python -m bench.torch call-cost --threads 1 --label this-build

Times torch.relu, each module's forward on a leaf that needs a gradient, and each module's
forward + backward (`module(x).backward(g)`, then `x.grad = None`) at n elements (default 16).
Prints one line of us per call and the two ratios relugrad / nn.ReLU; run it once per build to
compare builds (docs/design.md, "A Python entry for the eager ReLU").
"""
import torch

import relugrad.torch as rt

from .common import loop_us


def add_arguments(ap) -> None:
    ap.add_argument("--threads", type=int, default=1, help="torch.set_num_threads value")
    ap.add_argument("--n", type=int, default=16)
    ap.add_argument("--samples", type=int, default=200)
    ap.add_argument("--calls", type=int, default=100, help="calls per sample")
    ap.add_argument("--label", default="")


def main(args, ap) -> None:
    torch.set_num_threads(args.threads)
    x = torch.randn(args.n, requires_grad=True)
    g = torch.randn(args.n)
    stock, ours = torch.nn.ReLU(), rt.ReLU()

    def step(module):
        module(x).backward(g)
        x.grad = None

    cands = {"torch.relu": lambda: torch.relu(x), "nn.ReLU fwd": lambda: stock(x), "ReLU fwd": lambda: ours(x),
             "nn.ReLU fwd+bwd": lambda: step(stock), "ReLU fwd+bwd": lambda: step(ours)}
    best = {}
    for _ in range(args.samples):
        for name, fn in cands.items():  # a fixed order: each figure is a floor, best of all samples
            best[name] = min(best.get(name, float("inf")), loop_us(fn, args.calls))
    print(f"{args.label} n={args.n} threads={args.threads} native={rt.NATIVE_STATUS}: "
          + " ".join(f"{k}={v:.2f}us" for k, v in best.items())
          + f" fwd_ratio={best['ReLU fwd'] / best['nn.ReLU fwd']:.3f}"
          + f" step_ratio={best['ReLU fwd+bwd'] / best['nn.ReLU fwd+bwd']:.3f}")
