"""Thresholds on rounding boundaries, and PyTorch's answers for them.

PyTorch converts a Python float threshold for a 16-bit tensor through float
(double -> f32 -> bf16/f16: two roundings, c10::Scalar::to<T>), and 2.x
compares in f32 (one rounding, double -> f32). The thresholds below are exact
16-bit midpoints (ties to even, down and up), values within 2^-40 of one
(which one rounding and two roundings send to different neighbours), a
16-bit subnormal midpoint, f32 midpoints and subnormal thresholds. Gates are
every pattern within a few steps of the threshold's candidate roundings.

Needs only NumPy and torch (bf16 is handled as raw bits), so it also runs
under an old torch in its own venv:

    /tmp/venv-t113/bin/python python/compat/rounding_cases.py --out DIR

writes DIR/cases.json and one .npz per case (the torch outputs), which
gen_rounding_goldens.py and the live checks read."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Dict, List, Tuple

import numpy as np

NUDGE = 2.0 ** -40

BOUNDARY_THRESHOLDS: Dict[str, Tuple[float, ...]] = {
    "bf16": (1 + 2 ** -8,                 # midpoint of 1 and 1 + 2^-7: tie to even, down
             1 + 3 * 2 ** -8,             # tie to even, up
             1 + 2 ** -8 + NUDGE,         # two roundings: 1.0; one rounding: 1 + 2^-7
             1 + 3 * 2 ** -8 - NUDGE,     # two roundings: up to 1 + 2^-6; one: 1 + 2^-7
             -(1 + 2 ** -8 + NUDGE),
             1 + 2 ** -8 - NUDGE,         # below the midpoint: both give 1.0
             100.25, 100.25 + 2 ** -30,   # midpoint at a larger exponent
             0.1, -1e-40),                # -1e-40: an f32 (and bf16) subnormal
    "f16": (1 + 2 ** -11, 1 + 3 * 2 ** -11, 1 + 2 ** -11 + NUDGE, 1 + 3 * 2 ** -11 - NUDGE,
            -(1 + 2 ** -11 + NUDGE), 1 + 2 ** -11 - NUDGE,
            1000.25, 1000.25 + 2 ** -30,
            2 ** -25 + 2 ** -70,          # midpoint of 0 and the least f16 subnormal
            0.1),
    "f32": (1 + 2 ** -24, 1 + 3 * 2 ** -24, 1 + 2 ** -24 + NUDGE, 0.1, -1e-40),
    "f64": (0.1, 1 + 2 ** -52, -1e-310),
}

UINT = {"f16": np.uint16, "bf16": np.uint16, "f32": np.uint32, "f64": np.uint64}
FLOAT = {"f16": np.float16, "f32": np.float32, "f64": np.float64}
# dy: 1.0, -3.0, 0.5, -0.0 (select copies these; their bits are all that differs).
DY_BITS = {"bf16": (0x3F80, 0xC040, 0x3F00, 0x8000), "f16": (0x3C00, 0xC200, 0x3800, 0x8000)}


def _bits(dtype: str, value) -> int:
    if dtype == "bf16":  # truncation of the f32 bits: within one step of either rounding
        return int(np.array([value], np.float32).view(np.uint32)[0] >> 16)
    return int(np.array([value], FLOAT[dtype]).view(UINT[dtype])[0])


def _finite(dtype: str, bits: int) -> bool:
    exp = {"bf16": 0x7F80, "f16": 0x7C00, "f32": 0x7F800000, "f64": 0x7FF0000000000000}[dtype]
    return (bits & exp) != exp


def boundary_case(dtype: str, t: float) -> Tuple[np.ndarray, np.ndarray]:
    """(dy_bits, s_bits): every dy of DY_BITS against gates around t."""
    width = 8 * np.dtype(UINT[dtype]).itemsize
    sign = 1 << (width - 1)
    centres = {_bits(dtype, t)}
    if dtype in ("f16", "bf16"):
        centres.add(_bits(dtype, np.float32(t)))
    gates = {0, sign}  # +0, -0
    for c in centres:
        for step in range(-3, 4):
            b = c + step
            if 0 <= b < (1 << width) and _finite(dtype, b) and (b & sign) == (c & sign):
                gates.add(b)
    if dtype in DY_BITS:
        dys = DY_BITS[dtype]
    else:
        dys = tuple(_bits(dtype, v) for v in (1.0, -3.0, 0.5, -0.0))
    g = np.array(sorted(gates), dtype=np.uint64)
    d = np.array(dys, dtype=np.uint64)
    s_grid, dy_grid = np.meshgrid(g, d, indexing="ij")
    return dy_grid.ravel().astype(UINT[dtype]), s_grid.ravel().astype(UINT[dtype])


def _torch_in(torch, dtype: str, bits: np.ndarray):
    if dtype == "bf16":
        return torch.from_numpy(bits.view(np.int16).copy()).view(torch.bfloat16)
    return torch.from_numpy(bits.view(FLOAT[dtype]).copy())


def _torch_bits(torch, dtype: str, t) -> np.ndarray:
    t = t.contiguous()
    if dtype == "bf16":
        return t.view(torch.int16).numpy().view(np.uint16).copy()
    return t.numpy().view(UINT[dtype]).copy()


def torch_major() -> int:
    import torch
    return int(torch.__version__.split(".")[0])


def torch_runs() -> List[dict]:
    """Runs PyTorch's CPU threshold_backward on every boundary case.

    op "threshold_backward": the real op with t as a Python float. Relugrad's
    preset torch reproduces 2.x; 1.x converted t to the data type first
    (threshold_rounding=dtype). op "threshold_backward.t_full": the same op
    given t already converted by torch.full((), t, dtype=...) (PyTorch's own
    scalar conversion), which relugrad reproduces with threshold_rounding=dtype
    in every version. A case the op refuses is returned with its error."""
    import torch
    major = torch_major()
    out = []
    for dtype, thresholds in BOUNDARY_THRESHOLDS.items():
        tdt = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32, "f64": torch.float64}[dtype]
        for i, t in enumerate(thresholds):
            dy, s = boundary_case(dtype, t)
            ops = [("threshold_backward", t,
                    "threshold_rounding=dtype" if major < 2 and dtype in ("f16", "bf16") else "-")]
            if dtype in ("f16", "bf16"):
                ops.append(("threshold_backward.t_full", float(torch.full((), t, dtype=tdt).item()),
                            "threshold_rounding=dtype"))
            for op, t_arg, overrides in ops:
                row = dict(op=op, dtype=dtype, index=i, threshold=t, overrides=overrides,
                           version=torch.__version__.split("+")[0], t_arg=t_arg)
                try:
                    dx = torch.ops.aten.threshold_backward(_torch_in(torch, dtype, dy),
                                                           _torch_in(torch, dtype, s), t_arg)
                    row.update(dy=dy, s=s, dx=_torch_bits(torch, dtype, dx))
                except RuntimeError as e:
                    row["error"] = str(e).splitlines()[0]
                out.append(row)
    return out


def save_runs(runs: List[dict], out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    meta = []
    for k, r in enumerate(runs):
        entry = {key: r[key] for key in ("op", "dtype", "index", "threshold", "overrides", "version", "t_arg")}
        if "error" in r:
            entry["error"] = r["error"]
        else:
            entry["npz"] = f"{k}.npz"
            np.savez(out / entry["npz"], dy=r["dy"], s=r["s"], dx=r["dx"])
        meta.append(entry)
    (out / "cases.json").write_text(json.dumps(meta, indent=1) + "\n")


def load_runs(out: Path) -> List[dict]:
    runs = []
    for entry in json.loads((out / "cases.json").read_text()):
        r = dict(entry)
        if "npz" in entry:
            with np.load(out / entry["npz"]) as z:
                r.update(dy=z["dy"], s=z["s"], dx=z["dx"])
        runs.append(r)
    return runs


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    save_runs(torch_runs(), Path(args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
