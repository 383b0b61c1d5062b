"""Train a small CNN on scikit-learn's bundled 8x8 digits (offline, 1797
images) twice on the CPU: once with torch's nn.ReLU, once with relugrad's
ReLU (relugrad.torch.replace_relu, torch preset). Same initial weights, same
batches: the loss curves must be identical bit for bit. Prints time per
epoch and, from torch.profiler, the share of backward time spent in ReLU
backward for each.

    make demo-train        (or: .venv/bin/python python/examples/train_digits.py --epochs 5)
"""
from __future__ import annotations

import argparse
import copy
import time

import numpy as np
import torch
from torch import nn
from sklearn.datasets import load_digits

import relugrad
import relugrad.torch as rt
from digits_model import digits_cnn  # python/examples/digits_model.py


def batches(n: int, batch: int, seed: int, epoch: int):
    order = np.random.default_rng(seed + epoch).permutation(n)
    for i in range(0, n, batch):
        yield torch.from_numpy(order[i:i + batch])


def train_epoch(model: nn.Module, opt, x, y, batch: int, seed: int, epoch: int):
    losses = []
    t0 = time.perf_counter()
    for idx in batches(len(x), batch, seed, epoch):
        opt.zero_grad(set_to_none=True)
        loss = nn.functional.cross_entropy(model(x[idx]), y[idx])
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, time.perf_counter() - t0


def backward_profile(model: nn.Module, x: torch.Tensor, y: torch.Tensor, batch: int, steps: int):
    """(ReLU-backward ms, all-backward ms) summed over `steps` batches.
    Backward time = the autograd engine's per-node events; ReLU backward =
    the nodes of ReLU (torch: ReluBackward0 -> aten::threshold_backward;
    relugrad: its autograd node, relugrad::ReluBackward on the torch-native
    path, the custom op's _ReluOpBackward on the Python one)."""
    from torch.profiler import ProfilerActivity, profile
    m = copy.deepcopy(model)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for idx in list(batches(len(x), batch, 0, 0))[:steps]:
            m.zero_grad(set_to_none=True)
            nn.functional.cross_entropy(m(x[idx]), y[idx]).backward()
    relu_us, total_us = 0.0, 0.0
    for ev in prof.key_averages():
        if not ev.key.startswith("autograd::engine::evaluate_function: "):
            continue
        total_us += ev.cpu_time_total
        node = ev.key.split(": ", 1)[1]
        if node.startswith("ReluBackward") or "relugrad" in node.lower() or "relu" in node.lower():
            relu_us += ev.cpu_time_total
    return relu_us / 1e3, total_us / 1e3


def step_times_ms(models, x, y, batch: int, rounds: int = 40):
    """Median forward+backward time per batch for each model, measured
    interleaved (model A, model B, A, B, ...) so that machine noise hits all
    alike."""
    idxs = list(batches(len(x), batch, 1, 0))
    times = {n: [] for n in models}
    for r in range(rounds):
        idx = idxs[r % len(idxs)]
        for n, m in models.items():
            m.zero_grad(set_to_none=True)
            t0 = time.perf_counter()
            nn.functional.cross_entropy(m(x[idx]), y[idx]).backward()
            times[n].append((time.perf_counter() - t0) * 1e3)
    return {n: float(np.median(t)) for n, t in times.items()}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (0: leave as is)")
    ap.add_argument("--relugrad-threads", type=int, default=0,
                    help="relugrad threads (default 0: torch's own intra-op threads, on the "
                         "torch-native path; N: relugrad's pool with N threads)")
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    torch.use_deterministic_algorithms(True)

    digits = load_digits()
    x = torch.tensor(digits.images / 16.0, dtype=torch.float32).unsqueeze(1)  # (1797, 1, 8, 8)
    y = torch.tensor(digits.target, dtype=torch.int64)
    base = digits_cnn()
    reference = copy.deepcopy(base)
    ours = rt.replace_relu(copy.deepcopy(base), semantics="torch", threads=args.relugrad_threads)

    print(f"relugrad {relugrad.__version__} ({relugrad.info()['simd_selected']}), torch {torch.__version__}, "
          f"{torch.get_num_threads()} torch threads, relugrad threads={args.relugrad_threads} "
          f"(torch-native path: {rt.NATIVE_STATUS}); digits: {len(x)} images 8x8, batch {args.batch}")
    # Epochs of the two models alternate, so that machine noise hits both alike.
    models = {"torch nn.ReLU": reference, "relugrad ReLU": ours}
    opts = {n: torch.optim.SGD(m.parameters(), lr=0.05, momentum=0.9) for n, m in models.items()}
    losses = {n: [] for n in models}
    times = {n: [] for n in models}
    for epoch in range(args.epochs):
        for n, m in models.items():
            epoch_losses, t = train_epoch(m, opts[n], x, y, args.batch, args.seed, epoch)
            losses[n] += epoch_losses
            times[n].append(t)
    steps_per_epoch = -(-len(x) // args.batch)
    print(f"\n{'epoch':>5} | {'torch loss':>12} {'s/epoch':>8} | {'relugrad loss':>13} {'s/epoch':>8}")
    (lt, tt), (lr, tr) = [(losses[n], times[n]) for n in models]
    for e in range(args.epochs):
        sl = slice(e * steps_per_epoch, (e + 1) * steps_per_epoch)
        print(f"{e + 1:>5} | {np.mean(lt[sl]):>12.6f} {tt[e]:>8.3f} | {np.mean(lr[sl]):>13.6f} {tr[e]:>8.3f}")
    print(f"{'median':>5} | {'':>12} {np.median(tt):>8.3f} | {'':>13} {np.median(tr):>8.3f}")
    identical = np.array_equal(np.array(lt, dtype=np.float64).view(np.uint64),
                               np.array(lr, dtype=np.float64).view(np.uint64))
    same_weights = all(torch.equal(p, q) for p, q in zip(reference.parameters(), ours.parameters()))
    print(f"\nloss curves identical bit for bit over {len(lt)} steps: {identical}; "
          f"final weights identical: {same_weights}")
    with torch.no_grad():
        acc = {n: (m(x).argmax(1) == y).float().mean().item() for n, m in
               (("torch nn.ReLU", reference), ("relugrad ReLU", ours))}
    print("training accuracy: " + ", ".join(f"{n} {a:.4f}" for n, a in acc.items()))

    variants = {"torch nn.ReLU": copy.deepcopy(base),
                "relugrad threads=1": rt.replace_relu(copy.deepcopy(base), threads=1),
                "relugrad threads=0": rt.replace_relu(copy.deepcopy(base), threads=0)}
    med = step_times_ms(variants, x, y, args.batch)
    print("\nforward+backward per batch, median of 40 interleaved: " +
          ", ".join(f"{n} {v:.2f} ms" for n, v in med.items()))

    print("\ntorch.profiler, backward of 10 batches (CPU time in autograd nodes):")
    ours = rt.replace_relu(copy.deepcopy(base), threads=args.relugrad_threads)
    for name, model in (("torch nn.ReLU", base), ("relugrad ReLU", ours)):
        relu_ms, total_ms = backward_profile(model, x, y, args.batch, 10)
        print(f"  {name:14}: ReLU backward {relu_ms:7.2f} ms of {total_ms:7.2f} ms backward "
              f"({100 * relu_ms / total_ms:4.1f}%)")
    return 0 if identical and same_weights else 1


if __name__ == "__main__":
    raise SystemExit(main())
