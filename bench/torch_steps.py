"""One training step of whole models, stock against relugrad, in one process.

    .venv/bin/python bench/torch_steps.py --models resnet18,mlp --layouts nchw,channels_last

For each model and layout, a stock model and a copy with relugrad.torch.replace_relu (same
weights) each run `loss = model(x).square().mean(); loss.backward(); zero_grad` in alternating
rounds; a round times each candidate over --steps steps, and the reported ratio is the median
of the per-round ratios relugrad / stock (the machine is shared: only ratios taken side by side
mean anything). Saved-for-backward bytes are counted with saved_tensors_hooks (each storage
once). Both candidates' first step is checked bit for bit (loss and every gradient) before timing.
"""
import argparse
import copy
import statistics
import time

import torch
from torch import nn

import relugrad.torch as rt


def mlp() -> nn.Module:
    return nn.Sequential(*[m for _ in range(3) for m in (nn.Linear(512, 2048), nn.ReLU(), nn.Linear(2048, 512))])


def transformer() -> nn.Module:
    layer = nn.TransformerEncoderLayer(256, 4, 1024, dropout=0.0, batch_first=True)
    return nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)


def torchvision_model(name: str):
    import torchvision  # optional: only the torchvision models need it

    return getattr(torchvision.models, name)(weights=None)


# name -> (constructor, input shape, whether the layout options apply)
MODELS = {
    "resnet18": (lambda: torchvision_model("resnet18"), (8, 3, 112, 112), True),
    "resnet18-tiny": (lambda: torchvision_model("resnet18"), (2, 3, 32, 32), True),
    "resnet50": (lambda: torchvision_model("resnet50"), (4, 3, 112, 112), True),
    "mlp": (mlp, (1024, 512), False),
    "transformer": (transformer, (8, 128, 256), False),
}


def saved_bytes(model: nn.Module, x: torch.Tensor) -> int:
    seen = {}

    def pack(t):
        if isinstance(t, torch.Tensor) and t.device.type == "cpu" and not t.is_nested:
            storage = t.untyped_storage()
            seen[storage.data_ptr()] = storage.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        loss = model(x).square().mean()
    loss.backward()
    model.zero_grad(set_to_none=True)
    return sum(seen.values())


def step(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
    loss = model(x).square().mean()
    loss.backward()
    return loss


def same_first_step(stock: nn.Module, ours: nn.Module, x: torch.Tensor) -> bool:
    a, b = step(stock, x), step(ours, x)
    same = torch.equal(a, b) and all(
        (p.grad is None and q.grad is None) or torch.equal(p.grad, q.grad)
        for p, q in zip(stock.parameters(), ours.parameters()))
    stock.zero_grad(set_to_none=True)
    ours.zero_grad(set_to_none=True)
    return same


def time_steps(model: nn.Module, x: torch.Tensor, steps: int) -> float:
    start = time.perf_counter()
    for _ in range(steps):
        step(model, x)
        model.zero_grad(set_to_none=True)
    return (time.perf_counter() - start) / steps


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="resnet18,resnet50,mlp,transformer")
    ap.add_argument("--layouts", default="nchw,channels_last")
    ap.add_argument("--mask", action="store_true", help="replace_relu(mask=True)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--torch-threads", type=int, default=0, help="torch.set_num_threads (0: leave as is)")
    ap.add_argument("--compile", default="", metavar="BACKEND",
                    help="torch.compile both models with this backend (inductor, aot_eager) before timing")
    args = ap.parse_args()
    if args.torch_threads:
        torch.set_num_threads(args.torch_threads)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, relugrad native={rt.NATIVE}, "
          f"mask={args.mask}, compile={args.compile or 'no'}; ms per step, median of {args.rounds} interleaved "
          f"rounds of {args.steps} steps")
    print("| model | layout | same bits | stock ms | relugrad ms | relugrad / stock | saved MiB stock | saved MiB relugrad |")
    print("|---|---|---|---|---|---|---|---|")
    for name in args.models.split(","):
        make, shape, has_layout = MODELS[name]
        for layout in args.layouts.split(",") if has_layout else ["-"]:
            torch.manual_seed(0)
            stock = make()
            ours = copy.deepcopy(stock)
            rt.replace_relu(ours, mask=args.mask)
            x = torch.randn(shape)
            if layout == "channels_last":
                stock, ours = stock.to(memory_format=torch.channels_last), ours.to(memory_format=torch.channels_last)
                x = x.contiguous(memory_format=torch.channels_last)
            if args.compile:  # the first steps compile; bits are compared on compiled steps
                torch._dynamo.reset()
                stock, ours = torch.compile(stock, backend=args.compile), torch.compile(ours, backend=args.compile)
                for m in (stock, ours):
                    step(m, x)
                    m.zero_grad(set_to_none=True)
            same = same_first_step(stock, ours, x)
            bytes_stock, bytes_ours = saved_bytes(stock, x), saved_bytes(ours, x)
            times = {"stock": [], "ours": []}
            for _ in range(args.rounds):
                times["stock"].append(time_steps(stock, x, args.steps))
                times["ours"].append(time_steps(ours, x, args.steps))
            ratio = statistics.median(o / s for o, s in zip(times["ours"], times["stock"]))
            print(f"| {name} | {layout} | {'yes' if same else 'NO'} | {1e3 * min(times['stock']):.1f} | "
                  f"{1e3 * min(times['ours']):.1f} | {ratio:.3f} | {bytes_stock / 2**20:.1f} | "
                  f"{bytes_ours / 2**20:.1f} |", flush=True)


if __name__ == "__main__":
    main()
