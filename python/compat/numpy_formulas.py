"""ReluGrad written directly as NumPy formulas: an oracle independent of the
C library, following the documented semantics (include/relugrad/relugrad.h):

  gate      zero_if_le: open = !(s <= t)   pass_if_gt: open = s > t
            (s widened exactly to the compute type: f32 for 16-bit/f32, f64 for f64;
             t rounded to the compute type, or to the data type when
             threshold_rounding == "dtype", through f32 for 16-bit data as
             PyTorch converts a Python float: double -> f32 -> 16-bit)
  combine   select: open -> dy bits, closed -> +0 (or dy*alpha)
            multiply: dy*1 / dy*0 (or dy*alpha) in the compute type, IEEE as on x86:
            a NaN operand comes back quieted with its payload and sign; inf*0 is
            the default NaN (sign set, quiet bit set)
  denormals ftz_daz: compute-type subnormal inputs of the compare and of the
            multiply count as signed zero, subnormal products flush to signed zero;
            select copies dy bits untouched
  clip      open lanes: v < lo -> lo, v > hi -> hi (bounds rounded to the dtype, through f32 for
            16-bit data); NaN stays
"""
from __future__ import annotations

from typing import Optional, Tuple

import numpy as np

from cases import DTYPES, UINT, to_bits

PRESETS = {
    "torch": dict(gate="zero_if_le", combine="select", denormals="ieee", threshold_rounding="compute"),
    "tensorflow": dict(gate="pass_if_gt", combine="multiply", denormals="ftz_daz", threshold_rounding="compute"),
    "jax": dict(gate="pass_if_gt", combine="select", denormals="ftz_daz", threshold_rounding="compute"),
    "onednn": dict(gate="zero_if_le", combine="multiply", denormals="ieee", threshold_rounding="compute"),
    "mindspore": dict(gate="pass_if_gt", combine="select", denormals="ieee", threshold_rounding="compute"),
    "cann_relugrad": dict(gate="zero_if_le", combine="multiply", denormals="ieee", threshold_rounding="compute"),
    "cann_relugrad_v2": dict(gate="pass_if_gt", combine="select", denormals="ieee", threshold_rounding="compute"),
    "cann_threshold_grad": dict(gate="zero_if_le", combine="select", denormals="ieee", threshold_rounding="compute"),
    "cann_relugrad_v2_hp": dict(gate="pass_if_gt", combine="multiply", denormals="ieee", threshold_rounding="compute"),
}


def _name(dtype: np.dtype) -> str:
    return next(k for k, v in DTYPES.items() if v == dtype)


def _flush(x: np.ndarray) -> np.ndarray:
    tiny = np.finfo(x.dtype).tiny
    sub = (x != 0) & (np.abs(x) < tiny)
    return np.where(sub, np.copysign(np.zeros_like(x), x), x)


def scalar_in_dtype(value: float, dtype: np.dtype) -> np.ndarray:
    """A Python float as a one-element array of dtype, converted as PyTorch
    converts a scalar for a tensor of that type: through f32 for the 16-bit
    types (two roundings), directly otherwise."""
    if dtype.itemsize == 2:
        return np.array([value], dtype=np.float64).astype(np.float32).astype(dtype)
    return np.array([value], dtype=dtype)


def relu_grad(dy: np.ndarray, s: np.ndarray, semantics: str = "torch", threshold: float = 0.0,
              alpha: float = 0.0, clip: Optional[Tuple[float, float]] = None, **overrides) -> np.ndarray:
    cfg = dict(PRESETS[semantics], **{k: v for k, v in overrides.items() if v is not None})
    dtype = dy.dtype
    name = _name(dtype)
    ctype = np.float64 if name == "f64" else np.float32
    size = dtype.itemsize
    sign = 1 << (8 * size - 1)
    finfo_bits = {2: (0x7C00, 0x0200) if name == "f16" else (0x7F80, 0x0040),
                  4: (0x7F800000, 0x00400000), 8: (0x7FF0000000000000, 0x0008000000000000)}
    exp_mask, quiet = finfo_bits[size]
    daz = cfg["denormals"] == "ftz_daz"

    with np.errstate(invalid="ignore", over="ignore", under="ignore"):
        sc = s.astype(ctype)
        if cfg["threshold_rounding"] == "dtype":
            t = scalar_in_dtype(threshold, dtype).astype(ctype)[0]
        else:
            t = ctype(threshold)
        if daz:
            sc = _flush(sc)
            t = _flush(np.array([t], dtype=ctype))[0]
        open_ = (sc > t) if cfg["gate"] == "pass_if_gt" else ~(sc <= t)

        dy_bits = to_bits(dy).astype(np.uint64)
        dy_nan = np.isnan(dy)
        a = ctype(alpha)

        def multiply(factor) -> np.ndarray:
            x = dy.astype(ctype)
            if daz:
                x = _flush(x)
            prod = x * factor
            if daz:
                prod = _flush(prod)
            bits = to_bits(prod.astype(dtype)).astype(np.uint64)
            nan_bits = np.where(dy_nan, dy_bits | quiet, sign | exp_mask | quiet)
            return np.where(np.isnan(prod), nan_bits, bits)

        if cfg["combine"] == "multiply":
            passed = multiply(ctype(1))
        else:
            passed = dy_bits
        if clip is not None:
            lo = scalar_in_dtype(clip[0], dtype)
            hi = scalar_in_dtype(clip[1], dtype)
            v = passed.astype(UINT[size]).view(dtype)
            passed = np.where(v < lo[0], to_bits(lo)[0], np.where(v > hi[0], to_bits(hi)[0], passed))
            passed = passed.astype(np.uint64)
        if a != 0:
            closed = multiply(a)
        elif cfg["combine"] == "multiply":
            closed = multiply(ctype(0))
        else:
            closed = np.zeros_like(dy_bits)
        out = np.where(open_, passed, closed)
    return out.astype(UINT[size]).view(dtype)
