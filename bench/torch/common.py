"""What the bench.torch subcommands share: sizes, timing loops, the interleaving of candidates, the
interval of a median, ratios and the A/A control, the models, the machine's name, and the switch
between the eager paths that the module bench times side by side.

Every subcommand compares candidates side by side in one process: a round times each candidate
once, the order rotating from round to round (`rotated`), and a ratio is the median over rounds
of the per-round ratio (`median_ratio`), because on a shared machine only ratios taken side by side
mean anything. The A/A control is a second copy of stock timed like relugrad in the same rounds:
its ratio to stock is what the bench itself puts between identical candidates.
"""
import os
import statistics
import sys
import time
import timeit

import torch
from torch import nn

import relugrad.torch as rt

# The repository root: `python -m bench.torch` runs from here (the report's child processes too).
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16, "f64": torch.float64}


# ---- sizes -----------------------------------------------------------------------------------

def parse_size(text: str) -> int:
    """'16' -> 16, '64K' -> 65536, '4M' -> 4194304 (binary K and M)."""
    scale = {"K": 1 << 10, "M": 1 << 20}.get(text[-1].upper(), 1)
    return int(text[:-1] if scale > 1 else text) * scale


def parse_sizes(text: str) -> list:
    return [parse_size(s) for s in text.split(",")]


def shape_of(n: int):
    """An (N, C, H, W) shape of n elements: C = 16, H = W when n allows, else (1, 1, 1, n)."""
    if n % 16:
        return (1, 1, 1, n)
    rest = n // 16
    h = 1
    while (h * 2) * (h * 2) <= rest and rest % ((h * 2) * (h * 2)) == 0:
        h *= 2
    return (rest // (h * h), 16, h, h)


# ---- timing loops ----------------------------------------------------------------------------

def per_call(fn, target: float = 0.01) -> float:
    """Seconds per call: the best of 3 repeats of a loop sized to about `target` seconds (the
    best, not the mean: a loaded machine only ever adds time)."""
    number = max(1, int(target / max(timeit.timeit(fn, number=1), 1e-7)))
    return min(timeit.repeat(fn, number=number, repeat=3)) / number


def best_pass(fn, repeats: int = 3) -> float:
    """Seconds of the best of `repeats` single calls of fn (fn is a whole pass)."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def loop_us(fn, calls: int) -> float:
    """Microseconds per call of one loop of `calls` calls."""
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls * 1e6


# ---- interleaving, ratios, intervals ---------------------------------------------------------

def rotated(whos: list, r: int) -> list:
    """The candidates in round r's order: who runs first rotates from round to round (with two
    candidates: the order, then its reverse)."""
    k = r % len(whos)
    return whos[k:] + whos[:k]


def median_ratio(times_a, times_b) -> float:
    """The median over rounds of the per-round ratio a / b."""
    return statistics.median(a / b for a, b in zip(times_a, times_b))


def median_interval(sorted_values):
    """A distribution-free ~95% interval of the median: the order statistics k and n-1-k, k the
    largest with P(Binomial(n, 1/2) <= k) <= 2.5% (for n < 6 none exists: the extremes)."""
    n = len(sorted_values)
    k, cdf, term = -1, 0.0, 0.5 ** n
    for j in range(n):
        cdf += term
        if cdf > 0.025:
            break
        k = j
        term *= (n - j) / (j + 1)
    k = max(k, 0)
    return sorted_values[k], sorted_values[n - 1 - k]


def ratio_interval(times_a, times_b):
    """(median of the per-round ratios a / b, [lo, hi] its ~95% interval): relugrad / stock, or
    the A/A control's copy / stock."""
    ratios = sorted(a / b for a, b in zip(times_a, times_b))
    return statistics.median(ratios), list(median_interval(ratios))


# ---- the machine -----------------------------------------------------------------------------

def cpu_name() -> str:
    """The CPU's model name (/proc/cpuinfo), for the record of which machine measured."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def command_line() -> str:
    """The command that reproduces this run (`python -m bench.torch <subcommand> ...`), as results
    files record it."""
    return " ".join(["python -m bench.torch"] + sys.argv[1:])


def require_native() -> None:
    if not rt.NATIVE:
        raise SystemExit(f"the torch-native path is not loaded: {rt.NATIVE_STATUS}")


# ---- models ----------------------------------------------------------------------------------

def mlp() -> nn.Module:
    return nn.Sequential(*[m for _ in range(3) for m in (nn.Linear(512, 2048), nn.ReLU(), nn.Linear(2048, 512))])


def mlp_dropout() -> nn.Module:
    return nn.Sequential(*[m for _ in range(3)
                           for m in (nn.Linear(512, 2048), nn.ReLU(), nn.Dropout(0.1), nn.Linear(2048, 512))])


def transformer() -> nn.Module:
    layer = nn.TransformerEncoderLayer(256, 4, 1024, dropout=0.1, batch_first=True)
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
    "mlp_dropout": (mlp_dropout, (1024, 512), False),
    "transformer": (transformer, (8, 128, 256), False),
    # compile-memory's models: the MLP batch, and torchvision models at 64x64.
    "mlp_dropout-b2048": (mlp_dropout, (2048, 512), False),
    "resnet50-64": (lambda: torchvision_model("resnet50"), (4, 3, 64, 64), True),
    "resnet18-64": (lambda: torchvision_model("resnet18"), (4, 3, 64, 64), True),
    "densenet121-64": (lambda: torchvision_model("densenet121"), (4, 3, 64, 64), True),
    "mobilenet_v2-64": (lambda: torchvision_model("mobilenet_v2"), (4, 3, 64, 64), True),
    "vgg11-64": (lambda: torchvision_model("vgg11"), (4, 3, 64, 64), True),
}


def build_stock(name: str, layout: str):
    """(stock model, x) for model `name` in `layout`, seeded: every candidate starts from the same
    weights."""
    make, shape, _ = MODELS[name]
    torch.manual_seed(0)
    stock = make()
    x = torch.randn(shape)
    if layout == "channels_last":
        stock = stock.to(memory_format=torch.channels_last)
        x = x.contiguous(memory_format=torch.channels_last)
    return stock, x


def step(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """One training step's forward and backward: loss = model(x).square().mean()."""
    loss = model(x).square().mean()
    loss.backward()
    return loss


# ---- switching the eager path between two timed candidates ------------------------------------

def relu_dropout_class():
    """relugrad's fused ReLU + Dropout module (public: relugrad.torch.ReLUDropout)."""
    return rt.ReLUDropout


_NATIVE_OFF = None  # the entered relugrad.torch.use_native(False) block while the native ReLU is off


def use_native_eager(on: bool) -> None:
    """Route eager relugrad.torch.ReLU calls through the torch-native library (on) or through the
    custom ops torch.ops.relugrad.* (off), in this process, between two timed candidates: the
    public block relugrad.torch.use_native(False, entries=("relu",)) held open across calls, since
    the module bench interleaves both paths in one process."""
    global _NATIVE_OFF
    if on and _NATIVE_OFF is not None:
        _NATIVE_OFF.__exit__(None, None, None)
        _NATIVE_OFF = None
    elif not on and _NATIVE_OFF is None:
        _NATIVE_OFF = rt.use_native(False, entries=("relu",))
        _NATIVE_OFF.__enter__()
