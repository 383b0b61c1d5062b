"""Bitwise comparison of a framework's dx with relugrad's, with mismatches
described by value class so that a report says *what* differs."""
from __future__ import annotations

from typing import List

import numpy as np

from cases import to_bits


def describe(a: np.ndarray, i: int) -> str:
    b = int(to_bits(a)[i])
    with np.errstate(invalid="ignore"):
        v = float(a[i].astype(np.float64))
    width = a.dtype.itemsize * 2
    if np.isnan(v):
        kind = "nan"
    elif v == 0:
        kind = "-0" if b >> (a.dtype.itemsize * 8 - 1) else "+0"
    else:
        tiny = np.finfo(np.float64 if a.dtype.itemsize == 8 else np.float32).tiny
        kind = "sub" if abs(v) < tiny else repr(v)
    return f"{kind}(0x{b:0{width}x})"


def mismatches(dy: np.ndarray, s: np.ndarray, want: np.ndarray, got: np.ndarray,
               limit: int = 12) -> List[str]:
    """Lines 'i: s=.. dy=.. framework=.. relugrad=..' for differing bits."""
    wb, gb = to_bits(want), to_bits(got)
    idx = np.nonzero(wb != gb)[0]
    lines = [f"{len(idx)} of {want.size} differ"] if len(idx) else []
    for i in idx[:limit]:
        lines.append(f"  [{i}] s={describe(s, i)} dy={describe(dy, i)} "
                     f"framework={describe(want, i)} relugrad={describe(got, i)}")
    return lines
