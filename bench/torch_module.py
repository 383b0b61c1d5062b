"""Forward + backward of one ReLU module, nn.ReLU against relugrad.torch.ReLU, over sizes,
dtypes, torch thread counts and layouts, interleaved in one process.

    .venv/bin/python bench/torch_module.py --json docs/results/torch_module.json
    .venv/bin/python bench/torch_module.py --sizes 16,64K --dtypes f32 --threads 1 --layouts nchw --ops

Each step is `module(x).backward(g)` on a leaf x of n elements in an (N, C, H, W) shape (C = 16
when n allows), contiguous (nchw) or channels_last, so the backward's output goes on into
AccumulateGrad as in training. relugrad runs its torch-native path (C++ ops and autograd nodes);
--ops adds the custom-op path (as when _relugrad_torch.so is absent); --control adds a second
nn.ReLU, whose ratio to the first (A/A) shows what the bench itself puts between identical
modules. The order of the candidates rotates round by round; a round times each (best of 3
repeats of a loop sized to ~10 ms) and the reported ratio is the median over rounds of the
per-round ratio relugrad / nn.ReLU (the machine is shared: only ratios taken side by side mean
anything). docs/python.md, "Never slower".

--dropout P compares nn.ReLU + nn.Dropout(P) (training) with relugrad's fused ReLUDropout(P);
--grad-from-op makes each step `(module(x) * w).sum().backward()`, so the module's backward gets a
gradient made by an op (mul's backward) that nothing else holds, as inside a model, instead of the
caller's g (both sides pay the mul and the sum).
"""
import argparse
import json
import statistics
import sys
import timeit

import torch

import relugrad.torch as rt
from relugrad._dropout import ReLUDropout
from torch_steps import cpu_name  # this directory's step benchmark

DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16, "f64": torch.float64}


def parse_size(text: str) -> int:
    scale = {"K": 1 << 10, "M": 1 << 20}.get(text[-1].upper(), 1)
    return int(text[:-1] if scale > 1 else text) * scale


def shape_of(n: int):
    """An (N, C, H, W) shape of n elements: C = 16, H = W when n allows, else (1, 1, 1, n)."""
    if n % 16:
        return (1, 1, 1, n)
    rest = n // 16
    h = 1
    while (h * 2) * (h * 2) <= rest and rest % ((h * 2) * (h * 2)) == 0:
        h *= 2
    return (rest // (h * h), 16, h, h)


def per_call(fn, target=0.01) -> float:
    number = max(1, int(target / max(timeit.timeit(fn, number=1), 1e-7)))
    return min(timeit.repeat(fn, number=number, repeat=3)) / number


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="16,64K,256K,1M,4M,16M,64M")
    ap.add_argument("--dtypes", default="f32,bf16,f16")
    ap.add_argument("--threads", default="1,2", help="torch.set_num_threads values")
    ap.add_argument("--layouts", default="nchw,channels_last")
    ap.add_argument("--mask", action="store_true", help="ReLU(mask=True)")
    ap.add_argument("--ops", action="store_true", help="also the custom-op path")
    ap.add_argument("--control", action="store_true",
                    help="also a second nn.ReLU (A/A): what the bench puts between identical modules")
    ap.add_argument("--dropout", type=float, help="ReLU + Dropout(P) against ReLUDropout(P)")
    ap.add_argument("--grad-from-op", action="store_true",
                    help="loss (module(x) * w).sum(): the backward gets a gradient made by an op")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--json")
    args = ap.parse_args()
    if not rt.NATIVE:
        raise SystemExit(f"the torch-native path is not loaded: {rt.NATIVE_STATUS}")
    native = rt._native_relu
    what = f"mask={args.mask}" if args.dropout is None else f"ReLU + Dropout({args.dropout}) vs ReLUDropout"
    what += ", gradient from an op" if args.grad_from_op else ""
    print(f"torch {torch.__version__}, {cpu_name()}, {what}; us per forward+backward "
          f"(median of {args.rounds} rounds), ratio = median of per-round ratios relugrad / nn.ReLU")
    head = ["threads", "dtype", "layout", "n", "nn.ReLU us", "relugrad us", "ratio"] + (["ops us", "ops ratio"] if args.ops else []) + (["A/A ratio"] if args.control else [])
    print("| " + " | ".join(head) + " |")
    print("|---" * len(head) + "|")
    rows = []
    for threads in (int(t) for t in args.threads.split(",")):
        torch.set_num_threads(threads)
        for dname in args.dtypes.split(","):
            dtype = DTYPES[dname]
            for layout in args.layouts.split(","):
                for n in (parse_size(s) for s in args.sizes.split(",")):
                    fmt = torch.channels_last if layout == "channels_last" else torch.contiguous_format
                    x = torch.randn(shape_of(n)).to(dtype).contiguous(memory_format=fmt).requires_grad_(True)
                    g = torch.randn(shape_of(n)).to(dtype).contiguous(memory_format=fmt)
                    w = torch.randn(shape_of(n)).to(dtype).contiguous(memory_format=fmt)

                    def stock():
                        if args.dropout is None:
                            return torch.nn.ReLU()
                        return torch.nn.Sequential(torch.nn.ReLU(), torch.nn.Dropout(args.dropout))

                    def ours():
                        return rt.ReLU(mask=args.mask) if args.dropout is None else ReLUDropout(args.dropout)
                    cands = {"nn.ReLU": stock(), "relugrad": ours()}
                    if args.ops:
                        cands["ops"] = ours()
                    if args.control:
                        cands["control"] = stock()
                    times = {k: [] for k in cands}
                    order = list(cands.items())
                    for r in range(args.rounds):
                        # Who runs first rotates: a fixed order measured ~1% against
                        # the second candidate here (its loop starts on the first's heap).
                        for name, module in order[r % len(order):] + order[:r % len(order)]:
                            rt._native_relu = None if name == "ops" else native

                            def run(module=module):
                                if args.grad_from_op:
                                    (module(x) * w).sum().backward()
                                else:
                                    module(x).backward(g)
                                x.grad = None
                            times[name].append(per_call(run))
                    rt._native_relu = native
                    ratio = statistics.median(a / b for a, b in zip(times["relugrad"], times["nn.ReLU"]))
                    row = {"threads": threads, "dtype": dname, "layout": layout, "n": n,
                           "stock_us": 1e6 * statistics.median(times["nn.ReLU"]),
                           "relugrad_us": 1e6 * statistics.median(times["relugrad"]), "ratio": ratio}
                    line = [threads, dname, layout, n, f"{row['stock_us']:.1f}", f"{row['relugrad_us']:.1f}", f"{ratio:.3f}"]
                    if args.ops:
                        row["ops_us"] = 1e6 * statistics.median(times["ops"])
                        row["ops_ratio"] = statistics.median(a / b for a, b in zip(times["ops"], times["nn.ReLU"]))
                        line += [f"{row['ops_us']:.1f}", f"{row['ops_ratio']:.3f}"]
                    if args.control:
                        row["control_ratio"] = statistics.median(a / b for a, b in zip(times["control"], times["nn.ReLU"]))
                        line += [f"{row['control_ratio']:.3f}"]
                    rows.append(row)
                    print("| " + " | ".join(str(v) for v in line) + " |", flush=True)
                    del x, g, w
    if args.json:
        meta = {"torch": torch.__version__, "machine": cpu_name(), "mask": args.mask, "control": args.control,
                "dropout": args.dropout, "grad_from_op": args.grad_from_op,
                "rounds": args.rounds, "command": " ".join(sys.argv)}
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
