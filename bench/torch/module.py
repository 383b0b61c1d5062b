"""module: forward + backward of one ReLU module, nn.ReLU against relugrad.torch.ReLU, over sizes,
dtypes, torch thread counts and layouts, interleaved in one process.

    .venv/bin/python -m bench.torch module --json docs/results/<machine>/torch_module.json
    .venv/bin/python -m bench.torch module --sizes 16,64K --dtypes f32 --threads 1 --layouts nchw --ops

Each step is `module(x).backward(g)` on a leaf x of n elements in an (N, C, H, W) shape (C = 16
when n allows), contiguous (nchw) or channels_last, so the backward's output goes on into
AccumulateGrad as in training. relugrad runs its torch-native path (C++ ops and autograd nodes);
--ops adds the custom-op path (as when _relugrad_torch.so is absent); --control adds a second
nn.ReLU, whose ratio to the first (A/A) shows what the bench itself puts between identical
modules. The order of the candidates rotates round by round; a round times each (best of 3
repeats of a loop sized to ~10 ms) and the reported ratio is the median over rounds of the
per-round ratio relugrad / nn.ReLU (the machine is shared: only ratios taken side by side mean
anything); the JSON rows also carry its ~95% interval (ratio_ci95, and control_ci95 with
--control), which the report's tie verdict reads. docs/performance.md, "Method".

--dropout P compares nn.ReLU + nn.Dropout(P) (training) with relugrad's fused ReLUDropout(P);
--grad-from-op makes each step `(module(x) * w).sum().backward()`, so the module's backward gets a
gradient made by an op (mul's backward) that nothing else holds, as inside a model, instead of the
caller's g (both sides pay the mul and the sum).
"""
import json
import statistics

import torch

import relugrad.torch as rt

from .common import (DTYPES, command_line, cpu_name, median_ratio, parse_sizes, per_call, ratio_interval,
                     relu_dropout_class, require_native, rotated, shape_of, use_native_eager)


def add_arguments(ap) -> None:
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


def main(args, ap) -> None:
    require_native()
    ReLUDropout = relu_dropout_class()
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
                for n in parse_sizes(args.sizes):
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
                    order = list(cands)
                    for r in range(args.rounds):
                        # Who runs first rotates: with a fixed order the second candidate's loop
                        # starts on the heap the first one left.
                        for name in rotated(order, r):
                            module = cands[name]
                            use_native_eager(name != "ops")

                            def run(module=module):
                                if args.grad_from_op:
                                    (module(x) * w).sum().backward()
                                else:
                                    module(x).backward(g)
                                x.grad = None
                            times[name].append(per_call(run))
                    use_native_eager(True)
                    ratio, interval = ratio_interval(times["relugrad"], times["nn.ReLU"])
                    row = {"threads": threads, "dtype": dname, "layout": layout, "n": n,
                           "stock_us": 1e6 * statistics.median(times["nn.ReLU"]),
                           "relugrad_us": 1e6 * statistics.median(times["relugrad"]), "ratio": ratio,
                           "ratio_ci95": interval}
                    line = [threads, dname, layout, n, f"{row['stock_us']:.1f}", f"{row['relugrad_us']:.1f}", f"{ratio:.3f}"]
                    if args.ops:
                        row["ops_us"] = 1e6 * statistics.median(times["ops"])
                        row["ops_ratio"] = median_ratio(times["ops"], times["nn.ReLU"])
                        line += [f"{row['ops_us']:.1f}", f"{row['ops_ratio']:.3f}"]
                    if args.control:
                        row["control_ratio"], row["control_ci95"] = ratio_interval(times["control"], times["nn.ReLU"])
                        line += [f"{row['control_ratio']:.3f}"]
                    rows.append(row)
                    print("| " + " | ".join(str(v) for v in line) + " |", flush=True)
                    del x, g, w
    if args.json:
        meta = {"torch": torch.__version__, "machine": cpu_name(), "mask": args.mask, "control": args.control,
                "dropout": args.dropout, "grad_from_op": args.grad_from_op,
                "rounds": args.rounds, "command": command_line()}
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "rows": rows}, f, indent=1)
