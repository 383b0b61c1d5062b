"""Activation memory kept for backward: torch nn.ReLU vs relugrad
replace_relu(mask=True), measured as the bytes of every tensor autograd saves during
one forward pass (torch.autograd.graph.saved_tensors_hooks; each storage
counted once, so a tensor kept by two ops counts once). CPU only; no CUDA
memory counters are needed.

    .venv/bin/python python/examples/mask_memory.py

Models:
  digits CNN   the demo's model (python/examples/train_digits.py), batch 64, 8x8 images
  FFN MLP      Linear(512,2048) -> ReLU -> Dropout -> Linear(2048,512), x4, batch 256
               (a Transformer FFN: the ReLU output is held only for ReLU's backward,
               dropout's noise only for dropout's; replace_relu fuses each pair into a
               ReLUDropout keeping two bit planes)
The measured forward is also replace_relu's probe step (docs/python.md): ReLUs not fused keep y
in it, as stock does.
"""
from __future__ import annotations

import copy

import torch
from torch import nn

import relugrad.torch as rt
from digits_model import digits_cnn  # python/examples/digits_model.py


def ffn_mlp(d: int = 512, layers: int = 4) -> nn.Module:
    blocks = []
    for _ in range(layers):
        blocks += [nn.Linear(d, 4 * d), nn.ReLU(), nn.Dropout(0.1), nn.Linear(4 * d, d)]
    return nn.Sequential(*blocks)


def saved_bytes(model: nn.Module, x: torch.Tensor):
    """(bytes of distinct storages saved for backward, of which uint8 masks), after
    checking the backward runs."""
    storages, masks = {}, {}

    def pack(t):
        s = t.untyped_storage()
        storages[s.data_ptr()] = s.nbytes()
        if t.dtype == torch.uint8:
            masks[s.data_ptr()] = s.nbytes()
        return t

    torch.manual_seed(0)
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = model(x)
    out.float().square().sum().backward()
    return sum(storages.values()), sum(masks.values())


def main() -> None:
    torch.manual_seed(0)
    cases = [("digits CNN, batch 64", digits_cnn(), torch.randn(64, 1, 8, 8)),
             ("FFN MLP 4x(512->2048->512), batch 256", ffn_mlp(), torch.randn(256, 512))]
    print(f"{'model':40} | {'nn.ReLU':>12} | {'replace(mask=True)':>16} | {'saved':>12} | ratio")
    for name, model, x in cases:
        x = x.requires_grad_(False)
        base, _ = saved_bytes(model, x)
        ours, mask = saved_bytes(rt.replace_relu(copy.deepcopy(model), mask=True), x)
        print(f"{name:40} | {base / 2**20:9.3f} MiB | {ours / 2**20:9.3f} MiB    | "
              f"{(base - ours) / 2**20:8.3f} MiB | {ours / base:.3f}  (masks {mask / 2**10:.1f} KiB)")


if __name__ == "__main__":
    main()
