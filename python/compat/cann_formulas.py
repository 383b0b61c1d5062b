"""Huawei CANN's ReluGrad-family operators as NumPy formulas, re-derived from
the open ops-nn sources (hicann/ops-nn at e5c3fa9327ea95ba26d06227e746923580d10921;
docs/ascend.md "CANN's semantics" cites each file). Written here from the
kernels' computation graphs and the operators' golden scripts, not copied.

Each formula works in the kernel's compute type and returns the data type.
NaN *payload* bits are not fixed by these sources (they depend on the NPU's
vector unit, which no session could run), so callers compare NaN by class.
"""
from __future__ import annotations

import numpy as np


def _ctype(dtype: np.dtype):
    return np.float64 if dtype == np.float64 else np.float32


def relu_grad_kernel(dy: np.ndarray, s: np.ndarray) -> np.ndarray:
    """activation/relu_grad/op_kernel/arch35/relu_grad_dag.h: a factor
    Select(Compare(s, 0, LE), 0, 1), then Mul(dy, factor). A NaN s compares
    false, so its factor is 1."""
    c = _ctype(dy.dtype)
    factor = np.where(s.astype(c) <= 0, c(0), c(1))
    with np.errstate(invalid="ignore"):
        return (dy.astype(c) * factor).astype(dy.dtype)


def relu_grad_golden(dy: np.ndarray, s: np.ndarray) -> np.ndarray:
    """activation/relu_grad/tests/assets/golden.py: TensorFlow's ReluGrad,
    gradients * (features > 0) (IEEE here; TensorFlow's CPU would flush
    subnormals). Differs from the kernel only where s is NaN."""
    c = _ctype(dy.dtype)
    with np.errstate(invalid="ignore"):
        return (dy.astype(c) * (s.astype(c) > 0).astype(c)).astype(dy.dtype)


def relu_v2_golden(x: np.ndarray):
    """activation/relu_v2/tests/assets/golden.py: y = max(x, 0) with -0 made
    +0 (a NaN x stays), mask = the bits of x > 0 packed LSB first."""
    with np.errstate(invalid="ignore"):
        y = np.maximum(x, np.zeros_like(x))
        y[(y == 0) & np.signbit(y)] = 0
        return y, np.packbits(x > 0, bitorder="little")


def relu_grad_v2_golden(dy: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """activation/relu_grad_v2/tests/assets/golden.py: element i is dy[i]
    where bit i % 8 (LSB first) of mask byte i // 8 is set, else 0."""
    bits = np.unpackbits(mask, bitorder="little")[: dy.size].astype(bool)
    return np.where(bits, dy, np.zeros_like(dy))


def relu_grad_v2_hp(dy: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """TBE ReluGradV2's f32 high-performance path: factor = vsel(mask, 1, 0)
    (f16, cast to f32), result = vmul(factor, dy)."""
    bits = np.unpackbits(mask, bitorder="little")[: dy.size].astype(bool)
    factor = np.where(bits, np.float16(1), np.float16(0)).astype(np.float32)
    with np.errstate(invalid="ignore"):
        return (factor * dy.astype(np.float32)).astype(dy.dtype)


def threshold_grad_golden(dy: np.ndarray, s: np.ndarray, threshold: float) -> np.ndarray:
    """activation/threshold_grad_v2_d: the kernel (threshold_grad_v2_d_dag.h)
    and its golden.py both compare and select in f32 with the threshold as
    an f32 value: dx = (s <= t) ? 0 : dy, cast back to the data type."""
    c = np.float64 if dy.dtype == np.float64 else np.float32
    with np.errstate(invalid="ignore"):
        out = np.where(s.astype(c) <= c(threshold), c(0), dy.astype(c))
        return out.astype(dy.dtype)
