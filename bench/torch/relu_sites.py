"""relu-sites: the ReLU calls of a real model, alone: stock nn.ReLU against relugrad.torch.ReLU on
the exact tensor shapes a model's ReLUs see in one forward, interleaved in one process.

    .venv/bin/python -m bench.torch relu-sites --model resnet50 --json docs/results/<machine>/relu_sites.json
    .venv/bin/python -m bench.torch relu-sites --model resnet18 --batch 8 --threads 2 --layouts nchw

A model step hides ReLU's share of the time in the noise of its convolutions; this times only the
ReLU sites, so a few percent either way shows. The shapes come from forward hooks on every nn.ReLU
of the model. For each torch thread count, layout and dtype, four measures, each a pass over every
site:
  fwd+bwd  module(x).backward(g) per site, as in training (AccumulateGrad included);
  fwd+bwd in place  the same with ReLU(inplace=True), as torchvision builds them, on x.clone()
           (the clone's copy and its backward are in both sides' time);
  bwd      the backward alone: torch.autograd.grad(y, x, g, retain_graph=True) per site, on a
           graph built once (stock: ReluBackward0 = threshold_backward; relugrad: its node);
  bwd after mul  the same on z = y * w, so that ReLU's gradient is made by an op (MulBackward), as
           in a model, not handed in by the caller: relugrad may write dx over a gradient nothing
           else holds (the mul's backward is in both sides' time).
A round times each candidate (best of 3 passes), the first candidate alternating from round to
round; the ratio is the median over rounds of the per-round ratio relugrad / stock.
"""
import json
import statistics

import torch
from torch import nn

import relugrad.torch as rt

from .common import DTYPES, best_pass, command_line, cpu_name, median_ratio, require_native, rotated


def relu_shapes(model_name: str, batch: int, size: int):
    """The input shape of every nn.ReLU call in one forward of a torchvision model."""
    import torchvision  # optional: only this benchmark needs it

    model = getattr(torchvision.models, model_name)(weights=None).eval()
    shapes = []
    hooks = [m.register_forward_pre_hook(lambda _m, args: shapes.append(tuple(args[0].shape)))
             for m in model.modules() if isinstance(m, nn.ReLU)]
    with torch.no_grad():
        model(torch.randn(batch, 3, size, size))
    for h in hooks:
        h.remove()
    return shapes


def add_arguments(ap) -> None:
    ap.add_argument("--model", default="resnet50")
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--size", type=int, default=112, help="input height and width")
    ap.add_argument("--threads", default="1,2", help="torch.set_num_threads values")
    ap.add_argument("--layouts", default="nchw,channels_last")
    ap.add_argument("--dtypes", default="f32")
    ap.add_argument("--rounds", type=int, default=11)
    ap.add_argument("--json")


def main(args, ap) -> None:
    require_native()
    shapes = relu_shapes(args.model, args.batch, args.size)
    elements = sum(torch.Size(s).numel() for s in shapes)
    print(f"torch {torch.__version__}, {cpu_name()}; {args.model} at {args.batch}x3x{args.size}x{args.size}: "
          f"{len(shapes)} ReLU calls, {elements / 1e6:.1f}M elements; ms per pass over every site (each side's "
          f"median), ratio = median of {args.rounds} per-round ratios relugrad / stock")
    print("| threads | dtype | layout | measure | stock ms | relugrad ms | ratio |")
    print("|---|---|---|---|---|---|---|")
    rows = []
    for threads in (int(t) for t in args.threads.split(",")):
        torch.set_num_threads(threads)
        for dname in args.dtypes.split(","):
            for layout in args.layouts.split(","):
                fmt = torch.channels_last if layout == "channels_last" else torch.contiguous_format
                xs = [torch.randn(s).to(DTYPES[dname]).contiguous(memory_format=fmt).requires_grad_(True)
                      for s in shapes]
                gs = [torch.randn(s).to(DTYPES[dname]).contiguous(memory_format=fmt) for s in shapes]
                mods = {"stock": nn.ReLU(), "relugrad": rt.ReLU()}
                inplace = {"stock": nn.ReLU(inplace=True), "relugrad": rt.ReLU(inplace=True)}
                graphs = {k: [m(x) for x in xs] for k, m in mods.items()}
                ws = [torch.randn(s).to(DTYPES[dname]).contiguous(memory_format=fmt) for s in shapes]
                mul_graphs = {k: [y * w for y, w in zip(ys, ws)] for k, ys in graphs.items()}

                def fwd_bwd(m):
                    for x, g in zip(xs, gs):
                        m(x).backward(g)
                        x.grad = None

                def fwd_bwd_inplace(m):
                    for x, g in zip(xs, gs):
                        m(x.clone()).backward(g)
                        x.grad = None

                def bwd(ys):
                    for x, y, g in zip(xs, ys, gs):
                        torch.autograd.grad(y, x, g, retain_graph=True)

                measures = {"fwd+bwd": {k: (lambda m=m: fwd_bwd(m)) for k, m in mods.items()},
                            "fwd+bwd in place": {k: (lambda m=m: fwd_bwd_inplace(m)) for k, m in inplace.items()},
                            "bwd": {k: (lambda ys=graphs[k]: bwd(ys)) for k in mods},
                            "bwd after mul": {k: (lambda zs=mul_graphs[k]: bwd(zs)) for k in mods}}
                for measure, cands in measures.items():
                    times = {k: [] for k in cands}
                    for r in range(args.rounds):
                        for k in rotated(list(cands), r):
                            times[k].append(best_pass(cands[k]))
                    ratio = median_ratio(times["relugrad"], times["stock"])
                    row = {"threads": threads, "dtype": dname, "layout": layout, "measure": measure,
                           "stock_ms": 1e3 * statistics.median(times["stock"]),
                           "relugrad_ms": 1e3 * statistics.median(times["relugrad"]), "ratio": ratio}
                    rows.append(row)
                    print(f"| {threads} | {dname} | {layout} | {measure} | {row['stock_ms']:.2f} | "
                          f"{row['relugrad_ms']:.2f} | {ratio:.3f} |", flush=True)
                del xs, gs, graphs, ws, mul_graphs
    if args.json:
        meta = {"torch": torch.__version__, "machine": cpu_name(), "model": args.model,
                "input": [args.batch, 3, args.size, args.size], "sites": len(shapes), "elements": elements,
                "rounds": args.rounds, "command": command_line()}
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "rows": rows}, f, indent=1)
