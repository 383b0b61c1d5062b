"""Bitwise equality with an optional NaN-by-class rule (both NaN = equal)."""
import numpy as np

from cases import to_bits


def same_bits(want: np.ndarray, got: np.ndarray, policy: str = "exact") -> bool:
    if want.dtype != got.dtype or want.shape != got.shape:
        return False
    eq = to_bits(want) == to_bits(got)
    if policy == "class":
        with np.errstate(invalid="ignore"):
            eq |= np.isnan(want) & np.isnan(got)
    elif policy != "exact":
        raise ValueError(f"unknown NaN policy {policy!r}")
    return bool(eq.all())
