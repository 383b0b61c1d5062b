#!/usr/bin/env python3
"""relugrad.torch on CUDA tensors where users meet it, against stock PyTorch, in one process.

    python3 bench/gpu/torch_point_of_use.py --out DIR            # on a GPU machine
    python3 bench/gpu/torch_point_of_use.py --device cpu --quick --out DIR   # dry run, no GPU

1. bits: relugrad.torch.ReLU (mask off/on, in place or not) against nn.ReLU on one input: y,
   y's strides, x.grad and its strides, bit for bit, for f32/f16/bf16/f64 in four layouts
   (contiguous, channels_last, a transposed view, a strided slice) on random bit patterns
   (NaN payloads, +-0, infinities, subnormals).
2. models: torchvision resnet18 and the transformer/MLP-with-dropout models of bench/torch/common.py,
   stock against a replace_relu copy (mask off/on), two SGD steps: loss and every gradient bit for
   bit (cuDNN deterministic, the same seed before each step so dropout draws the same noise).
3. module time: module(x).backward(g) per ReLU module, nn.ReLU against relugrad (and a second
   nn.ReLU, the A/A), interleaved rounds; each candidate's time is the wall time of a loop between
   two synchronisations (host work included: eager use), the ratio the median of per-round ratios.
4. steps: whole training steps (and peak memory of one step, torch.cuda.max_memory_allocated,
   exact, and the saved-for-backward bytes of its forward: distinct storages autograd saves) of
   resnet18/resnet50 (NCHW and channels_last), transformer and mlp_dropout, eager and some under
   bf16 autocast, stock against replace_relu (mask off/on) and a copy of stock, interleaved.
5. batch: the largest batch whose training step fits a fixed memory cap
   (torch.cuda.set_per_process_memory_fraction) for the transformer and mlp_dropout, stock against
   replace_relu(mask=True) (CUDA only).

Writes DIR/point_of_use.json and prints the tables; exit status 1 when any bits differ.
"""
import argparse
import copy
import json
import os
import statistics
import sys
import time

import torch
from torch import nn

import relugrad
import relugrad.torch as rt

# The repository root, not bench/: bench/torch is the package bench.torch and would shadow PyTorch.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from bench.torch import common  # noqa: E402  the models and the interval of a median

DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16, "f64": torch.float64}
INT_OF = {2: torch.int16, 4: torch.int32, 8: torch.int64}


def sync(device):
    if device == "cuda":
        torch.cuda.synchronize()


def bits(t: torch.Tensor) -> torch.Tensor:
    t = t.detach()
    return t.contiguous().view(INT_OF[t.element_size()]).cpu()


def random_bits(shape, dtype, seed: int) -> torch.Tensor:
    """Values of every class, about 1/9 each: +0, -0, +inf, -inf, the default NaN, NaN with a
    random sign and payload, subnormals of both signs, random bit patterns, normal values."""
    g = torch.Generator().manual_seed(seed)
    n = 1
    for d in shape:
        n *= d
    size = torch.empty((), dtype=dtype).element_size()
    it = INT_OF[size]
    mant_bits = {torch.float16: 10, torch.bfloat16: 7, torch.float32: 23, torch.float64: 52}[dtype]
    mant = (1 << mant_bits) - 1
    sign = -(1 << (8 * size - 1))  # the sign bit as a signed integer of that width
    exp = ((1 << (8 * size - 1)) - 1) & ~mant
    raw = torch.randint(-(1 << 62), 1 << 62, (n,), generator=g, dtype=torch.int64).to(it)
    normal = torch.randn(n, generator=g, dtype=torch.float64).to(dtype).view(it)
    cls = torch.randint(0, 9, (n,), generator=g)
    specials = torch.tensor([0.0, -0.0, float("inf"), float("-inf"), float("nan")], dtype=dtype).view(it)
    out = torch.where(cls < 5, specials[cls.clamp(max=4)], normal)
    out = torch.where(cls == 5, (raw & (sign | mant)) | exp | 1, out)  # NaN, random sign and payload
    out = torch.where(cls == 6, raw & (sign | mant), out)  # subnormal (or +-0)
    out = torch.where(cls == 7, raw, out)  # any pattern
    return out.view(dtype).reshape(shape)


def nan_pairs_only(a: torch.Tensor, b: torch.Tensor, dtype) -> bool:
    """Every position where the bit patterns a and b differ holds a NaN on both sides."""
    differ = a != b
    return bool((a.view(dtype).isnan() & b.view(dtype).isnan())[differ].all())


LAYOUTS = {
    "contiguous": lambda t: t,
    "channels_last": lambda t: t.contiguous(memory_format=torch.channels_last),
    "transposed": lambda t: t.transpose(2, 3).contiguous().transpose(2, 3),  # dense, not C order
    "strided_slice": lambda t: torch.cat([t, t], dim=3)[..., ::2],  # not dense
}


def check_bits(device: str, quick: bool) -> list:
    """For each case: leaf x (C order) -> layout op -> the module (in place or not) -> backward(g):
    y, y's strides, the module's input gradient and its strides (retain_grad; out of place only)
    and x.grad, stock's against relugrad's."""
    rows = []
    shape = (2, 16, 9, 10) if quick else (4, 16, 33, 34)
    variants = [dict(), dict(mask=True), dict(inplace=True), dict(inplace=True, mask=True)]
    for dname, dtype in DTYPES.items():
        for kind, base in (("bit patterns", random_bits(shape, dtype, 1)), ("normal", torch.randn(shape).to(dtype))):
            g_base = random_bits(shape, dtype, 7).to(device)
            for lname, layout in LAYOUTS.items():
                g = layout(g_base)
                for v in variants:
                    results = []
                    for module in (nn.ReLU(inplace=v.get("inplace", False)), rt.ReLU(**v)):
                        leaf = base.to(device).requires_grad_(True)
                        inp = layout(leaf * 1)
                        if not v.get("inplace"):
                            inp.retain_grad()
                        y = module(inp)
                        y.backward(g)
                        sync(device)
                        dx = None if v.get("inplace") else (bits(inp.grad), tuple(inp.grad.stride()))
                        results.append((bits(y), tuple(y.stride()), dx, bits(leaf.grad)))
                    (ya, sa, da, ga), (yb, sb, db, gb) = results
                    ok = {"y": torch.equal(ya, yb), "y_strides": sa == sb,
                          "dx": da is None or (torch.equal(da[0], db[0]) and da[1] == db[1]),
                          "x_grad": torch.equal(ga, gb)}
                    # Where bits differ: are both sides NaN there (a NaN quieted on one side only)?
                    nan_only = all(nan_pairs_only(a, b, dtype) for a, b in
                                   ((ya, yb), (ga, gb)) + (((da[0], db[0]),) if da is not None else ()))
                    rows.append({"dtype": dname, "values": kind, "layout": lname,
                                 "variant": ",".join(v) or "plain", **ok, "differ_only_in_nan_bits": nan_only,
                                 "y_differ": int((ya != yb).sum()), "grad_differ": int((ga != gb).sum()),
                                 "dx_differ": 0 if da is None else int((da[0] != db[0]).sum())})
    return rows


def check_mask_forward(device: str) -> list:
    """relugrad's mask forward (torch.ops.relugrad.relu_mask, the torch preset) against torch.relu
    on the device: y's bits, and for each differing element x's bits, stock's y and relugrad's."""
    rows = []
    for dname, dtype in DTYPES.items():
        x = random_bits((1 << 16,), dtype, 3).to(device)
        ours = torch.ops.relugrad.relu_mask(x, "torch", 0)[0]
        stock = torch.relu(x)
        a, b, xb = bits(stock), bits(ours), bits(x)
        differ = (a != b).nonzero().flatten()
        width = 2 * x.element_size()
        pairs = sorted({(f"{int(xb[i]) & ((1 << 8 * x.element_size()) - 1):0{width}x}",
                         f"{int(a[i]) & ((1 << 8 * x.element_size()) - 1):0{width}x}",
                         f"{int(b[i]) & ((1 << 8 * x.element_size()) - 1):0{width}x}") for i in differ[:2000].tolist()})
        rows.append({"dtype": dname, "differ": int(differ.numel()), "examples (x, stock y, relugrad y)": pairs[:8]})
        print(f"mask forward {dname:4}: {int(differ.numel())} of {x.numel()} y differ from torch.relu; "
              f"(x, stock, relugrad): {pairs[:6]}")
    return rows


def grads_of(model):
    return [None if p.grad is None else p.grad.detach().clone() for p in model.parameters()]


def same_steps(build, x, device: str, mask: bool, steps: int = 2) -> dict:
    """Two SGD steps of stock and of a replace_relu copy from the same weights: every loss and
    gradient bit for bit."""
    stock = build().to(device)
    ours = copy.deepcopy(stock)
    rt.replace_relu(ours, mask=mask)
    out = {"loss_equal": True, "grads_equal": True}
    optims = [torch.optim.SGD(m.parameters(), lr=0.01) for m in (stock, ours)]
    for s in range(steps):
        seen = []
        for model, opt in zip((stock, ours), optims):
            torch.manual_seed(1000 + s)
            loss = model(x).square().mean()
            loss.backward()
            seen.append((loss.detach().clone(), grads_of(model)))
            opt.step()
            opt.zero_grad(set_to_none=True)
        (la, ga), (lb, gb) = seen
        out["loss_equal"] &= bool(torch.equal(la, lb))
        out["grads_equal"] &= len(ga) == len(gb) and all(
            (a is None and b is None) or (a is not None and b is not None and torch.equal(bits(a), bits(b)))
            for a, b in zip(ga, gb))
    out["relugrad_modules"] = sorted({type(m).__name__ for m in ours.modules()
                                      if type(m).__module__.startswith("relugrad")})
    return out


MODEL_SHAPES = {"resnet18": (8, 3, 112, 112), "resnet50": (32, 3, 224, 224),
                "transformer": (8, 128, 256), "mlp_dropout": (1024, 512)}


def build_model(name):
    if name.startswith("resnet"):
        return lambda: common.torchvision_model(name)
    return getattr(common, name)


def check_models(device: str, quick: bool) -> list:
    rows = []
    for name in ("resnet18", "transformer", "mlp_dropout"):
        shape = (2, 3, 64, 64) if name == "resnet18" else MODEL_SHAPES[name]
        if quick:
            shape = (2,) + shape[1:]
        x = torch.randn(shape, device=device)
        for mask in (False, True):
            torch.manual_seed(0)
            rows.append({"model": name, "mask": mask, **same_steps(build_model(name), x, device, mask)})
    return rows


def timed(fn, device, number: int) -> float:
    sync(device)
    t0 = time.perf_counter()
    for _ in range(number):
        fn()
    sync(device)
    return (time.perf_counter() - t0) / number


def calibrate(fn, device, target: float) -> int:
    fn()
    one = timed(fn, device, 3)
    return max(3, int(target / max(one, 1e-7)))


def interleaved(fns: dict, device, target: float, rounds: int) -> dict:
    """{candidate: per-round seconds per call}: each round times every candidate over a loop
    sized to about `target` seconds of stock's (the first candidate's) time, the order rotating
    round by round."""
    order = list(fns)
    number = calibrate(fns[order[0]], device, target)
    times = {k: [] for k in order}
    for r in range(rounds):
        for k in order[r % len(order):] + order[:r % len(order)]:
            times[k].append(timed(fns[k], device, number))
    return times


def ratios_of(times: dict, base: str) -> dict:
    out = {}
    for who, seq in times.items():
        if who == base:
            continue
        r = sorted(a / b for a, b in zip(seq, times[base]))
        lo, hi = common.median_interval(r)
        out[who] = {"ratio": statistics.median(r), "interval": [lo, hi]}
    return out


def module_times(device: str, quick: bool, rounds: int) -> list:
    sizes = [16, 1 << 20, 1 << 24] if quick else [16, 1 << 16, 1 << 20, 1 << 24, 1 << 26]
    rows = []
    for dname in ("f32", "bf16", "f16"):
        dtype = DTYPES[dname]
        for n in sizes:
            for layout in ("nchw", "channels_last"):
                shape = (n // 256, 16, 4, 4) if n >= 256 else (1, 1, 1, n)
                x = torch.randn(shape, device=device, dtype=dtype)
                g = torch.randn(shape, device=device, dtype=dtype)
                if layout == "channels_last":
                    if n < 256:
                        continue
                    x = x.contiguous(memory_format=torch.channels_last)
                    g = g.contiguous(memory_format=torch.channels_last)
                leaf = x.requires_grad_(True)
                candidates = {"stock": nn.ReLU(), "stock_copy": nn.ReLU(), "relugrad": rt.ReLU(),
                              "relugrad_mask": rt.ReLU(mask=True)}

                def step_of(m):
                    def run():
                        leaf.grad = None
                        m(leaf).backward(g)
                    return run

                times = interleaved({k: step_of(m) for k, m in candidates.items()}, device, 0.005, rounds)
                row = {"dtype": dname, "n": n, "layout": layout,
                       "stock_us": statistics.median(times["stock"]) * 1e6}
                row.update({k: v for k, v in ratios_of(times, "stock").items()})
                rows.append(row)
                print(f"module {dname:4} n={n:>9} {layout:13} stock {row['stock_us']:9.1f} us  "
                      + "  ".join(f"{k} {row[k]['ratio']:.3f}" for k in ("stock_copy", "relugrad", "relugrad_mask")),
                      flush=True)
    return rows


def saved_bytes(model, x, device: str, amp: bool) -> int:
    """Bytes of the distinct storages autograd saves in one forward of model (loss included)."""
    storages = {}

    def pack(t):
        st = t.untyped_storage()
        storages[st.data_ptr()] = st.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        with torch.autocast(device, torch.bfloat16, enabled=amp):
            model(x).square().mean()
    return sum(storages.values())


def largest_batches(device: str, quick: bool) -> list:
    """For the transformer and mlp_dropout: the largest batch whose training step (forward and
    backward) fits a cap on the caching allocator (set_per_process_memory_fraction), stock against
    replace_relu(mask=True), by doubling then bisection on the batch dimension."""
    if device != "cuda":
        print("batch: CUDA only (SKIPPED)")
        return []
    total = torch.cuda.get_device_properties(0).total_memory
    cap = (1 << 29) if quick else (4 << 30)
    rows = []
    for name in ("transformer", "mlp_dropout"):
        shape = MODEL_SHAPES[name]
        torch.manual_seed(0)
        stock = build_model(name)().to(device)
        models = {"stock": stock, "relugrad_mask": rt.replace_relu(copy.deepcopy(stock), mask=True)}
        found = {}
        for k, m in models.items():
            common.step(m, torch.randn((2,) + shape[1:], device=device))  # the probe's step
            m.zero_grad(set_to_none=True)

            def fits(b):
                torch.cuda.empty_cache()
                torch.cuda.set_per_process_memory_fraction(min(1.0, (torch.cuda.memory_allocated() + cap) / total))
                try:
                    common.step(m, torch.randn((b,) + shape[1:], device=device))
                    torch.cuda.synchronize()
                    return True
                except torch.cuda.OutOfMemoryError:
                    return False
                finally:
                    m.zero_grad(set_to_none=True)
                    torch.cuda.set_per_process_memory_fraction(1.0)

            lo, hi = 0, 1
            while fits(hi) and hi < (1 << 24):
                lo, hi = hi, hi * 2
            while hi - lo > max(1, lo // 64):  # to within 1.6%
                mid = (lo + hi) // 2
                lo, hi = (mid, hi) if fits(mid) else (lo, mid)
            found[k] = lo
        rows.append({"model": name, "cap_bytes": cap, "shape_rest": list(shape[1:]), **found,
                     "ratio": found["relugrad_mask"] / max(1, found["stock"])})
        print(f"batch {name:11} cap {cap / 2**30:.2f} GiB: stock {found['stock']}, relugrad mask "
              f"{found['relugrad_mask']} ({rows[-1]['ratio']:.3f}x)", flush=True)
        torch.cuda.empty_cache()
    return rows


def step_times(device: str, quick: bool, rounds: int) -> list:
    rows = []
    # (model, layout, bf16 autocast): the models eager, and under torch.autocast("cuda", bf16).
    plans = [("resnet18", "nchw", False), ("resnet18", "channels_last", False), ("resnet50", "nchw", False),
             ("resnet50", "channels_last", False), ("transformer", None, False), ("mlp_dropout", None, False),
             ("resnet50", "channels_last", True), ("transformer", None, True)]
    if quick:
        plans = [("resnet18", "nchw", False), ("mlp_dropout", None, False), ("transformer", None, True)]
    for name, layout, amp in plans:
        shape = MODEL_SHAPES[name]
        if quick:
            shape = (2,) + shape[1:]
        torch.manual_seed(0)
        stock = build_model(name)().to(device)
        x = torch.randn(shape, device=device)
        if layout == "channels_last":
            stock = stock.to(memory_format=torch.channels_last)
            x = x.contiguous(memory_format=torch.channels_last)
        models = {"stock": stock, "stock_copy": copy.deepcopy(stock),
                  "relugrad": rt.replace_relu(copy.deepcopy(stock)),
                  "relugrad_mask": rt.replace_relu(copy.deepcopy(stock), mask=True)}
        peak, saved = {}, {}

        def one_step(m):
            with torch.autocast(device, torch.bfloat16, enabled=amp):
                common.step(m, x)
            m.zero_grad(set_to_none=True)

        for k, m in models.items():  # two warm-up steps (the mask probe decides in the first)
            for _ in range(2):
                one_step(m)
            if device == "cuda":
                torch.cuda.synchronize()
                torch.cuda.reset_peak_memory_stats()
                base = torch.cuda.memory_allocated()
                one_step(m)
                torch.cuda.synchronize()
                peak[k] = torch.cuda.max_memory_allocated() - base
            saved[k] = saved_bytes(m, x, device, amp)

        def step_of(m):
            def run():
                one_step(m)
            return run

        times = interleaved({k: step_of(m) for k, m in models.items()}, device, 0.1, rounds)
        row = {"model": name, "layout": layout, "autocast": "bf16" if amp else None, "shape": list(shape),
               "stock_ms": statistics.median(times["stock"]) * 1e3, "peak_bytes": peak, "saved_bytes": saved}
        row.update(ratios_of(times, "stock"))
        rows.append(row)
        pk = "  ".join(f"{k} {v / 2**20:.1f} MiB" for k, v in peak.items())
        pk += "  saved " + "  ".join(f"{k} {v / saved['stock']:.3f}x" for k, v in saved.items() if k != "stock")
        print(f"step {name:11} {str(layout):13} {'bf16' if amp else 'eager':5} stock {row['stock_ms']:8.2f} ms  "
              + "  ".join(f"{k} {row[k]['ratio']:.3f} [{row[k]['interval'][0]:.3f}, {row[k]['interval'][1]:.3f}]"
                          for k in ("stock_copy", "relugrad", "relugrad_mask")) + f"  peak {pk}", flush=True)
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    ap.add_argument("--quick", action="store_true", help="small shapes and few sizes (a smoke run)")
    ap.add_argument("--parts", default="bits,kernels,models,module,steps,batch")
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    device = args.device
    if device == "cuda":
        if not torch.cuda.is_available():
            print("no CUDA device")
            return 2
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False
    parts = args.parts.split(",")
    result = {"torch": torch.__version__, "relugrad": relugrad.info(),
              "device": torch.cuda.get_device_name() if device == "cuda" else common.cpu_name(),
              "native": rt.NATIVE_STATUS}
    print(f"torch {torch.__version__}, device {result['device']}, "
          f"relugrad cuda backend {relugrad.info()['backends']['cuda']}, native: {rt.NATIVE_STATUS}", flush=True)
    status = 0
    path = os.path.join(args.out, "point_of_use.json")

    def save():
        with open(path, "w") as f:
            json.dump(result, f, indent=1, default=str)

    if "bits" in parts:
        rows = check_bits(device, args.quick)
        bad = [r for r in rows if not (r["y"] and r["y_strides"] and r["dx"] and r["x_grad"])]
        result["bits"] = rows
        print(f"bits: {len(rows) - len(bad)} of {len(rows)} cases equal (y and its strides, dx and its strides, "
              f"x.grad); of the others {sum(r['differ_only_in_nan_bits'] for r in bad)} differ only in NaN bits")
        for r in bad[:40]:
            print("  DIFFER", r)
        status |= bool(bad)
        save()
    if "kernels" in parts:
        result["mask_forward"] = check_mask_forward(device)
        save()
    if "models" in parts:
        rows = check_models(device, args.quick)
        result["models"] = rows
        for r in rows:
            print(f"model {r['model']:12} mask={r['mask']!s:5} loss equal {r['loss_equal']}, "
                  f"grads equal {r['grads_equal']}, relugrad modules {r['relugrad_modules']}")
            status |= not (r["loss_equal"] and r["grads_equal"])
        save()
    if "module" in parts:
        result["module"] = module_times(device, args.quick, args.rounds)
        save()
    if "steps" in parts:
        result["steps"] = step_times(device, args.quick, args.rounds)
        save()
    if "batch" in parts:
        result["batch"] = largest_batches(device, args.quick)
        save()
    print(f"written {path}; status {status}")
    return status


if __name__ == "__main__":
    sys.exit(main())
