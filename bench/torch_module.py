"""Forward + backward of one ReLU module: nn.ReLU against relugrad.torch.ReLU
on its torch-native path (C++ autograd Functions) and without it (the custom
ops torch.ops.relugrad.*, as when _relugrad_torch.so is absent).

    .venv/bin/python bench/torch_module.py --torch-threads 1 --sizes 16,4K,256K,1M

Each step is `module(x).backward(g)` on a leaf x of n f32 elements, so the
backward's output goes on into AccumulateGrad as in training. Candidates are
interleaved round by round and the best of each is kept (the machine is
shared; only ratios within one run mean anything). docs/performance-notes.md, "Torch-native ReLU".
"""
import argparse
import timeit

import torch

import relugrad.torch as rt


def parse_size(text: str) -> int:
    scale = {"K": 1 << 10, "M": 1 << 20}.get(text[-1].upper(), 1)
    return int(text[:-1] if scale > 1 else text) * scale


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="16,4K,64K,256K,1M,4M")
    ap.add_argument("--torch-threads", type=int, default=0, help="torch.set_num_threads (0: leave as is)")
    ap.add_argument("--relugrad-threads", default="0", help="comma list of ReLU(threads=) values")
    ap.add_argument("--mask", action="store_true", help="ReLU(mask=True)")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    if args.torch_threads:
        torch.set_num_threads(args.torch_threads)
    if not rt.NATIVE:
        raise SystemExit(f"the torch-native path is not loaded: {rt.NATIVE_STATUS}")
    native = (rt._native_relu, rt._native_relu_)
    threads = [int(t) for t in args.relugrad_threads.split(",")]
    print(f"torch {torch.__version__}, {torch.get_num_threads()} torch threads, mask={args.mask}; "
          "us per forward+backward, best of rounds")
    names = ["nn.ReLU"] + [f"{path} t={t}" for t in threads for path in ("native", "ops")]
    print("| n | " + " | ".join(names) + " | native / nn.ReLU |")
    print("|---" * (len(names) + 2) + "|")
    for n in (parse_size(s) for s in args.sizes.split(",")):
        x = torch.randn(n, requires_grad=True)
        g = torch.randn(n)
        modules = {"nn.ReLU": torch.nn.ReLU()}
        for t in threads:
            for path in ("native", "ops"):
                modules[f"{path} t={t}"] = rt.ReLU(threads=t, mask=args.mask)
        number = max(3, int(1e7 // max(n, 2000)))
        best = {}
        for _ in range(args.rounds):
            for name, module in modules.items():
                rt._native_relu, rt._native_relu_ = (None, None) if name.startswith("ops") else native
                seconds = min(timeit.repeat(lambda: module(x).backward(g), number=number, repeat=3)) / number
                best[name] = min(best.get(name, float("inf")), seconds)
                x.grad = None
        rt._native_relu, rt._native_relu_ = native
        ratio = best[f"native t={threads[0]}"] / best["nn.ReLU"]
        print(f"| {n} | " + " | ".join(f"{best[k] * 1e6:.1f}" for k in names) + f" | {ratio:.2f} |", flush=True)


if __name__ == "__main__":
    main()
