#!/usr/bin/env python3
"""Checks `relugrad run` against PyTorch's aten::threshold_backward, bit for bit.

The core issue's acceptance check: f32, f64 and bf16 (plus f16), thresholds
0, 0.75 and -1.5, on special values (signed zeros, infinities, NaNs with
payloads, subnormals, values at and next to the threshold) and random data.
Usage: cli_vs_torch.py PATH/TO/relugrad   (needs numpy and torch)
Exit status 1 on any mismatch.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

CLI = sys.argv[1] if len(sys.argv) > 1 else "build/release/relugrad"
UINT = {np.float32: np.uint32, np.float64: np.uint64, np.float16: np.uint16}


def special_bits(bits):
    """Special bit patterns of a float type with `bits` total bits."""
    if bits == 16:  # bf16 (as the upper half of f32)
        raw = [0x0000, 0x8000, 0x7F80, 0xFF80, 0x7FC0, 0xFFC0, 0x7FC5, 0x7F81, 0xFF82,
               0x0001, 0x8001, 0x007F, 0x0080, 0x8080, 0x7F7F, 0xFF7F, 0x3F80, 0xBF80,
               0x3F40, 0x3F41, 0x3F3F, 0xBFC0, 0xBFC1, 0xBFBF, 0x3DCD, 0x3DCC]
        return np.array(raw, dtype=np.uint16)
    return None


def values(dtype, n, rng):
    """Special values of dtype crossed with themselves, then random values."""
    if dtype == "bf16":
        sp = special_bits(16)
    else:
        f = np.dtype(dtype)
        u = UINT[f.type]
        finfo = np.finfo(f)
        sp_f = [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, finfo.max, -finfo.max, finfo.tiny,
                -finfo.tiny, finfo.smallest_subnormal, -finfo.smallest_subnormal, 1.0, -1.0,
                0.75, -1.5, 2.0, -3.0]
        sp = np.array(sp_f, dtype=f).view(u)
        nexts = np.array([0.75, -1.5], dtype=f)
        sp = np.concatenate([sp, np.nextafter(nexts, np.array(np.inf, f)).view(u),
                             np.nextafter(nexts, np.array(-np.inf, f)).view(u),
                             np.array([u(np.array(np.nan, f).view(u)) | u(5)], dtype=u)])
    g, d = np.meshgrid(sp, sp, indexing="ij")
    rand = rng.standard_normal(n).astype(np.float32)
    if dtype == "bf16":
        rand_bits = (rand.view(np.uint32) >> 16).astype(np.uint16)
    else:
        rand_bits = rand.astype(dtype).view(UINT[np.dtype(dtype).type])
    rand2 = rng.standard_normal(n).astype(np.float32)
    rand2_bits = (rand2.view(np.uint32) >> 16).astype(np.uint16) if dtype == "bf16" else \
        rand2.astype(dtype).view(UINT[np.dtype(dtype).type])
    s = np.concatenate([g.ravel(), rand_bits])
    dy = np.concatenate([d.ravel(), rand2_bits])
    return dy, s


def torch_threshold_backward(dtype, dy_bits, s_bits, t):
    if dtype == "bf16":
        dy = torch.from_numpy(dy_bits.astype(np.int16)).view(torch.bfloat16)
        s = torch.from_numpy(s_bits.astype(np.int16)).view(torch.bfloat16)
        out = torch.ops.aten.threshold_backward(dy, s, t)
        return out.view(torch.int16).numpy().view(np.uint16)
    f = np.dtype(dtype)
    dy = torch.from_numpy(dy_bits.view(f).copy())
    s = torch.from_numpy(s_bits.view(f).copy())
    out = torch.ops.aten.threshold_backward(dy, s, t)
    return out.numpy().view(UINT[f.type])


def is_nan_bits(dtype, b):
    if dtype == "bf16":
        return (b & 0x7FFF) > 0x7F80
    return np.isnan(b.view(np.dtype(dtype)))


def main():
    rng = np.random.default_rng(7)
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for dtype in ["float32", "float64", "bf16", "float16"]:
            dy, s = values(dtype, 100_003, rng)
            p_dy, p_s, p_out = (os.path.join(tmp, f) for f in ("dy.npy", "s.npy", "dx.npy"))
            np.save(p_dy, dy if dtype == "bf16" else dy.view(np.dtype(dtype)))
            np.save(p_s, s if dtype == "bf16" else s.view(np.dtype(dtype)))
            for t in [0.0, 0.75, -1.5]:
                cmd = [CLI, "run", "--dy", p_dy, "--x", p_s, "-o", p_out, "--threshold", str(t)]
                if dtype == "bf16":
                    cmd += ["--dtype", "bf16"]
                subprocess.run(cmd, check=True)
                got = np.load(p_out)
                got = got if dtype == "bf16" else got.view(UINT[np.dtype(dtype).type])
                want = torch_threshold_backward(dtype, dy, s, t)
                exact = np.array_equal(got, want)
                # PyTorch's bf16 CPU vector path may rewrite NaN payloads: where
                # both are NaN, compare NaN class only, and report it.
                nan_both = is_nan_bits(dtype, got) & is_nan_bits(dtype, want)
                same = (got == want) | nan_both
                status = "bit-exact" if exact else ("equal up to NaN payload" if same.all() else "MISMATCH")
                print(f"{dtype:8s} t={t:5.2f} n={len(dy):7d} vs torch {torch.__version__}: {status}"
                      + ("" if exact else f" ({int((got != want).sum())} NaN payload diffs)" if same.all() else ""))
                if not same.all():
                    i = int(np.flatnonzero(~same)[0])
                    print(f"  first mismatch at {i}: dy={dy[i]:#x} s={s[i]:#x} relugrad={got[i]:#x} torch={want[i]:#x}")
                    failures += 1
                elif not exact and dtype != "bf16":
                    failures += 1
    print("all checks passed" if failures == 0 else f"{failures} checks FAILED")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
